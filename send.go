package travelrule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-retryablehttp"
)

// This file is the send path of every call: send builds the request, lets
// go-retryablehttp run the attempts, and reads the answer. After each
// attempt the hooks gather its facts and apply the decision of retry.go;
// the final error is built once, by end.

// call is one logical call (one InitiateTransfer, ResolveInquiry,
// SubmitTxID, ...) across its attempts.
type call struct {
	client     *Client
	op         string
	method     string // POST unless set
	url        string // without the query in what errors show
	body       []byte
	repeatable bool   // may be sent twice: ResolveInquiry, or any call WithIdempotency
	key        string // the Idempotency-Key header, or ""
	pii        interface{ piiValues() []string }

	// What an *OutcomeUnknownError reports.
	txID, transferID, callback string

	opts        *callOptions  // the call's options (calloptions.go); nil without
	policy      policy        // the client's retry settings, with the call's budget
	timeout     time.Duration // the attempt time-out: the client's or the call's
	status      int           // the last answer's status, for CallEnd
	answered2xx http.Header   // the headers of the 2xx answer, if one came

	hidden   int8              // hidesTransferID's answer for hiddenID: 0 not asked, 1 shown, 2 hidden
	hiddenID string            // the transfer id hidden is about
	decision Decision          // ResolveInquiry's, for CallInfo
	info     *CallInfo         // while observers watch the call (observer.go)
	obsCtx   []context.Context // the context each observer's StartCall returned

	callEnd    *CallEnd          // what the observers are told of the call's end, while they are
	attempt    *AttemptInfo      // the current attempt, while AttemptObservers watch it
	attemptEnd *AttemptEnd       // what they are told of its end, while they are
	attemptCtx []context.Context // the context each AttemptObserver's StartAttempt returned
	added      []string          // the headers the observers added to the current attempt's request
	resentAt   int32             // resent when the current attempt started

	ctx      context.Context       // the caller's
	rc       retryablehttp.Client  // the retry loop, with this call's hooks
	req      retryablehttp.Request // the request of the current attempt
	bound    sharedBound           // the first attempt's context, when it is bounded by a shared deadline
	trace    httptrace.ClientTrace // gathers the facts of the transport's goroutines
	stop     context.CancelFunc    // ends the current attempt's context
	stopPrev context.CancelFunc    // ends the previous attempt's context

	attempts  int          // the retry loop's attempt number
	resent    atomic.Int32 // requests a transport wrote again within one attempt
	wrote     atomic.Bool  // the current attempt wrote its request headers
	traced    atomic.Bool  // the transport reported a round trip's start in the current attempt
	rtWrote   atomic.Bool  // headers written since the transport's last round trip began
	answered  atomic.Bool  // a final answer began since the transport's last round trip began
	informed  atomic.Int64 // header bytes of the 1xx answers since the transport's last round trip began
	refreshed bool         // a 401 or 403 was retried with a new token
	auths     []string     // every Authorization header the call sent, the rejected ones too
	noToken   error        // after a 401 or 403: why no new token could be had
	acted     bool         // the service may have acted on some attempt
	actedOn   bool         // the service may have acted on an attempt that a retry followed
	next      decision     // the decision after the last attempt
}

