package callback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/vaspkit/travelrule"
)

// retryAfterBusy is the Retry-After (in seconds) of the 503 answer to a
// delivery that is being processed by another request.
const retryAfterBusy = "5"

// Handler is the http.Handler that receives callbacks. Make it with
// [NewHandler]; it is safe for concurrent use. Its fmt and log/slog forms
// show its configuration with the capability key redacted and its
// verifiers and store by type only.
//
// When the function succeeded, the handler records the delivery as
// processed in its store, then answers 204. If the store fails to, the
// handler answers 204 at once (flushed, through http.ResponseController,
// with Connection: close over HTTP/1 so that the sender's next request does
// not wait on this connection) and tries again, pausing up to 20 ms after
// the first failure and up to twice as long after each next one, up to 5 s
// (or an eighth of the store's lease, if that is less; each pause is a
// random half to whole of that, so that handlers that failed together do
// not retry together), until the store records it, or answers
// [ErrClaimLost], or one lease has passed since the function returned.
// Every attempt, the first included, and the release of the claim of a
// function that failed, run on a context that ends one lease after the
// function returned, so that a store that waits on its context while its
// server hangs (as database/sql does) holds the request no longer; the
// handler then answers (204, or the function's 500). Meanwhile the claim holds, so a redelivery is answered 503 and does not
// call the function again. ServeHTTP returns only then, so that
// http.Server.Shutdown waits for the completion and no goroutine is left
// behind; a shutdown whose context ends first leaves the completion to the
// process's remaining life. The lease is [DefaultLease], or what the
// store's Lease method returns (see [Store]).
//
// So an outage of the store at completion time costs no second call of
// the function if it ends before the claim lapses: within the lease,
// counted from the claim, less the function's duration and one pause (at
// most 5 s); about 10 minutes with the default lease and a quick
// function. After that, a redelivery may claim the delivery again and
// call the function a second time; the completion then gets ErrClaimLost
// and is lost, unless nobody claimed it in between, in which case it is
// still recorded. [Handler.Stats] counts the retries and the completions
// lost, and the logger ([WithLogger]) reports each lost completion at
// Error.
type Handler struct {
	fn    func(context.Context, *travelrule.Callback) error
	cfg   config
	dedup FencedStore   // cfg.store, seen as a FencedStore; nil without de-duplication
	lease time.Duration // how long the store's claims hold: the bound of a completion's retries
	stats *handlerStats // behind a pointer: Format and LogValue copy the Handler
	// watchers are the observers that are also DeliveryObservers, in the
	// order given; none (nil) costs the request path nothing.
	watchers []DeliveryObserver
}

// Stats counts what a [Handler]'s completions (the records, after the
// function succeeded, that a delivery was processed) met since the handler
// was made. See [Handler.Stats].
type Stats struct {
	// CompletionRetries is how many times a completion failed (the store
	// returned an error other than ErrClaimLost) and was tried again. A
	// count that grows says the store is failing; nothing is lost while
	// the retries succeed within the lease.
	CompletionRetries uint64
	// CompletionsLost is how many deliveries whose function succeeded were
	// not recorded as processed: the store answered [ErrClaimLost] (the
	// claim's lease lapsed and another delivery claimed or processed it),
	// failed until one lease had passed, or panicked. A redelivery of each
	// may have called, or may call, the function again; each is logged at
	// Error. It should stay zero; if it does not, lengthen the store's
	// lease or look at the store's outages.
	CompletionsLost uint64
}

// handlerStats is where a handler counts its Stats.
type handlerStats struct {
	retries, lost atomic.Uint64
}

// Stats returns the counts of the handler's completions so far; it is
// safe to call at any time, from any goroutine, to export them as metrics.
func (h *Handler) Stats() Stats {
	if h.stats == nil { // a Handler not made by NewHandler
		return Stats{}
	}
	return Stats{CompletionRetries: h.stats.retries.Load(), CompletionsLost: h.stats.lost.Load()}
}

