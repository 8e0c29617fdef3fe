package travelruletest_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// HTTP/2 frame types, flags and error codes (RFC 9113) the tests read.
const (
	h2Data      = http2.FrameData
	h2Headers   = http2.FrameHeaders
	h2RSTStream = http2.FrameRSTStream
	h2Settings  = http2.FrameSettings
	h2GoAway    = http2.FrameGoAway

	h2EndStream = http2.FlagDataEndStream // the same bit in HEADERS
	h2Ack       = http2.FlagSettingsAck
)

// rawH2 is a bare HTTP/2 client over TLS that writes and reads the frames
// itself (with x/net/http2's Framer), so that a test sees exactly what the
// sandbox puts on the wire.
type rawH2 struct {
	t      *testing.T
	fr     *http2.Framer
	block  bytes.Buffer
	enc    *hpack.Encoder
	host   string
	others map[uint32][]h2Frame // frames read while waiting for another stream
}

// h2Frame is what a test reads of one frame from the server; the Framer's
// own frames live only until its next read.
type h2Frame struct {
	typ    http2.FrameType
	flags  http2.Flags
	stream uint32
	code   http2.ErrCode // of a RST_STREAM or GOAWAY
	last   uint32        // of a GOAWAY
	data   []byte        // of a DATA frame
}

// dialH2 opens an HTTP/2 connection to srv, negotiated by ALPN, and sends
// the preface and the given SETTINGS. The 30-second deadline only ends a
// test whose frames never come.
func dialH2(t *testing.T, srv *travelruletest.Server, settings ...http2.Setting) *rawH2 {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	require.Equal(t, "h2", conn.ConnectionState().NegotiatedProtocol, "HTTP/2 by ALPN")
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = io.WriteString(conn, http2.ClientPreface)
	require.NoError(t, err)
	h := &rawH2{t: t, fr: http2.NewFramer(conn, conn), host: u.Host}
	h.enc = hpack.NewEncoder(&h.block)
	require.NoError(t, h.fr.WriteSettings(settings...))
	return h
}

// ackSettings acknowledges the server's SETTINGS.
func (h *rawH2) ackSettings() { require.NoError(h.t, h.fr.WriteSettingsAck()) }

// post sends a POST of body to path on stream, with a bearer token; split
// sends its header block as a HEADERS and a CONTINUATION frame.
func (h *rawH2) post(stream uint32, path, tok string, body []byte, split bool) {
	h.t.Helper()
	block := h.headerBlock(path, tok, len(body))
	if split {
		require.NoError(h.t, h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block[:len(block)/2]}))
		require.NoError(h.t, h.fr.WriteContinuation(stream, true, block[len(block)/2:]))
	} else {
		require.NoError(h.t, h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block, EndHeaders: true}))
	}
	require.NoError(h.t, h.fr.WriteData(stream, true, body))
}

// headers opens stream with the header block of a POST of n bytes to
// path; the body is the caller's to send.
func (h *rawH2) headers(stream uint32, path, tok string, n int) {
	h.t.Helper()
	block := h.headerBlock(path, tok, n)
	require.NoError(h.t, h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block, EndHeaders: true}))
}

// headerBlock encodes the header block of a POST of n bytes to path, with
// a bearer token.
func (h *rawH2) headerBlock(path, tok string, n int) []byte {
	h.block.Reset()
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "https"}, {":authority", h.host}, {":path", path},
		{"content-type", "application/json"}, {"authorization", "Bearer " + tok},
		{"content-length", strconv.Itoa(n)},
	} {
		require.NoError(h.t, h.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}))
	}
	return h.block.Bytes()
}

func (h *rawH2) read() (h2Frame, error) {
	f, err := h.fr.ReadFrame()
	if err != nil {
		return h2Frame{}, err
	}
	hdr := f.Header()
	out := h2Frame{typ: hdr.Type, flags: hdr.Flags, stream: hdr.StreamID}
	switch f := f.(type) {
	case *http2.RSTStreamFrame:
		out.code = f.ErrCode
	case *http2.GoAwayFrame:
		out.code, out.last = f.ErrCode, f.LastStreamID
	case *http2.DataFrame:
		out.data = bytes.Clone(f.Data())
	}
	return out, nil
}

