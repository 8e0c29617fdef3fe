package travelrule

import (
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Option configures a [Client] made by [NewClient].
type Option func(*options)

// options are the client's settings.
type options struct {
	policy // the retry settings of retry.go

	tokenSource oauth2.TokenSource
	httpClient  *http.Client
	maxResponse int64
	userAgent   string // the integrator's product, before the SDK's own
	logger      *slog.Logger
	idempotency bool
	strict      bool
	observers   []Observer // see WithObserver
	err         error      // the first option that failed
}

// settle applies opts over the defaults.
func settle(opts []Option) (options, error) {
	o := options{
		policy: policy{
			retryMax:      defaultRetryMax,
			waitMin:       defaultRetryWaitMin,
			waitMax:       defaultRetryWaitMax,
			retryAfterMax: defaultRetryAfterMax,
		},
		maxResponse: defaultMaxResponseBytes,
	}
	for _, opt := range opts {
		if opt == nil {
			o.fail(errors.New("travelrule: NewClient: nil option"))
			continue
		}
		opt(&o)
	}
	return o, o.err
}

func (o *options) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// WithTokenSource sets the source of the bearer JWTs sent on every request.
// It is required, unless [WithClientCredentials] is given; a nil source, or
// a nil pointer (or other nil value) of a type that implements
// oauth2.TokenSource, makes NewClient fail.
//
// The client caches the source's tokens until they are about to expire and
// asks the source from a goroutine of its own, one fetch at a time: a call
// waits for the fetch or for its context, whichever ends first, and gives
// up with the context's error while the fetch goes on for the calls that
// come after it. A source that panics, returns a nil token without an
// error, or a token with an empty AccessToken fails the calls waiting for
// it; the next call asks it again.
//
// After a 401 answer, or a 403 (the live service's answer to an expired
// token), the client asks the source for a new token and sends
// the request once more: a source that caches tokens itself (such as
// oauth2.ReuseTokenSource) should be given without its cache where possible,
// since the request is sent again with whatever token the source returns.
func WithTokenSource(ts oauth2.TokenSource) Option {
	return func(o *options) {
		if isNil(ts) {
			o.fail(errors.New("travelrule: WithTokenSource: nil token source"))
		}
		o.tokenSource = ts
	}
}

// isNil reports whether ts is nil or holds a nil pointer, map, slice,
// function or channel, whose Token method would most likely panic.
func isNil(ts oauth2.TokenSource) bool {
	if ts == nil {
		return true
	}
	switch v := reflect.ValueOf(ts); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}

// WithClientCredentials obtains tokens with the OAuth2 client-credentials
// grant described by cfg. Each fetch calls cfg.Token with a fresh context
// bounded by 30 seconds (never the context NewClient was
// called in) and through the client's base transport (see WithHTTPClient),
// and the client caches the token until it expires or the service answers
// 401. A token request follows no redirect: the client's secret goes to
// cfg.TokenURL and nowhere else, and a 3xx answer fails the call with an
// *oauth2.RetrieveError (reachable with errors.As) before anything is sent
// to the service.
func WithClientCredentials(cfg *clientcredentials.Config) Option {
	return func(o *options) {
		if cfg == nil {
			o.fail(errors.New("travelrule: WithClientCredentials: nil config"))
			return
		}
		o.tokenSource = &clientCredentialsSource{cfg: cfg}
	}
}

// WithHTTPClient sets the HTTP client whose transport, timeout and cookie
// jar are used under the client's authentication and retries. Its Timeout
// bounds each attempt, answer body included; zero keeps the default,
// 30 seconds. Its CheckRedirect is consulted only for
// redirects within the base URL's origin, and never for token requests (see
// [WithClientCredentials]). The default is a transport tuned for concurrent
// use that requires TLS 1.2 or later and reads at most 64 KiB of answer
// headers. A transport must pass each request's context on to the
// transport under it: the client learns from its httptrace hooks whether a
// request was written, which decides what may be retried and what net/http
// may send again. A transport other than net/http's own (a wrapper, or an
// [*http.Transport] with a TLSNextProto protocol of yours) is trusted to
// report writes once it has reported one; until then every failure after
// a request was handed to it, a refused connection too, counts as one
// after sending.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) {
		if hc == nil {
			o.fail(errors.New("travelrule: WithHTTPClient: nil client"))
		}
		o.httpClient = hc
	}
}

