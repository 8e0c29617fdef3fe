package travelruletest

import (
	"errors"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Operation names the service's operations, as a set of bits.
type Operation uint8

// The operations of the service: the endpoints that take a bearer token
// and may be hit by injected faults ([Fault]).
const (
	// OpInitiate is POST /transfers/initiate.
	OpInitiate Operation = 1 << iota
	// OpResolve is POST /transfers/inquiryResolution.
	OpResolve
	// OpGenerateTravelAddress is POST /travel-address/generate.
	OpGenerateTravelAddress
	// OpDecodeTravelAddress is POST /travel-address/decode.
	OpDecodeTravelAddress
	// OpSubmitTxID is POST /transfers/txId.
	OpSubmitTxID
)

// allOps are the bits of every operation.
const allOps = OpInitiate | OpResolve | OpGenerateTravelAddress | OpDecodeTravelAddress | OpSubmitTxID

// opNames are the names of the operations, bit by bit.
var opNames = [...]string{"initiate", "resolve", "generate-travel-address", "decode-travel-address", "submit-txid"}

// String returns the names of the operations in o joined by "|", such as
// "initiate" or "initiate|resolve", "" for none, or "Operation(n)" when o
// has a bit that names no operation.
func (o Operation) String() string {
	if o&^allOps != 0 {
		return "Operation(" + strconv.Itoa(int(o)) + ")"
	}
	var names []string
	for i, name := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, "|")
}

// FaultKind is a kind of injected fault. The kinds, by the names their
// String method gives (the names [ParseFault], the control plane and
// "travelrule sandbox --fault" take), and when they strike:
//
//   - [FaultLatency] "latency": delays the request by Fault.Latency.
//   - [FaultRateLimit] "rate-limit": 429 with Retry-After, before acting.
//   - [FaultUnavailable] "unavailable": 503 with Retry-After, before acting.
//   - [FaultResetRefusedStream] "reset-refused-stream": RST_STREAM
//     REFUSED_STREAM (HTTP/1.1: a closed connection), before acting.
//   - [FaultGoAway] "goaway": a graceful GOAWAY; acts on the request only
//     if the GOAWAY says so (HTTP/1.1: a closed connection, before acting).
//   - [FaultInternal] "internal": 500 after the transfer was stored.
//   - [FaultDrop] "drop": the connection dropped after acting.
//   - [FaultResetProtocolError] "reset-protocol-error": RST_STREAM
//     PROTOCOL_ERROR after acting (HTTP/1.1: a dropped connection).
//   - [FaultProxyUnavailable] "proxy-unavailable": a proxy's 503 without
//     Retry-After, after acting.
//   - [FaultGatewayUnavailable] "gateway-unavailable": a gateway's 503
//     with Retry-After and a maintenance page, after acting.
type FaultKind uint8

