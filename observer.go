package travelrule

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Observer watches the calls a [Client] makes: package journal's write-ahead
// journal is one, and telemetry can be another. Set one with
// [WithObserver]. With none set, a call costs nothing more.
//
// StartCall is called once for each call that passed validation and whose
// context had not ended, before anything of it leaves the process (before
// the bearer token is fetched).
// It returns the context the call goes on with (the one it was given, or
// one derived from it) and nil, or an error: the call then ends at once
// with an error that wraps it, nothing is sent, and EndCall is not called.
// An observer that must have recorded a call before it is sent (a
// write-ahead journal) fails StartCall when it cannot record it.
//
// EndCall is called once for each call whose StartCall returned nil, when
// the call has ended, on the context StartCall returned (which may be done
// by then: an observer that writes should not depend on it), with what
// came of it.
//
// Both are called on the caller's goroutine and block the call: an
// observer should be quick. Neither is given personal data: info and end
// hold identifiers, counts and a digest only.
type Observer interface {
	StartCall(ctx context.Context, info *CallInfo) (context.Context, error)
	EndCall(ctx context.Context, info *CallInfo, end *CallEnd)
}

// CallInfo describes a call about to be sent. It holds no personal data.
type CallInfo struct {
	// Op is the operation: "InitiateTransfer", "ResolveInquiry",
	// "SubmitTxID", "GenerateTravelAddress", "LookupTravelAddress" or
	// "SearchVASPs".
	Op string
	// TransferID is the transfer the call is about: ResolveInquiry's and
	// SubmitTxID's transfer id (the q parameter); "" for other calls.
	TransferID string
	// CallbackRef is the reference of the request's capability callback
	// URL (see [NewCallbackURL]): InitiateTransfer's callback, or
	// ResolveInquiry's when it has one; "" when the URL carries none.
	CallbackRef string
	// Decision is ResolveInquiry's decision, [Approved] or [Rejected];
	// "" for other calls.
	Decision Decision
	// IdempotencyKey is the Idempotency-Key the request carries, if any
	// (see [WithIdempotency]).
	IdempotencyKey string
	// Digest is the SHA-256 of the request body as it is sent: it tells
	// two requests apart, and a request sent again from one sent once,
	// without holding the request.
	Digest [sha256.Size]byte
}

// CallOutcome says what came of a call, from the SDK's point of view.
type CallOutcome int

// The outcomes of a call.
const (
	// CallSucceeded means the service answered that it did what was asked.
	CallSucceeded CallOutcome = iota + 1
	// CallNotDone means the service did not act: it refused (an
	// [*APIError], a [*ValidationError] of the server's), or the request
	// never reached it, or failed before the service could have acted.
	CallNotDone
	// CallOutcomeUnknown means the service may have acted: the call's
	// error is an [*OutcomeUnknownError] (also when a panic, of the
	// transport's or an observer's, ended the call after the request was
	// handed to the transport; the panic then goes on to the caller).
	CallOutcomeUnknown
)

// String returns "succeeded", "not done" or "outcome unknown".
func (o CallOutcome) String() string {
	switch o {
	case CallSucceeded:
		return "succeeded"
	case CallNotDone:
		return "not done"
	case CallOutcomeUnknown:
		return "outcome unknown"
	}
	return "CallOutcome(" + strconv.Itoa(int(o)) + ")"
}

