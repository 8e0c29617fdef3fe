package travelruletest

import "sync"

// callbackWorkers is how many callbacks are sent at once, at most.
const callbackWorkers = 32

// event is one callback to send.
type event struct {
	id         string // the delivery's id (webhook-id under WithStandardWebhooks)
	kind       CallbackKind
	transferID string
	status     State // the state the callback announces: see Delivery.Status
	url        string
	advance    bool   // set the transfer's state to status when the event is taken up
	force      bool   // sent even WithoutCallbacks: an inquiry to the integrator
	body       []byte // the same on every attempt
}

// lane holds the pending callbacks of one transfer, sent one after the
// other by at most one worker at a time.
type lane struct {
	key     string
	events  []*event
	running bool // a worker has the lane, or it is ready, or held
}

// callbackQueue holds the callbacks still to send, in one lane per
// transfer, and hands the lanes that have callbacks to the workers.
type callbackQueue struct {
	mu      sync.Mutex // guards closed, lanes, ready, and the events and running of every lane
	cond    *sync.Cond // on mu: signalled when a lane is made ready, broadcast when the queue closes
	closed  bool       // the server closed: nothing more is queued or sent
	lanes   map[string]*lane
	ready   []*lane        // lanes with callbacks and no worker, in the order they became ready
	workers sync.WaitGroup // the workers and the goroutines of spawn; Server.Close waits for them after close
}

func newCallbackQueue() *callbackQueue {
	q := &callbackQueue{lanes: make(map[string]*lane)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// enqueue queues callbacks of the transfer id, to be sent in order after
// any queued before them.
func (q *callbackQueue) enqueue(id string, evs ...*event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	l := q.lane(id)
	l.events = append(l.events, evs...)
	if !l.running {
		l.running = true
		q.ready = append(q.ready, l)
		q.cond.Signal()
	}
}

// lane returns the lane of the transfer id, made if need be. q.mu is held.
func (q *callbackQueue) lane(id string) *lane {
	l := q.lanes[id]
	if l == nil {
		l = &lane{key: id}
		q.lanes[id] = l
	}
	return l
}

// hold reserves the lane of the transfer id, so that callbacks enqueued
// for it wait until release is called. An inquiry is delivered on a
// goroutine of its own (see Server.beginInquiry), which holds the lane
// meanwhile, so that a resolution made while the inquiry is still being
// delivered cannot have its callback overtake the inquiry.
func (q *callbackQueue) hold(id string) (release func()) {
	q.mu.Lock()
	l := q.lane(id)
	l.running = true
	q.mu.Unlock()
	return func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		switch {
		case q.closed:
			l.running = false
		case len(l.events) > 0:
			q.ready = append(q.ready, l)
			q.cond.Signal()
		default:
			l.running = false
			delete(q.lanes, id)
		}
	}
}

// spawn runs f on a goroutine of its own, counted with the workers so that
// Server.Close waits for it, unless the queue is closed; it reports whether
// it did. f must end soon once the server's context ends.
func (q *callbackQueue) spawn(f func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	// Under q.mu, so that the count is raised before close, and so before
	// Close waits for it.
	q.workers.Go(f)
	return true
}

// next waits for a ready lane and hands it to the calling worker; it
// returns nil when the queue closes.
func (q *callbackQueue) next() *lane {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.ready) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil
	}
	l := q.ready[0]
	q.ready[0] = nil
	q.ready = q.ready[1:]
	return l
}

// head returns the first callback of l, which the calling worker has; when
// l is empty or the queue closed, it gives l up and returns nil.
func (q *callbackQueue) head(l *lane) *event {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(l.events) == 0 || q.closed {
		l.running = false
		if len(l.events) == 0 {
			delete(q.lanes, l.key)
		}
		return nil
	}
	return l.events[0]
}

// pop removes the first callback of l, once sent.
func (q *callbackQueue) pop(l *lane) {
	q.mu.Lock()
	defer q.mu.Unlock()
	l.events[0] = nil
	l.events = l.events[1:]
}

// close drops the callbacks not yet sent and stops the workers, without
// waiting for them.
func (q *callbackQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}
