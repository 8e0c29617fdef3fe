package travelrule

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// This file is the retry policy: decide, a pure function from the facts of
// one attempt to what happens next. attempts.go gathers the facts after every
// attempt and applies the decision; go-retryablehttp runs the loop.

// attempt holds the facts of one attempt.
type attempt struct {
	n          int  // 1 for the first attempt
	repeatable bool // the call may be sent twice (ResolveInquiry, or WithIdempotency)

	status        int           // the answer's status; 0 when no answer came
	retryAfter    time.Duration // the answer's Retry-After, when hasRetryAfter
	hasRetryAfter bool          // the answer carried a Retry-After that parses
	err           error         // why no answer came

	written     bool          // the request may have been written: it may have reached the service
	unprocessed bool          // the HTTP/2 connection's peer went away below the request's stream (see declaredUnprocessed)
	ctxDone     bool          // the caller's context has ended
	untilDone   time.Duration // the time left before the caller's deadline, when hasDeadline
	hasDeadline bool

	refreshed bool    // an earlier 401 was already answered with a retry
	newToken  bool    // after a 401: a token other than the rejected one is at hand
	jitter    float64 // a random number in [0, 1) that spreads the wait
}

// policy is the client's retry settings.
type policy struct {
	retryMax      int           // retries after the first attempt
	waitMin       time.Duration // the first backoff wait
	waitMax       time.Duration // the longest backoff wait
	retryAfterMax time.Duration // the longest Retry-After honoured
	trust503      bool          // a 503 with Retry-After proves the request was not forwarded (WithTrust503RetryAfterNotForwarded)
}

// decision is what follows an attempt.
type decision struct {
	retry bool          // send the request again
	wait  time.Duration // after this wait
	acted bool          // the service may have acted on this attempt
	why   string        // for the debug log
}

// decide is the whole retry policy; docs/errors.md, "What is retried",
// is its summary.
//
//   - Retried always: 429 (the live service's rate limit: it did not act),
//     after its Retry-After within the cap or after the backoff without
//     one; a connection failure before the request was written (refused
//     dial, DNS, TLS handshake); an HTTP/2 stream above a GOAWAY's last
//     stream id (RFC 9113, section 6.8: the connection's own peer never
//     took it); and one 401 or 403
//     (the live service's answer to an expired token), when a token other
//     than the rejected one is at hand.
//   - Retried only when the call may be repeated: 503, with Retry-After
//     (after it, within the cap) or without (a gateway answers 503 before
//     forwarding and also after the service acted: a maintenance page for
//     the upstream's 502 or 504 that adds Retry-After to every answer), or
//     with Retry-After for every call under WithTrust503RetryAfterNotForwarded; any
//     other 5xx but 501 (500, 502, 504, a proxy's 520 or 524); a final 1xx
//     (101 to a request that asked for no upgrade); and a failure after
//     the request may have been written (dropped connection, any stream
//     reset, REFUSED_STREAM included, a connection closed without GOAWAY,
//     time-out).
//   - Never retried: any other answer, a context that ended, a failure to
//     obtain a token, a certificate the client does not trust.
//
// The service may have acted after a 2xx, a 5xx but 501 (503 included,
// with or without Retry-After, unless WithTrust503RetryAfterNotForwarded), a final
// 1xx, an unfollowed 3xx, and any failure after the request may have been
// written but a stream above a GOAWAY's last stream id. No retry starts
// beyond the budget or if its wait would end after the caller's deadline.
func decide(a attempt, p policy) decision {
	d := judge(a, p)
	switch {
	case !d.retry:
	case a.n > p.retryMax:
		d.retry, d.why = false, d.why+"; no retries left"
	case a.hasDeadline && a.untilDone <= max(d.wait, backoffBound(a.n, p)) && d.wait > 0:
		d.retry, d.why = false, d.why+"; the wait would outlast the deadline"
	}
	return d
}