// answer is a 2xx answer, read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// send sends the call's body with POST and returns the 2xx answer, or the
// error of the last attempt; end turns that into the call's final error.
func (cl *call) send(ctx context.Context) (answer, error) {
	c := cl.client
	if err := ctx.Err(); err != nil {
		return answer{}, fmt.Errorf("travelrule: %s: %w", cl.op, err) // nothing was sent
	}
	cl.settle()
	ctx, err := cl.observe(ctx)
	if err != nil {
		return answer{}, err // nothing was sent
	}
	auth, err := c.tokens.header(ctx)
	if err != nil {
		return answer{}, cl.transportError(err) // nothing was sent
	}
	cl.trace = httptrace.ClientTrace{GetConn: cl.getConn, GotConn: cl.gotConn, WroteHeaders: cl.wroteHeaders}
	if cl.repeatable {
		cl.trace.GotFirstResponseByte = cl.gotFirstByte
		cl.trace.Got1xxResponse = cl.got1xx
	}
	cl.ctx = httptrace.WithClientTrace(ctx, &cl.trace)
	if cl.info != nil && len(c.watch.attempts) > 0 {
		cl.ctx = context.WithValue(cl.ctx, attemptMark{}, cl) // see startAttempt
	}
	if cl.method == "" {
		cl.method = http.MethodPost
	}
	hr, err := http.NewRequestWithContext(cl.attemptContext(cl.startAttempt(cl.ctx, 1)), cl.method, cl.url, nil)
	if err != nil {
		cl.endAttempt(&attempt{n: 1}, err, decision{why: "the request could not be made"})
		return answer{}, fmt.Errorf("travelrule: %s: %w", cl.op, err)
	}
	defer cl.endAttempts()
	hr.Body, hr.ContentLength = cl.newBody(), int64(len(cl.body))
	if cl.repeatable {
		// A call that may not be repeated gets no GetBody: see getBody.
		hr.GetBody = cl.getBody
	}
	h := hr.Header
	h["Authorization"] = []string{auth}
	cl.auths = append(cl.auths, auth)
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json"}
	h["User-Agent"] = []string{c.userAgent}
	if cl.key != "" {
		h["Idempotency-Key"] = []string{cl.key}
	}
	if cl.opts != nil {
		for k, v := range cl.opts.header { // none of the client's own: headerRefusal
			h[k] = v
		}
	}
	cl.observerHeaders(h)
	cl.req = retryablehttp.Request{Request: hr} // the body is rewound by prepareRetry
	cl.rc = retryablehttp.Client{
		HTTPClient:   c.hc,
		RetryMax:     cl.policy.retryMax,
		CheckRetry:   cl.checkRetry,
		Backoff:      cl.backoff,
		PrepareRetry: cl.prepareRetry,
		ErrorHandler: retryablehttp.PassthroughErrorHandler, // keep the last answer when giving up
	}
	cl.attempts = 1
	resp, err := cl.rc.Do(&cl.req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return answer{}, cl.transportError(err)
	}
	defer resp.Body.Close()
	return cl.read(resp)
}

// errPanicked is the error observers are told a call ended with when the
// transport (or a hook of the client's) panicked during it.
var errPanicked = errors.New("a panic ended the call (the transport's or an observer's)")

// endOnPanic ends the observation of the current attempt and of the call,
// if they are observed, when send panics (a transport of the caller's, or
// an observer), so that no observer's span or journal entry stays open;
// the panic goes on. Once the request was handed to the transport, the
// call's outcome is unknown (an *OutcomeUnknownError). Without observers
// it recovers nothing.
func (cl *call) endOnPanic() {
	if cl.info == nil && cl.attempt == nil {
		return
	}
	v := recover()
	if v == nil {
		return
	}
	// Deferred, so that each runs even if an observer panics in the one
	// before: the call is ended after the attempt, and the first panic
	// goes on last, as it was.
	defer panic(v)
	defer func() {
		if cl.attempts == 0 {
			cl.finishAs(CallNotDone, errPanicked) // nothing was handed to the transport
			return
		}
		cl.acted = true
		e := &OutcomeUnknownError{Op: cl.op, Attempts: cl.sent(), TxID: cl.txID, TransferID: cl.transferID,
			hideTransferID: cl.hidesTransferID(), Callback: cl.callback, CallbackRef: CallbackRef(cl.callback),
			IdempotencyKey: cl.key, Err: errPanicked}
		cl.finishAs(CallOutcomeUnknown, e)
	}()
	cl.endAttempt(&attempt{n: cl.attempts, written: true}, errPanicked, decision{acted: true, why: "a panic ended the attempt"})
}

