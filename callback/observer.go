package callback

import (
	"context"
	"errors"

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
	d := &Delivery{ID: id, Callback: cb}
	for _, o := range h.cfg.observers {
		if err := o.Delivered(ctx, d); err != nil {
			return err
		}
	}
	return nil
}
