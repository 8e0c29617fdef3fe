package travelrule

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"strconv"
	"time"
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
	// SubmitTxID's transfer id (the q parameter) when it has an
	// identifier's shape (a sender may choose the text); "" otherwise and
	// for other calls.
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
