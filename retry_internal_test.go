package travelrule

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"5", 5 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"9223372036", 9223372036 * time.Second, true}, // the largest whole-second Duration
		// Centuries: beyond a Duration, so the largest one, above any cap
		// (it was negative, or 290 ms, before overflow checks).
		{"9223372037", math.MaxInt64, true},
		{"18446744074", math.MaxInt64, true},
		{"99999999999999999999999", math.MaxInt64, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"Mon, 23 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Mon, 23 Nov 2026 11:00:00 GMT", 0, true}, // in the past
		{"Fri, 31 Dec 9999 23:59:59 GMT", math.MaxInt64, true},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			h := http.Header{}
			if tt.header != "" {
				h.Set("Retry-After", tt.header)
			}
			got, ok := retryAfter(h, now)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
			assert.GreaterOrEqual(t, got, time.Duration(0))
		})
	}
}

// TestDecide covers every row of the table "What is retried"
// (docs/errors.md), for a call that may not be repeated (InitiateTransfer)
// and one that may (ResolveInquiry, or any call WithIdempotency), plus the
// budget and the deadline. No server: decide is a pure function of the facts.
func TestDecide(t *testing.T) {
	p := policy{retryMax: 3, waitMin: 100 * time.Millisecond, waitMax: 5 * time.Second, retryAfterMax: 30 * time.Second}
	dropped := &url.Error{Op: "Post", URL: "https://x.example", Err: io.ErrUnexpectedEOF}
	refused := &url.Error{Op: "Post", URL: "https://x.example", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	untrusted := &url.Error{Op: "Post", URL: "https://x.example", Err: x509.UnknownAuthorityError{}}
	noToken := &tokenError{errors.New("token endpoint down")}
	status := func(code int) attempt { return attempt{n: 1, status: code} }
	withRetryAfter := func(code int, d time.Duration) attempt {
		return attempt{n: 1, status: code, retryAfter: d, hasRetryAfter: true}
	}
	failed := func(err error, written bool) attempt { return attempt{n: 1, err: err, written: written} }
	type want struct{ retry, acted bool }
	tests := []struct {
		name       string
		a          attempt
		once, many want          // the call may not be repeated / may be
		wait       time.Duration // the jitter is 0: half the exponential bound
	}{
		{"2xx", status(200), want{false, true}, want{false, true}, 0},
		{"429 with Retry-After", withRetryAfter(429, 2*time.Second), want{true, false}, want{true, false}, 2 * time.Second},
		{"503 with Retry-After: a gateway's maintenance page may follow the service's action", withRetryAfter(503, 0), want{false, true}, want{true, true}, 0},
		{"503 with Retry-After beyond the cap", withRetryAfter(503, time.Hour), want{false, true}, want{false, true}, time.Hour},
		{"429 without Retry-After: the live service's rate limit, refused before acting", status(429), want{true, false}, want{true, false}, 50 * time.Millisecond},
		{"429 with Retry-After beyond the cap", withRetryAfter(429, time.Hour), want{false, false}, want{false, false}, 0},
		{"503 without Retry-After", status(503), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"connection refused before sending", failed(refused, false), want{true, false}, want{true, false}, 50 * time.Millisecond},
		{"401, a new token at hand", attempt{n: 1, status: 401, newToken: true}, want{true, false}, want{true, false}, 0},
		{"401, no new token", status(401), want{false, false}, want{false, false}, 0},
		{"401 after a refresh already", attempt{n: 2, status: 401, newToken: true, refreshed: true}, want{false, false}, want{false, false}, 0},
		{"403 (an expired token, live), a new token at hand", attempt{n: 1, status: 403, newToken: true}, want{true, false}, want{true, false}, 0},
		{"403, no new token", status(403), want{false, false}, want{false, false}, 0},
		{"403 after a refresh already: forbidden", attempt{n: 2, status: 403, newToken: true, refreshed: true}, want{false, false}, want{false, false}, 0},
		{"500", status(500), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"502", status(502), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"504", status(504), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"520 of a proxy", status(520), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"524 of a proxy", status(524), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"501", status(501), want{false, false}, want{false, false}, 0},
		{"101 Switching Protocols, final", status(101), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"303 not followed", status(303), want{false, true}, want{false, true}, 0},
		{"307 not followed", status(307), want{false, true}, want{false, true}, 0},
		{"dropped after sending", failed(dropped, true), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"HTTP/2 stream declared unprocessed after sending", attempt{n: 1, err: dropped, written: true, unprocessed: true}, want{true, false}, want{true, false}, 50 * time.Millisecond},
		{"HTTP/2 stream declared unprocessed, budget spent", attempt{n: 4, err: dropped, written: true, unprocessed: true}, want{false, false}, want{false, false}, 400 * time.Millisecond},
		{"attempt timed out after sending", failed(context.DeadlineExceeded, true), want{false, true}, want{true, true}, 50 * time.Millisecond},
		{"400", status(400), want{false, false}, want{false, false}, 0},
		{"404", status(404), want{false, false}, want{false, false}, 0},
		{"409", status(409), want{false, false}, want{false, false}, 0},
		{"context ended before sending", attempt{n: 1, err: context.Canceled, ctxDone: true}, want{false, false}, want{false, false}, 0},
		{"context ended after sending", attempt{n: 1, err: context.Canceled, ctxDone: true, written: true}, want{false, true}, want{false, true}, 0},
		{"token endpoint failure", failed(noToken, false), want{false, false}, want{false, false}, 0},
		{"untrusted certificate", failed(untrusted, false), want{false, false}, want{false, false}, 0},
		{"budget spent", attempt{n: 4, status: 429, retryAfter: time.Second, hasRetryAfter: true}, want{false, false}, want{false, false}, time.Second},
		{"budget spent after a 503 with Retry-After", attempt{n: 4, status: 503, retryAfter: time.Second, hasRetryAfter: true}, want{false, true}, want{false, true}, time.Second},
		{"budget spent after sending", attempt{n: 4, err: dropped, written: true}, want{false, true}, want{false, true}, 400 * time.Millisecond},
		{"wait outlasts the deadline", attempt{n: 1, status: 429, retryAfter: 10 * time.Second, hasRetryAfter: true, hasDeadline: true, untilDone: 5 * time.Second}, want{false, false}, want{false, false}, 10 * time.Second},
		{"backoff outlasts the deadline", attempt{n: 1, err: refused, hasDeadline: true, untilDone: 100 * time.Millisecond}, want{false, false}, want{false, false}, 50 * time.Millisecond},
		{"deadline far enough", attempt{n: 1, err: refused, hasDeadline: true, untilDone: time.Second}, want{true, false}, want{true, false}, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		for _, repeatable := range []bool{false, true} {
			w := tt.once
			if repeatable {
				w = tt.many
			}
			t.Run(fmt.Sprintf("%s/repeatable=%t", tt.name, repeatable), func(t *testing.T) {
				a := tt.a
				a.repeatable = repeatable
				d := decide(a, p)
				assert.Equal(t, w.retry, d.retry, "retry (%s)", d.why)
				assert.Equal(t, w.acted, d.acted, "may have acted (%s)", d.why)
				assert.Equal(t, tt.wait, d.wait, "wait")
				assert.NotEmpty(t, d.why)
			})
		}
	}
}

// The backoff wait is spread over the upper half of the exponential bound
// and never exceeds waitMax.
func TestDecideBackoffWait(t *testing.T) {
	p := policy{retryMax: 10, waitMin: 100 * time.Millisecond, waitMax: time.Second, retryAfterMax: time.Minute}
	for _, tt := range []struct {
		n      int
		jitter float64
		want   time.Duration
	}{
		{1, 0, 50 * time.Millisecond},
		{1, 0.5, 75 * time.Millisecond},
		{1, 0.999999, 99999950 * time.Nanosecond},
		{2, 0, 100 * time.Millisecond},
		{3, 0.5, 300 * time.Millisecond},
		{9, 0, 500 * time.Millisecond}, // capped at waitMax
		{9, 0.999999, 999999500 * time.Nanosecond},
	} {
		d := decide(attempt{n: tt.n, status: 500, repeatable: true, jitter: tt.jitter}, p)
		assert.True(t, d.retry)
		assert.Equal(t, tt.want, d.wait, "attempt %d, jitter %v", tt.n, tt.jitter)
	}
}

// Under WithTrust503RetryAfterNotForwarded a 503 with Retry-After is a
// refusal before forwarding, as a 429 is; without Retry-After it still
// proves nothing.
func TestDecideTrusted503(t *testing.T) {
	p := policy{retryMax: 3, waitMin: 100 * time.Millisecond, waitMax: 5 * time.Second, retryAfterMax: 30 * time.Second, trust503: true}
	tests := []struct {
		name         string
		a            attempt
		retry, acted bool
	}{
		{"503 with Retry-After", attempt{n: 1, status: 503, retryAfter: time.Second, hasRetryAfter: true}, true, false},
		{"503 with Retry-After beyond the cap", attempt{n: 1, status: 503, retryAfter: time.Hour, hasRetryAfter: true}, false, false},
		{"503 without Retry-After", attempt{n: 1, status: 503}, false, true},
		{"502 with Retry-After", attempt{n: 1, status: 502, retryAfter: time.Second, hasRetryAfter: true}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(tt.a, p)
			assert.Equal(t, tt.retry, d.retry, d.why)
			assert.Equal(t, tt.acted, d.acted, d.why)
		})
	}
}

// Only an error whose whole text is one of the HTTP/2 client's for a
// stream the server declared unprocessed counts; a text that quotes one (an
// HTTP/1 server's malformed answer, a wrapper's words) does not.
func TestDeclaredUnprocessed(t *testing.T) {
	const (
		goAway  = "http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written; define Request.GetBody to avoid this error"
		refused = "http2: Transport: cannot retry err [stream error: stream ID 3; REFUSED_STREAM; received from peer] after Request.Body was written; define Request.GetBody to avoid this error"
	)
	wrap := func(msg string) error {
		return &url.Error{Op: "Post", URL: "https://x.example/transfers/initiate", Err: errors.New(msg)}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"graceful GOAWAY above the stream", wrap(goAway), true},
		{"REFUSED_STREAM from the server: a proxy sends it after forwarding", wrap(refused), false},
		{"REFUSED_STREAM not from the server", wrap(strings.Replace(refused, "; received from peer", "", 1)), false},
		{"GOAWAY with an error code on the first stream", wrap("http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM"), true},
		{"wrapped again", fmt.Errorf("attempt: %w", wrap(goAway)), true},
		{"PROTOCOL_ERROR from the server", wrap(strings.Replace(refused, "REFUSED_STREAM", "PROTOCOL_ERROR", 1)), false},
		{"INTERNAL_ERROR", wrap("stream error: stream ID 3; INTERNAL_ERROR; received from peer"), false},
		{"CANCEL", wrap("stream error: stream ID 3; CANCEL; received from peer"), false},
		{"REFUSED_STREAM without a stream id", wrap(strings.Replace(refused, "stream ID 3", "stream ID ", 1)), false},
		{"REFUSED_STREAM with text after it", wrap(strings.Replace(refused, "received from peer", "received from peer; and more", 1)), false},
		{"GOAWAY after the connection closed", wrap(`http2: server sent GOAWAY and closed the connection; LastStreamID=5, ErrCode=NO_ERROR, debug=""`), false},
		{"connection closed without GOAWAY", wrap("http2: client connection lost"), false},
		{"unexpected EOF", wrap("unexpected EOF"), false},
		{"an HTTP/1 server quoting the text", wrap(`net/http: HTTP/1.x transport connection broken: malformed HTTP response "` + goAway + `"`), false},
		{"the text with a prefix", wrap("proxy: " + goAway), false},
		{"GOAWAY text with a code that is not one", wrap("http2: Transport received GOAWAY from server ErrCode:NO ERROR\"x"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, declaredUnprocessed(tt.err))
		})
	}
}
