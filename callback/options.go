package callback

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/vaspkit/travelrule"
)

// defaultMaxBodyBytes is the limit on the size of a callback body when
// [WithMaxBodyBytes] is not given: 1 MiB.
const defaultMaxBodyBytes = 1 << 20

// Option configures a [Handler] made by [NewHandler].
type Option func(*config)

// config is a handler's configuration, set by the options and kept as it is
// by the handler.
type config struct {
	capKeys   [][]byte // the current key first, then the previous ones
	noAuth    bool     // WithoutAuthentication
	verifiers []Verifier
	maxBody   int64
	store     Store
	noDedup   bool
	logger    *slog.Logger
	observers []Observer
	err       error // the first invalid option, or nil
}

// authenticates reports whether the configuration checks who sent a request.
func (c *config) authenticates() bool { return c.capKeys != nil || len(c.verifiers) > 0 }

// firstKey is the current capability key, nil without one.
func (c *config) firstKey() []byte {
	if len(c.capKeys) == 0 {
		return nil
	}
	return c.capKeys[0]
}

// verifyCapability checks u's capability against each key, the current one
// first, and returns its reference.
func (c *config) verifyCapability(u *url.URL) (ref string, err error) {
	for _, k := range c.capKeys {
		if ref, err = travelrule.VerifyCallbackURL(u, k); err == nil || errors.Is(err, travelrule.ErrCallbackUnsigned) {
			return ref, err
		}
	}
	return "", err
}

// ErrUnauthenticated is the error [Handler.Err] wraps when the handler was
// given no authenticating option: neither [WithVerifier] nor
// [WithCapabilityKey], nor [WithoutAuthentication].
var ErrUnauthenticated = errors.New("callback: NewHandler: no authentication: give WithVerifier (the service signs callbacks: NewDataIntegrityVerifier) and WithCapabilityKey, or WithoutAuthentication for a local experiment")

// checkAuth fails a configuration that authenticates nothing and did not
// say so, or says both.
func (c *config) checkAuth() {
	switch {
	case c.noAuth && c.authenticates():
		c.fail(errors.New("callback: WithoutAuthentication given with WithCapabilityKey or WithVerifier"))
	case !c.noAuth && !c.authenticates():
		c.fail(ErrUnauthenticated)
	}
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// WithCapabilityKey makes the handler accept only requests whose URL carries
// a capability made by [travelrule.NewCallbackURL] with key or one of
// previous, checked in constant time; the URL's reference is put in
// Callback.Ref. Other requests are answered 401. To rotate, make new URLs
// with the new key and keep the old one in previous until no transfer
// made with it can call back (its last callback, plus the service's
// redeliveries: about 47 hours).
// Each key must have at least 16 bytes, and the option may be given once;
// otherwise the handler answers 500 to every request (see [Handler.Err]).
// The path a travel address encodes (/transfers/inquiry/{id}) carries no
// tag: the handler of that route takes WithVerifier alone.
func WithCapabilityKey(key []byte, previous ...[]byte) Option {
	return func(c *config) {
		if c.capKeys != nil {
			c.fail(errors.New("callback: WithCapabilityKey: given twice (list the previous keys in one option)"))
			return
		}
		for _, k := range append([][]byte{key}, previous...) {
			if len(k) < 16 {
				c.fail(errors.New("callback: WithCapabilityKey: key must have at least 16 bytes"))
				return
			}
			c.capKeys = append(c.capKeys, append([]byte(nil), k...))
		}
	}
}

// WithoutAuthentication lets a handler with neither a capability key nor a
// verifier accept callbacks from anyone who reaches its URL: for local
// experiments only. The handler logs a warning once, when it is made (to
// slog.Default without [WithLogger]), and tells its observers that
// deliveries are unauthenticated (Delivery.Authenticated), so that the
// journal acts on none of them.
func WithoutAuthentication() Option {
	return func(c *config) { c.noAuth = true }
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
