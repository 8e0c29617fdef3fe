package travelrule

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// call is the state of one logical call (one InitiateTransfer or
// ResolveInquiry) across its attempts. The retry loop is go-retryablehttp's;
// this file holds the decision of what may be retried, in one place
// (checkRetry), and the shaping of the final error.
type call struct {
	client         *Client
	op             string
	idempotent     bool // may a failure after which the service may have acted be retried?
	idempotencyKey string
	req            *TransferRequest // its personal values are scrubbed from server messages
	unknown        OutcomeUnknownError
	trace          httptrace.ClientTrace

	attempts     int          // the retry loop's attempt number
	resent       atomic.Int32 // requests a transport sent again within the current attempt (see markWritten)
	resentBefore int          // the same, within earlier attempts
	wrote        atomic.Bool  // the current attempt wrote its request headers
	traceLive    atomic.Bool  // the transport reported the current attempt's GetConn
	inTransport  atomic.Bool  // the request is inside the client's transport (see authTransport)
	rtWrote      atomic.Bool  // the transport wrote the request's headers within that RoundTrip
	ambiguous    bool         // some attempt may have been acted on by the service
	authRetried  bool
	nextWait     time.Duration // the wait before the next attempt
	waitBound    time.Duration // the longest the exponential wait can be
}

// response is a 2xx answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// callKey is the context key under which a request carries its *call, so
// that the client's one retryablehttp.Client finds the state of the call
// in its hooks.
type callKey struct{}

func callFrom(ctx context.Context) *call {
	cl, _ := ctx.Value(callKey{}).(*call)
	return cl
}

// newRetryClient makes the client's retrying transport: go-retryablehttp's
// loop with the policy of this file. Its own logger stays off (it prints
// URLs with their query strings); the hooks log through the client's slog
// logger.
func (c *Client) newRetryClient() *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:   c.hc,
		Logger:       nil,
		RetryWaitMin: c.waitMin,
		RetryWaitMax: c.waitMax,
		RetryMax:     c.retryMax,
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			return callFrom(ctx).checkRetry(ctx, resp, err)
		},
		Backoff:      backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler, // keep the last answer when giving up
		RequestLogHook: func(_ retryablehttp.Logger, req *http.Request, i int) {
			callFrom(req.Context()).beforeAttempt(i)
		},
		ResponseLogHook: func(_ retryablehttp.Logger, resp *http.Response) {
			if resp.Request != nil {
				if cl := callFrom(resp.Request.Context()); cl != nil {
					cl.afterAttempt(resp)
				}
			}
		},
	}
}

// do sends body to rawURL with POST, retrying as checkRetry allows, and
// returns the 2xx answer or the final error.
func (cl *call) do(ctx context.Context, rawURL string, body []byte) (*response, error) {
	c := cl.client
	if err := ctx.Err(); err != nil {
		// Nothing was sent: a definite failure.
		return nil, fmt.Errorf("travelrule: %s: %w", cl.op, err)
	}
	cl.trace.WroteHeaders = cl.markWritten
	cl.trace.GetConn = cl.markTraced
	ctx = httptrace.WithClientTrace(context.WithValue(ctx, callKey{}, cl), &cl.trace)
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, rawURL, body)
	if err != nil {
		return nil, fmt.Errorf("travelrule: %s: %w", cl.op, err)
	}
	req.GetBody = cl.guardReplays(req.GetBody)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if cl.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", cl.idempotencyKey)
	}

	resp, err := c.rc.Do(req)
	if err != nil {
		shown, _, _ := strings.Cut(rawURL, "?") // the query carries the transfer id
		return nil, cl.fail(&transportError{op: cl.op, url: shown, err: sanitize(err)})
	}
	defer resp.Body.Close()

	data, readErr := readBody(resp, c.maxResponse)
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if readErr != nil {
			// The service answered 2xx and so may have acted; its answer
			// could not be read.
			cl.ambiguous = true
			e := cl.apiError(resp, data)
			e.unexpected = true
			e.Message = transportText(readErr)
			return nil, cl.fail(e)
		}
		return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
	}
	return nil, cl.fail(cl.apiError(resp, data))
}

