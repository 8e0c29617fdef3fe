package travelrule

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The attempt time-out: every attempt ends after the client's attempt
// time-out (30 s, or the Timeout of the client given to WithHTTPClient),
// answer body included, unless the caller's deadline comes first.

// errAttemptTimedOut is the cause of an attempt that outlasted the attempt
// time-out. It is a time-out (Timeout reports true) and matches
// context.DeadlineExceeded, as an http.Client's time-out does.
var errAttemptTimedOut error = attemptTimeout{}

type attemptTimeout struct{}

func (attemptTimeout) Error() string        { return "attempt timed out" }
func (attemptTimeout) Timeout() bool        { return true }
func (attemptTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

// attemptClock gives each attempt of one call its context. The previous
// attempt's context ends when the next attempt starts (endPrevious), once
// its answer has been drained; the wait between them runs in the caller's
// context alone; the last ones end with the call (end).
type attemptClock struct {
	stop     context.CancelFunc // ends the current attempt's context
	stopPrev context.CancelFunc // ends the previous attempt's context
	bound    sharedBound        // the first attempt's context, when it is bounded by a shared deadline
	started  bool               // an attempt's context was made
}

// next makes the context of an attempt that starts now, bounded by limit.
// ctx is the call's context, or the one the AttemptObservers derived from
// it for this attempt.
//
//   - The caller's deadline comes first: ctx.
//   - The caller's context cannot end by itself (context.Background, say)
//     and limit is the client's (shared.limit): ctx's values under the
//     client's shared deadline (see sharedDeadlines).
//   - Otherwise: ctx with a timer of its own.
func (k *attemptClock) next(ctx context.Context, limit time.Duration, shared *sharedDeadlines) context.Context {
	k.stopPrev, k.stop = k.stop, noop
	first := !k.started
	k.started = true
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= limit {
		return ctx
	}
	if ctx.Done() == nil && limit == shared.limit {
		b := sharedBound{Context: shared.current(), values: ctx}
		if first {
			// The first attempt's is kept in the call: one allocation
			// less. A later attempt's is a new value, since the
			// transport may still read the earlier one.
			k.bound = b
			return &k.bound
		}
		return b
	}
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errAttemptTimedOut)
	k.stop = cancel
	return ctx
}

func noop() {}

// endPrevious ends the previous attempt's context.
func (k *attemptClock) endPrevious() { k.stopPrev() }

// end ends the contexts of the last attempts.
func (k *attemptClock) end() {
	for _, stop := range [...]context.CancelFunc{k.stopPrev, k.stop} {
		if stop != nil {
			stop()
		}
	}
}

// sharedDeadlines hands out coarse deadlines that the attempts of one
// client share: a deadline serves the attempts that start within one tick
// and ends limit after that tick ends, so each attempt ends between limit
// and limit plus a tick after it started. An attempt under a shared
// deadline costs no timer of its own: a timer per attempt costs an
// initiation about 4% more CPU (docs/performance.md). At most
// limit/tick + 1 deadlines are live at a time.
type sharedDeadlines struct {
	limit time.Duration
	tick  time.Duration // a tenth of limit, within 5 ms and 1 s

	cur atomic.Pointer[sharedDeadline] // the deadline of the attempts starting now
	mu  sync.Mutex                     // serializes making the next deadline
}

// sharedDeadline is the context of the attempts that start before next.
type sharedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc // kept only so that the timer's resources are owned; the deadline ends by itself
	next   time.Time
}

func newSharedDeadlines(limit time.Duration) *sharedDeadlines {
	return &sharedDeadlines{limit: limit, tick: min(max(limit/10, 5*time.Millisecond), time.Second)}
}

// current returns the context that ends no earlier than limit from now.
func (d *sharedDeadlines) current() context.Context {
	now := time.Now()
	if cur := d.cur.Load(); cur != nil && now.Before(cur.next) {
		return cur.ctx
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if cur := d.cur.Load(); cur != nil && now.Before(cur.next) {
		return cur.ctx
	}
	next := now.Add(d.tick)
	ctx, cancel := context.WithDeadlineCause(context.Background(), next.Add(d.limit), errAttemptTimedOut)
	d.cur.Store(&sharedDeadline{ctx: ctx, cancel: cancel, next: next})
	return ctx
}

// sharedBound is a caller's context that cannot end by itself, bounded by
// a shared deadline: its values are the caller's, its deadline, Done and
// Err the shared deadline's. The transport's own per-request context then
// registers with the shared deadline (it finds it through Value), as it
// would with a cancelable context of the caller's.
type sharedBound struct {
	context.Context                 // the shared deadline
	values          context.Context // the caller's
}

// Value returns the shared deadline's value for key, which is only its own
// cancellation (through which the contexts made from this one end with
// it), and otherwise the caller's: a caller's context that cannot end but
// reaches a cancelable one through its values must not shadow it.
func (b sharedBound) Value(key any) any {
	if v := b.Context.Value(key); v != nil {
		return v
	}
	return b.values.Value(key)
}