// The kinds of fault. Some strike before the request is acted on
// (FaultRateLimit, FaultUnavailable, FaultResetRefusedStream), and what
// the client sees proves the service did nothing; the others strike after
// the transfer was stored (or the resolution recorded), the case a client
// must not mistake for a failure, and what the client sees proves nothing
// either way. FaultLatency delays a request; FaultGoAway shuts its HTTP/2
// connection down gracefully, and acts on the request only if the GOAWAY
// says so.
const (
	// FaultLatency delays the answer by Fault.Latency, before anything
	// else is done; the delay ends early, without an answer, when the
	// client gives up on the request.
	FaultLatency FaultKind = iota + 1
	// FaultRateLimit answers 429 with Retry-After, before acting: a rate
	// limiter's refusal.
	FaultRateLimit
	// FaultUnavailable answers 503 with Retry-After, before acting, in the
	// service's error envelope: a gateway with no healthy upstream. The
	// client cannot tell it from FaultGatewayUnavailable.
	FaultUnavailable
	// FaultInternal acts on the request (stores the transfer, records the
	// resolution) and then answers 500.
	FaultInternal
	// FaultDrop acts on the request and then closes the connection without
	// answering. On an HTTP/2 connection only the request's stream ends,
	// reset with RST_STREAM INTERNAL_ERROR, as net/http does for a handler
	// that aborts.
	FaultDrop
	// FaultResetProtocolError acts on the request and then resets its
	// HTTP/2 stream with RST_STREAM PROTOCOL_ERROR, before any answer: a
	// reset that says nothing of whether the stream was processed, and
	// that net/http's HTTP/2 client takes as one it may replay. On an
	// HTTP/1 connection it is a FaultDrop.
	FaultResetProtocolError
	// FaultResetRefusedStream resets the request's HTTP/2 stream with
	// RST_STREAM REFUSED_STREAM before acting, as RFC 9113 (section 8.7)
	// has it: nothing is stored or recorded as done. A client cannot tell
	// it from a proxy's REFUSED_STREAM after forwarding (haproxy 2.6's), so
	// the SDK resends it only for a call that may be repeated. On an HTTP/1
	// connection it closes the connection without answering, before
	// acting.
	FaultResetRefusedStream
	// FaultGoAway shuts the request's HTTP/2 connection down gracefully as
	// the request arrives, as nginx does at keepalive_requests or on a
	// reload (RFC 9113, section 6.8): a GOAWAY with error code NO_ERROR
	// whose last-stream-id is the highest stream the sandbox had taken
	// before this request. The request is acted on and answered in full
	// only if its stream is at or below that id (a higher stream was
	// taken first); above it, it is not acted on and gets no answer. So
	// are the streams the client opens afterwards, before it sees the
	// GOAWAY; every stream at or below the id is served in full, and then
	// the connection is closed. The sandbox never declares unprocessed a
	// stream it acted on. On an HTTP/1 connection it closes the connection
	// without answering, before acting.
	FaultGoAway
	// FaultProxyUnavailable acts on the request and then answers 503
	// without Retry-After, with the plain-text body of a proxy whose
	// upstream reset the connection before answering: a 503 that does not
	// prove the service did nothing. Fault.RetryAfter is not used.
	FaultProxyUnavailable
	// FaultGatewayUnavailable acts on the request and then answers 503
	// with Retry-After and a gateway's maintenance page (JSON, not the
	// service's error envelope), as nginx does with
	// "error_page 502 504 =503 /maintenance.json" and
	// "add_header Retry-After 1 always" when its upstream stored the
	// transfer and then failed or timed out: a 503 with Retry-After that
	// does not prove the service did nothing.
	FaultGatewayUnavailable
)

// lastFaultKind is the last valid FaultKind.
const lastFaultKind = FaultGatewayUnavailable

// String returns the kind's name, such as "rate-limit".
func (k FaultKind) String() string {
	switch k {
	case FaultLatency:
		return "latency"
	case FaultRateLimit:
		return "rate-limit"
	case FaultUnavailable:
		return "unavailable"
	case FaultInternal:
		return "internal"
	case FaultDrop:
		return "drop"
	case FaultResetProtocolError:
		return "reset-protocol-error"
	case FaultResetRefusedStream:
		return "reset-refused-stream"
	case FaultGoAway:
		return "goaway"
	case FaultProxyUnavailable:
		return "proxy-unavailable"
	case FaultGatewayUnavailable:
		return "gateway-unavailable"
	}
	return "FaultKind(" + strconv.Itoa(int(k)) + ")"
}

// Fault is a fault injected into a share of the requests to the service's
// operations. Faults are drawn after authentication (a request with a bad
// token is always answered 401 or 403) and after the body is read. Each
// authenticated request draws once, in list order, for each fault that
// applies to its operation and has not used up Times: it is hit with
// probability Rate (every time when Rate is zero). Several faults may hit one request: their latencies add
// up; of the faults before acting (FaultRateLimit, FaultUnavailable,
// FaultResetRefusedStream) the first one that hits applies; of the others
// (FaultGoAway, and the faults after acting: FaultInternal, FaultDrop,
// FaultResetProtocolError, FaultProxyUnavailable, FaultGatewayUnavailable)
// the first one that hits applies, a fault after acting only to an answer
// that would have been 2xx (a 400 or 404 stays as it is). A fault before
// acting takes precedence over the others, which then do not count as
// fired.
type Fault struct {
	// Kind is the kind of fault.
	Kind FaultKind
	// Rate is the share of requests hit, above 0 and at most 1; zero, the
	// value a Fault without it gets, hits every request, as the CLI's and
	// the control plane's faults without a rate do. To hit none, leave the
	// fault out.
	Rate float64
	// Ops are the operations the fault applies to; zero means all of them.
	Ops Operation
	// Times is how many requests the fault hits at most; zero means no
	// limit. Rate 1 with Times 1 hits exactly the next request.
	Times int
	// RetryAfter is the wait the Retry-After header of a FaultRateLimit,
	// FaultUnavailable or FaultGatewayUnavailable asks for, in whole
	// seconds rounded up; zero sends "Retry-After: 0".
	RetryAfter time.Duration
	// Latency is the delay a FaultLatency adds.
	Latency time.Duration
}

