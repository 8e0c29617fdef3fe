package travelrule

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
)

// callWatch tells a call's observers of the call and of each of its
// attempts, each once, panics included. A call without observers has
// none: every method of a nil *callWatch does nothing.
type callWatch struct {
	c       *Client
	url     string                 // the request's URL, for an attempt's error
	trace   *httptrace.ClientTrace // the call's wire guard, put back under an observer's context (startAttempt)
	info    *CallInfo
	ctx     []context.Context // the context each observer's StartCall returned
	end     *CallEnd          // what the observers are told of the call's end, while they are
	proto   AttemptInfo       // what every attempt's AttemptInfo holds but N and Header
	attempt attemptWatch      // the current attempt's
}

// attemptWatch is the observation of one attempt.
type attemptWatch struct {
	info     *AttemptInfo      // while AttemptObservers watch it
	end      *AttemptEnd       // what they are told of its end, while they are
	ctx      []context.Context // the context each AttemptObserver's StartAttempt returned
	added    []string          // the headers the observers added to the attempt's request
	resentAt int               // the call's resends when the attempt started
}

// errPanicked is the error observers are told a call ended with when the
// transport (or a hook of the client's) panicked during it.
var errPanicked = errors.New("a panic ended the call (the transport's or an observer's)")

// watchCall starts the observation of the call spec, whose request
// carries the Idempotency-Key key and is guarded by trace: with no
// observer it returns nil. It returns the context the call goes on with,
// or the error that ends the call before anything is sent.
func (c *Client) watchCall(ctx context.Context, spec *callSpec, key string, trace *httptrace.ClientTrace) (*callWatch, context.Context, error) {
	if len(c.observers) == 0 {
		return nil, ctx, nil
	}
	w := &callWatch{c: c, url: spec.url, trace: trace, info: &CallInfo{
		Op:             spec.op,
		CallbackRef:    CallbackRef(spec.callback),
		IdempotencyKey: key,
		Digest:         sha256.Sum256(spec.body),
		Decision:       spec.decision,
	}}
	if spec.op != "InitiateTransfer" && isIdentifier(spec.transferID, maxRequestID) {
		w.info.TransferID = spec.transferID
	}
	if !validRef(w.info.CallbackRef) {
		w.info.CallbackRef = ""
	}
	w.proto = AttemptInfo{Method: spec.method, ServerAddress: c.serverAddress, ServerPort: c.serverPort, URLTemplate: route(spec.url)}
	w.ctx = make([]context.Context, 0, len(c.observers))
	started := false
	defer func() {
		if !started && w.info != nil {
			// A StartCall panicked: the observers started before it end
			// the call, not done, and the panic goes on.
			w.endStarted(errPanicked)
		}
	}()
	for _, o := range c.observers {
		next, err := o.StartCall(ctx, w.info)
		if err != nil {
			err = fmt.Errorf("travelrule: %s: an observer refused the call, nothing was sent: %w", spec.op, err)
			w.endStarted(err)
			return nil, ctx, err
		}
		if next == nil {
			next = ctx
		}
		w.ctx = append(w.ctx, next)
		ctx = next
	}
	started = true
	if len(c.watch.attempts) > 0 {
		ctx = context.WithValue(ctx, attemptMark{}, w) // see startAttempt
	}
	return w, ctx, nil
}

// watching reports whether the call is still observed.
func (w *callWatch) watching() bool { return w != nil && (w.info != nil || w.attempt.info != nil) }

// endStarted ends, not done with err, the call of the observers whose
// StartCall returned, when another refused it or panicked.
func (w *callWatch) endStarted(err error) {
	w.end = &CallEnd{Outcome: CallNotDone, TransferID: w.info.TransferID, Err: err}
	w.endCallRest()
}

// finish ends the call's observation, if it is observed, with err, r and
// t.
func (w *callWatch) finish(err error, r reckoning, t *tally) {
	if w != nil && w.info != nil {
		w.finishAs(outcomeOf(err), err, r, t)
	}
}

