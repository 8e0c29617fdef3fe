package callback

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/vaspkit/travelrule"
)

// Observer sees the deliveries a [Handler] accepts: package journal's
// journal is one. Set one with [WithObserver].
//
// Delivered is called once for each delivery that passed the handler's
// checks (its capability, its size, its verifiers, and the check that its
// body names no other transfer's callback URL) and parsed, before
// de-duplication and before the handler's function: a delivery sent again
// is seen again, with the same ID. An error answers 500, so that the
// sender delivers the callback again, and the function is not called for
// this delivery; an observer that records deliveries fails Delivered when
// it cannot record one, so that nothing is lost. Delivered runs on the
// request's goroutine and context, and should be quick.
type Observer interface {
	Delivered(ctx context.Context, d *Delivery) error
}

// Delivery is a delivery the handler accepted.
type Delivery struct {
	// ID identifies the delivery: the handler's digest of it (69 ASCII
	// characters, never a callback's content), the same for each
	// delivery of the same callback to the same URL.
	ID string
	// Callback is the callback, decoded, with Ref set when the handler
	// verified a capability URL. It holds personal data: see
	// [travelrule.Callback].
	Callback *travelrule.Callback
	// Authenticated reports that the handler's capability key or verifiers
	// accepted the delivery; it is false only under [WithoutAuthentication].
	Authenticated bool
}

// WithObserver adds an observer of the deliveries the handler accepts (see
// [Observer]); observers given in several options are called in the order
// given, and the first error stops. A nil observer makes the handler
// answer 500 to every request (see [Handler.Err]).
func WithObserver(o Observer) Option {
	return func(c *config) {
		if o == nil {
			c.fail(errors.New("callback: WithObserver: nil observer"))
			return
		}
		c.observers = append(c.observers, o)
	}
}

