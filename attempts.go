package travelrule

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// This file owns every hook of go-retryablehttp, the loop over a call's
// attempts: send makes the first request, checkRetry gathers each
// attempt's facts and applies retry.go's decision, backoff hands the loop
// its wait, prepareRetry readies the next request.

// loop is go-retryablehttp's loop over one call's attempts.
type loop struct {
	ctx context.Context       // the caller's (or the observers'), with the wire guard's trace
	rc  retryablehttp.Client  // the retry loop, with the call's hooks
	req retryablehttp.Request // the request of the current attempt
}

// jsonType is the value of the Content-Type and Accept headers of every
// request: one slice that no layer changes (a RoundTripper may not).
var jsonType = []string{"application/json"}

// send sends the first attempt and lets the loop send the others. It
// returns the last attempt's answer, or its failure.
func (cl *call) send(ctx context.Context) (*http.Response, error) {
	c := cl.c
	auth, err := c.tokens.header(ctx)
	if err != nil {
		return nil, err // nothing was sent
	}
	cl.loop.ctx = httptrace.WithClientTrace(ctx, &cl.guard.trace)
	actx := cl.clock.next(cl.watch.startAttempt(cl.loop.ctx, 1, 0), cl.plan.timeout, c.deadlines)
	hr, err := http.NewRequestWithContext(actx, cl.spec.method, cl.spec.url, nil)
	if err != nil {
		cl.watch.endAttempt(&attempt{n: 1}, err, decision{why: "the request could not be made"}, 0)
		return nil, err
	}
	hr.Body, hr.ContentLength = cl.guard.newBody(), int64(len(cl.spec.body))
	if cl.spec.repeatable {
		// A call that may not be repeated gets no GetBody: see getBody.
		hr.GetBody = cl.guard.getBody
	}
	h := hr.Header
	h["Authorization"] = auth.values
	cl.shown.sent(auth)
	h["Content-Type"] = jsonType
	h["Accept"] = jsonType
	h["User-Agent"] = c.userAgent
	if cl.plan.key != "" {
		h["Idempotency-Key"] = []string{cl.plan.key}
	}
	for k, v := range cl.plan.header { // none of the client's own: headerRefusal
		h[k] = v
	}
	cl.watch.headers(h)
	cl.loop.req = retryablehttp.Request{Request: hr} // the body is rewound by prepareRetry
	cl.loop.rc = retryablehttp.Client{
		HTTPClient:   c.hc,
		RetryMax:     cl.plan.policy.retryMax,
		CheckRetry:   cl.checkRetry,
		Backoff:      cl.backoff,
		PrepareRetry: cl.prepareRetry,
		ErrorHandler: retryablehttp.PassthroughErrorHandler, // keep the last answer when giving up
	}
	cl.tally.attempts = 1
	resp, err := cl.loop.rc.Do(&cl.loop.req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, err
	}
	return resp, nil
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
	d := decide(a, cl.plan.policy)
	cl.tally.record(&a, d)
	cl.watch.endAttempt(&a, err, d, cl.guard.resends())
	if l := cl.c.logger; l != nil {
		msg := "travelrule: attempt ended"
		if d.retry {
			msg = "travelrule: retrying"
		}
		l.Debug(msg, "op", cl.spec.op, "attempt", a.n, "status", a.status, "reason", d.why, "wait", d.wait)
	}
	if d.retry {
		// go-retryablehttp drains this attempt's answer in this attempt's
		// context, then waits in the request's: the caller's alone, so
		// that neither eats into the next attempt's time (prepareRetry
		// gives the next attempt its own).
		cl.loop.req.Request = cl.loop.req.Request.WithContext(cl.loop.ctx)
	}
	return d.retry, nil
}