// markWritten runs each time a transport has written the request's headers.
// A second time within one attempt is a request the transport sent again by
// itself: it left the client, so it counts as an attempt.
func (cl *call) markWritten() {
	cl.rtWrote.Store(true)
	if cl.wrote.Swap(true) {
		cl.resent.Add(1)
	}
}

func (cl *call) markTraced(_ string) { cl.traceLive.Store(true) }

// sent is how many requests left the client: the attempts of the retry
// loop and any request a transport sent again within one of them.
func (cl *call) sent() int { return cl.attempts + cl.resentBefore + int(cl.resent.Load()) }

// errNotReplayed is the error a transport meets when it tries to send a
// request again by itself.
var errNotReplayed = errors.New("the transport's own resend was refused; the client's retry policy decides")

// guardReplays decides what net/http may do with the body of a request
// through Request.GetBody, which it calls to send a request again below
// this file's policy: the HTTP/2 client after RST_STREAM REFUSED_STREAM or
// PROTOCOL_ERROR or a GOAWAY, even when the server had read the whole body;
// the HTTP/1 transport on a reused connection that failed after the request
// was written, when the request carries an Idempotency-Key header; and
// http.Client for a 307 or 308.
//
// A call that may not be repeated gets no GetBody at all: no layer can
// send its body twice (a transport may still send a request whose body it
// never read, which reached no one), and it follows no redirect anyway (see
// checkRedirect). A call that may be repeated keeps GetBody for redirects
// within the origin and for a transport that reads a copy of the body
// before sending (to sign it, say), but a transport's resend of a request
// it has written is refused, so that every repeat goes through checkRetry,
// with its backoff, budget and count.
func (cl *call) guardReplays(getBody func() (io.ReadCloser, error)) func() (io.ReadCloser, error) {
	if !cl.idempotent || getBody == nil {
		return nil
	}
	return func() (io.ReadCloser, error) {
		if cl.inTransport.Load() && cl.rtWrote.Load() {
			return nil, errNotReplayed
		}
		return getBody()
	}
}

// maySent reports whether the current attempt may have reached the service.
// Only a transport that reported the attempt's GetConn and then no
// WroteHeaders proves that nothing was sent; a transport that emits no
// traces (a custom one given to WithHTTPClient) proves nothing.
func (cl *call) maySent() bool { return cl.wrote.Load() || !cl.traceLive.Load() }

// beforeAttempt runs before every attempt.
func (cl *call) beforeAttempt(i int) {
	cl.attempts = i + 1
	cl.resentBefore += int(cl.resent.Swap(0))
	cl.wrote.Store(false)
	cl.traceLive.Store(false)
	if l := cl.client.logger; l != nil {
		l.Debug("travelrule: sending", "op", cl.op, "attempt", cl.attempts)
	}
}

// afterAttempt runs after every attempt that got an answer.
func (cl *call) afterAttempt(resp *http.Response) {
	if l := cl.client.logger; l != nil {
		l.Debug("travelrule: answer", "op", cl.op, "attempt", cl.attempts, "status", resp.StatusCode)
	}
}