// end reads frames until stream ends (its END_STREAM or RST_STREAM) or a
// GOAWAY comes, acknowledging the server's SETTINGS, and returns the frames
// of stream and the GOAWAY, in order. Frames of other streams are kept for
// their own call.
func (h *rawH2) end(stream uint32) []h2Frame {
	h.t.Helper()
	out := h.others[stream]
	delete(h.others, stream)
	ended := func(f h2Frame) bool {
		return f.typ == h2RSTStream || (f.typ == h2Data || f.typ == h2Headers) && f.flags.Has(h2EndStream)
	}
	if n := len(out); n > 0 && ended(out[n-1]) {
		return out
	}
	for {
		f, err := h.read()
		require.NoError(h.t, err)
		switch {
		case f.typ == h2Settings && !f.flags.Has(h2Ack):
			h.ackSettings()
		case f.typ == h2GoAway:
			return append(out, f)
		case f.stream == stream:
			out = append(out, f)
			if ended(f) {
				return out
			}
		case f.stream != 0:
			if h.others == nil {
				h.others = make(map[uint32][]h2Frame)
			}
			h.others[f.stream] = append(h.others[f.stream], f)
		}
	}
}

// TestHTTP2FaultsOnTheWire reads the frames that end a faulted request's
// stream on a new connection: each HTTP/2 fault puts its own reset code on
// the wire, PROTOCOL_ERROR and INTERNAL_ERROR (a drop) after the transfer
// was stored, REFUSED_STREAM before anything was; a GOAWAY fault, with no
// stream taken before, is a GOAWAY NO_ERROR with last-stream-id 0, after
// which the connection ends and nothing was stored. The header field that
// names the stream to the handler never reaches the records.
func TestHTTP2FaultsOnTheWire(t *testing.T) {
	for _, tt := range []struct {
		kind   travelruletest.FaultKind
		split  bool // the header block in HEADERS and CONTINUATION
		typ    http2.FrameType
		code   http2.ErrCode
		stored bool // acted on before the fault
	}{
		{kind: travelruletest.FaultResetProtocolError, typ: h2RSTStream, code: http2.ErrCodeProtocol, stored: true},
		{kind: travelruletest.FaultResetRefusedStream, typ: h2RSTStream, code: http2.ErrCodeRefusedStream},
		{kind: travelruletest.FaultGoAway, typ: h2GoAway, code: http2.ErrCodeNo},
		{kind: travelruletest.FaultDrop, typ: h2RSTStream, code: http2.ErrCodeInternal, stored: true},
		{kind: travelruletest.FaultResetProtocolError, split: true, typ: h2RSTStream, code: http2.ErrCodeProtocol, stored: true},
		{kind: travelruletest.FaultResetRefusedStream, split: true, typ: h2RSTStream, code: http2.ErrCodeRefusedStream},
		{kind: travelruletest.FaultGoAway, split: true, typ: h2GoAway, code: http2.ErrCodeNo},
	} {
		t.Run(tt.kind.String()+"/split="+strconv.FormatBool(tt.split), func(t *testing.T) {
			events := newLogEvents()
			srv := newTLSServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithLogger(slog.New(events)),
				travelruletest.WithFaults(travelruletest.Fault{Kind: tt.kind, Rate: 1, Times: 1}))
			body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			h := dialH2(t, srv)
			h.post(1, "/transfers/initiate", token(t, srv), body, tt.split)
			frames := h.end(1)
			last := frames[len(frames)-1]
			require.Equal(t, tt.typ, last.typ, "frames %v", frames)
			require.Len(t, frames, 1, "nothing of an answer before the fault")
			assert.Equal(t, tt.code, last.code)
			if tt.typ == h2GoAway {
				assert.Zero(t, last.last, "last-stream-id 0: no stream taken before")
				f, err := h.read()
				assert.ErrorIs(t, err, io.EOF, "closed at once, nothing more written: %+v", f)
			} else {
				assert.Equal(t, uint32(1), last.stream)
			}

			events.wait(t, "travelruletest: request", 1) // a GOAWAY goes out before the request is recorded
			rs := srv.Requests()
			require.Len(t, rs, 1)
			assert.Zero(t, rs[0].Status, "no answer")
			assert.Equal(t, []travelruletest.FaultKind{tt.kind}, rs[0].Faults)
			assert.Empty(t, rs[0].Header.Values("X-Travelruletest-Stream"))
			assert.Equal(t, "application/json", rs[0].Header.Get("Content-Type"))
			st := srv.Stats()
			assert.Equal(t, map[travelruletest.FaultKind]int{tt.kind: 1}, st.ByFault)
			ts := srv.Transfers()
			if !tt.stored {
				assert.Empty(t, ts, "the stream was not processed: nothing stored")
				assert.Empty(t, rs[0].TransferID)
				assert.Zero(t, st.Initiated)
				return
			}
			require.Len(t, ts, 1, "the transfer was stored before the fault")
			assert.Equal(t, ts[0].ID, rs[0].TransferID)
			assert.Equal(t, 1, st.Initiated)
		})
	}

	t.Run("no fault", func(t *testing.T) {
		srv := newTLSServer(t, travelruletest.WithoutCallbacks())
		body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
		require.NoError(t, err)
		h := dialH2(t, srv)
		h.post(1, "/transfers/initiate", token(t, srv), body, true)
		h.post(3, "/transfers/initiate", token(t, srv), body, false)
		for _, stream := range []uint32{1, 3} {
			frames := h.end(stream)
			require.Len(t, frames, 2, "HEADERS and DATA of stream %d", stream)
			assert.Equal(t, h2Headers, frames[0].typ)
			assert.Equal(t, h2Data, frames[1].typ)
			assert.Contains(t, string(frames[1].data), `"status":true`)
		}
		assert.Len(t, srv.Transfers(), 2)
		for _, r := range srv.Requests() {
			assert.Equal(t, http.StatusOK, r.Status)
			assert.Empty(t, r.Header.Values("X-Travelruletest-Stream"))
		}
	})
}

