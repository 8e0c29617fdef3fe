package travelrule

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
)

// wireGuard keeps the layers below the retry loop from sending a call's
// request twice, and tells the loop whether an attempt's request may have
// been written. Its hooks run on the transport's goroutines.
type wireGuard struct {
	trace        httptrace.ClientTrace // the call's hooks (arm)
	body         []byte                // the request body
	tracesWrites *atomic.Bool          // the client's: the transport reports its writes (Client.tracesWrites)

	resent   atomic.Int32 // requests a transport wrote again within one attempt
	wrote    atomic.Bool  // the current attempt wrote its request headers
	traced   atomic.Bool  // the transport reported a round trip's start in the current attempt
	rtWrote  atomic.Bool  // headers written since the transport's last round trip began
	answered atomic.Bool  // a final answer began since the transport's last round trip began
	informed atomic.Int64 // header bytes of the 1xx answers since the transport's last round trip began
	hinted   atomic.Bool  // the current attempt got a 1xx answer: its stream was taken
}

// arm sets the guard's hooks in its trace; a call that may be repeated
// also watches for answers, which allow a redirect's resend (getBody).
func (g *wireGuard) arm(repeatable bool) {
	g.trace = httptrace.ClientTrace{GetConn: g.getConn, GotConn: g.gotConn, WroteHeaders: g.wroteHeaders, Got1xxResponse: g.got1xx}
	if repeatable {
		g.trace.GotFirstResponseByte = g.gotFirstByte
	}
}

// hintedAt reports whether the current attempt got a 1xx answer: the
// server took its stream, whatever a GOAWAY says after it.
func (g *wireGuard) hintedAt() bool { return g.hinted.Load() }

// written reports whether the current attempt's request may have been
// written: it was, or the transport never said it started a round trip.
func (g *wireGuard) written() bool { return g.wrote.Load() || !g.traced.Load() }

// nextAttempt starts the facts of a new attempt.
func (g *wireGuard) nextAttempt() {
	g.wrote.Store(false)
	g.traced.Store(false)
	g.hinted.Store(false)
}

// resends is how many requests a transport sent again by itself.
func (g *wireGuard) resends() int { return int(g.resent.Load()) }

// getConn runs when net/http's transport looks for a connection, at the
// start of each of its round trips.
func (g *wireGuard) getConn(string) { g.roundTripStarts() }

// gotConn runs when a transport has a connection for a round trip. It is
// the only start an HTTP/2 round trip on a connection net/http's pool
// already holds reports: net/http hands such a request to its HTTP/2
// client before it looks for a connection itself, so no GetConn comes
// (and when that connection turns out unusable before the request is
// written, net/http takes over and fails with "cannot rewind body").
func (g *wireGuard) gotConn(httptrace.GotConnInfo) { g.roundTripStarts() }

// roundTripStarts records that a transport began a round trip of the
// current attempt. Until then the request is taken to have been written,
// and so it is whenever the transport has never reported writing one
// (Client.tracesWrites): a transport that passes on a start signal but not
// the writes would otherwise have every failure taken for one before
// sending.
func (g *wireGuard) roundTripStarts() {
	if g.tracesWrites.Load() {
		g.traced.Store(true)
	}
	g.rtWrote.Store(false)
	g.answered.Store(false)
	g.informed.Store(0)
}

// wroteHeaders runs each time a transport has written the request's
// headers. A second time within one attempt is a request the transport
// sent again by itself: it left the client, so it counts.
func (g *wireGuard) wroteHeaders() {
	if tw := g.tracesWrites; !tw.Load() {
		tw.Store(true)
	}
	g.rtWrote.Store(true)
	if g.wrote.Swap(true) {
		g.resent.Add(1)
	}
}

func (g *wireGuard) gotFirstByte() { g.answered.Store(true) }

// max1xxBytes bounds the header bytes of the 1xx answers of one round
// trip, each field counted with 32 bytes more (as HPACK counts it) and
// each answer with 32 bytes of its own, so that a flood of empty ones
// ends too. net/http bounds them for a client that does not look at them
// (HTTP/1 with the final answer's, HTTP/2 alone) and lifts its bound when
// Got1xxResponse is set; this puts one back.
const max1xxBytes = maxHeaderCopy

// errTooMany1xx ends a round trip whose 1xx answers went past max1xxBytes.
var errTooMany1xx = errors.New("1xx informational answers too large")

// got1xx runs for each 1xx answer but the last (a final 101 ends the
// exchange). The first byte of a 1xx is no answer: the request may still
// be acted on, so that a transport's own resend after it is refused
// (getBody); net/http reports a round trip's first byte once, so after a
// 1xx the final answer does not count as one either, and a 307 or 308
// that follows is not followed.
func (g *wireGuard) got1xx(_ int, h textproto.MIMEHeader) error {
	g.answered.Store(false)
	g.hinted.Store(true)
	if g.informed.Add(header1xxSize(h)) > max1xxBytes {
		return errTooMany1xx
	}
	return nil
}

// header1xxSize is what one 1xx answer with header h counts against
// max1xxBytes.
func header1xxSize(h textproto.MIMEHeader) int64 {
	n := int64(32)
	for k, vv := range h {
		for _, v := range vv {
			n += int64(len(k) + len(v) + 32)
		}
	}
	return n
}

// errNotReplayed is the error a transport meets when it tries to send a
// request again by itself.
var errNotReplayed = errors.New("the transport's own resend was refused; the client's retry policy decides")

// newBody returns a reader of the call's body. A *bytes.Reader lets
// net/http write the headers and the body at once.
func (g *wireGuard) newBody() io.ReadCloser { return io.NopCloser(bytes.NewReader(g.body)) }

// getBody is Request.GetBody of a call that may be repeated. net/http
// calls GetBody to send a request again below the retry policy: the HTTP/2
// client after RST_STREAM REFUSED_STREAM or PROTOCOL_ERROR or a GOAWAY,
// even when the server had read the whole body; the HTTP/1 transport on a
// reused connection that failed after the request was written, when the
// request carries an Idempotency-Key header; and http.Client for a 307 or
// 308.
//
// A call that may not be repeated has no GetBody at all: no layer can send
// its body twice (a transport may still send a request whose body it never
// read, which reached no one), and http.Client then follows no 307 or 308.
// A call that may be repeated keeps it for redirects within the origin and
// for a transport that reads a copy of the body before sending (to sign
// it, say), but a resend of a request whose headers were written and which
// got no answer is refused, so that every repeat goes through the retry
// policy, with its backoff, budget and count.
func (g *wireGuard) getBody() (io.ReadCloser, error) {
	if g.rtWrote.Load() && !g.answered.Load() {
		return nil, errNotReplayed
	}
	return g.newBody(), nil
}

// reportsWrites reports whether rt is known, before it sent anything, to
// report through httptrace each request it writes: net/http's own
// transport, speaking HTTP/1 or its own HTTP/2, does. A connection it hands
// to a protocol of the user's (another TLSNextProto) or HTTP/3 is
// written by code that may report nothing; so may any other transport,
// which the guard believes once it has reported a write.
func reportsWrites(rt http.RoundTripper) bool {
	t, ok := rt.(*http.Transport)
	if !ok {
		return false
	}
	for proto := range t.TLSNextProto {
		// net/http's own HTTP/2 puts these two in once the transport is
		// used (or cloned); x/net's ConfigureTransport puts "h2".
		if proto != "h2" && proto != "unencrypted_http2" {
			return false
		}
	}
	return t.Protocols == nil || !strings.Contains(t.Protocols.String(), "HTTP3")
}
