package travelrule

import (
	"context"
	"sync"
	"time"
)

// watchdog ends the attempts that outlast the client's attempt time-out.
// It is one goroutine per client, running only while attempts are in
// flight, that looks at them every tick, so an attempt ends between its
// time-out and one tick later. A timer per attempt would do the same at a
// cost every call pays (arming and stopping a runtime timer, which wakes
// the network poller): about 4% of an initiation's CPU, where the watchdog
// costs a map insert and delete under a lock (docs/performance.md).
type watchdog struct {
	tick time.Duration // how often the goroutine looks

	mu      sync.Mutex
	watched map[*call]time.Time // the attempts in flight, by call, with their deadlines
	running bool                // the goroutine runs; it ends when watched is empty
}

// newWatchdog returns a watchdog for attempts that may take limit: it
// looks ten times per limit, at least every second and at most every 5 ms.
func newWatchdog(limit time.Duration) *watchdog {
	return &watchdog{tick: min(max(limit/10, 5*time.Millisecond), time.Second), watched: make(map[*call]time.Time)}
}

// watch makes cl's current attempt end, by end, after limit. It replaces
// the attempt the call had under watch.
func (w *watchdog) watch(cl *call, end context.CancelCauseFunc, limit time.Duration) {
	deadline := time.Now().Add(limit)
	w.mu.Lock()
	defer w.mu.Unlock()
	cl.endAttempt = end
	w.watched[cl] = deadline
	if !w.running {
		w.running = true
		go w.run()
	}
}

// unwatch takes cl off the watch and returns the end of its attempt, nil
// if it had none under watch.
func (w *watchdog) unwatch(cl *call) context.CancelCauseFunc {
	w.mu.Lock()
	defer w.mu.Unlock()
	end := cl.endAttempt
	cl.endAttempt = nil
	delete(w.watched, cl)
	return end
}

// run ends the attempts past their deadlines every tick, until no attempt
// is in flight.
func (w *watchdog) run() {
	t := time.NewTicker(w.tick)
	defer t.Stop()
	for now := range t.C {
		if !w.expire(now) {
			return
		}
	}
}

// expire ends the attempts whose deadlines passed by now and reports
// whether any attempt is still in flight; when none is, the goroutine
// ends.
func (w *watchdog) expire(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for cl, deadline := range w.watched {
		if now.After(deadline) {
			cl.endAttempt(errAttemptTimedOut)
			cl.endAttempt = nil
			delete(w.watched, cl)
		}
	}
	if len(w.watched) == 0 {
		w.running = false
	}
	return w.running
}
