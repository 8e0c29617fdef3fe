package callback

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/vaspkit/travelrule"
)

// DefaultMaxBodyBytes is the default limit on the size of a callback body;
// see [WithMaxBodyBytes].
const DefaultMaxBodyBytes = 1 << 20

// retryAfterBusy is the Retry-After (in seconds) of the 503 answer to a
// delivery that is being processed by another request.
const retryAfterBusy = "5"

// Handler is the http.Handler that receives callbacks. Make it with
// [NewHandler]; it is safe for concurrent use. Its fmt and log/slog forms
// show its configuration with the capability key redacted and its
// verifiers and store by type only.
type Handler struct {
	fn        func(context.Context, *travelrule.Callback) error
	capKey    []byte
	verifiers []Verifier
	maxBody   int64
	store     Store
	logger    *slog.Logger
	err       error
}

// Option configures a [Handler] made by [NewHandler].
type Option func(*config)

type config struct {
	capKey    []byte
	verifiers []Verifier
	maxBody   int64
	store     Store
	noDedup   bool
	logger    *slog.Logger
	err       error
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
// or a [*WebhookVerifier] without secrets or with a secret shorter than 16
// bytes, makes the handler answer 500 to every request, without calling
// the function (see [Handler.Err]).
//
// De-duplication keys on the webhook-id header (or svix-id, when webhook-id
// is absent) whenever a request has one. [WebhookVerifier] signs over
// exactly that id; a verifier of your own should cover it too (or refuse
// requests that carry an id it did not verify), or a replay with a made-up
// id passes as a new delivery.
func WithVerifier(v Verifier) Option {
	return func(c *config) {
		if isNilVerifier(v) {
			c.fail(errors.New("callback: WithVerifier: nil verifier"))
			return
		}
		if wv, ok := v.(*WebhookVerifier); ok {
			if err := wv.check(); err != nil {
				c.fail(fmt.Errorf("callback: WithVerifier: %w", err))
				return
			}
		}
		c.verifiers = append(c.verifiers, v)
	}
}

// isNilVerifier reports a nil Verifier, including a typed nil of the
// package's own implementations.
func isNilVerifier(v Verifier) bool {
	switch v := v.(type) {
	case nil:
		return true
	case *WebhookVerifier:
		return v == nil
	case VerifierFunc:
		return v == nil
	}
	return false
}

// WithMaxBodyBytes sets the largest body the handler reads (default
// [DefaultMaxBodyBytes]); a larger body is answered 413 and never reaches
// the function. n must be positive.
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
// [MemoryStore] of [DefaultStoreSize] deliveries). Give the same shared store
// to every server of a fleet.
func WithStore(s Store) Option {
	return func(c *config) {
		if s == nil {
			c.fail(errors.New("callback: WithStore: nil store (use WithoutDedup to disable de-duplication)"))
			return
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
// logs refused requests at Warn; function errors, panics, store failures and
// misconfiguration at Error; duplicates still in progress at Info; and
// acknowledged duplicates and deliveries at Debug. It never logs bodies,
// query strings, secrets or personal data; it does log the text of the
// function's errors, which should therefore carry none either.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// NewHandler returns a handler that calls fn once for each authenticated,
// well-formed callback delivery, with the request's context. fn's error
// answers 500, so that the sender delivers the callback again; nil answers
// 204. A panic in fn is recovered and answered 500.
//
// NewHandler never fails: invalid options (or a nil fn) make a handler that
// answers 500 to every request, never one that accepts unchecked callbacks.
// Check [Handler.Err] at start-up.
func NewHandler(fn func(ctx context.Context, cb *travelrule.Callback) error, opts ...Option) *Handler {
	c := config{maxBody: DefaultMaxBodyBytes}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	if fn == nil {
		c.fail(errors.New("callback: NewHandler: nil function"))
	}
	if c.store == nil && !c.noDedup {
		c.store = NewMemoryStore(DefaultStoreSize)
	}
	h := &Handler{
		fn:        fn,
		capKey:    c.capKey,
		verifiers: c.verifiers,
		maxBody:   c.maxBody,
		store:     c.store,
		logger:    c.logger,
		err:       c.err,
	}
	if h.err != nil {
		h.log(context.Background(), slog.LevelError, "callback: handler misconfigured, refusing every request", slog.String("error", h.err.Error()))
	}
	return h
}

// Err reports why the handler refuses every request (invalid options or a
// nil function), or nil if it is configured correctly. The error never
// quotes a key or secret.
func (h *Handler) Err() error { return h.err }

// Format implements fmt.Formatter so that every verb prints the handler's
// configuration with the capability key shown as "[redacted]" (when set)
// and the verifiers and store by type only: their own fields may hold
// secrets. Format and LogValue have value receivers so that a copy of a
// handler is redacted too.
func (h Handler) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "callback.Handler")
	}
	fmt.Fprintf(f, "{CapabilityKey:%s Verifiers:[", mask(h.capKey))
	for i, v := range h.verifiers {
		if i > 0 {
			fmt.Fprint(f, " ")
		}
		fmt.Fprintf(f, "%T", v)
	}
	fmt.Fprintf(f, "] MaxBodyBytes:%d Store:%T Err:%v}", h.maxBody, h.store, h.err)
}

// LogValue implements slog.LogValuer: the configuration as Format shows it.
func (h Handler) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("capabilityKey", mask(h.capKey)),
		slog.Int("verifiers", len(h.verifiers)),
		slog.Int64("maxBodyBytes", h.maxBody),
		slog.Bool("dedup", h.store != nil),
	}
	if h.err != nil {
		attrs = append(attrs, slog.String("error", h.err.Error()))
	}
	return slog.GroupValue(attrs...)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	code := h.serve(w, r)
	switch code {
	case http.StatusNoContent:
		w.WriteHeader(code)
		return
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", http.MethodPost)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryAfterBusy)
	}
	http.Error(w, http.StatusText(code), code)
}