// CallEnd is what came of a call. It holds no personal data.
type CallEnd struct {
	// Outcome is what came of the call.
	Outcome CallOutcome
	// TransferID is, for InitiateTransfer, the transfer id of the
	// service's answer, when it had one (also in an answer that was not
	// understood); "" when it holds a personal value of the request. For
	// other calls, CallInfo's.
	TransferID string
	// Attempts is how many times the request was sent.
	Attempts int
	// Status is the HTTP status of the call's last answer; 0 when no
	// answer came.
	Status int
	// Codes are the service's error codes of the last answer (see
	// [APIError].Codes), but those that hold a personal value of the
	// request; nil when it had none.
	Codes []string
	// RequestID is the last answer's X-Request-Id, when it has a request
	// id's shape and holds no personal value; "" otherwise.
	RequestID string
	// ErrorType is a short, fixed name of the call's failure when it is
	// not an answer of the service's (an [*APIError]): a failure below
	// HTTP or the caller's context ("timeout", "canceled",
	// "connection_refused", as [AttemptEnd].ErrorType) or the token's
	// ("token_refused", "token_source", see [TokenFetch]); "" when the
	// call succeeded or the service answered.
	ErrorType string
	// Err is the call's error, as the caller gets it: nil when it
	// succeeded. Its text holds no personal data; its fields that hold
	// what the server sent ([APIError].Body, [LoginError].Body) may, as
	// the caller is told: an observer that exports errors exports their
	// text, never those fields.
	Err error
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

// WithObserver adds an observer of the client's calls (see [Observer]).
// Observers given in several options are called in the order given, and
// their EndCalls in the reverse order; a StartCall that fails ends, in
// reverse order, the calls of the observers started before it, with
// [CallNotDone] and its error. A nil observer makes NewClient fail.
func WithObserver(obs Observer) Option {
	return func(o *options) {
		if obs == nil {
			o.fail(errors.New("travelrule: WithObserver: nil observer"))
			return
		}
		o.observers = append(o.observers, obs)
	}
}

// observe starts the call's observation: with no observer it does
// nothing. It returns the context the call goes on with, or the error
// that ends the call before anything is sent.
func (cl *call) observe(ctx context.Context) (context.Context, error) {
	obs := cl.client.observers
	if len(obs) == 0 {
		return ctx, nil
	}
	cl.info = &CallInfo{
		Op:             cl.op,
		CallbackRef:    CallbackRef(cl.callback),
		IdempotencyKey: cl.key,
		Digest:         sha256.Sum256(cl.body),
		Decision:       cl.decision,
	}
	if cl.op != "InitiateTransfer" {
		cl.info.TransferID = cl.transferID
	}
	if !validRef(cl.info.CallbackRef) {
		cl.info.CallbackRef = ""
	}
	cl.obsCtx = make([]context.Context, 0, len(obs))
	started := false
	defer func() {
		if !started && cl.info != nil {
			// A StartCall panicked: the observers started before it end
			// the call, not done, and the panic goes on.
			cl.endStarted(errPanicked)
		}
	}()
	for _, o := range obs {
		next, err := o.StartCall(ctx, cl.info)
		if err != nil {
			err = fmt.Errorf("travelrule: %s: an observer refused the call, nothing was sent: %w", cl.op, err)
			cl.endStarted(err)
			return ctx, err
		}
		if next == nil {
			next = ctx
		}
		cl.obsCtx = append(cl.obsCtx, next)
		ctx = next
	}
	started = true
	return ctx, nil
}

// endStarted ends, not done with err, the call of the observers whose
// StartCall returned, when another refused it or panicked.
func (cl *call) endStarted(err error) {
	cl.callEnd = &CallEnd{Outcome: CallNotDone, TransferID: cl.info.TransferID, Err: err}
	cl.endCallRest()
}

// finish ends the call's observation, if it was observed, and returns err.
func (cl *call) finish(err error) error {
	if cl.info != nil {
		cl.finishAs(outcomeOf(err), err)
	}
	return err
}

// finishAs ends the call's observation, if it was observed, with outcome o.
func (cl *call) finishAs(o CallOutcome, err error) {
	if cl.info == nil {
		return
	}
	if cl.callEnd != nil {
		// An EndCall panicked: the observers before it end the call as
		// it ended.
		cl.endCallRest()
		return
	}
	end := &CallEnd{Outcome: o, TransferID: cl.info.TransferID, Attempts: cl.sent(), Status: cl.status, Err: err}
	if cl.op == "InitiateTransfer" && !cl.hidesTransferID() {
		end.TransferID = cl.transferID
	}
	var ae *APIError
	switch {
	case errors.As(err, &ae):
		// Each code on its own: the error's text hides them all when one
		// holds a value, observers lose only that one. The service's
		// documented codes are always told.
		unshown := cl.unshown()
		codes := ae.Codes
		if len(codes) == 0 && ae.Code != "" {
			codes = []string{ae.Code}
		}
		for _, c := range codes {
			if showCode(c) && !slices.Contains(end.Codes, c) && (documentedCode(c) || !unshown.echoes(c)) {
				end.Codes = append(end.Codes, c)
			}
		}
		if id := ae.RequestID; !ae.hideRequestID && showRequestID(id) && !unshown.echoes(id) {
			end.RequestID = id
		}
	case err != nil:
		end.ErrorType = callFaultType(err)
	case cl.answered2xx != nil:
		if id, unshown := cl.answered2xx.Get("X-Request-Id"), cl.unshown(); showRequestID(id) && !unshown.echoes(id) {
			end.RequestID = id
		}
	}
	cl.callEnd = end
	cl.endCallRest()
}

// endCallRest tells the observers that have not yet been told that the
// call ended, in reverse order, each once: if an EndCall panics, the
// others are told all the same (by the deferred call, as many times as
// they panic), and the panic goes on.
func (cl *call) endCallRest() {
	defer func() {
		if len(cl.obsCtx) > 0 {
			cl.endCallRest()
			return
		}
		cl.info, cl.callEnd = nil, nil
	}()
	obs := cl.client.observers
	for len(cl.obsCtx) > 0 {
		j := len(cl.obsCtx) - 1
		ctx := cl.obsCtx[j]
		cl.obsCtx = cl.obsCtx[:j]
		obs[j].EndCall(ctx, cl.info, cl.callEnd)
	}
}

// unshown is what an observer is never told in a request id or an error
// code, whatever the server echoes there: the call's secrets, and its
// transfer id, txid and idempotency key when they have five characters or
// more (a shorter one, such as the docs' "abc", would hide every request
// id that holds it). Telemetry exports what observers are told.
func (cl *call) unshown() secrets {
	v := cl.piiValues()
	for _, id := range [...]string{cl.transferID, cl.txID, cl.key} {
		if utf8.RuneCountInString(id) >= 5 {
			v = append(v, id)
		}
	}
	return newSecrets(v, cl.credentialParts())
}

// AttemptObserver is an [Observer] that also watches each attempt of the
// calls it observes: telemetry is one (package oteltravelrule). The
// client finds out at [NewClient] whether an observer given to
// [WithObserver] is one; a client with none makes no AttemptInfo.
//
// StartAttempt is called before each attempt is handed to the transport,
// on the context the call goes on with (the one StartCall returned), and
// returns a context derived from it whose values the attempt's request is
// sent with: a tracer starts a span there. The attempt keeps the given
// context's deadline and cancellation whatever the returned context says,
// and the given context's values where the returned one has none (the
// client's httptrace hooks, which decide what net/http may send again, are
// found even in a context made from context.Background). a.Header is empty and may be given headers to
// add to this attempt's request only (trace context such as traceparent);
// a header the SDK sets, or one given with [WithCallHeader], is not replaced,
// and a name or value net/http would refuse is dropped.
//
// EndAttempt is called once for each attempt StartAttempt was called for,
// after the client decided whether to retry, on the context StartAttempt
// returned. Both are called on the caller's goroutine and block the call.
// Neither is given personal data, query strings or bodies.
type AttemptObserver interface {
	Observer
	StartAttempt(ctx context.Context, call *CallInfo, a *AttemptInfo) context.Context
	EndAttempt(ctx context.Context, call *CallInfo, a *AttemptInfo, end *AttemptEnd)
}

// AttemptInfo describes one attempt of a call, in the words of the
// OpenTelemetry semantic conventions for HTTP clients.
type AttemptInfo struct {
	// N is the attempt's number: 1 for the first, 2 for the first retry.
	N int
	// Method is the request's method: "POST", or "GET" for SearchVASPs.
	Method string
	// ServerAddress is the base URL's host.
	ServerAddress string
	// ServerPort is the base URL's port, or its scheme's default.
	ServerPort int
	// URLTemplate is the request's path, without the query: the base
	// URL's path and the operation's route, such as
	// "/api/v3/transfers/initiate". The routes have no parameters in the
	// path, so it is its own template.
	URLTemplate string
	// Header holds the headers the observer adds to this attempt's
	// request (see AttemptObserver).
	Header http.Header
}

// AttemptEnd is what came of one attempt. It holds no personal data.
type AttemptEnd struct {
	// Status is the answer's HTTP status; 0 when no answer came.
	Status int
	// Written reports whether the request may have been written: when it
	// was, the service may have read it.
	Written bool
	// Resent is how many times a transport sent the request again by
	// itself within the attempt (an HTTP/2 retry of a refused stream,
	// say); usually 0.
	Resent int
	// ErrorType is a short, fixed name of the attempt's failure below
	// HTTP when no answer came, such as "timeout", "connection_refused"
	// or "tls"; "" when an answer came.
	ErrorType string
	// Err is the failure below HTTP when no answer came, in the client's
	// words (its text quotes nothing the server sent); nil when an answer
	// came.
	Err error
	// Retry reports whether the client decided to send the request
	// again. The caller's context ending during the wait, or a failure to
	// obtain a token for the next attempt, can still end the call first.
	Retry bool
	// Wait is how long the client waits before it does; 0 when Retry is
	// false.
	Wait time.Duration
	// Reason says why the client retries or not, in fixed words that
	// quote nothing of the call ("status 503 with Retry-After",
	// "connection failed before sending; no retries left").
	Reason string
}

// ValidationObserver is an [Observer] that is also told of each call
// that failed the client's own checks: nothing was sent, and StartCall was
// not called. It is called on the caller's goroutine with the caller's
// context, the operation's name (as [CallInfo].Op) and the error the call
// returns, whose text holds field paths and fixed reasons only.
type ValidationObserver interface {
	Observer
	InvalidCall(ctx context.Context, op string, err *ValidationError)
}

// TokenObserver is an [Observer] that is also told of each fetch of a
// bearer token from the client's token source (its login, with
// [WithAPIKey]). Fetches are shared by the calls that wait for them, so
// TokenFetched is called on the fetch's own goroutine, with
// context.Background, once the fetch has ended and before the calls that
// waited for it go on: it should be quick. A client fetches one token at
// a time; an observer shared by several clients is called concurrently.
// A panic in TokenFetched is dropped.
type TokenObserver interface {
	Observer
	TokenFetched(ctx context.Context, f *TokenFetch)
}

// TokenFetch is what came of one token fetch. It holds no token.
type TokenFetch struct {
	// Duration is how long the source took.
	Duration time.Duration
	// Err is the fetch's failure, nil when a token came; its text is
	// the client's (see [WithTokenSource]): it quotes no secret. A
	// [*LoginError] or *oauth2.RetrieveError the source returned comes
	// without its Body; an error of a source of yours comes as it was.
	Err error
	// ErrorType is a short, fixed name of the failure ("" on success).
	ErrorType string
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
// sent in: ctx, or the one the observers derived from it.
func (cl *call) startAttempt(ctx context.Context, n int) context.Context {
	obs := cl.client.watch.attempts
	if len(obs) == 0 || cl.info == nil {
		return ctx
	}
	cl.attempt = &AttemptInfo{
		N:             n,
		Method:        cl.method,
		ServerAddress: cl.client.serverAddress,
		ServerPort:    cl.client.serverPort,
		URLTemplate:   cl.route(),
		Header:        http.Header{},
	}
	cl.attemptCtx = cl.attemptCtx[:0]
	cl.resentAt = cl.resent.Load()
	for _, o := range obs {
		next := o.StartAttempt(ctx, cl.info, cl.attempt)
		if next == nil {
			next = ctx
		}
		cl.attemptCtx = append(cl.attemptCtx, next) // the observer's own, for its EndAttempt
		if next != ctx {
			values := next
			if next.Value(attemptMark{}) != cl {
				// Not made from the context given: an httptrace of its
				// own would hide the client's hooks. Put them back.
				values = httptrace.WithClientTrace(next, &cl.trace)
			}
			ctx = observedContext{Context: ctx, values: values}
		}
	}
	return ctx
}

// attemptMark marks the context of an observed call's attempts (see send):
// a context an AttemptObserver returns that lacks it was not made from the
// one given.
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

// route is the path of the call's URL, without the query.
func (cl *call) route() string {
	u, _, _ := strings.Cut(cl.url, "?")
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			return u[j:]
		}
		return "/"
	}
	return u
}