// NewHandler returns a handler that calls fn once for each authenticated,
// well-formed callback delivery, with the request's context. fn's error
// answers 500, so that the sender delivers the callback again; nil answers
// 204. A panic in fn is recovered and answered 500.
//
// Authentication is required: give [WithVerifier] or [WithCapabilityKey]
// (or, for a local experiment, [WithoutAuthentication]). NewHandler never
// fails: missing or invalid options (or a nil fn) make a handler that
// answers 500 to every request. Check [Handler.Err] at start-up.
func NewHandler(fn func(ctx context.Context, cb *travelrule.Callback) error, opts ...Option) *Handler {
	h := &Handler{fn: fn, cfg: config{maxBody: defaultMaxBodyBytes}, lease: DefaultLease, stats: &handlerStats{}}
	for _, opt := range opts {
		if opt != nil {
			opt(&h.cfg)
		}
	}
	if fn == nil {
		h.cfg.fail(errors.New("callback: NewHandler: nil function"))
	}
	h.cfg.checkAuth()
	if h.cfg.store == nil && !h.cfg.noDedup {
		h.cfg.store = NewMemoryStore(defaultStoreSize)
	}
	if h.cfg.store != nil {
		h.dedup = fenced(h.cfg.store)
		if l, ok := h.cfg.store.(interface{ Lease() time.Duration }); ok && l.Lease() > 0 {
			h.lease = l.Lease()
		}
	}
	for _, o := range h.cfg.observers {
		if d, ok := o.(DeliveryObserver); ok {
			h.watchers = append(h.watchers, d)
		}
	}
	if h.cfg.noAuth && h.cfg.err == nil {
		l := h.cfg.logger
		if l == nil {
			l = slog.Default()
		}
		l.Warn("callback: handler accepts unauthenticated callbacks (WithoutAuthentication): anyone who reaches its URL can forge one")
	}
	if h.cfg.err != nil {
		h.log(context.Background(), slog.LevelError, "callback: handler misconfigured, refusing every request", slog.String("error", h.cfg.err.Error()))
	}
	return h
}

// Err reports why the handler refuses every request (invalid options or a
// nil function), or nil if it is configured correctly. The error never
// quotes a key or secret.
func (h *Handler) Err() error { return h.cfg.err }

// Format implements fmt.Formatter so that every verb prints the handler's
// configuration with the capability key shown as "[redacted]" (when set)
// and the verifiers and store by type only: their own fields may hold
// secrets. Format and LogValue have value receivers so that a copy of a
// handler is redacted too.
func (h Handler) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "callback.Handler")
	}
	fmt.Fprintf(f, "{CapabilityKey:%s", mask(h.cfg.firstKey()))
	if n := len(h.cfg.capKeys) - 1; n > 0 {
		fmt.Fprintf(f, " PreviousKeys:%d", n)
	}
	fmt.Fprint(f, " Verifiers:[")
	for i, v := range h.cfg.verifiers {
		if i > 0 {
			fmt.Fprint(f, " ")
		}
		fmt.Fprintf(f, "%T", v)
	}
	fmt.Fprint(f, "]")
	if h.cfg.noAuth {
		fmt.Fprint(f, " WithoutAuthentication")
	}
	fmt.Fprintf(f, " MaxBodyBytes:%d Store:%T Err:%v}", h.cfg.maxBody, h.cfg.store, h.cfg.err)
}

// LogValue implements slog.LogValuer: the configuration as Format shows it.
func (h Handler) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("capabilityKey", mask(h.cfg.firstKey())),
		slog.Int("previousKeys", max(len(h.cfg.capKeys)-1, 0)),
		slog.Int("verifiers", len(h.cfg.verifiers)),
		slog.Bool("authenticated", h.cfg.authenticates()),
		slog.Int64("maxBodyBytes", h.cfg.maxBody),
		slog.Bool("dedup", h.cfg.store != nil),
	}
	if h.cfg.err != nil {
		attrs = append(attrs, slog.String("error", h.cfg.err.Error()))
	}
	return slog.GroupValue(attrs...)
}

// ServeHTTP implements http.Handler. After a successful call of the
// function it returns once the delivery is recorded as processed, or the
// handler gave up (see [Handler]).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(h.watchers) > 0 {
		h.serveWatched(w, r)
		return
	}
	var p progress
	h.answer(w, r, &p)
}