// finishAs ends the call's observation, if it is observed, with outcome o.
func (w *callWatch) finishAs(o CallOutcome, err error, r reckoning, t *tally) {
	if w == nil || w.info == nil {
		return
	}
	if w.end != nil {
		// An EndCall panicked: the observers before it end the call as
		// it ended.
		w.endCallRest()
		return
	}
	end := &CallEnd{Outcome: o, TransferID: w.info.TransferID, Attempts: r.sent, Status: t.status, Err: err}
	s := r.spec
	if s.op == "InitiateTransfer" && !r.shown.hidesTransferID(s.transferID) {
		end.TransferID = s.transferID
	}
	var ae *APIError
	switch {
	case errors.As(err, &ae):
		// Each code on its own: the error's text hides them all when one
		// holds a value, observers lose only that one. The service's
		// documented codes are always told.
		codes := ae.Codes
		if len(codes) == 0 && ae.Code != "" {
			codes = []string{ae.Code}
		}
		for _, c := range codes {
			if showCode(c) && !slices.Contains(end.Codes, c) &&
				(documentedCode(c) || !r.shown.unshown(c, s.transferID, s.txID, r.key)) {
				end.Codes = append(end.Codes, c)
			}
		}
		if id := ae.RequestID; !ae.hideRequestID && showRequestID(id) && !r.shown.unshown(id, s.transferID, s.txID, r.key) {
			end.RequestID = id
		}
	case err != nil:
		end.ErrorType = callFaultType(err)
	case t.header2xx != nil:
		if id := t.header2xx.Get("X-Request-Id"); showRequestID(id) && !r.shown.unshown(id, s.transferID, s.txID, r.key) {
			end.RequestID = id
		}
	}
	w.end = end
	w.endCallRest()
}

// endCallRest tells the observers that have not yet been told that the
// call ended, in reverse order, each once: if an EndCall panics, the
// others are told all the same (by the deferred call, as many times as
// they panic), and the panic goes on.
func (w *callWatch) endCallRest() {
	defer func() {
		if len(w.ctx) > 0 {
			w.endCallRest()
			return
		}
		w.info, w.end = nil, nil
	}()
	obs := w.c.observers
	for len(w.ctx) > 0 {
		j := len(w.ctx) - 1
		ctx := w.ctx[j]
		w.ctx = w.ctx[:j]
		obs[j].EndCall(ctx, w.info, w.end)
	}
}

// outcomeOf is what came of a call that ended with err: the SDK's promise
// is that every error after which the service may have acted is an
// *OutcomeUnknownError.
func outcomeOf(err error) CallOutcome {
	var unknown *OutcomeUnknownError
	switch {
	case err == nil:
		return CallSucceeded
	case errors.As(err, &unknown):
		return CallOutcomeUnknown
	}
	return CallNotDone
}

// callFaultType is CallEnd.ErrorType for a call that got no answer and
// ended with err: the token's failure, or the one below HTTP.
func callFaultType(err error) string {
	var te *tokenError
	if errors.As(err, &te) {
		return tokenFaultType(te.err)
	}
	return faultType(err)
}

// startAttempt starts the observation of attempt n, if the call is
// observed by an AttemptObserver, and returns the context the attempt is
// sent in: ctx, or the one the observers derived from it. resent is how
// many requests a transport sent again by itself so far in the call.
func (w *callWatch) startAttempt(ctx context.Context, n, resent int) context.Context {
	if w == nil || len(w.c.watch.attempts) == 0 || w.info == nil {
		return ctx
	}
	a := w.proto
	a.N, a.Header = n, http.Header{}
	w.attempt.info = &a
	w.attempt.ctx = w.attempt.ctx[:0]
	w.attempt.resentAt = resent
	for _, o := range w.c.watch.attempts {
		next := o.StartAttempt(ctx, w.info, w.attempt.info)
		if next == nil {
			next = ctx
		}
		w.attempt.ctx = append(w.attempt.ctx, next) // the observer's own, for its EndAttempt
		if next != ctx {
			values := next
			if next.Value(attemptMark{}) != w {
				// Not made from the context given: an httptrace of its
				// own would hide the client's hooks. Put them back.
				values = httptrace.WithClientTrace(next, w.trace)
			}
			ctx = observedContext{Context: ctx, values: values}
		}
	}
	return ctx
}

// attemptMark marks the context of an observed call's attempts (see
// watchCall): a context an AttemptObserver returns that lacks it was not
// made from the one given.
type attemptMark struct{}

// observedContext is the context an attempt goes on with after an
// AttemptObserver returned values: its deadline, Done and Err are the
// context the observer was given (the caller's, which the observer cannot
// loosen: a context made from context.Background or WithoutCancel does
// not outlive the caller's), its values the observer's first (its span),
// then the given one's (the client's httptrace hooks, which decide what
// net/http may send again, whatever the observer's context holds).
type observedContext struct {
	context.Context                 // the context the observer was given
	values          context.Context // the one it returned
}