// judge decides an attempt on its facts alone, regardless of the budget
// and the deadline.
func judge(a attempt, p policy) decision {
	code := a.status
	if code >= 200 && code <= 299 {
		return decision{acted: true, why: "answered"}
	}
	backoff := decision{retry: true, wait: jitter(backoffBound(a.n, p), a.jitter)}
	maybe := func(why string) decision { // the service may have acted: retried only if the call may be repeated
		return decision{retry: a.repeatable, wait: backoff.wait, acted: true, why: why}
	}
	switch {
	case code == 0:
		return judgeFailure(a, backoff)
	case (code == http.StatusUnauthorized || code == http.StatusForbidden) && !a.refreshed && a.newToken:
		return decision{retry: true, why: "status " + strconv.Itoa(code) + ": retrying with a new token"}
	case code == http.StatusTooManyRequests && a.hasRetryAfter,
		code == http.StatusServiceUnavailable && a.hasRetryAfter && p.trust503:
		if a.retryAfter > p.retryAfterMax {
			return decision{why: "Retry-After beyond the cap"}
		}
		return decision{retry: true, wait: a.retryAfter, why: "status " + strconv.Itoa(code) + " with Retry-After"}
	case code == http.StatusServiceUnavailable && a.hasRetryAfter:
		// A gateway answers it before forwarding (no healthy upstream,
		// nginx limit_req) and after the service acted (a maintenance
		// page for the upstream's 502 or 504, with Retry-After added to
		// every answer): it proves nothing.
		d := maybe("status 503 with Retry-After")
		d.wait = a.retryAfter
		if a.retryAfter > p.retryAfterMax {
			d.retry, d.why = false, d.why+" beyond the cap"
		}
		return d
	case code == http.StatusTooManyRequests:
		// The live service documents 429 as its rate limit: refused before
		// it acted, with or without Retry-After.
		backoff.why = "status 429 without Retry-After"
		return backoff
	case code == http.StatusServiceUnavailable:
		// A proxy may send it after the service received the request (a
		// load balancer's 503, Envoy's "upstream reset before headers").
		return maybe("status 503 without Retry-After")
	case code >= 500 && code != http.StatusNotImplemented:
		// 501 means the service does not have the operation at all.
		return maybe("status " + strconv.Itoa(code))
	case code < 200:
		// A final 1xx (101 Switching Protocols to a request that asked
		// for no upgrade), or a status below 100 that net/http lets
		// through, ends the exchange after the request was read.
		return maybe("final status " + strconv.Itoa(code))
	case code >= 300 && code <= 399:
		// Not followed (see checkRedirect): a 303 after a POST commonly
		// means "done, look there".
		return decision{acted: true, why: "redirect not followed"}
	}
	return decision{why: "status " + strconv.Itoa(code)}
}

// judgeFailure decides an attempt that got no answer.
func judgeFailure(a attempt, backoff decision) decision {
	var te *tokenError
	switch {
	case errors.As(a.err, &te):
		return decision{why: "no token: nothing was sent"}
	case a.ctxDone:
		return decision{acted: a.written, why: "context ended"}
	case isCertError(a.err):
		return decision{acted: a.written, why: "certificate not trusted"}
	case a.unprocessed:
		backoff.why = "the HTTP/2 connection went away below the stream"
		return backoff
	case !a.written:
		backoff.why = "connection failed before sending"
		return backoff
	}
	return decision{retry: a.repeatable, wait: backoff.wait, acted: true, why: "connection failed after sending"}
}

// backoffBound is the longest exponential wait after attempt n.
func backoffBound(n int, p policy) time.Duration {
	return retryablehttp.DefaultBackoff(p.waitMin, p.waitMax, n-1, nil)
}

// jitter spreads a wait over its upper half ("equal jitter"), so that many
// clients do not retry in step; r is a random number in [0, 1).
func jitter(d time.Duration, r float64) time.Duration {
	half := d / 2
	return half + time.Duration(float64(d-half)*r)
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

// isCertError reports whether err is a certificate the client refused.
func isCertError(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verify)
}

// The texts of net/http's HTTP/2 client (and golang.org/x/net/http2's,
// the same code) for a stream above a GOAWAY's last stream id, which it
// would have sent again by itself had it been able to rewind the body (a
// call that may not be repeated has no GetBody: guard.go): the error types
// are not exported, so their texts are what tells. The tests check them
// against the HTTP/2 client of the Go release they run under (.ci/run runs
// them under the oldest and the newest supported), with a server that
// sends GOAWAY as nginx does (TestHTTP2UnprocessedStreamIsRetried).
const (
	h2CannotRetry    = "http2: Transport: cannot retry err ["
	h2CannotRetryEnd = "] after Request.Body was written; define Request.GetBody to avoid this error"
	h2GracefulGoAway = "http2: Transport received Server's graceful shutdown GOAWAY"
	h2GoAwayOnFirst  = "http2: Transport received GOAWAY from server ErrCode:"
)

// declaredUnprocessed reports whether err says that the HTTP/2
// connection's peer sent a GOAWAY whose last stream id is below the
// request's stream (RFC 9113, section 6.8), graceful (NO_ERROR: nginx's
// keepalive_requests, a reload, HAProxy closing an idle connection) or not
// (the first stream of a connection, which net/http does not resend). The
// peer promises that for its own side of the connection, before it took
// the stream.
//
// A RST_STREAM proves nothing, REFUSED_STREAM included: a proxy answers it
// after it forwarded the whole request (haproxy 2.6, when the upstream
// resets a stream it stored; docs/reliability.md). Neither does a GOAWAY
// at or above the stream, nor a connection closed without GOAWAY. Only an
// error in the chain whose whole text is one of the HTTP/2 client's
// counts, never a text that merely contains one: an HTTP/1 server's
// malformed answer, which net/http quotes in its error, cannot pass for it.
func declaredUnprocessed(err error) bool {
	for err != nil {
		msg := err.Error()
		if inner, ok := strings.CutPrefix(msg, h2CannotRetry); ok {
			if inner, ok = strings.CutSuffix(inner, h2CannotRetryEnd); ok && inner == h2GracefulGoAway {
				return true
			}
		}
		if code, ok := strings.CutPrefix(msg, h2GoAwayOnFirst); ok && isIdentifier(code, 32) {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}