// TestHTTP2FaultsNetHTTPClient sends requests through net/http's own
// HTTP/2 client. Without Request.GetBody the client cannot resend, and its
// error names what it got. With GetBody it resends the request by itself
// after a REFUSED_STREAM or a GOAWAY, which the sandbox did not act on: one
// transfer is stored. After a PROTOCOL_ERROR, which came after acting, Go
// 1.26's client resends too and stores the transfer twice: the hazard that
// fault exists to expose; with an Idempotency-Key the resent request is
// replayed instead.
func TestHTTP2FaultsNetHTTPClient(t *testing.T) {
	for _, tt := range []struct {
		kind  travelruletest.FaultKind
		err   string
		acted bool
	}{
		{travelruletest.FaultResetProtocolError, "PROTOCOL_ERROR", true},
		{travelruletest.FaultResetRefusedStream, "REFUSED_STREAM", false},
		{travelruletest.FaultGoAway, "GOAWAY", false},
	} {
		t.Run(tt.kind.String(), func(t *testing.T) {
			srv := newTLSServer(t, travelruletest.WithoutCallbacks())
			body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			send := func(rewindable bool, header ...string) (*http.Response, error) {
				var rd io.Reader = bytes.NewReader(body)
				if !rewindable {
					rd = io.NopCloser(rd) // http.NewRequest sets no GetBody
				}
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/transfers/initiate", rd)
				require.NoError(t, err)
				require.Equal(t, rewindable, req.GetBody != nil)
				req.Header.Set("Authorization", "Bearer "+token(t, srv))
				req.Header.Set("Content-Type", "application/json")
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				resp, err := srv.Client().Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
				return resp, err
			}
			stored := func(n int) int { // the transfers after n requests hit, each then sent once more
				if tt.acted {
					return 2 * n
				}
				return n
			}
			fault := travelruletest.Fault{Kind: tt.kind, Rate: 1, Times: 1}

			srv.SetFaults(fault)
			_, err = send(false)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.Len(t, srv.Transfers(), stored(1)/2, "stored before the fault, or not at all")

			srv.SetFaults(fault)
			resp, err := send(true)
			if err != nil && tt.kind == travelruletest.FaultResetProtocolError {
				// Go 1.27's HTTP/2 client no longer resends after a
				// PROTOCOL_ERROR reset; Go 1.26's does.
				assert.Contains(t, err.Error(), tt.err)
				assert.Len(t, srv.Transfers(), 2, "stored once more, not resent")
				return
			}
			require.NoError(t, err, "net/http resent the request")
			assert.Equal(t, "HTTP/2.0", resp.Proto)
			assert.Len(t, srv.Transfers(), stored(2)-1, "stored again by the resent request only if the fault came after acting")

			srv.SetFaults(fault)
			resp, err = send(true, "Idempotency-Key", "k-"+tt.kind.String())
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Len(t, srv.Transfers(), stored(2), "stored once for the key")
			replayed := 0
			if tt.acted {
				replayed = 1
			}
			assert.Equal(t, replayed, srv.Stats().Replayed, "the resent request was replayed if the first was acted on")
		})
	}
}