// observerHeaders puts the headers the attempt's observers asked for into
// h, the attempt's request headers, and remembers their names so that the
// next attempt's observers start afresh. A header already in h (the SDK's
// own, or a WithCallHeader's) and one refused by headerRefusal or by
// net/http are dropped.
func (cl *call) observerHeaders(h http.Header) {
	for _, k := range cl.added {
		delete(h, k)
	}
	cl.added = cl.added[:0]
	if cl.attempt == nil {
		return
	}
	for k, vv := range cl.attempt.Header {
		k = http.CanonicalHeaderKey(k)
		if _, taken := h[k]; taken || headerRefusal(k) != "" || len(vv) == 0 || !validHeaderValues(vv) {
			continue
		}
		h[k] = slices.Clone(vv)
		cl.added = append(cl.added, k)
	}
}

// endAttempt ends the observation of the current attempt, if it is
// observed, with its facts a, the answer's or failure's resp and err, and
// the decision d.
func (cl *call) endAttempt(a *attempt, err error, d decision) {
	if cl.attempt == nil {
		return
	}
	if cl.attemptEnd != nil {
		// An EndAttempt panicked: the observers before it end the
		// attempt as it ended.
		cl.endAttemptRest()
		return
	}
	end := &AttemptEnd{
		Status:  a.status,
		Written: a.written,
		Resent:  int(cl.resent.Load() - cl.resentAt),
		Retry:   d.retry,
		Wait:    d.wait,
		Reason:  d.why,
	}
	if a.status == 0 && err != nil {
		end.ErrorType, end.Err = faultType(err), cl.transportError(err)
	}
	if !d.retry {
		end.Wait = 0
	}
	cl.attemptEnd = end
	cl.endAttemptRest()
}

// endAttemptRest tells the AttemptObservers that have not yet been told
// that the current attempt ended, in reverse order: only those whose
// StartAttempt returned (one may have panicked), each once, even if one
// panics (see endCallRest).
func (cl *call) endAttemptRest() {
	defer func() {
		if len(cl.attemptCtx) > 0 {
			cl.endAttemptRest()
			return
		}
		cl.attempt, cl.attemptEnd = nil, nil
	}()
	obs := cl.client.watch.attempts
	for len(cl.attemptCtx) > 0 {
		j := len(cl.attemptCtx) - 1
		ctx := cl.attemptCtx[j]
		cl.attemptCtx = cl.attemptCtx[:j]
		obs[j].EndAttempt(ctx, cl.info, cl.attempt, cl.attemptEnd)
	}
}