// serve does the work of ServeHTTP and returns the status to answer.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) (code int) {
	ctx := r.Context()
	defer func() {
		if v := recover(); v != nil {
			h.log(ctx, slog.LevelError, "callback: panic while handling a callback",
				slog.String("panic", fmt.Sprintf("%T", v)), slog.String("stack", string(debug.Stack())))
			code = http.StatusInternalServerError
		}
	}()
	if h.err != nil {
		h.log(ctx, slog.LevelError, "callback: handler misconfigured", slog.String("error", h.err.Error()))
		return http.StatusInternalServerError
	}
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed
	}
	path := slog.String("path", r.URL.Path)

	var ref string
	if h.capKey != nil {
		var err error
		if ref, err = travelrule.VerifyCallbackURL(r.URL, h.capKey); err != nil {
			h.log(ctx, slog.LevelWarn, "callback: refused request without a valid capability", path, slog.String("error", err.Error()))
			return http.StatusUnauthorized
		}
	}

	body, code := h.readBody(w, r)
	if code != 0 {
		h.log(ctx, slog.LevelWarn, "callback: refused unreadable or oversized body", path, slog.Int("status", code))
		return code
	}
	for _, v := range h.verifiers {
		if err := v.Verify(r, body); err != nil {
			h.log(ctx, slog.LevelWarn, "callback: refused request that failed verification", path, slog.String("error", err.Error()))
			return http.StatusUnauthorized
		}
	}
	cb, err := travelrule.ParseCallback(body)
	if err != nil {
		h.log(ctx, slog.LevelWarn, "callback: refused malformed body", path, slog.String("error", err.Error()))
		return http.StatusBadRequest
	}
	cb.Ref = ref
	attr := slog.Any("callback", cb)

	if h.store == nil {
		return h.call(ctx, cb, path, attr)
	}
	key := dedupKey(deliveryID(r.Header), ref, body)
	claim, err := h.store.Claim(ctx, key)
	switch {
	case err != nil:
		h.log(ctx, slog.LevelError, "callback: de-duplication store failed", path, attr, slog.String("error", err.Error()))
		return http.StatusInternalServerError
	case claim == ClaimDone:
		h.log(ctx, slog.LevelDebug, "callback: duplicate delivery acknowledged", path, attr)
		return http.StatusNoContent
	case claim == ClaimBusy:
		h.log(ctx, slog.LevelInfo, "callback: duplicate delivery still in progress", path, attr)
		return http.StatusServiceUnavailable
	case claim != ClaimNew:
		h.log(ctx, slog.LevelError, "callback: de-duplication store returned an invalid claim", path, attr, slog.Int("claim", int(claim)))
		return http.StatusInternalServerError
	}

	code = h.call(ctx, cb, path, attr)
	// Complete and Release run on a context that outlives the request's, so
	// that a sender hanging up does not leave a delivery claimed; the store
	// bounds their time (see Store).
	sctx := context.WithoutCancel(ctx)
	if code == http.StatusNoContent {
		if err := h.store.Complete(sctx, key); err != nil {
			// fn has done its work: answering 5xx would only run it again.
			h.log(ctx, slog.LevelError, "callback: de-duplication store failed to complete a delivery", path, attr, slog.String("error", err.Error()))
		}
	} else if err := h.store.Release(sctx, key); err != nil {
		h.log(ctx, slog.LevelError, "callback: de-duplication store failed to release a delivery", path, attr, slog.String("error", err.Error()))
	}
	return code
}

