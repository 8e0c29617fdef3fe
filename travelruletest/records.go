package travelruletest

import (
	"cmp"
	"context"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/vaspkit/travelrule"
)

// State is the state of a transfer in the sandbox. The description shows
// no states (part 3); the sandbox's lifecycle is received → approved →
// completed, or received → rejected, for an initiated transfer that the
// sandbox decides (the INQUIRY_RESOLUTION moves it to approved or
// rejected, the TRANSFER_RESOLUTION on to completed), inquiry → approved
// → completed, or inquiry → rejected, for one sent to the integrator's
// inquiry URL ([WithInquiryURL]; the resolution moves it on, its
// TRANSFER_RESOLUTION to completed), and inquiry → approved or rejected
// for an inquiry started with [Server.StartInquiry] or the control plane.
type State string

// The states of a transfer. A delivery's Status is the state its callback
// announces.
const (
	StateReceived  State = "received"
	StateApproved  State = "approved"
	StateRejected  State = "rejected"
	StateCompleted State = "completed"
	StateInquiry   State = "inquiry"
)

// Flow is how the service reaches a transfer's beneficiary, as the live
// service names its two flows.
type Flow string

// The flows of a transfer.
const (
	// FlowOpenVASP sends an inquiry to the beneficiary's VASP, which the
	// travelAddress names: the flow of an initiation with a travelAddress,
	// of one with neither a travelAddress nor an email (the sandbox's own
	// beneficiary VASP; see [WithTravelAddressRequired]), and of every
	// inbound inquiry.
	FlowOpenVASP Flow = "OPEN_VASP"
	// FlowEmail emails the beneficiary: the flow of an initiation without
	// a travelAddress that has a beneficiary.email or a top-level email
	// (beneficiary.email wins).
	FlowEmail Flow = "EMAIL"
)

// flowOf is the flow of an initiation of req.
func flowOf(req *travelrule.TransferRequest) Flow {
	if req.TravelAddress == "" && (req.Beneficiary.Email != "" || req.Email != "") {
		return FlowEmail
	}
	return FlowOpenVASP
}