// answer serves r, answers it and, after a successful function, records
// the delivery as processed; p follows the request.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, p *progress) {
	code, c := h.serve(w, r, p)
	p.status = code
	switch {
	case c.key != "":
		p.completionLost = h.complete(w, r, c) // answers 204
		return
	case code == http.StatusNoContent:
		w.WriteHeader(code)
		return
	case code == http.StatusMethodNotAllowed:
		w.Header().Set("Allow", http.MethodPost)
	case code == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryAfterBusy)
	}
	http.Error(w, http.StatusText(code), code)
}

// serve does the work of ServeHTTP and returns the status to answer, and
// the completion to record after answering, if any. It notes in p how far
// the request got and where it ended (see outcome).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, p *progress) (code int, c completion) {
	ctx := r.Context()
	defer func() {
		if v := recover(); v != nil {
			h.log(ctx, slog.LevelError, "callback: panic while handling a callback",
				slog.String("panic", fmt.Sprintf("%T", v)), slog.String("stack", string(debug.Stack())))
			code, c = http.StatusInternalServerError, completion{}
			p.out = outPanicked
		}
	}()
	if h.cfg.err != nil {
		h.log(ctx, slog.LevelError, "callback: handler misconfigured", slog.String("error", h.cfg.err.Error()))
		p.out = outMisconfigured
		return http.StatusInternalServerError, c
	}
	if r.Method != http.MethodPost {
		p.out = outMethod
		return http.StatusMethodNotAllowed, c
	}
	path := slog.String("path", r.URL.Path)
	if shape, ok := inquiryRoute(r.URL.Path); ok {
		path = slog.String("path", shape) // the route, not the beneficiary's id
	}
	ref, body, code := h.admit(w, r, path, p)
	if code != 0 {
		return code, c
	}
	cb, err := travelrule.ParseCallback(body)
	if err != nil {
		h.log(ctx, slog.LevelWarn, "callback: refused malformed body", path, slog.String("error", err.Error()))
		p.out = outMalformed
		return http.StatusBadRequest, c
	}
	cb.Ref = ref
	p.kind = cb.Kind
	if h.namesAnotherTransfer(cb, ref) {
		h.log(ctx, slog.LevelWarn, "callback: refused a callback whose body names another transfer's callback URL", path)
		p.out, p.verification = outOtherTransfer, VerificationFailed
		return http.StatusUnauthorized, c
	}
	attr := slog.Any("callback", cb)
	var key string
	if h.dedup != nil || len(h.cfg.observers) > 0 {
		key = dedupKey(deliveryID(r.Header, h.cfg.verifiers), ref, body)
		p.id = key
	}
	if err := h.observe(ctx, key, cb); err != nil {
		h.log(ctx, slog.LevelError, "callback: an observer failed, asking for redelivery", path, attr, slog.String("error", err.Error()))
		p.out = outObserverFailed
		return http.StatusInternalServerError, c
	}
	if h.dedup == nil {
		p.dedup = DedupOff
		return h.call(ctx, cb, path, attr, p), c
	}
	return h.callOnce(ctx, key, cb, path, attr, p)
}

// namesAnotherTransfer reports whether the body's callback URL is a
// capability URL of this handler's key for another reference than the URL
// the callback arrived at. A signature such as x-data-integrity covers the
// body but not the URL, so a captured callback about one transfer could be
// replayed to another transfer's capability URL; the body's own callback
// URL, which the service echoes, tells. A body without one, or with one
// that is not this key's capability URL, is not checked.
func (h *Handler) namesAnotherTransfer(cb *travelrule.Callback, ref string) bool {
	if h.cfg.capKeys == nil || cb.CallbackURL == "" {
		return false
	}
	u, err := url.Parse(cb.CallbackURL)
	if err != nil {
		return false
	}
	bodyRef, err := h.cfg.verifyCapability(u)
	return err == nil && bodyRef != ref
}