// TestHTTP2UnprocessedStreamsRetried: a client with idempotency keys sends
// an initiation again after a REFUSED_STREAM or a GOAWAY fault and the
// sandbox stores it once, acting on the second request: nothing was stored
// for the key by the first.
func TestHTTP2UnprocessedStreamsRetried(t *testing.T) {
	for _, kind := range []travelruletest.FaultKind{travelruletest.FaultResetRefusedStream, travelruletest.FaultGoAway} {
		t.Run(kind.String(), func(t *testing.T) {
			srv := newTLSServer(t, travelruletest.WithoutCallbacks(),
				travelruletest.WithFaults(travelruletest.Fault{Kind: kind, Rate: 1, Times: 1}))
			c := newClient(t, srv, travelrule.WithIdempotency(), travelrule.WithHTTPClient(srv.Client()))
			res, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			assert.Equal(t, 2, res.Attempts)
			ts := srv.Transfers()
			require.Len(t, ts, 1)
			assert.Equal(t, ts[0].ID, res.TransferID)
			st := srv.Stats()
			assert.Zero(t, st.Replayed, "the second request acted: the first was not processed")
			assert.Equal(t, map[int]int{0: 1, http.StatusOK: 1}, st.ByStatus)
		})
	}
}

// TestHTTP2FaultsOverHTTP1 sends each HTTP/2 fault to a client that
// negotiated HTTP/1.1 on the TLS server: it closes the connection without
// answering, as FaultDrop does, after the transfer was stored for a
// PROTOCOL_ERROR reset, before anything was for a REFUSED_STREAM or a
// GOAWAY.
func TestHTTP2FaultsOverHTTP1(t *testing.T) {
	for _, tt := range []struct {
		kind   travelruletest.FaultKind
		stored int
	}{
		{travelruletest.FaultResetProtocolError, 1},
		{travelruletest.FaultResetRefusedStream, 0},
		{travelruletest.FaultGoAway, 0},
	} {
		t.Run(tt.kind.String(), func(t *testing.T) {
			srv := newTLSServer(t, travelruletest.WithoutCallbacks(),
				travelruletest.WithFaults(travelruletest.Fault{Kind: tt.kind, Rate: 1, Times: 1}))
			hc := http1Client(srv)
			c := newClient(t, srv, travelrule.WithHTTPClient(hc))
			_, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the connection was closed after sending")
			var apiErr *travelrule.APIError
			assert.NotErrorAs(t, err, &apiErr, "no answer at all: %v", err)
			require.Len(t, srv.Transfers(), tt.stored)
			rs := srv.Requests()
			require.Len(t, rs, 1)
			assert.Zero(t, rs[0].Status)
			assert.Equal(t, []travelruletest.FaultKind{tt.kind}, rs[0].Faults)
			assert.Equal(t, tt.stored == 0, rs[0].TransferID == "")

			res, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			assert.Equal(t, 1, res.Attempts)
		})
	}
}