// checkRetry is the whole retry policy. It is called after every attempt
// with the answer or the transport error, and decides whether another
// attempt may follow and how long to wait first (in nextWait).
//
//   - Retried always: 429 and 503 with a Retry-After header (the service's
//     own "come back later": it did not act), within the Retry-After cap and
//     the context's deadline; a connection failure before the request was
//     written (refused dial, DNS, TLS handshake); and one 401, after a token
//     refresh that yields a new token.
//   - Retried only for an idempotent call: 429 and 503 without Retry-After
//     (a proxy may send them after the service received the request), any
//     other 5xx but 501 (500, 502, 504, a proxy's 520 or 524), and a failure
//     after the request may have been written (dropped connection, stream
//     reset, time-out). These, and a 3xx that is not followed, mark the call
//     ambiguous, so that its final failure is ErrOutcomeUnknown.
//   - Never retried: any other answer, a context that ended, a failure to
//     obtain a token, a certificate the client does not trust.
func (cl *call) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	c := cl.client
	cl.waitBound = retryablehttp.DefaultBackoff(c.waitMin, c.waitMax, cl.attempts-1, nil)
	cl.nextWait = jitter(cl.waitBound)
	if err != nil {
		var te *tokenError
		if errors.As(err, &te) {
			return false, nil // no token, nothing sent: definite
		}
		sent := cl.maySent()
		if sent {
			cl.ambiguous = true
		}
		switch {
		case ctx.Err() != nil, isCertError(err):
			return false, nil
		case !sent:
			return cl.fits(ctx, "connection failed before sending"), nil
		default:
			return cl.idempotent && cl.fits(ctx, "connection failed after sending"), nil
		}
	}
	switch code := resp.StatusCode; code {
	case http.StatusUnauthorized:
		if cl.authRetried {
			return false, nil
		}
		cl.authRetried = true
		var rejected string // unknown if the transport gave no request back: refresh anyway
		if resp.Request != nil {
			rejected = resp.Request.Header.Get("Authorization")
		}
		if !c.tokens.refresh(ctx, rejected) {
			return false, nil
		}
		cl.nextWait = 0
		if c.logger != nil {
			c.logger.Debug("travelrule: retrying with a refreshed token", "op", cl.op)
		}
		return true, nil
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		if wait, ok := retryAfter(resp.Header, time.Now()); ok {
			// The service's own "come back later": it did not act.
			if wait > c.retryAfterMax {
				return false, nil
			}
			cl.nextWait = wait
			return cl.fits(ctx, "status "+http.StatusText(code)), nil
		}
		// Without Retry-After the answer may be a proxy's, sent after the
		// service received the request (Envoy's "upstream reset before
		// headers", a load balancer's 503): it proves nothing.
		cl.ambiguous = true
		return cl.idempotent && cl.fits(ctx, "status "+http.StatusText(code)+" without Retry-After"), nil
	}
	switch code := resp.StatusCode; {
	case code >= 500 && code != http.StatusNotImplemented:
		// 500, 502, 504 and the rest (a proxy's 520 or 524 too) may come
		// after the service acted; 503 is handled above; 501 means the
		// service does not have the operation at all.
		cl.ambiguous = true
		return cl.idempotent && cl.fits(ctx, "status "+strconv.Itoa(code)), nil
	case code >= 300 && code <= 399:
		// Not followed (see checkRedirect): a 303 after a POST commonly
		// means "done, look there", so the service may have acted.
		cl.ambiguous = true
	}
	return false, nil
}

// fits reports whether the next wait ends before the context's deadline; a
// retry that could not finish in time is not started.
func (cl *call) fits(ctx context.Context, reason string) bool {
	if cl.attempts > cl.client.retryMax {
		return true // retryablehttp stops here itself; nothing to wait for
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= max(cl.nextWait, cl.waitBound) {
		return false
	}
	if l := cl.client.logger; l != nil {
		l.Debug("travelrule: retrying", "op", cl.op, "attempt", cl.attempts, "reason", reason, "wait", cl.nextWait)
	}
	return true
}

// jitter spreads a wait over its upper half ("equal jitter"), so that many
// clients do not retry in step.
func jitter(d time.Duration) time.Duration {
	if half := int64(d / 2); half > 0 {
		d = time.Duration(half + rand.Int64N(half+1))
	}
	return d
}

// backoff hands retryablehttp the wait checkRetry chose for the call. A
// transport without answers carries no call to find: the jittered
// exponential wait, which is never longer than the one checkRetry checked
// against the deadline, is then recomputed.
func backoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && resp.Request != nil {
		if cl := callFrom(resp.Request.Context()); cl != nil {
			return cl.nextWait
		}
	}
	return jitter(retryablehttp.DefaultBackoff(min, max, attempt, nil))
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110, section 10.2.3). ok is false when the header is absent or does
// not parse. A delay too large for a time.Duration is the largest one, so
// that it is above any cap; a date in the past is zero.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
				return math.MaxInt64, true
			}
			return 0, false
		}
		if secs > math.MaxInt64/uint64(time.Second) {
			return math.MaxInt64, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

func isCertError(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verify)
}

// fail turns the final error of a call into an *OutcomeUnknownError if the
// service may have acted on some attempt.
func (cl *call) fail(err error) error {
	if !cl.ambiguous {
		return err
	}
	u := cl.unknown
	u.CallbackRef = CallbackRef(u.Callback)
	u.Attempts = cl.sent()
	u.IdempotencyKey = cl.idempotencyKey
	u.Err = err
	return &u
}