// observe hands an accepted delivery to the observers, if any; an error is
// the first observer's that failed.
func (h *Handler) observe(ctx context.Context, id string, cb *travelrule.Callback) error {
	if len(h.cfg.observers) == 0 {
		return nil
	}
	d := &Delivery{ID: id, Callback: cb, Authenticated: h.cfg.authenticates()}
	for _, o := range h.cfg.observers {
		if err := o.Delivered(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// DeliveryObserver is an [Observer] that also watches every request the
// handler serves, accepted or not, from its arrival to its answer:
// telemetry is one (package oteltravelrule). The handler finds out at
// [NewHandler] whether an observer given to [WithObserver] is one; a
// handler with none measures nothing.
//
// StartDelivery is called when a request arrives, before anything of it
// is read, with the request's context; it returns the context the handler
// goes on with, which the handler's function is called with (a tracer's
// span is then the parent of the function's). EndDelivery is called once
// for each StartDelivery, on the context it returned, once the handler has
// answered and, after a successful function, recorded the delivery as
// processed (see [Handler]). Both run on the request's goroutine and
// should be quick, and must not panic: the handler does not recover their
// panics. Neither is given personal data, the request's URL, headers or
// body.
//
// Several DeliveryObservers start in the order given to [WithObserver],
// each on the context the one before returned (a nil context keeps the one
// it was given), and end in reverse order, each on its own context and
// with its own DeliveryEnd.
type DeliveryObserver interface {
	Observer
	StartDelivery(ctx context.Context) context.Context
	EndDelivery(ctx context.Context, end *DeliveryEnd)
}

// DeliveryEnd is what came of one request to the handler. It holds no
// personal data.
type DeliveryEnd struct {
	// Kind is the callback's kind; "" when the request was refused before
	// its body was parsed.
	Kind travelrule.CallbackKind
	// Verification is what the handler's checks of the request's
	// authenticity (its capability and its verifiers) found.
	Verification Verification
	// Dedup is what de-duplication found; "" when the request did not get
	// that far.
	Dedup Dedup
	// Result is what the handler made of the request.
	Result DeliveryResult
	// Status is the HTTP status the handler answered.
	Status int
	// CompletionLost reports, for a processed delivery, that the handler
	// could not record it as processed (see [Stats].CompletionsLost): a
	// redelivery may call the function again. It should never be true.
	CompletionLost bool
	// Duration is the time from the request's arrival (just before the
	// first StartDelivery) to the answer (to the completion, after a
	// successful function), read on the monotonic clock.
	Duration time.Duration
	// ID is the delivery's ID (see [Delivery]), when the handler computed
	// one; "" otherwise. It is a digest of the capability reference and
	// the body, the same on every node: whoever knows both (a
	// TRANSFER_CONFIRMATION's txid is public on its chain) can check a
	// guess against it, so export it no further than the journal's own
	// records (package oteltravelrule does not export it).
	ID string
}

// Verification is what a handler's checks of a request's authenticity
// found: one of the constants below.
type Verification string

// The verification results.
const (
	// VerificationNone: the handler has no capability key and no
	// verifier: the request was accepted without any check of its
	// authenticity. A count of these that is not zero in production is a
	// handler mounted without WithVerifier or WithCapabilityKey.
	VerificationNone Verification = "none"
	// VerificationNotChecked: the request was refused (or the handler
	// panicked) before every check of its authenticity had run: a method
	// other than POST, a handler that refuses every request, a body too
	// large or unreadable (after a capability that passed, too), a
	// verifier that panicked.
	VerificationNotChecked Verification = "not_checked"
	// VerificationPassed: the capability and every verifier accepted it.
	VerificationPassed Verification = "passed"
	// VerificationFailed: the capability or a verifier refused it, or
	// its body named another transfer's callback URL.
	VerificationFailed Verification = "failed"
)

// Dedup is what a handler's de-duplication found for a delivery: one of
// the constants below.
type Dedup string

// The de-duplication results.
const (
	// DedupOff: the handler de-duplicates nothing ([WithoutDeduplication]).
	DedupOff Dedup = "off"
	// DedupFirst: the first delivery of the callback (or the first since
	// an earlier one failed): the function was called.
	DedupFirst Dedup = "first"
	// DedupDuplicate: the callback was already processed; the function
	// was not called, and the delivery was acknowledged (204).
	DedupDuplicate Dedup = "duplicate"
	// DedupInProgress: another request is processing the same callback;
	// the delivery was answered 503 with Retry-After.
	DedupInProgress Dedup = "in_progress"
	// DedupFailed: the store failed (or answered an invalid claim); the
	// delivery was answered 500.
	DedupFailed Dedup = "store_failed"
)

// DeliveryResult is what a handler made of a request: one of the
// constants below. Each is a fixed word, fit for a metric's label.
type DeliveryResult string

// The delivery results.
const (
	// DeliveryProcessed: the function succeeded (204).
	DeliveryProcessed DeliveryResult = "processed"
	// DeliveryDuplicate: a delivery of a callback already processed,
	// acknowledged without calling the function (204).
	DeliveryDuplicate DeliveryResult = "duplicate"
	// DeliveryBusy: the same callback is being processed by another
	// request (503).
	DeliveryBusy DeliveryResult = "busy"
	// DeliveryFailed: the function returned an error or panicked, the
	// store failed, or the handler panicked elsewhere (in a verifier, an
	// observer's Delivered or the store) (500): the sender should deliver
	// it again.
	DeliveryFailed DeliveryResult = "failed"
	// DeliveryObserverFailed: an observer's Delivered failed (500).
	DeliveryObserverFailed DeliveryResult = "observer_failed"
	// DeliveryUnauthenticated: the capability or a verifier refused the
	// request, or its body named another transfer's callback URL (401).
	DeliveryUnauthenticated DeliveryResult = "unauthenticated"
	// DeliveryMalformed: a method other than POST (405), a body too large
	// (413), unreadable or not a callback (400).
	DeliveryMalformed DeliveryResult = "malformed"
	// DeliveryMisconfigured: the handler refuses every request (see
	// [Handler.Err]) (500).
	DeliveryMisconfigured DeliveryResult = "misconfigured"
)

// serveWatched serves r as ServeHTTP does, between the StartDelivery and
// EndDelivery of the handler's delivery observers: it starts them in
// order, each on the context the one before returned, serves r on the
// last one's context, and ends them in reverse order, each on its own
// context and with its own copy of what came of the request.
func (h *Handler) serveWatched(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var room [4]context.Context
	ctxs := room[:0]
	ctx := r.Context()
	for _, o := range h.watchers {
		if c := o.StartDelivery(ctx); c != nil {
			ctx = c
		}
		ctxs = append(ctxs, ctx)
	}
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	var p progress
	h.answer(w, r, &p)
	end := p.end(time.Since(start))
	for i := len(h.watchers) - 1; i >= 0; i-- {
		e := end
		h.watchers[i].EndDelivery(ctxs[i], &e)
	}
}

// progress is how far a request got through a handler and how it ended:
// ServeHTTP's record, filled in as the request is served, from which a
// DeliveryEnd is made. Without a DeliveryObserver it lives on the stack
// and is read by nobody.
type progress struct {
	out            outcome
	status         int
	kind           travelrule.CallbackKind
	verification   Verification // "" until the checks have run
	dedup          Dedup
	id             string
	completionLost bool
}

// end is the DeliveryEnd of a request that took d.
func (p *progress) end(d time.Duration) DeliveryEnd {
	v := p.verification
	if v == "" {
		v = VerificationNotChecked
	}
	return DeliveryEnd{Kind: p.kind, Verification: v, Dedup: p.dedup, Result: p.out.result(), Status: p.status, Duration: d, ID: p.id,
		CompletionLost: p.completionLost}
}

// outcome is where a handler's serving of a request ended: one value for
// each way out of it.
type outcome uint8

const (
	outUnknown        outcome = iota // none noted: a way out that forgot to note it
	outProcessed                     // the function succeeded
	outMethod                        // a method other than POST
	outMisconfigured                 // the handler refuses every request
	outCapability                    // the capability refused it
	outTooLarge                      // the body is over the limit
	outUnreadable                    // the body could not be read
	outVerifier                      // a verifier refused it
	outMalformed                     // the body is not a callback
	outOtherTransfer                 // the body names another transfer's callback URL
	outObserverFailed                // an observer's Delivered failed
	outFuncFailed                    // the function returned an error
	outFuncPanicked                  // the function panicked
	outPanicked                      // the handler panicked elsewhere (a verifier, an observer, the store)
	outDuplicate                     // a delivery already processed
	outBusy                          // a delivery being processed by another request
	outStoreFailed                   // the store failed to claim, or claimed nonsense
)

// result is the DeliveryResult of an outcome: where the handler decides
// which result each way out of a request reports.
func (o outcome) result() DeliveryResult {
	switch o {
	case outProcessed:
		return DeliveryProcessed
	case outDuplicate:
		return DeliveryDuplicate
	case outBusy:
		return DeliveryBusy
	case outFuncFailed, outFuncPanicked, outPanicked, outStoreFailed:
		return DeliveryFailed
	case outObserverFailed:
		return DeliveryObserverFailed
	case outCapability, outVerifier, outOtherTransfer:
		return DeliveryUnauthenticated
	case outMethod, outTooLarge, outUnreadable, outMalformed:
		return DeliveryMalformed
	case outMisconfigured:
		return DeliveryMisconfigured
	}
	return ""
}