// WithRetryMax sets how many retries may follow the first attempt
// (default 3); 0 disables retries, including the one retry
// after a token refresh. What is retried is described at
// [Client.InitiateTransfer] and [Client.ResolveInquiry].
func WithRetryMax(n int) Option {
	return func(o *options) {
		if n < 0 {
			o.fail(errors.New("travelrule: WithRetryMax: negative count"))
		}
		o.retryMax = n
	}
}

// WithRetryWait sets the bounds of the exponential, jittered backoff between
// retries (defaults 100 ms and 5 s). A
// Retry-After header is honoured even above max, up to
// [WithRetryAfterMax].
func WithRetryWait(min, max time.Duration) Option {
	return func(o *options) {
		if min < 0 || max < min {
			o.fail(errors.New("travelrule: WithRetryWait: need 0 <= min <= max"))
		}
		o.waitMin, o.waitMax = min, max
	}
}

// WithRetryAfterMax sets the longest Retry-After wait the client honours
// (default 30 s). An answer asking for longer, or for a
// wait that would end after the context's deadline, is not retried: the
// call returns its [*APIError] with RetryAfter set.
func WithRetryAfterMax(d time.Duration) Option {
	return func(o *options) {
		if d < 0 {
			o.fail(errors.New("travelrule: WithRetryAfterMax: negative duration"))
		}
		o.retryAfterMax = d
	}
}

// WithUserAgent prepends product (such as "acme-exchange/2.1") to the SDK's
// own User-Agent, "travelrule-go/<Version>".
func WithUserAgent(product string) Option {
	return func(o *options) {
		if !httpguts.ValidHeaderFieldValue(product) {
			o.fail(errors.New("travelrule: WithUserAgent: product is not a valid header value"))
		}
		o.userAgent = product
	}
}

// WithLogger sets the logger for the client's debug and warning lines. nil,
// the default, logs nothing. The client never logs bearer tokens, bodies,
// query strings or personal data.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithIdempotency makes the client send an Idempotency-Key header with each
// logical call, the same on every attempt, and, because the service can then
// recognise a repeat, retry InitiateTransfer also after failures where the
// service may have acted (5xx but 501, 503 without Retry-After,
// time-outs, dropped connections and HTTP/2 stream resets).
// Use it only with a service that honours the header: the interface
// description does not document one. The key is random, unless the context
// carries one from [ContextWithIdempotencyKey].
func WithIdempotency() Option {
	return func(o *options) { o.idempotency = true }
}

// WithTrust503RetryAfterNotForwarded declares that every 503 answer with
// a Retry-After header comes from a component that did not forward the
// request (the service's own "come back later", a gateway with no healthy
// upstream, nginx's limit_req), so that a call that may not be repeated,
// such as InitiateTransfer without [WithIdempotency], is retried after
// it as after a 429.
//
// Without it such a 503 is taken to prove nothing, for a gateway may send
// it after the service acted: the common maintenance-page idiom (nginx's
// "error_page 502 504 =503" with "add_header Retry-After ... always",
// HAProxy's errorfile for 503) turns an upstream that stored the transfer
// and then failed into a 503 with Retry-After. The call then ends with
// [ErrOutcomeUnknown], whose [*APIError] carries the RetryAfter the
// answer asked for. Set this option only when every gateway between the
// client and the service is known never to answer so: if one does, a
// transfer is sent twice.
func WithTrust503RetryAfterNotForwarded() Option {
	return func(o *options) { o.trust503 = true }
}

// WithStrictValidation makes InitiateTransfer check requests with
// [TransferRequest.ValidateStrict] instead of [TransferRequest.Validate].
func WithStrictValidation() Option {
	return func(o *options) { o.strict = true }
}

// WithMaxResponseBytes sets the largest answer body the client reads
// (default 1 MiB); a larger answer is an error and is not
// read further.
func WithMaxResponseBytes(n int64) Option {
	return func(o *options) {
		if n <= 0 {
			o.fail(errors.New("travelrule: WithMaxResponseBytes: need a positive size"))
		}
		o.maxResponse = n
	}
}

// StaticToken returns a token source that always yields token, for services
// that issue long-lived bearer JWTs. A 401 or 403 answer cannot be cured by a
// refresh and is returned at once.
func StaticToken(token string) oauth2.TokenSource {
	return staticTokenSource(token)
}

// staticTokenSource is the source of StaticToken; the client knows that a
// refresh cannot change its token.
type staticTokenSource string

// Token implements oauth2.TokenSource.
func (s staticTokenSource) Token() (*oauth2.Token, error) {
	return &oauth2.Token{AccessToken: string(s), TokenType: "Bearer"}, nil
}
