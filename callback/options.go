package callback

import (
	"errors"
	"fmt"
	"log/slog"
)

// defaultMaxBodyBytes is the limit on the size of a callback body when
// [WithMaxBodyBytes] is not given: 1 MiB.
const defaultMaxBodyBytes = 1 << 20

// Option configures a [Handler] made by [NewHandler].
type Option func(*config)

// config is a handler's configuration, set by the options and kept as it is
// by the handler.
type config struct {
	capKey    []byte
	verifiers []Verifier
	maxBody   int64
	store     Store
	noDedup   bool
	logger    *slog.Logger
	observers []Observer
	err       error // the first invalid option, or nil
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// WithCapabilityKey makes the handler accept only requests whose URL carries
// a capability made by [travelrule.NewCallbackURL] with key, verified in
// constant time with [travelrule.VerifyCallbackURL]; the URL's reference is
// put in Callback.Ref. Other requests are answered 401. key must have at
// least 16 bytes; a shorter key makes the handler answer 500 to every
// request (see [Handler.Err]).
func WithCapabilityKey(key []byte) Option {
	return func(c *config) {
		if len(key) < 16 {
			c.fail(errors.New("callback: WithCapabilityKey: key must have at least 16 bytes"))
			return
		}
		c.capKey = append([]byte(nil), key...)
	}
}

// WithVerifier adds v to the checks a request must pass, after its body is
// read and before it is decoded. A request that v refuses is answered 401.
// Several verifiers may be added; a request must pass all of them. A nil v,
// a [*WebhookVerifier] without secrets or with a secret shorter than 16
// bytes, or a [*DataIntegrityVerifier] without secrets, makes the handler
// answer 500 to every request, without calling the function (see
// [Handler.Err]).
//
// De-duplication keys on the webhook-id header (or svix-id, when webhook-id
// is absent) only when a [WebhookVerifier] is among the handler's
// verifiers, since its signature covers exactly that id; otherwise on the
// body (and the capability reference of its URL), so that a replayed body
// with a made-up id is still a duplicate. Under a webhook-id, a redelivery
// with another body is still the same delivery (see the package's
// De-duplication section). A verifier of your own that
// covers the id should therefore be added beside, not instead of, a
// WebhookVerifier, or accept keying by body.
func WithVerifier(v Verifier) Option {
	return func(c *config) {
		var err error
		switch tv := v.(type) {
		case nil:
			err = errors.New("nil verifier")
		case *WebhookVerifier:
			if tv == nil {
				err = errors.New("nil verifier")
			} else {
				err = tv.check()
			}
		case *DataIntegrityVerifier:
			err = tv.check()
		}
		if err != nil {
			c.fail(fmt.Errorf("callback: WithVerifier: %w", err))
			return
		}
		c.verifiers = append(c.verifiers, v)
	}
}

// WithMaxBodyBytes sets the largest body the handler reads (default 1 MiB);
// a larger body is answered 413 and never reaches the function. n must be
// positive.
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			c.fail(errors.New("callback: WithMaxBodyBytes: limit must be positive"))
			return
		}
		c.maxBody = n
	}
}

// WithStore sets the store that de-duplicates deliveries (default: a
// [MemoryStore] of 100,000 deliveries). Give the same shared store to every
// server of a fleet. A store that reports its own faults with an Err
// method, as the stores of callback/redisstore and callback/pgstore do,
// is asked once, here: a store that cannot keep the promise (invalid
// options, a Redis that evicts or keeps no persistence) makes the handler
// refuse every request, and [Handler.Err] says why.
func WithStore(s Store) Option {
	return func(c *config) {
		if s == nil {
			c.fail(errors.New("callback: WithStore: nil store (use WithoutDedup to disable de-duplication)"))
			return
		}
		if e, ok := s.(interface{ Err() error }); ok {
			if err := e.Err(); err != nil {
				c.fail(fmt.Errorf("callback: WithStore: %w", err))
				return
			}
		}
		c.store, c.noDedup = s, false
	}
}

// WithoutDedup turns de-duplication off: every delivery that passes the
// checks calls the function.
func WithoutDedup() Option {
	return func(c *config) { c.store, c.noDedup = nil, true }
}

// WithLogger sets the logger (default none: the handler logs nothing). It
// logs refused requests, and the first failed attempt to record a delivery
// as processed, at Warn; function errors, panics, store failures,
// completions lost (see [Handler.Stats]) and misconfiguration at Error;
// duplicates still in progress, and completions recorded after retries, at
// Info; and acknowledged duplicates and deliveries at Debug. It never logs
// bodies, query strings, secrets or personal data; it does log the text of
// the function's errors, which should therefore carry none either.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}