// admit authenticates a request and reads its body: it checks the
// capability, reads the body through the size limit and runs the
// verifiers. code is 0 when the request passed, else the status to answer.
// It notes in p the outcome of a refusal, and the verification.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, path slog.Attr, p *progress) (ref string, body []byte, code int) {
	ctx := r.Context()
	if h.cfg.capKeys != nil {
		var err error
		if ref, err = h.cfg.verifyCapability(r.URL); err != nil {
			msg := "callback: refused request without a valid capability"
			if _, ok := inquiryRoute(r.URL.Path); ok && errors.Is(err, travelrule.ErrCallbackUnsigned) {
				msg, err = "callback: refused a request to the inquiry route without a capability tag: inquiries carry none", errInquiryUntagged
			}
			h.log(ctx, slog.LevelWarn, msg, path, slog.String("error", err.Error()))
			p.out, p.verification = outCapability, VerificationFailed
			return "", nil, http.StatusUnauthorized
		}
	}
	body, code = h.readBody(w, r)
	if code != 0 {
		h.log(ctx, slog.LevelWarn, "callback: refused unreadable or oversized body", path, slog.Int("status", code))
		p.out = outUnreadable
		if code == http.StatusRequestEntityTooLarge {
			p.out = outTooLarge
		}
		return "", nil, code
	}
	for _, v := range h.cfg.verifiers {
		if err := v.Verify(r, body); err != nil {
			h.log(ctx, slog.LevelWarn, "callback: refused request that failed verification", path, slog.String("error", err.Error()))
			p.out, p.verification = outVerifier, VerificationFailed
			return "", nil, http.StatusUnauthorized
		}
	}
	p.verification = VerificationNone // WithoutAuthentication: accepted unauthenticated
	if h.cfg.authenticates() {
		p.verification = VerificationPassed
	}
	return ref, body, 0
}

// readBody reads the body through the size limit; code is 0 on success.
// It reads into one buffer, sized by Content-Length when the request has
// one, instead of through http.MaxBytesReader and io.ReadAll: the same
// limit, without their allocations. It never reads more than the limit
// plus one byte.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) (body []byte, code int) {
	if r.Body == nil {
		return nil, 0
	}
	limit := h.cfg.maxBody
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge
	}
	size := int64(512)
	if r.ContentLength >= 0 && r.ContentLength < 64<<10 {
		size = r.ContentLength + 1 // + 1: room to see the end without growing
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):min(int64(cap(buf)), limit+1)])
		buf = buf[:len(buf)+n]
		switch {
		case int64(len(buf)) > limit:
			// As http.MaxBytesReader does, tell net/http that the rest
			// of the body, if any, is not to be read: it closes the
			// connection after the answer.
			_, _ = http.MaxBytesReader(w, r.Body, 0).Read(make([]byte, 1))
			return nil, http.StatusRequestEntityTooLarge
		case err == io.EOF:
			return buf, 0
		case err != nil:
			return nil, http.StatusBadRequest
		}
	}
}

// call runs fn, turning a panic into a 500, and notes its outcome in p.
func (h *Handler) call(ctx context.Context, cb *travelrule.Callback, path, attr slog.Attr, p *progress) (code int) {
	defer func() {
		if v := recover(); v != nil {
			h.log(ctx, slog.LevelError, "callback: function panicked", path, attr,
				slog.String("panic", fmt.Sprintf("%T", v)), slog.String("stack", string(debug.Stack())))
			code = http.StatusInternalServerError
			p.out = outFuncPanicked
		}
	}()
	if err := h.fn(ctx, cb); err != nil {
		h.log(ctx, slog.LevelError, "callback: function failed, asking for redelivery", path, attr, slog.String("error", err.Error()))
		p.out = outFuncFailed
		return http.StatusInternalServerError
	}
	h.log(ctx, slog.LevelDebug, "callback: delivered", path, attr)
	p.out = outProcessed
	return http.StatusNoContent
}

func (h *Handler) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if h.cfg.logger == nil || !h.cfg.logger.Enabled(ctx, level) {
		return
	}
	h.cfg.logger.LogAttrs(ctx, level, msg, attrs...)
}