// facts gathers what retry.go decides on after an attempt. After a 401 or
// 403 it asks the token cache for a new token, the one fact that costs a
// fetch.
func (cl *call) facts(resp *http.Response, err error) attempt {
	a := attempt{
		n:          cl.tally.attempts,
		repeatable: cl.spec.repeatable,
		err:        err,
		written:    cl.guard.written(),
		ctxDone:    cl.loop.ctx.Err() != nil,
		refreshed:  cl.tally.refreshed,
		jitter:     rand.Float64(),
	}
	if dl, ok := cl.loop.ctx.Deadline(); ok {
		a.untilDone, a.hasDeadline = time.Until(dl), true
	}
	if resp == nil {
		// A GOAWAY below the stream after a 1xx on it contradicts the
		// 1xx: the stream was taken.
		a.unprocessed = declaredUnprocessed(err) && !cl.guard.hintedAt()
		return a
	}
	a.status = resp.StatusCode
	switch a.status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		a.retryAfter, a.hasRetryAfter = retryAfter(resp.Header, time.Now())
	case http.StatusUnauthorized, http.StatusForbidden:
		a.newToken, cl.tally.noToken = cl.c.tokens.afterRefusal(cl.loop.ctx, refusal{resp: resp,
			repeatable: cl.spec.repeatable, refreshed: cl.tally.refreshed,
			canRetry: a.n <= cl.plan.policy.retryMax, limit: cl.c.maxResponse})
	}
	return a
}

// backoff hands go-retryablehttp the wait of the last decision.
func (cl *call) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return cl.tally.next.wait
}

// prepareRetry readies the request for the next attempt: its own context
// (timeout.go), a new body, the cached token (a 401 may have renewed it)
// and fresh facts.
func (cl *call) prepareRetry(r *http.Request) error {
	auth, err := cl.c.tokens.header(cl.loop.ctx)
	if err != nil {
		return err
	}
	n := cl.tally.attempts + 1
	*r = *r.WithContext(cl.clock.next(cl.watch.startAttempt(cl.loop.ctx, n, cl.guard.resends()), cl.plan.timeout, cl.c.deadlines))
	cl.clock.endPrevious() // the previous attempt's answer has been drained
	r.Body = cl.guard.newBody()
	r.Header = r.Header.Clone() // the previous attempt's request may still be read
	r.Header["Authorization"] = auth.values
	cl.watch.headers(r.Header)
	cl.shown.sent(auth)
	cl.tally.attempts = n
	cl.guard.nextAttempt()
	return nil
}

// sent is how many requests left the client: the attempts of the retry
// loop and any request a transport sent again within one of them.
func (cl *call) sent() int { return cl.tally.attempts + cl.guard.resends() }

// reckoning is what the call's final error and its observers are told.
func (cl *call) reckoning() reckoning {
	return reckoning{spec: &cl.spec, key: cl.plan.key, shown: &cl.shown, sent: cl.sent()}
}

// endOnPanic ends the observation of the current attempt and of the call,
// if they are observed, when the call panics (a transport of the
// caller's, or an observer), so that no observer's span or journal entry
// stays open; the panic goes on. Once the request was handed to the
// transport, the call's outcome is unknown (an *OutcomeUnknownError).
// Without observers it recovers nothing.
func (cl *call) endOnPanic() {
	if !cl.watch.watching() {
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
	defer cl.endPanicked()
	cl.watch.endAttempt(&attempt{n: cl.tally.attempts, written: true}, errPanicked,
		decision{acted: true, why: "a panic ended the attempt"}, cl.guard.resends())
}

// endPanicked ends the observation of a call that panicked.
func (cl *call) endPanicked() {
	if cl.tally.attempts == 0 {
		cl.watch.finishAs(CallNotDone, errPanicked, cl.reckoning(), &cl.tally) // nothing was handed to the transport
		return
	}
	cl.tally.acted = true
	r := cl.reckoning()
	cl.watch.finishAs(CallOutcomeUnknown, r.unknown(errPanicked), r, &cl.tally)
}