// Value returns the observer's value for key, or the given context's.
func (c observedContext) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// route is the path of a request URL, without the query.
func route(rawURL string) string {
	u, _, _ := strings.Cut(rawURL, "?")
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			return u[j:]
		}
		return "/"
	}
	return u
}

// headers puts the headers the attempt's observers asked for into h, the
// attempt's request headers, and remembers their names so that the next
// attempt's observers start afresh. A header already in h (the SDK's own,
// or a WithCallHeader's) and one refused by headerRefusal or by net/http
// are dropped.
func (w *callWatch) headers(h http.Header) {
	if w == nil {
		return
	}
	for _, k := range w.attempt.added {
		delete(h, k)
	}
	w.attempt.added = w.attempt.added[:0]
	if w.attempt.info == nil {
		return
	}
	for k, vv := range w.attempt.info.Header {
		k = http.CanonicalHeaderKey(k)
		if _, taken := h[k]; taken || headerRefusal(k) != "" || len(vv) == 0 || !validHeaderValues(vv) {
			continue
		}
		h[k] = slices.Clone(vv)
		w.attempt.added = append(w.attempt.added, k)
	}
}

// endAttempt ends the observation of the current attempt, if it is
// observed, with its facts a, the failure err, the decision d and the
// call's resends so far.
func (w *callWatch) endAttempt(a *attempt, err error, d decision, resent int) {
	if w == nil || w.attempt.info == nil {
		return
	}
	if w.attempt.end != nil {
		// An EndAttempt panicked: the observers before it end the
		// attempt as it ended.
		w.endAttemptRest()
		return
	}
	end := &AttemptEnd{
		Status:  a.status,
		Written: a.written,
		Resent:  resent - w.attempt.resentAt,
		Retry:   d.retry,
		Wait:    d.wait,
		Reason:  d.why,
	}
	if a.status == 0 && err != nil {
		end.ErrorType, end.Err = faultType(err), newTransportError(w.info.Op, w.proto.Method, w.url, err)
	}
	if !d.retry {
		end.Wait = 0
	}
	w.attempt.end = end
	w.endAttemptRest()
}

// endAttemptRest tells the AttemptObservers that have not yet been told
// that the current attempt ended, in reverse order: only those whose
// StartAttempt returned (one may have panicked), each once, even if one
// panics (see endCallRest).
func (w *callWatch) endAttemptRest() {
	defer func() {
		if len(w.attempt.ctx) > 0 {
			w.endAttemptRest()
			return
		}
		w.attempt.info, w.attempt.end = nil, nil
	}()
	obs := w.c.watch.attempts
	for len(w.attempt.ctx) > 0 {
		j := len(w.attempt.ctx) - 1
		ctx := w.attempt.ctx[j]
		w.attempt.ctx = w.attempt.ctx[:j]
		obs[j].EndAttempt(ctx, w.info, w.attempt.info, w.attempt.end)
	}
}

// watchers are the observers' optional interfaces, found once by
// NewClient, so that a call asks no observer what it is.
type watchers struct {
	attempts []AttemptObserver
	invalid  []ValidationObserver
	tokens   []TokenObserver
}

// watchersOf sorts obs by the optional interfaces each implements.
func watchersOf(obs []Observer) watchers {
	var w watchers
	for _, o := range obs {
		if a, ok := o.(AttemptObserver); ok {
			w.attempts = append(w.attempts, a)
		}
		if v, ok := o.(ValidationObserver); ok {
			w.invalid = append(w.invalid, v)
		}
		if t, ok := o.(TokenObserver); ok {
			w.tokens = append(w.tokens, t)
		}
	}
	return w
}

// tokenFetched tells the client's TokenObservers of a fetch.
func (c *Client) tokenFetched(f *TokenFetch) {
	for _, o := range c.watch.tokens {
		o.TokenFetched(context.Background(), f)
	}
}

// invalid tells the client's ValidationObservers that a call of op failed
// the client's own checks with err, and returns err.
func (c *Client) invalid(ctx context.Context, op string, err error) error {
	var ve *ValidationError
	if len(c.watch.invalid) == 0 || !errors.As(err, &ve) {
		return err
	}
	for _, o := range c.watch.invalid {
		o.InvalidCall(ctx, op, ve)
	}
	return err
}