// Transfer is the record of a transfer the server holds.
type Transfer struct {
	// ID is the transfer identifier, a version 4 UUID.
	ID string
	// Request is the transfer as initiated, or as sent in an inquiry.
	Request travelrule.TransferRequest
	// State is the transfer's current state. An initiated transfer moves to
	// the next state as the callback that announces it (its Status) is
	// sent; a resolution moves a transfer at once.
	State State
	// Inquiry is true for an inbound inquiry, started with
	// [Server.StartInquiry] or POST {URL}/sandbox/inquiries. A transfer
	// the integrator initiated is not one, even when the sandbox sent it
	// to the integrator's inquiry URL ([WithInquiryURL]): that one is in
	// State inquiry until the integrator resolves it.
	Inquiry bool
	// Flow is how the beneficiary is reached: [FlowOpenVASP] or
	// [FlowEmail].
	Flow Flow
	// EmailDelivered is true once the email of the EMAIL flow was sent
	// (the live service's isEmailDelivered). The sandbox sends no mail: it
	// marks the email delivered when it stores the transfer, as if its mail
	// provider acknowledged at once.
	EmailDelivered bool
	// BeneficiaryID is the beneficiaryId of the travel address the
	// initiation named, when the sandbox generated it (POST
	// {URL}/travel-address/generate) and still keeps it; else empty.
	BeneficiaryID string
	// TxID is the transfer's on-chain transaction id: the initiation's
	// txId, or the one POST {URL}/transfers/txId submitted. A transfer has
	// one: another is refused. For an inquiry, the request's txId, or the
	// hash the sandbox made up when the integrator approved it with a
	// callback URL (see [KindTransferConfirmation]).
	TxID string
	// Confirmed is true once a txId was submitted with POST
	// {URL}/transfers/txId: the live service then sends a
	// TRANSFER_CONFIRMATION to the beneficiary's VASP. When that VASP is
	// the integrator ([WithInquiryURL]) and approved with a callback URL,
	// the confirmation goes there; else the beneficiary's VASP is the
	// sandbox itself, and the confirmation is recorded here rather than
	// sent.
	Confirmed bool
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
	// Header holds the request's headers, without Authorization and
	// x-api-key.
	Header http.Header
	// Op is the operation requested, or zero for another path (the login,
	// discovery, the OAuth2 token endpoint, the control plane).
	Op Operation
	// Status is the status answered, or 0 if the request got no answer: a
	// dropped connection or reset stream, a client that gave up during a
	// latency fault, or a request on an HTTP/2 stream that a GOAWAY fault
	// declared unprocessed (not acted on).
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

// Delivery is the record of one callback the server finished sending, of
// one of the four kinds of the live service.
type Delivery struct {
	// ID identifies the delivery, the same on every attempt: "msg_" and
	// 32 hex digits, sent as the webhook-id header under
	// [WithStandardWebhooks] (the live service's x-data-integrity carries
	// no id).
	ID string
	// Kind is which of the live service's callbacks it is.
	Kind CallbackKind
	// TransferID is the transfer the callback is about.
	TransferID string
	// Status is the [State] the callback announces, the one the transfer
	// is in once it is sent: StateInquiry for an INQUIRY; StateApproved
	// or StateRejected for an INQUIRY_RESOLUTION; StateCompleted or
	// StateRejected for a TRANSFER_RESOLUTION; for a
	// TRANSFER_CONFIRMATION, which moves the transfer nowhere, the state
	// it was in when the confirmation was queued. The body's own status
	// (a TRANSFER_RESOLUTION's "APPROVED" or "REJECTED") is in Body.
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
	// Err says why no answer came, if none did, without the URL (which
	// Delivery.URL holds).
	Err string
	// Latency is how long the attempt took: until the receiver's answer
	// was read, or until it failed.
	Latency time.Duration
}

// Stats counts what the server did, since it started: the counts take in
// the records the server no longer keeps (see [WithRecordLimit]).
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
	// Inquiries counts inquiries started with [Server.StartInquiry] or
	// the control plane.
	Inquiries int
	// Resolutions counts resolutions that recorded a decision.
	Resolutions int
	// Confirmations counts transfers confirmed by a txId submission (see
	// Transfer.Confirmed).
	Confirmations int
	// Replayed counts answers replayed for an Idempotency-Key.
	Replayed int
	// Faults counts injected faults, over the requests answered.
	Faults int
	// ByFault counts injected faults by kind.
	ByFault map[FaultKind]int
	// CallbackAttempts counts attempts at sending callbacks.
	CallbackAttempts int
	// Callbacks counts callbacks finished, delivered or not (inbound
	// inquiries included).
	Callbacks int
	// CallbacksFailed counts callbacks the server gave up on after their
	// last attempt.
	CallbacksFailed int
}

// transferRec is a stored transfer and what the sandbox knows of it.
type transferRec struct {
	Transfer
	seq        uint64 // in creation order
	callbacks  int    // callbacks queued and not yet finished
	held       bool   // in records.held, not records.order
	resolvable bool   // the integrator resolves it: an inquiry, or an initiation sent to its inquiry URL
	decision   State  // StateApproved or StateRejected once resolved
	decided    time.Time
	decidedBy  decider // who made the decision, for the console
	wallet     string  // the beneficiary's wallet address, which an approval carries back
	confirmURL string  // where the TRANSFER_CONFIRMATION goes: the callback of the approving resolution
}

// pending reports whether the transfer must be kept: an inquiry awaiting
// resolution, or callbacks still to deliver.
func (t *transferRec) pending() bool { return t.State == StateInquiry || t.callbacks > 0 }

// records is what the server keeps of its transfers, Idempotency-Key
// answers, requests and finished callbacks, within the record limit, and
// the counters of [Stats] (but InFlight, which the gate counts).
//
// The callbacks of a transfer are queued under mu, by the same call that
// changes the transfer (records.mu is taken before callbackQueue.mu, never
// after), so that two calls about one transfer (a resolution and a txId)
// queue their callbacks in the order they changed it.
type records struct {
	limit  int            // the record limit, 0 for none; fixed at start
	window time.Duration  // the idempotency window; fixed at start
	queue  *callbackQueue // where callbacks are queued; fixed at start

	mu         sync.Mutex // guards every field below, and the fields of the transferRecs and idemEntries they hold
	transfers  map[string]*transferRec
	order      []*transferRec          // the newest transfers, oldest first, at most limit
	held       map[string]*transferRec // older ones kept while pending
	seq        uint64                  // transfers stored so far
	idem       map[string]*idemEntry   // by operation and key
	idemOrder  []*idemEntry            // oldest first
	requests   ring[Request]           // the newest
	deliveries ring[Delivery]          // the newest
	sending    map[string]sendingRec   // callbacks being delivered, by webhook-id, with their attempts so far
	stats      Stats

	// version counts the changes to what the records show; changed, made
	// by watch for a watcher (the console, WaitCallbacks), is closed by the
	// next change.
	version uint64
	changed chan struct{}
}