func (f Fault) check() error {
	switch {
	case f.Kind < FaultLatency || f.Kind > lastFaultKind:
		return errors.New("travelruletest: Fault: unknown kind")
	case math.IsNaN(f.Rate) || f.Rate < 0 || f.Rate > 1:
		return errors.New("travelruletest: Fault: rate must be at most 1, not negative (zero, unset, hits every request)")
	case f.Ops&^allOps != 0:
		return errors.New("travelruletest: Fault: unknown operation")
	case f.Times < 0 || f.RetryAfter < 0 || f.Latency < 0:
		return errors.New("travelruletest: Fault: negative Times, RetryAfter or Latency")
	case f.Latency > MaxFaultLatency || f.RetryAfter > MaxFaultLatency:
		return errors.New("travelruletest: Fault: Latency or RetryAfter above MaxFaultLatency")
	}
	return nil
}

// MaxFaultLatency bounds a fault's Latency and RetryAfter, and the delay
// the latency faults of one request add up to (they added up past
// time.Duration's range, to no delay at all). A held request ends
// earlier when its client goes away.
const MaxFaultLatency = 24 * time.Hour

func (f Fault) appliesTo(op Operation) bool { return f.Ops == 0 || f.Ops&op != 0 }

// rate is the share of requests f hits: Rate, or 1 when Rate is zero
// (unset).
func (f Fault) rate() float64 {
	if f.Rate == 0 {
		return 1
	}
	return f.Rate
}

// faultSlot is a fault and how many requests it has hit.
type faultSlot struct {
	Fault
	fired int
}

// faultPlan is what the faults decided for one request.
type faultPlan struct {
	latency time.Duration
	pre     *Fault // a fault before acting
	post    *Fault // a GOAWAY or a fault after acting
	postIdx int
	gen     uint64
	fired   []FaultKind
}

// faultSchedule is the faults injected, with how many requests each hit,
// and the generator that draws the requests they hit.
type faultSchedule struct {
	mu    sync.Mutex  // guards every field
	slots []faultSlot // the faults, in list order
	gen   uint64      // bumped by each set, so that a refund never reaches a fault that replaced the one drawn
	off   bool        // the console's switch turned injection off: no fault fires, until it or a set turns it on
	rng   *mrand.Rand
}

