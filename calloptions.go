package travelrule

import (
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// This file is the per-call options: settings of one call that would
// otherwise need a second Client. What a call may be sent again after is
// still decided by retry.go alone: no option makes a call that may not be
// repeated repeatable.

// CallOption configures one call of a [Client], such as
// [Client.InitiateTransfer]; the client's own settings stay as they are.
// An option that is invalid makes the call return a [*ValidationError]
// that names it, and nothing is sent.
type CallOption func(*callOptions)

// callOptions are one call's settings.
type callOptions struct {
	retryMax       int // -1: the client's
	attemptTimeout time.Duration
	header         http.Header
	key            string
	faults         []FieldError
}

func (o *callOptions) fail(option, reason string) {
	o.faults = append(o.faults, FieldError{Field: option, Reason: reason})
}

// settleCall applies opts. With none it returns nil and allocates nothing.
func settleCall(opts []CallOption) (*callOptions, error) {
	if len(opts) == 0 {
		return nil, nil
	}
	o := &callOptions{retryMax: -1}
	for _, opt := range opts {
		if opt == nil {
			o.fail("CallOption", "nil option")
			continue
		}
		opt(o)
	}
	if len(o.faults) > 0 {
		return nil, &ValidationError{Fields: o.faults}
	}
	return o, nil
}

// WithCallRetryMax sets how many retries may follow the call's first
// attempt, in place of the client's [WithRetryMax]; 0 allows none, not
// even the one after a token refresh. It changes how many times the client
// may retry, never what it retries: a call that may not be sent again
// after the service may have acted (InitiateTransfer without
// [WithIdempotency]) is not, whatever the budget.
func WithCallRetryMax(n int) CallOption {
	return func(o *callOptions) {
		if n < 0 {
			o.fail("WithCallRetryMax", "negative count")
			return
		}
		o.retryMax = n
	}
}

// WithCallAttemptTimeout bounds each attempt of the call, answer body
// included, in place of the client's attempt time-out (the Timeout of the
// client given to [WithHTTPClient], or 30 seconds). The context's deadline
// still bounds the whole call. An attempt that times out after its request
// was written is, for a call that may not be repeated, an
// [*OutcomeUnknownError], as with the client's time-out.
func WithCallAttemptTimeout(d time.Duration) CallOption {
	return func(o *callOptions) {
		if d <= 0 {
			o.fail("WithCallAttemptTimeout", "need a positive duration")
			return
		}
		o.attemptTimeout = d
	}
}

// WithCallHeader sets the header key to value on every attempt of the
// call, for a gateway of yours (a routing or tenant header, say). It may
// not set a header the client sets itself (Authorization, Content-Type,
// Accept, User-Agent, Idempotency-Key: see [WithCallIdempotencyKey]) or
// one that shapes the connection or the message (Host, Content-Length,
// Transfer-Encoding, Connection, Expect, TE, Trailer, Upgrade and the
// like, Accept-Encoding and Range included): such a key, or a key or
// value net/http would refuse, makes the call fail before anything is
// sent. The client never logs header values, and a value of five
// characters or more is kept out of error text and out of the request ids
// and codes of results and observers, as a bearer token is (a server that
// echoes it in a request id, say); not out of a transfer id, which joins
// a transfer's records (a gateway that puts a tenant in its ids would
// otherwise lose them).
func WithCallHeader(key, value string) CallOption {
	return func(o *callOptions) {
		k := http.CanonicalHeaderKey(key)
		if reason := headerRefusal(k); reason != "" {
			o.fail("WithCallHeader", reason)
			return
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			o.fail("WithCallHeader", "the value of "+k+" is not a valid header value")
			return
		}
		if o.header == nil {
			o.header = http.Header{}
		}
		o.header[k] = []string{value}
	}
}

// WithCallIdempotencyKey makes the call carry key as its Idempotency-Key
// header, on every attempt. With a client made [WithIdempotency] it takes
// the place of the random key and of one given with
// [ContextWithIdempotencyKey] (which is then not looked at), and the call
// is retried as that option describes. Without it, the header is
// sent and the call is retried only as it would be without a key: the
// key alone does not tell the client that the service honours it. A key
// must be 1 to 255 letters, digits and "-_.:".
func WithCallIdempotencyKey(key string) CallOption {
	return func(o *callOptions) {
		if !isIdentifier(key, 255) {
			o.fail("WithCallIdempotencyKey", "must be 1..255 letters, digits and -_.:")
			return
		}
		o.key = key
	}
}

// clientHeaders are the headers the client sets itself on every request.
var clientHeaders = map[string]bool{
	"Authorization": true, "Content-Type": true, "Accept": true, "User-Agent": true, "Idempotency-Key": true,
}

// messageHeaders shape the connection or the message: net/http sets them,
// ignores them or breaks the exchange with them (an Expect: 100-continue
// changes when the body is written, and so what may be retried).
var messageHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Keep-Alive": true,
	"Proxy-Connection": true, "Te": true, "Trailer": true, "Upgrade": true, "Expect": true,
	"Http2-Settings": true,
	// net/http asks for gzip and decodes it only when the request does
	// not: a gzipped 2xx would not be understood, and a created transfer
	// would end ErrOutcomeUnknown. A range or an encoding of the request
	// body changes the message the same way.
	"Accept-Encoding": true, "Content-Encoding": true, "Range": true, "If-Range": true,
}

// headerRefusal says why a header named k (canonical) may not be added to
// a call's request by WithCallHeader or an AttemptObserver, or returns "".
// It is the one place that decides which headers are the client's.
// A name with "_" for "-" is the same header to a server that maps both to
// one (CGI and the frameworks that follow it), and so refused alike.
func headerRefusal(k string) string {
	if !httpguts.ValidHeaderFieldName(k) {
		return "the key is not a valid header name"
	}
	same := http.CanonicalHeaderKey(strings.ReplaceAll(k, "_", "-"))
	switch {
	case clientHeaders[same]:
		return k + " is set by the client"
	case messageHeaders[same]:
		return k + " shapes the connection or the message and may not be set"
	}
	return ""
}

// validHeaderValues reports whether net/http would send each of vv.
func validHeaderValues(vv []string) bool {
	for _, v := range vv {
		if !httpguts.ValidHeaderFieldValue(v) {
			return false
		}
	}
	return true
}