// sendingRec is a callback being delivered: its attempts so far, and when
// the next one is due (zero while one is being made, or none follows).
type sendingRec struct {
	Delivery
	next time.Time
}

func newRecords(limit int, window time.Duration, queue *callbackQueue) *records {
	return &records{
		limit:      limit,
		window:     window,
		queue:      queue,
		transfers:  make(map[string]*transferRec),
		held:       make(map[string]*transferRec),
		idem:       make(map[string]*idemEntry),
		requests:   ring[Request]{limit: limit},
		deliveries: ring[Delivery]{limit: limit},
		sending:    make(map[string]sendingRec),
		stats:      Stats{ByStatus: make(map[int]int), ByFault: make(map[FaultKind]int)},
	}
}

// add stores a new transfer, counts it as initiated, or as an inquiry, and
// queues its first callbacks, evs.
func (rs *records) add(t *transferRec, evs ...*event) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.store(t)
	if t.Inquiry {
		rs.stats.Inquiries++
	} else {
		rs.stats.Initiated++
	}
	rs.enqueue(t, evs...)
	rs.touch()
}

// enqueue queues callbacks of the transfer t, counted as pending until
// they finish. rs.mu is held.
func (rs *records) enqueue(t *transferRec, evs ...*event) {
	if len(evs) == 0 {
		return
	}
	t.callbacks += len(evs)
	rs.queue.enqueue(t.ID, evs...)
}

// store records a new transfer and forgets the oldest ones beyond the
// record limit that are no longer pending. rs.mu is held.
func (rs *records) store(t *transferRec) {
	rs.seq++
	t.seq = rs.seq
	rs.transfers[t.ID] = t
	rs.order = append(rs.order, t)
	for rs.limit > 0 && len(rs.order) > rs.limit {
		old := rs.order[0]
		rs.order[0] = nil
		rs.order = rs.order[1:]
		if old.pending() {
			old.held = true
			rs.held[old.ID] = old
		} else {
			delete(rs.transfers, old.ID)
		}
	}
}

// tooManyHeld reports whether as many transfers are kept beyond the record
// limit, pending, as the limit itself: the control plane starts no more
// inquiries then, so that memory stays bounded by twice the limit.
func (rs *records) tooManyHeld() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.limit > 0 && len(rs.held) >= rs.limit
}

// release forgets t if the record limit left it kept only while pending
// and it no longer is. rs.mu is held.
func (rs *records) release(t *transferRec) {
	if t.held && !t.pending() {
		delete(rs.held, t.ID)
		delete(rs.transfers, t.ID)
	}
}

// resolution is what resolving an inquiry did.
type resolution struct {
	found   bool // the id names a transfer the integrator resolves
	ok      bool // the transfer now carries the decision
	changed bool // this resolution made the decision
}

// resolve records decision (StateApproved or StateRejected) on the
// transfer id that the integrator resolves, if still open, with the
// resolution's callback URL cbURL (possibly ""), and queues the callbacks
// that then returns for it.
func (rs *records) resolve(id string, decision State, cbURL string, then func(t *transferRec, cbURL string) []*event) resolution {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	t := rs.transfers[id]
	if t == nil || !t.resolvable {
		return resolution{}
	}
	res := resolution{found: true, ok: true}
	switch t.decision {
	case "":
		t.decision, t.decidedBy = decision, decidedByIntegrator
		t.State, t.Updated = decision, time.Now()
		t.decided = t.Updated
		rs.stats.Resolutions++
		res.changed = true
		rs.enqueue(t, then(t, cbURL)...)
		rs.release(t)
		rs.touch()
	case decision:
	default:
		res.ok = false
	}
	return res
}

// decider is who decided on a transfer.
type decider uint8

const (
	decidedBySandbox    decider = iota + 1 // at initiation: WithApproval or SetDecision
	decidedByIntegrator                    // its inquiryResolution
	decidedByConsole                       // a person, with the console's buttons
)

// awaitsSandbox reports whether t waits for the decision of the
// beneficiary's VASP that the sandbox plays: initiated under
// DecisionNone, which decides nothing, and not yet decided.
func (t *transferRec) awaitsSandbox() bool {
	return !t.Inquiry && !t.resolvable && t.decision == "" && t.State == StateReceived
}