// sanitize keeps query strings (transfer ids) out of error text: a
// *url.Error names the URL without its query.
func sanitize(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	clean := *ue
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.RawQuery, u.Fragment, u.User = "", "", nil
		clean.URL = u.String()
	} else {
		clean.URL = "[unparseable URL]"
	}
	return &clean
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
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(min(resp.ContentLength, 32<<10)))
	}
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, max+1))
	data := buf.Bytes()
	if err == nil && int64(len(data)) > max {
		return data[:max], errTooLarge
	}
	return data, err
}

// maxHeaderCopy bounds the headers an error keeps; the default transport
// refuses larger headers outright (MaxResponseHeaderBytes), a transport
// given to WithHTTPClient may not.
const maxHeaderCopy = 64 << 10

// boundedHeader copies h, key by key in sorted order, until the copy holds
// maxHeaderCopy bytes of keys and values; what does not fit is left out.
func boundedHeader(h http.Header) http.Header {
	out := make(http.Header, min(len(h), 32))
	size := 0
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			size += len(k) + len(v)
			if size > maxHeaderCopy {
				return out
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// errorBody is the error shape the client understands: "message" or "error"
// (a string, or an object with "message"), and optional "fields". Anything
// else is kept in APIError.Body only.
type errorBody struct {
	Message string          `json:"message"`
	Error   json.RawMessage `json:"error"`
	Detail  string          `json:"detail"`
	Fields  []FieldError    `json:"fields"`
}

// apiError builds the *APIError of an answer. Its message is short, free of
// control characters, and scrubbed of the request's personal values, which
// a server may echo.
func (cl *call) apiError(resp *http.Response, body []byte) *APIError {
	pii := cl.piiValues()
	e := &APIError{
		Op:         cl.op,
		StatusCode: resp.StatusCode,
		Body:       body,
		RequestID:  resp.Header.Get("X-Request-Id"),
		Header:     boundedHeader(resp.Header),
	}
	e.hideRequestID = !showRequestID(e.RequestID, pii)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		e.RetryAfter, _ = retryAfter(resp.Header, time.Now())
	}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		e.Message = "redirect not followed"
		return e
	}
	var eb errorBody
	if len(body) == 0 || json.Unmarshal(body, &eb) != nil {
		return e
	}
	var code string
	var obj struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	var msg string
	switch {
	case len(eb.Error) == 0:
	case json.Unmarshal(eb.Error, &code) == nil:
		if isIdentifier(code, maxCode) {
			e.Code = code
		} else {
			msg = code
		}
	case json.Unmarshal(eb.Error, &obj) == nil:
		if isIdentifier(obj.Code, maxCode) {
			e.Code = obj.Code
		}
		msg = obj.Message
	}
	for _, m := range []string{eb.Message, eb.Detail, e.Code} {
		if msg == "" {
			msg = m
		}
	}
	if eb.Message != "" {
		msg = eb.Message
	}
	e.hideCode = !showCode(e.Code, pii)
	e.Message = scrub(msg, pii)
	for _, f := range eb.Fields {
		e.Fields = append(e.Fields, FieldError{Field: scrub(f.Field, pii), Reason: scrub(f.Reason, pii), server: true})
	}
	return e
}

// piiValues lists the personal values of the call's request: the parties'
// and addresses of a transfer, the callback URL of a resolution.
func (cl *call) piiValues() []string {
	if cl.req != nil {
		return cl.req.piiValues()
	}
	return []string{cl.unknown.Callback}
}

// unexpected is the error for a 2xx answer whose body does not mean success.
func (cl *call) unexpected(r *response) *APIError {
	return &APIError{
		Op:            cl.op,
		StatusCode:    r.status,
		Body:          r.body,
		Message:       "answer body not understood",
		RequestID:     r.header.Get("X-Request-Id"),
		Header:        boundedHeader(r.header),
		unexpected:    true,
		hideRequestID: !showRequestID(r.header.Get("X-Request-Id"), cl.piiValues()),
	}
}

// outcomeUnknown marks the call ambiguous and wraps err.
func (cl *call) outcomeUnknown(err error) error {
	cl.ambiguous = true
	return cl.fail(err)
}