func newFaultSchedule(seed uint64) *faultSchedule {
	return &faultSchedule{rng: mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// SetFaults replaces the injected faults with faults (none turns injection
// off) and resets their Times counts; it turns the console's switch (see
// [WithConsole]) back on. It is safe to call while requests are
// served; a request already past its draw keeps the faults it drew. It
// panics on an invalid fault.
func (s *Server) SetFaults(faults ...Fault) {
	slots := make([]faultSlot, len(faults))
	for i, f := range faults {
		if err := f.check(); err != nil {
			panic(err)
		}
		slots[i] = faultSlot{Fault: f}
	}
	fs := s.faults
	fs.mu.Lock()
	fs.slots = slots
	fs.gen++
	fs.off = false
	fs.mu.Unlock()
	s.records.changedNow()
}

// switchFaults turns the injection of the faults set on or off, keeping
// them and their counts: the console's switch.
func (s *Server) switchFaults(on bool) {
	fs := s.faults
	fs.mu.Lock()
	fs.off = !on
	fs.mu.Unlock()
	s.records.changedNow()
}

// draw decides the faults of one request to op.
func (fs *faultSchedule) draw(op Operation) faultPlan {
	var p faultPlan
	fs.mu.Lock()
	defer fs.mu.Unlock()
	p.gen = fs.gen
	if fs.off {
		return p
	}
	for i := range fs.slots {
		f := &fs.slots[i]
		if !f.appliesTo(op) || f.Times > 0 && f.fired >= f.Times {
			continue
		}
		if fs.rng.Float64() >= f.rate() { // drawn whatever the rate: the same seed gives the same faults
			continue
		}
		switch f.Kind {
		case FaultLatency:
			p.latency = min(p.latency+f.Latency, MaxFaultLatency) // each at most MaxFaultLatency: no overflow
		case FaultRateLimit, FaultUnavailable, FaultResetRefusedStream:
			if p.pre != nil {
				continue
			}
			ff := f.Fault
			p.pre = &ff
		default: // a GOAWAY, or after acting
			if p.post != nil {
				continue
			}
			ff := f.Fault
			p.post, p.postIdx = &ff, i
		}
		f.fired++
		p.fired = append(p.fired, f.Kind)
	}
	if p.pre != nil && p.post != nil {
		fs.refundLocked(&p)
	}
	return p
}

// refund returns the post fault of p, which was not applied, to its Times
// budget and drops it from the plan.
func (fs *faultSchedule) refund(p *faultPlan) {
	if p.post == nil {
		return
	}
	fs.mu.Lock()
	fs.refundLocked(p)
	fs.mu.Unlock()
}

// refundLocked is refund with fs.mu held.
func (fs *faultSchedule) refundLocked(p *faultPlan) {
	if p.gen == fs.gen && fs.slots[p.postIdx].fired > 0 {
		fs.slots[p.postIdx].fired--
	}
	for i, k := range p.fired {
		if k == p.post.Kind {
			p.fired = append(p.fired[:i:i], p.fired[i+1:]...)
			break
		}
	}
	p.post = nil
}

// hold holds the request r for the latency its faults drew, logging that
// it does; it reports whether the whole wait passed (the client and the
// server are still there).
func (s *Server) hold(r *http.Request, latency time.Duration) bool {
	attrs := []slog.Attr{slog.String("path", r.URL.Path), slog.Duration("latency", latency)}
	if id := requestID(r.Header.Get("X-Request-Id")); id != "" {
		attrs = append(attrs, slog.String("request_id", id))
	}
	s.log(r.Context(), "travelruletest: holding request", attrs...)
	return s.pause(r.Context(), latency)
}

// requestID returns a client's X-Request-Id for the log when it is a short
// identifier (letters, digits, '.', '_', '-'), else "".
func requestID(id string) string {
	if len(id) > 64 {
		return ""
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return ""
		}
	}
	return id
}

// beforeActing is the answer of a fault f before acting: 429 or 503 with
// Retry-After, or a refused stream.
func beforeActing(f *Fault) *answer {
	status, code, msg := http.StatusTooManyRequests, codeRateLimited, "too many requests"
	switch f.Kind {
	case FaultResetRefusedStream:
		return &answer{reset: FaultResetRefusedStream}
	case FaultUnavailable:
		status, code, msg = http.StatusServiceUnavailable, codeServiceUnavailable, "service unavailable"
	}
	a := errorAnswer(status, code, msg)
	a.header = []string{"Retry-After", retryAfterSeconds(f.RetryAfter)}
	return a
}

// retryAfterSeconds renders d as whole seconds, rounded up.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// proxyResetBody is what a proxy (Envoy's words) answers when its upstream
// reset the connection before answering.
const proxyResetBody = "upstream connect error or disconnect/reset before headers. reset reason: connection termination"

// maintenanceBody is a gateway's maintenance page, served in place of an
// upstream's failure.
const maintenanceBody = `{"maintenance":true,"message":"The service is temporarily unavailable. Please try again shortly."}`

// afterActing is what a fault f after acting makes of a, the operation's
// own answer.
func afterActing(f *Fault, a *answer) *answer {
	var e *answer
	switch f.Kind {
	case FaultDrop:
		e = &answer{drop: true}
	case FaultResetProtocolError:
		e = &answer{reset: f.Kind}
	case FaultProxyUnavailable:
		e = &answer{status: http.StatusServiceUnavailable, body: []byte(proxyResetBody),
			header: []string{"Content-Type", "text/plain"}}
	case FaultGatewayUnavailable:
		e = &answer{status: http.StatusServiceUnavailable, body: []byte(maintenanceBody),
			header: []string{"Retry-After", retryAfterSeconds(f.RetryAfter)}}
	default:
		e = errorAnswer(http.StatusInternalServerError, codeInternal, "internal error")
	}
	e.transferID, e.replayed = a.transferID, a.replayed
	return e
}