// settle takes the client's settings and the call's options over them.
func (cl *call) settle() {
	cl.policy, cl.timeout = cl.client.policy, cl.client.attemptTimeout
	if o := cl.opts; o != nil {
		if o.retryMax >= 0 {
			cl.policy.retryMax = o.retryMax
		}
		if o.attemptTimeout > 0 {
			cl.timeout = o.attemptTimeout
		}
		if o.key != "" {
			cl.key = o.key
		}
	}
}

// read reads the final answer within the attempt's time-out.
func (cl *call) read(resp *http.Response) (answer, error) {
	cl.status = resp.StatusCode
	data, err := readBody(resp, cl.client.maxResponse)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := newAPIError(cl.op, resp.StatusCode, resp.Header, data, cl.secrets()).withRoute(cl.method, cl.url)
		if isAuthStatus(resp.StatusCode) {
			e.cause = cl.noToken
		}
		return answer{}, e
	}
	if err != nil {
		// The service answered 2xx, so it may have acted; its answer could
		// not be read.
		e := unexpectedAnswer(cl.op, resp.StatusCode, resp.Header, data, cl.secrets())
		e.reason = transportText(err)
		return answer{}, e
	}
	cl.answered2xx = resp.Header
	return answer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// checkRetry runs after every attempt: it gathers the attempt's facts,
// takes retry.go's decision and applies it.
func (cl *call) checkRetry(_ context.Context, resp *http.Response, err error) (bool, error) {
	a := cl.facts(resp, err)
	if resp != nil && resp.StatusCode < 200 {
		// The body of a 101 is the connection itself, which no context
		// ends: go-retryablehttp's drain before a retry would wait for
		// the server to close it. Nothing of it is read.
		resp.Body.Close()
	}
	d := decide(a, cl.policy)
	if a.status != 0 {
		cl.status = a.status
	}
	cl.endAttempt(&a, err, d)
	cl.next = d
	cl.acted = cl.acted || d.acted
	cl.actedOn = cl.actedOn || d.acted && d.retry
	if isAuthStatus(a.status) && d.retry {
		cl.refreshed = true
	}
	if l := cl.client.logger; l != nil {
		msg := "travelrule: attempt ended"
		if d.retry {
			msg = "travelrule: retrying"
		}
		l.Debug(msg, "op", cl.op, "attempt", a.n, "status", a.status, "reason", d.why, "wait", d.wait)
	}
	if d.retry {
		// go-retryablehttp drains this attempt's answer in this attempt's
		// context, then waits in the request's: the caller's alone, so
		// that neither eats into the next attempt's time (prepareRetry
		// gives the next attempt its own).
		cl.req.Request = cl.req.Request.WithContext(cl.ctx)
	}
	return d.retry, nil
}

// facts gathers what retry.go decides on after an attempt. After a 401 it
// asks the token cache for a new token, the one fact that costs a fetch.
func (cl *call) facts(resp *http.Response, err error) attempt {
	a := attempt{
		n:          cl.attempts,
		repeatable: cl.repeatable,
		err:        err,
		written:    cl.wrote.Load() || !cl.traced.Load(),
		ctxDone:    cl.ctx.Err() != nil,
		refreshed:  cl.refreshed,
		jitter:     rand.Float64(),
	}
	if dl, ok := cl.ctx.Deadline(); ok {
		a.untilDone, a.hasDeadline = time.Until(dl), true
	}
	if resp == nil {
		a.unprocessed = declaredUnprocessed(err)
		return a
	}
	a.status = resp.StatusCode
	switch a.status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		a.retryAfter, a.hasRetryAfter = retryAfter(resp.Header, time.Now())
	case http.StatusUnauthorized, http.StatusForbidden:
		cl.tokenRefused(resp, &a)
	}
	return a
}