// decideNow records a decision, as the beneficiary's VASP, on the transfer
// id that awaits one (see awaitsSandbox), and queues the callbacks that
// then returns for it. It reports whether the transfer is kept, and
// whether this call decided it.
func (rs *records) decideNow(id string, approved bool, then func(t *transferRec, approved bool) []*event) (found, decided bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	t := rs.transfers[id]
	if t == nil {
		return false, false
	}
	if !t.awaitsSandbox() {
		return true, false
	}
	t.decision, t.decidedBy, t.decided = StateRejected, decidedByConsole, time.Now()
	if approved {
		t.decision = StateApproved
	}
	rs.enqueue(t, then(t, approved)...)
	rs.touch()
	return true, true
}

// txIDOutcome is what submitting a txId did.
type txIDOutcome uint8

const (
	txIDRecorded   txIDOutcome = iota // the transfer now has the txId
	txIDNoTransfer                    // no initiated transfer with the id is kept
	txIDConflict                      // the transfer has another txId
	txIDRejected                      // the beneficiary's VASP rejected the transfer
)

// submitTxID records txID on the initiated transfer id, and that its
// confirmation was sent, unless it has another txId. The first time, when
// the beneficiary's VASP gave a URL for it, it queues the
// TRANSFER_CONFIRMATION there.
func (rs *records) submitTxID(id, txID string) txIDOutcome {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	t := rs.transfers[id]
	switch {
	case t == nil || t.Inquiry:
		return txIDNoTransfer
	case t.TxID != "" && t.TxID != txID:
		return txIDConflict
	case t.decision == StateRejected || t.State == StateRejected:
		return txIDRejected
	}
	t.TxID = txID
	rs.touch()
	if !t.Confirmed {
		t.Confirmed = true
		rs.stats.Confirmations++
		if t.confirmURL != "" {
			rs.enqueue(t, confirmationEvent(t, t.confirmURL))
		}
	}
	return txIDRecorded
}

// advance moves the transfer id, if kept, to state st.
func (rs *records) advance(id string, st State, now time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if t := rs.transfers[id]; t != nil {
		t.State, t.Updated = st, now
		rs.touch()
	}
}

// progress records that the callback d is being delivered, with its
// attempts so far and when the next is due (zero: none is waited for);
// attempted says it has just made one more, to count.
func (rs *records) progress(d Delivery, attempted bool, next time.Time) {
	d.Body = nil // never shown
	d.Attempts = slices.Clone(d.Attempts)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.sending[d.ID] = sendingRec{Delivery: d, next: next}
	if attempted {
		rs.stats.CallbackAttempts++
	}
	rs.touch()
}

// touch counts a change to what the records show and wakes the watchers.
// rs.mu is held.
func (rs *records) touch() {
	rs.version++
	if rs.changed != nil {
		close(rs.changed)
		rs.changed = nil
	}
}

// watch returns the records' version and a channel closed by the next
// change.
func (rs *records) watch() (uint64, <-chan struct{}) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.version, rs.watchLocked()
}

// watchLocked returns a channel closed by the next change. rs.mu is held.
func (rs *records) watchLocked() <-chan struct{} {
	if rs.changed == nil {
		rs.changed = make(chan struct{})
	}
	return rs.changed
}

// changedNow counts a change made outside the records (the faults, the
// decision) that the console shows; nothing for no records (a Server made
// by a test of its own parts).
func (rs *records) changedNow() {
	if rs == nil {
		return
	}
	rs.mu.Lock()
	rs.touch()
	rs.mu.Unlock()
}

// Transfers returns the transfers kept, in the order they were created:
// the most recent ones (see [WithRecordLimit]), and any older one still
// pending.
func (s *Server) Transfers() []Transfer { return s.records.list() }

func (rs *records) list() []Transfer {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	held := make([]*transferRec, 0, len(rs.held))
	for _, t := range rs.held {
		held = append(held, t)
	}
	slices.SortFunc(held, func(a, b *transferRec) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Transfer, 0, len(held)+len(rs.order))
	for _, t := range held {
		out = append(out, t.Transfer)
	}
	for _, t := range rs.order {
		out = append(out, t.Transfer)
	}
	return out
}

