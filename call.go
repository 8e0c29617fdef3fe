package travelrule

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// This file is the one request path of every operation but the login:
// Client.do plans the call, starts its observation, lets attempts.go run
// the attempts, and has outcome.go judge what came of them.

// callSpec is what an operation asks of one call.
type callSpec struct {
	op         string
	method     string // POST unless set
	url        string
	body       []byte
	repeatable bool   // may be sent twice: ResolveInquiry, or any call WithIdempotency
	key        string // the operation's Idempotency-Key, which the call's options override
	pii        interface{ appendPII([]string) []string }

	// What an *OutcomeUnknownError reports and observers are told.
	txID, transferID, callback string
	decision                   Decision // ResolveInquiry's, for CallInfo
}

// plan is a call's settings: the client's, under the call's options.
type plan struct {
	policy  policy        // the client's retry settings, with the call's budget
	timeout time.Duration // the attempt time-out: the client's or the call's
	key     string        // the Idempotency-Key header, or ""
	header  http.Header   // the call's WithCallHeader headers; nil without
}

// call is one logical call (one InitiateTransfer, ResolveInquiry,
// SubmitTxID, ...) across its attempts: a composition of the layers of
// the path. Its methods, the retry loop's hooks, are in attempts.go.
type call struct {
	c     *Client
	spec  callSpec
	plan  plan
	shown callSecrets  // callsecrets.go
	guard wireGuard    // guard.go
	clock attemptClock // timeout.go
	tally tally        // outcome.go
	watch *callWatch   // watch.go; nil without observers
	loop  loop         // attempts.go
}

// do sends one call and returns its 2xx answer, judged by parse, or its
// one final error.
func (c *Client) do(ctx context.Context, spec callSpec, opts *callOptions, parse func(*answer) outcome) (answer, error) {
	if err := ctx.Err(); err != nil {
		return answer{}, fmt.Errorf("travelrule: %s: %w", spec.op, err) // nothing was sent
	}
	if spec.method == "" {
		spec.method = http.MethodPost
	}
	cl := &call{c: c, spec: spec, plan: c.plan(spec.key, opts)}
	cl.shown = callSecrets{header: cl.plan.header, credential: c.tokens.credential}
	cl.shown.pii = spec.pii.appendPII(cl.shown.piiBuf[:0])
	cl.guard = wireGuard{body: spec.body, tracesWrites: c.tracesWrites}
	cl.guard.arm(spec.repeatable)
	var err error
	cl.watch, ctx, err = c.watchCall(ctx, &cl.spec, cl.plan.key, &cl.guard.trace)
	if err != nil {
		return answer{}, err // an observer refused it: nothing was sent
	}
	defer cl.endOnPanic()
	defer cl.clock.end()
	resp, err := cl.send(ctx)
	ans, err := cl.tally.verdict(c, cl.reckoning(), resp, err, parse)
	cl.watch.finish(err, cl.reckoning(), &cl.tally)
	ans.attempts, ans.key, ans.shown = cl.sent(), cl.plan.key, &cl.shown
	return ans, err
}

// plan settles a call's settings: the client's, under the call's options
// opts, with the operation's Idempotency-Key key unless they set one.
func (c *Client) plan(key string, opts *callOptions) plan {
	p := plan{policy: c.policy, timeout: c.attemptTimeout, key: key}
	if o := opts; o != nil {
		if o.retryMax >= 0 {
			p.policy.retryMax = o.retryMax
		}
		if o.attemptTimeout > 0 {
			p.timeout = o.attemptTimeout
		}
		if o.key != "" {
			p.key = o.key
		}
		p.header = o.header
	}
	return p
}
