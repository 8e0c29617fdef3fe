package travelruletest

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/vaspkit/travelrule"
)

// State is the state of a transfer in the sandbox. The description shows
// no states (part 3); the sandbox's lifecycle is received → approved →
// completed, or received → rejected, for an initiated transfer, and
// inquiry → approved or rejected for an inquiry started with
// [Server.StartInquiry].
type State string

// The states of a transfer. Each status callback carries the state it
// announces as its "status".
const (
	StateReceived  State = "received"
	StateApproved  State = "approved"
	StateRejected  State = "rejected"
	StateCompleted State = "completed"
	StateInquiry   State = "inquiry"
)

// Transfer is the record of a transfer the server holds.
type Transfer struct {
	// ID is the transfer identifier, a version 4 UUID.
	ID string
	// Request is the transfer as initiated, or as sent in an inquiry.
	Request travelrule.TransferRequest
	// State is the transfer's current state. An initiated transfer moves to
	// the next state as its status callback for that state is sent.
	State State
	// Inquiry is true for a transfer started with [Server.StartInquiry].
	Inquiry bool
	// IdempotencyKey is the Idempotency-Key of the initiation, if any.
	IdempotencyKey string
	// Created and Updated are when the transfer was stored and last
	// changed state.
	Created, Updated time.Time
}

// Request is the record of one request the server received.
type Request struct {
	// Method and Path are the request's method and URL path.
	Method, Path string
	// Query is the raw query string.
	Query string
	// Header holds the request's headers, without Authorization.
	Header http.Header
	// Op is the operation requested, or zero for another path (such as the
	// token endpoint).
	Op Operation
	// Status is the status answered, or 0 if no answer was sent (a
	// dropped connection, or a client that gave up during a latency
	// fault).
	Status int
	// Faults lists the faults that hit the request.
	Faults []FaultKind
	// Replayed is true if the answer was replayed for an Idempotency-Key.
	Replayed bool
	// TransferID is the transfer the request made or named, if any.
	TransferID string
	// Time is when the request arrived.
	Time time.Time
}

// Delivery is the record of one callback the server finished sending: a
// status callback, or an inbound inquiry.
type Delivery struct {
	// ID is the webhook-id header, the same on every attempt.
	ID string
	// TransferID is the transfer the callback is about.
	TransferID string
	// Status is the status the callback carries: a [State].
	Status State
	// URL is where the callback was sent.
	URL string
	// Body is the callback's body, the same on every attempt.
	Body []byte
	// Attempts lists the attempts, in order.
	Attempts []Attempt
	// Delivered is true if the last attempt was answered 2xx; false means
	// the server gave up, was closed, or sends no callbacks (see
	// [WithoutCallbacks]).
	Delivered bool
}

// Attempt is one attempt at sending a callback.
type Attempt struct {
	// Time is when the attempt started.
	Time time.Time
	// StatusCode is the receiver's answer, or 0 if none came.
	StatusCode int
	// Err says why no answer came, if none did.
	Err string
}

// Stats counts what the server did.
type Stats struct {
	// Requests counts requests answered (or dropped), on every path.
	Requests int
	// InFlight counts requests being served now, such as one held by a
	// latency fault.
	InFlight int
	// ByStatus counts requests by the status answered (0: no answer).
	ByStatus map[int]int
	// Initiated counts transfers stored by initiation.
	Initiated int
	// Inquiries counts inquiries started with [Server.StartInquiry].
	Inquiries int
	// Resolutions counts resolutions that recorded a decision.
	Resolutions int
	// Replayed counts answers replayed for an Idempotency-Key.
	Replayed int
	// Faults counts injected faults, over the requests answered.
	Faults int
	// CallbackAttempts counts attempts at sending callbacks.
	CallbackAttempts int
	// Callbacks counts callbacks finished, delivered or not (inquiries of
	// StartInquiry included).
	Callbacks int
	// CallbacksFailed counts callbacks the server gave up on after their
	// last attempt.
	CallbacksFailed int
}

// Transfers returns the transfers stored, in the order they were created.
func (s *Server) Transfers() []Transfer {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Transfer, len(s.order))
	for i, t := range s.order {
		out[i] = *t
	}
	return out
}

// Transfer returns the transfer with the identifier id.
func (s *Server) Transfer(id string) (Transfer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.transfers[id]
	if !ok {
		return Transfer{}, false
	}
	return *t, true
}

// Requests returns the requests received, in the order they were answered.
// A request is recorded just before its answer is sent (or its connection
// dropped), so a client that got an answer finds its request here.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r
		out[i].Header = r.Header.Clone()
		out[i].Faults = slices.Clone(r.Faults)
	}
	return out
}

// Callbacks returns the callbacks finished, in the order they finished.
// Those of one transfer are in the order they were sent.
func (s *Server) Callbacks() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callbacksLocked()
}

func (s *Server) callbacksLocked() []Delivery {
	out := make([]Delivery, len(s.deliveries))
	for i, d := range s.deliveries {
		out[i] = d
		out[i].Body = slices.Clone(d.Body)
		out[i].Attempts = slices.Clone(d.Attempts)
	}
	return out
}

// WaitCallbacks waits until at least n callbacks have finished (delivered
// or given up) and returns them as [Server.Callbacks] does. If ctx ends
// first, it returns those finished so far and ctx's error.
func (s *Server) WaitCallbacks(ctx context.Context, n int) ([]Delivery, error) {
	for {
		s.mu.Lock()
		if len(s.deliveries) >= n {
			out := s.callbacksLocked()
			s.mu.Unlock()
			return out, nil
		}
		ch := s.delivered
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			out := s.callbacksLocked()
			s.mu.Unlock()
			return out, ctx.Err()
		}
	}
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.InFlight = int(s.serving.Load())
	st.ByStatus = make(map[int]int, len(s.stats.ByStatus))
	for k, v := range s.stats.ByStatus {
		st.ByStatus[k] = v
	}
	return st
}

// record stores the record of a request.
func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.stats.Requests++
	s.stats.ByStatus[r.Status]++
	s.stats.Faults += len(r.Faults)
	if r.Replayed {
		s.stats.Replayed++
	}
	s.mu.Unlock()
}

// finish stores the record of a finished callback and wakes WaitCallbacks.
func (s *Server) finish(d Delivery) {
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.stats.Callbacks++
	if !d.Delivered && len(d.Attempts) > 0 {
		s.stats.CallbacksFailed++
	}
	close(s.delivered)
	s.delivered = make(chan struct{})
	s.mu.Unlock()
}