// Transfer returns the transfer with the identifier id, if it is kept.
func (s *Server) Transfer(id string) (Transfer, bool) {
	rs := s.records
	rs.mu.Lock()
	defer rs.mu.Unlock()
	t, ok := rs.transfers[id]
	if !ok {
		return Transfer{}, false
	}
	return t.Transfer, true
}

// callbacksOf returns the transfer id, if kept, with its finished callbacks
// kept, in the order they finished, and those being delivered now (at most
// one, as a transfer's callbacks go one after the other). Their bodies are
// left out.
func (rs *records) callbacksOf(id string) (t Transfer, finished []Delivery, sending []sendingRec, ok bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rec, ok := rs.transfers[id]
	if !ok {
		return Transfer{}, nil, nil, false
	}
	copyOf := func(d Delivery) Delivery {
		d.Body = nil
		d.Attempts = slices.Clone(d.Attempts)
		return d
	}
	for d := range rs.deliveries.all() {
		if d.TransferID == id {
			finished = append(finished, copyOf(d))
		}
	}
	for _, d := range rs.sending {
		if d.TransferID == id {
			sending = append(sending, sendingRec{Delivery: copyOf(d.Delivery), next: d.next})
		}
	}
	slices.SortFunc(sending, func(a, b sendingRec) int { return cmp.Compare(a.ID, b.ID) })
	return rec.Transfer, finished, sending, true
}

// Requests returns the requests kept (the most recent ones, see
// [WithRecordLimit]), in the order they were answered. A request is
// recorded just before its answer is sent (or its connection dropped), so
// a client that got an answer finds its request here.
func (s *Server) Requests() []Request {
	rs := s.records
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]Request, 0, rs.requests.len())
	for r := range rs.requests.all() {
		r.Header = r.Header.Clone()
		r.Faults = slices.Clone(r.Faults)
		out = append(out, r)
	}
	return out
}

// Callbacks returns the finished callbacks kept (the most recent ones, see
// [WithRecordLimit]), in the order they finished. Those of one transfer
// are in the order they were sent.
func (s *Server) Callbacks() []Delivery {
	rs := s.records
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.callbacksLocked()
}

// callbacksLocked copies the deliveries kept. rs.mu is held.
func (rs *records) callbacksLocked() []Delivery {
	out := make([]Delivery, 0, rs.deliveries.len())
	for d := range rs.deliveries.all() {
		d.Body = slices.Clone(d.Body)
		d.Attempts = slices.Clone(d.Attempts)
		out = append(out, d)
	}
	return out
}

// WaitCallbacks waits until at least n callbacks have finished (delivered
// or given up) since the server started, and returns those kept as
// [Server.Callbacks] does. If ctx ends first, it returns those finished so
// far and ctx's error.
func (s *Server) WaitCallbacks(ctx context.Context, n int) ([]Delivery, error) {
	rs := s.records
	for {
		rs.mu.Lock()
		if rs.stats.Callbacks >= n {
			out := rs.callbacksLocked()
			rs.mu.Unlock()
			return out, nil
		}
		ch := rs.watchLocked()
		rs.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			rs.mu.Lock()
			out := rs.callbacksLocked()
			rs.mu.Unlock()
			return out, ctx.Err()
		}
	}
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	rs := s.records
	rs.mu.Lock()
	defer rs.mu.Unlock()
	st := rs.stats
	st.InFlight = int(s.gate.serving.Load())
	st.ByStatus = maps.Clone(rs.stats.ByStatus)
	st.ByFault = maps.Clone(rs.stats.ByFault)
	return st
}

// record stores the record of a request.
func (rs *records) record(r Request) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.requests.push(r)
	rs.stats.Requests++
	rs.stats.ByStatus[r.Status]++
	rs.stats.Faults += len(r.Faults)
	for _, k := range r.Faults {
		rs.stats.ByFault[k]++
	}
	if r.Replayed {
		rs.stats.Replayed++
	}
	rs.touch()
}

// finish stores the record of a finished callback (which wakes
// WaitCallbacks, a watcher).
// queued says whether the callback was counted in its transfer's pending
// callbacks.
func (rs *records) finish(d Delivery, queued bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.deliveries.push(d)
	delete(rs.sending, d.ID)
	rs.stats.Callbacks++
	if !d.Delivered && len(d.Attempts) > 0 {
		rs.stats.CallbacksFailed++
	}
	if t := rs.transfers[d.TransferID]; queued && t != nil && t.callbacks > 0 {
		t.callbacks--
		rs.release(t)
	}
	rs.touch()
}