// TestGoAwayGracefulShutdown: a GOAWAY fault that strikes while another
// stream's answer is still going out (its DATA held back by the client's
// flow-control window of zero) is a GOAWAY NO_ERROR naming that stream as
// the last one processed: the faulted request, above it, is not acted on,
// nor are the requests the client sends afterwards (to the operations or
// the control plane), and none of them gets a frame, not even a 401; the held answer is
// then delivered in full once the client opens its window, and only then
// is the connection closed.
func TestGoAwayGracefulShutdown(t *testing.T) {
	const served = "travelruletest: request"
	events := newLogEvents()
	srv := newTLSServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithLogger(slog.New(events)))
	body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	tok := token(t, srv)
	h := dialH2(t, srv, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}) // no DATA may be sent to us

	h.post(1, "/transfers/initiate", tok, body, false)
	events.wait(t, served, 1) // recorded as answered 200; its DATA waits for a window
	// The served line comes before the server's writer has sent stream
	// 1's HEADERS; wait for them, so that the rest of the test reads
	// what follows.
	for {
		f, err := h.read()
		require.NoError(t, err)
		if f.typ == h2Settings && !f.flags.Has(h2Ack) {
			h.ackSettings()
		}
		require.NotEqual(t, h2GoAway, f.typ, "a GOAWAY before the fault")
		if f.typ == h2Headers && f.stream == 1 {
			break
		}
	}
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultGoAway, Rate: 1, Times: 1})
	h.post(3, "/transfers/initiate", tok, body, false)
	f, err := h.read()
	require.NoError(t, err)
	require.Equal(t, h2GoAway, f.typ, "%+v", f)
	assert.Equal(t, http2.ErrCodeNo, f.code)
	assert.Equal(t, uint32(1), f.last, "stream 1, taken before the fault, is the last processed")
	// Stream 3's record is stored after its GOAWAY went out; wait for it,
	// so that it is the second record whatever the scheduler does with
	// the streams sent next.
	events.wait(t, served, 2)

	// The client had not seen the GOAWAY when it sent streams 5, 7 and 9.
	h.post(5, "/transfers/initiate", tok, body, false)
	h.post(7, "/sandbox/inquiries", tok, []byte(`{"callback":"http://127.0.0.1:1/cb"}`), false)
	h.post(9, "/transfers/initiate", "not-a-token", body, false) // not even a 401
	events.wait(t, served, 5)
	rs := srv.Requests()
	require.Len(t, rs, 5)
	assert.Equal(t, http.StatusOK, rs[0].Status)
	assert.NotEmpty(t, rs[0].TransferID)
	assert.Equal(t, []travelruletest.FaultKind{travelruletest.FaultGoAway}, rs[1].Faults)
	for _, r := range rs[1:] {
		assert.Zero(t, r.Status, "%s: no answer", r.Path)
		assert.Empty(t, r.TransferID, "%s: not acted on", r.Path)
	}
	assert.Len(t, srv.Transfers(), 1)
	st := srv.Stats()
	assert.Equal(t, 1, st.Initiated)
	assert.Zero(t, st.Inquiries)
	assert.Equal(t, map[int]int{http.StatusOK: 1, 0: 4}, st.ByStatus)

	// Stream 1's answer is delivered in full once the window opens, and
	// nothing of streams 3 to 9 ever comes; then the connection ends.
	require.NoError(t, h.fr.WriteWindowUpdate(1, 1<<20))
	var data []byte
	for {
		f, err := h.read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Contains(t, []uint32{0, 1}, f.stream, "a frame of a stream above last-stream-id: %+v", f)
		if f.typ == h2Data {
			data = append(data, f.data...)
			if f.flags.Has(h2EndStream) {
				_, err := h.read()
				require.ErrorIs(t, err, io.EOF, "closed once stream 1 was answered")
				break
			}
		}
	}
	assert.Contains(t, string(data), rs[0].TransferID, "the whole answer of stream 1")
	assert.True(t, json.Valid(data))
}