// readBody reads the body through the size limit; code is 0 on success.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) (body []byte, code int) {
	if r.Body == nil {
		return nil, 0
	}
	if r.ContentLength > h.maxBody {
		return nil, http.StatusRequestEntityTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, http.StatusRequestEntityTooLarge
		}
		return nil, http.StatusBadRequest
	}
	return body, 0
}

// call runs fn, turning a panic into a 500.
func (h *Handler) call(ctx context.Context, cb *travelrule.Callback, path, attr slog.Attr) (code int) {
	defer func() {
		if v := recover(); v != nil {
			h.log(ctx, slog.LevelError, "callback: function panicked", path, attr,
				slog.String("panic", fmt.Sprintf("%T", v)), slog.String("stack", string(debug.Stack())))
			code = http.StatusInternalServerError
		}
	}()
	if err := h.fn(ctx, cb); err != nil {
		h.log(ctx, slog.LevelError, "callback: function failed, asking for redelivery", path, attr, slog.String("error", err.Error()))
		return http.StatusInternalServerError
	}
	h.log(ctx, slog.LevelDebug, "callback: delivered", path, attr)
	return http.StatusNoContent
}

func (h *Handler) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if h.logger == nil || !h.logger.Enabled(ctx, level) {
		return
	}
	h.logger.LogAttrs(ctx, level, msg, attrs...)
}

// deliveryID is the delivery's webhook-id, read as the verifier reads it:
// under the Standard Webhooks name or its svix alias.
func deliveryID(h http.Header) string {
	id, _, _ := webhookHeaders(h)
	return id
}

// dedupKey identifies a delivery: by its webhook-id when it has one, else by
// its verified reference and body. Both are hashed, so keys are 69 ASCII
// characters whatever the input.
func dedupKey(webhookID, ref string, body []byte) string {
	m := sha256.New()
	prefix := "body:"
	if webhookID != "" {
		prefix = "whid:"
		m.Write([]byte("webhook-id\x00"))
		m.Write([]byte(ref))
		m.Write([]byte{0})
		m.Write([]byte(webhookID))
	} else {
		m.Write([]byte("body\x00"))
		m.Write([]byte(ref))
		m.Write([]byte{0})
		m.Write(body)
	}
	var sum [sha256.Size]byte
	var key [5 + 2*sha256.Size]byte
	copy(key[:], prefix)
	hex.Encode(key[5:], m.Sum(sum[:0]))
	return string(key[:])
}