// tokenRefused gathers the facts of a 401 or 403: whether a token other
// than the rejected one is now at hand. A 401 always asks for one. A 403 is
// how the live service answers an expired token, and also a forbidden
// operation, a proxy's or a firewall's refusal:
//
//   - a call that may not be repeated asks for a new token only when the
//     403 is the service's own answer about the token (its envelope, with
//     the code FORBIDDEN or UNAUTHORIZED): a firewall's 403 may come after
//     the service acted, and the retry would send the transfer again;
//   - a token that already met a 403 that a new token did not cure (the
//     operation is forbidden) is not replaced again, so that a lasting 403
//     costs no login per call; it is renewed before it expires all the same.
func (cl *call) tokenRefused(resp *http.Response, a *attempt) {
	tokens := cl.client.tokens
	var rejected string // unknown if the transport gave no request back: refresh anyway
	if resp.Request != nil {
		rejected = resp.Request.Header.Get("Authorization")
	}
	if a.status == http.StatusForbidden {
		switch {
		case !cl.repeatable && !serviceRefusedToken(resp, cl.client.maxResponse):
			return
		case tokens.forbidden(rejected):
			return
		case cl.refreshed:
			// A new token met the same 403: the operation is forbidden.
			tokens.markForbidden(rejected)
			return
		}
	}
	switch {
	case !cl.refreshed && a.n <= cl.policy.retryMax:
		a.newToken, cl.noToken = tokens.refresh(cl.ctx, rejected)
	case a.status == http.StatusUnauthorized || !cl.refreshed:
		// No retry follows: the next call fetches a new token.
		tokens.reject(rejected)
	}
}

// serviceRefusedToken reports whether a 403 answer is the service's own
// refusal of a token: its error envelope with the code FORBIDDEN or
// UNAUTHORIZED. It reads the body (through the size limit) and puts it
// back for the answer's reader.
func serviceRefusedToken(resp *http.Response, limit int64) bool {
	body, err := readBody(resp, limit)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	if err != nil {
		return false
	}
	var eb errorBody
	if json.Unmarshal(body, &eb) != nil {
		return false
	}
	codes := eb.Errors.codes()
	return matchesCode(codes, ErrForbidden) || matchesCode(codes, ErrUnauthorized)
}

// backoff hands go-retryablehttp the wait of the last decision.
func (cl *call) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return cl.next.wait
}

// prepareRetry readies the request for the next attempt: its own context
// (timeout.go), a new body, the cached token (a 401 may have renewed it)
// and fresh facts.
func (cl *call) prepareRetry(r *http.Request) error {
	auth, err := cl.client.tokens.header(cl.ctx)
	if err != nil {
		return err
	}
	*r = *r.WithContext(cl.attemptContext(cl.startAttempt(cl.ctx, cl.attempts+1)))
	cl.stopPrev() // the previous attempt's answer has been drained
	r.Body = cl.newBody()
	r.Header = r.Header.Clone() // the previous attempt's request may still be read
	r.Header["Authorization"] = []string{auth}
	cl.observerHeaders(r.Header)
	if !slices.Contains(cl.auths, auth) {
		cl.auths = append(cl.auths, auth)
	}
	cl.attempts++
	cl.wrote.Store(false)
	cl.traced.Store(false)
	return nil
}

// getConn runs when net/http's transport looks for a connection, at the
// start of each of its round trips.
func (cl *call) getConn(string) { cl.roundTripStarts() }

// gotConn runs when a transport has a connection for a round trip. It is
// the only start an HTTP/2 round trip on a connection net/http's pool
// already holds reports: net/http hands such a request to its HTTP/2
// client before it looks for a connection itself, so no GetConn comes
// (and when that connection turns out unusable before the request is
// written, net/http takes over and fails with "cannot rewind body").
func (cl *call) gotConn(httptrace.GotConnInfo) { cl.roundTripStarts() }