// TestGoAwayProcessesLowerStreams: a GOAWAY fault on a request whose
// stream is below one already taken declares that higher stream the last
// processed, and so the faulted request is acted on and answered in full
// before the connection closes.
func TestGoAwayProcessesLowerStreams(t *testing.T) {
	srv := newTLSServer(t, travelruletest.WithoutCallbacks())
	body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	tok := token(t, srv)
	h := dialH2(t, srv)
	// Stream 1's headers, its body held back: the sandbox draws its faults
	// only once it read the body.
	h.headers(1, "/transfers/initiate", tok, len(body))
	h.post(3, "/transfers/initiate", tok, body, false)
	frames := h.end(3)
	require.Len(t, frames, 2)
	assert.Equal(t, h2Data, frames[1].typ, "stream 3 answered: taken")

	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultGoAway, Rate: 1, Times: 1})
	require.NoError(t, h.fr.WriteData(1, true, body))
	frames = h.end(1)
	require.Equal(t, h2GoAway, frames[0].typ, "%+v", frames)
	assert.Equal(t, uint32(3), frames[0].last)
	assert.Equal(t, http2.ErrCodeNo, frames[0].code)
	frames = h.end(1)
	require.Len(t, frames, 2, "stream 1, below last-stream-id, is answered in full: %+v", frames)
	assert.Contains(t, string(frames[1].data), `"status":true`)
	_, err = h.read()
	assert.ErrorIs(t, err, io.EOF, "closed once every stream at or below last-stream-id was answered")

	rs := srv.Requests()
	require.Len(t, rs, 2)
	assert.Equal(t, http.StatusOK, rs[1].Status)
	assert.Equal(t, []travelruletest.FaultKind{travelruletest.FaultGoAway}, rs[1].Faults)
	assert.NotEmpty(t, rs[1].TransferID)
	assert.Len(t, srv.Transfers(), 2)
}

// TestProxyUnavailable: FaultProxyUnavailable stores the transfer, then
// answers 503 without Retry-After with a proxy's plain-text body; with an
// Idempotency-Key, the retry is replayed the original success.
func TestProxyUnavailable(t *testing.T) {
	for _, newSrv := range []func(testing.TB, ...travelruletest.Option) *travelruletest.Server{newServer, newTLSServer} {
		srv := newSrv(t, travelruletest.WithoutCallbacks(),
			travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultProxyUnavailable, Rate: 1, Times: 1, RetryAfter: time.Second}))
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/transfers/initiate",
			strings.NewReader(`{"asset":"BTC","amount":"1","callback":"https://x.example/cb","originator":{"personType":"natural","firstName":"A","lastName":"B","dateOfBirth":"2000-01-01"},"beneficiary":{"personType":"natural","firstName":"C","lastName":"D","dateOfBirth":"2000-01-01"}}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token(t, srv))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k1")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Empty(t, resp.Header.Values("Retry-After"))
		assert.Equal(t, "text/plain", resp.Header.Get("Content-Type"))
		assert.Contains(t, string(b), "upstream connect error or disconnect/reset before headers")
		ts := srv.Transfers()
		require.Len(t, ts, 1, "acted on before the 503")
		rs := srv.Requests()
		require.Len(t, rs, 1)
		assert.Equal(t, ts[0].ID, rs[0].TransferID)
		assert.Equal(t, []travelruletest.FaultKind{travelruletest.FaultProxyUnavailable}, rs[0].Faults)

		srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultProxyUnavailable, Rate: 1, Times: 1})
		res, err := newClient(t, srv, travelrule.WithIdempotency(), travelrule.WithHTTPClient(srv.Client())).InitiateTransfer(
			context.Background(), validRequest("http://127.0.0.1:1/cb"))
		require.NoError(t, err, "the keyed retry is replayed the stored success")
		assert.Equal(t, 2, res.Attempts)
		require.Len(t, srv.Transfers(), 2)
		assert.Equal(t, srv.Transfers()[1].ID, res.TransferID)
		assert.Equal(t, 1, srv.Stats().Replayed)
	}
}
