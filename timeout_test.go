package travelrule

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shared deadline ends no earlier than limit after any attempt it serves
// and no later than limit plus a tick; attempts within one tick share it.
func TestSharedDeadlines(t *testing.T) {
	for _, limit := range []time.Duration{time.Millisecond, 100 * time.Millisecond, 30 * time.Second, time.Hour} {
		d := newSharedDeadlines(limit)
		assert.GreaterOrEqual(t, d.tick, 5*time.Millisecond)
		assert.LessOrEqual(t, d.tick, time.Second)
		seen := map[context.Context]bool{}
		start := time.Now()
		for range 100 {
			before := time.Now()
			ctx := d.current()
			after := time.Now()
			dl, ok := ctx.Deadline()
			require.True(t, ok)
			assert.False(t, dl.Before(before.Add(limit)), "ends no earlier than limit after the attempt")
			assert.False(t, dl.After(after.Add(limit+d.tick)), "ends within a tick of that")
			seen[ctx] = true
		}
		// However slow the loop, a new deadline comes at most once a tick.
		assert.LessOrEqual(t, len(seen), 2+int(time.Since(start)/d.tick), "attempts within one tick share a deadline")
	}
}

// detached is the pre-Go 1.21 way to keep a context's values without its
// cancellation: Done is nil, but its values reach a cancelable context.
type detached struct{ context.Context }

func (detached) Deadline() (time.Time, bool) { return time.Time{}, false }
func (detached) Done() <-chan struct{}       { return nil }
func (detached) Err() error                  { return nil }

// A caller's context that cannot end gets the shared deadline, keeps its
// values, and the context made from it (as the transport makes one per
// request) ends with the attempt time-out as its cause, also when the
// caller's values reach a cancelable context of their own.
func TestSharedBound(t *testing.T) {
	type key struct{}
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	defer cancelParent()
	for _, caller := range []context.Context{context.WithValue(context.Background(), key{}, "v"), detached{parent}} {
		d := newSharedDeadlines(time.Millisecond)
		ctx := sharedBound{Context: d.current(), values: caller}
		assert.Equal(t, "v", ctx.Value(key{}))
		child, cancel := context.WithCancel(ctx)
		<-child.Done()
		assert.ErrorIs(t, context.Cause(child), errAttemptTimedOut)
		assert.ErrorIs(t, context.Cause(child), context.DeadlineExceeded)
		cancel()
	}
}

// Draining the previous answer and the wait before the next attempt run
// outside the next attempt's time-out: after a retry decision the request
// carries the caller's context alone, and prepareRetry gives the next
// attempt a context whose deadline is the whole time-out from then.
func TestRetryGetsTheWholeTimeOut(t *testing.T) {
	c, err := NewClient("https://travelrule.example", WithTokenSource(StaticToken("t")), WithRetryWait(0, 0))
	require.NoError(t, err)
	cancelable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, caller := range []context.Context{context.Background(), cancelable} {
		cl := &call{c: c, spec: callSpec{op: "InitiateTransfer"}, plan: c.plan("", nil), loop: loop{ctx: caller}, tally: tally{attempts: 1}}
		r, err := http.NewRequestWithContext(cl.clock.next(cl.loop.ctx, cl.plan.timeout, c.deadlines), http.MethodPost, "https://travelrule.example", nil)
		require.NoError(t, err)
		cl.loop.req.Request = r
		unavailable := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}
		retry, err := cl.checkRetry(caller, unavailable, nil)
		require.NoError(t, err)
		require.True(t, retry)
		assert.Equal(t, caller, cl.loop.req.Request.Context(), "the drain and the wait run in the caller's context")

		before := time.Now()
		next := cl.loop.req.Request.Clone(caller)
		require.NoError(t, cl.prepareRetry(next))
		dl, ok := next.Context().Deadline()
		require.True(t, ok, "the next attempt is bounded")
		assert.False(t, dl.Before(before.Add(c.attemptTimeout)), "the next attempt has the whole time-out")
		cl.clock.end()
	}
}