// roundTripStarts records that a transport began a round trip of the
// current attempt. Until then the request is taken to have been written,
// and so it is whenever the transport has never reported writing one
// (Client.tracesWrites): a transport that passes on a start signal but not
// the writes would otherwise have every failure taken for one before
// sending.
func (cl *call) roundTripStarts() {
	if cl.client.tracesWrites.Load() {
		cl.traced.Store(true)
	}
	cl.rtWrote.Store(false)
	cl.answered.Store(false)
	cl.informed.Store(0)
}

// wroteHeaders runs each time a transport has written the request's
// headers. A second time within one attempt is a request the transport
// sent again by itself: it left the client, so it counts.
func (cl *call) wroteHeaders() {
	if tw := cl.client.tracesWrites; !tw.Load() {
		tw.Store(true)
	}
	cl.rtWrote.Store(true)
	if cl.wrote.Swap(true) {
		cl.resent.Add(1)
	}
}

func (cl *call) gotFirstByte() { cl.answered.Store(true) }

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
func (cl *call) got1xx(_ int, h textproto.MIMEHeader) error {
	cl.answered.Store(false)
	if cl.informed.Add(header1xxSize(h)) > max1xxBytes {
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

// sent is how many requests left the client: the attempts of the retry
// loop and any request a transport sent again within one of them.
func (cl *call) sent() int { return cl.attempts + int(cl.resent.Load()) }

// errNotReplayed is the error a transport meets when it tries to send a
// request again by itself.
var errNotReplayed = errors.New("the transport's own resend was refused; the client's retry policy decides")

// newBody returns a reader of the call's body. A *bytes.Reader lets
// net/http write the headers and the body at once.
func (cl *call) newBody() io.ReadCloser { return io.NopCloser(bytes.NewReader(cl.body)) }

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
func (cl *call) getBody() (io.ReadCloser, error) {
	if cl.rtWrote.Load() && !cl.answered.Load() {
		return nil, errNotReplayed
	}
	return cl.newBody(), nil
}

// transportError is the error of a call that got no whole answer.
func (cl *call) transportError(err error) error {
	shown, _, _ := strings.Cut(cl.url, "?") // the query carries the transfer id
	return &transportError{op: cl.op, method: cl.method, url: shown, err: sanitize(err)}
}

// isAuthStatus reports whether status refuses the request's token: 401,
// or 403, which is how the live service answers an expired one.
func isAuthStatus(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// piiValues lists the personal values no identifier the call shows may
// hold: the request's, and its long WithCallHeader values.
func (cl *call) piiValues() []string {
	return slices.Concat(cl.pii.piiValues(), cl.headerValues())
}

// secrets is what no identifier of the call's answer may show (see
// secrets): its personal values and credential parts.
func (cl *call) secrets() secrets { return newSecrets(cl.piiValues(), cl.credentialParts()) }

// headerValues lists the values of the call's WithCallHeader options of
// five characters or more: a gateway's key is a secret of the caller's. A
// shorter one (a tenant "eu-1") would hide every request id that holds
// it.
func (cl *call) headerValues() []string {
	if cl.opts == nil {
		return nil
	}
	var v []string
	for _, vv := range cl.opts.header {
		for _, s := range vv {
			if utf8.RuneCountInString(s) >= 5 {
				v = append(v, s)
			}
		}
	}
	return v
}

// tokenParts returns the parts (see tokenParts) of every bearer token the
// call sent.
func (cl *call) tokenParts() []string {
	var v []string
	for _, auth := range cl.auths {
		if tok, ok := strings.CutPrefix(auth, "Bearer "); ok {
			v = append(v, tokenParts(tok)...)
		}
	}
	return v
}

// credentialParts is tokenParts and the client's credential (its API key
// or client secret): what no request id, code or transfer id of an answer
// may hold keyPart characters of, every token the call sent (the one a 401
// or 403 rejected too).
func (cl *call) credentialParts() []string {
	v := cl.tokenParts()
	if s := cl.client.credential(); s != "" {
		v = append(v, s)
	}
	return v
}

// tokenParts returns a bearer token and, for a JWT, its claims and its
// signature: a server that echoes only a part of the token (its signature
// in a request id, say) must not get it into an error string either. The
// JWT's header is left out: it is the same for every token of a service
// and secret of none.
func tokenParts(tok string) []string {
	parts := []string{tok}
	if segs := strings.Split(tok, "."); len(segs) == 3 {
		parts = append(parts, segs[1], segs[2])
	}
	return parts
}

// refused returns the error of a 2xx answer whose status said false: the
// refusal, or, if the service may have acted on an earlier attempt (a 502
// before it, say, whose transfer the refusal may be about), an
// *OutcomeUnknownError that wraps it.
func (cl *call) refused(e *APIError) error {
	if !cl.actedOn {
		return e
	}
	// An earlier attempt may have been acted on: this answer's "not
	// applied" speaks for itself only, so the error must not match
	// ErrNotApplied, which tells the caller that sending again is safe.
	e.refused, e.earlierMayHaveActed = false, true
	return cl.end(e)
}

// end returns the call's final error: err, or an *OutcomeUnknownError
// that wraps it if the service may have acted on some attempt.
func (cl *call) end(err error) error {
	if !cl.acted {
		return err
	}
	e := &OutcomeUnknownError{
		Op:             cl.op,
		Attempts:       cl.sent(),
		TxID:           cl.txID,
		TransferID:     cl.transferID,
		hideTransferID: cl.hidesTransferID(),
		Callback:       cl.callback,
		CallbackRef:    CallbackRef(cl.callback),
		IdempotencyKey: cl.key,
		Err:            err,
	}
	if l := cl.client.logger; l != nil {
		// A line that needs a person: the call may have been carried out.
		l.Warn("travelrule: outcome unknown: reconcile before sending again", "op", cl.op, "attempts", e.Attempts,
			"callbackRef", shownID(e.CallbackRef), "idempotencyKey", e.IdempotencyKey, "err", e)
	}
	return e
}

// hidesTransferID reports whether the call's transfer id, which may be
// the server's (an initiation's answer), holds a personal or secret value
// of the call: the fmt and slog forms of a [TransferResult] and of an
// [*OutcomeUnknownError] then show "[redacted]" in its place.
func (cl *call) hidesTransferID() bool {
	if cl.hidden == 0 || cl.hiddenID != cl.transferID {
		cl.hidden, cl.hiddenID = 1, cl.transferID
		// Not the WithCallHeader values: a gateway that puts a tenant
		// header's value in its transfer ids would lose the journal's
		// joins, and they are the caller's, not a person's.
		sec := newSecrets(cl.pii.piiValues(), cl.credentialParts())
		if cl.transferID != "" && (!isIdentifier(cl.transferID, maxRequestID) || sec.echoesWord(cl.transferID)) {
			cl.hidden = 2
		}
	}
	return cl.hidden == 2
}

var errTooLarge = errors.New("answer body exceeds the size limit")

// readBody reads the answer through the client's size limit. The buffer
// grows as bytes arrive: a declared Content-Length only refuses an answer
// that would be too large, it never sizes an allocation before anything
// came (512 MiB declared and 10 bytes sent allocated 512 MiB).
func readBody(resp *http.Response, max int64) ([]byte, error) {
	if resp.ContentLength > max {
		return nil, errTooLarge
	}
	if n := resp.ContentLength; n >= 0 && n <= 32<<10 {
		// The transports end a body at its declared length.
		buf := make([]byte, n)
		read, err := io.ReadFull(resp.Body, buf)
		return buf[:read], err
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, max+1))
	data := buf.Bytes()
	if err == nil && int64(len(data)) > max {
		return data[:max], errTooLarge
	}
	return data, err
}
