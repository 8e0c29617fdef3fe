package callback_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// deliveries is an Observer that records the deliveries it sees, and
// fails while fail is set.
type deliveries struct {
	mu   sync.Mutex
	seen []callback.Delivery
	fail error
}

func (d *deliveries) Delivered(_ context.Context, del *callback.Delivery) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen = append(d.seen, *del)
	return d.fail
}

// TestObserverSeesAcceptedDeliveries checks that an observer sees each
// accepted delivery (its duplicates too, with one ID) before the
// function, with the verified reference, and never a refused one.
func TestObserverSeesAcceptedDeliveries(t *testing.T) {
	obs := &deliveries{}
	rc := &recorder{}
	srv, _ := serve(t, rc.fn, callback.WithCapabilityKey(capKey), callback.WithObserver(obs))
	url, err := travelrule.NewCallbackURL(srv.URL+"/cb", "pay-7", capKey)
	require.NoError(t, err)

	assert.Equal(t, 204, post(t, url, statusBody).code)
	assert.Equal(t, 204, post(t, url, statusBody).code, "a duplicate")
	assert.Equal(t, 401, post(t, srv.URL+"/cb?tr_ref=pay-7&tr_tag=forged", statusBody).code)
	assert.Equal(t, 400, post(t, url, `not json`).code)

	require.Len(t, obs.seen, 2, "both deliveries, and neither refused request")
	assert.Equal(t, obs.seen[0].ID, obs.seen[1].ID, "a duplicate has the delivery's ID")
	assert.Len(t, obs.seen[0].ID, 69)
	assert.Equal(t, "pay-7", obs.seen[0].Callback.Ref)
	assert.Equal(t, "tr-1", obs.seen[0].Callback.TransferID)
	assert.Equal(t, 1, rc.count(), "the function ran once")
}

// TestObserverFailureAsksForRedelivery checks that an observer's error
// answers 500 without calling the function, and that the redelivery,
// once the observer recovers, is processed.
func TestObserverFailureAsksForRedelivery(t *testing.T) {
	obs := &deliveries{fail: errors.New("journal store down")}
	rc := &recorder{}
	srv, _ := serveOpen(t, rc.fn, callback.WithObserver(obs))
	assert.Equal(t, 500, post(t, srv.URL+"/cb", statusBody).code)
	assert.Zero(t, rc.count(), "the function is not called")

	obs.mu.Lock()
	obs.fail = nil
	obs.mu.Unlock()
	assert.Equal(t, 204, post(t, srv.URL+"/cb", statusBody).code)
	assert.Equal(t, 1, rc.count())
	assert.Len(t, obs.seen, 2)
}

// TestObserverNil checks that a nil observer is a misconfiguration.
func TestObserverNil(t *testing.T) {
	h := callback.NewHandler((&recorder{}).fn, callback.WithObserver(nil), noAuth)
	assert.Error(t, h.Err())
}

// watchKey is the context key under which a watcher puts its name.
type watchKey string

// watched is one EndDelivery a watcher saw: its context and what it was
// told.
type watched struct {
	ctx context.Context
	end callback.DeliveryEnd
}

// callLog is the order of calls that watchers (and functions) note.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) note(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *callLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// watcher is an integrator's DeliveryObserver: its StartDelivery puts its
// name in the context (or, with keep, returns nil), and it records every
// EndDelivery; onEnd, when set, runs in EndDelivery.
type watcher struct {
	name  string
	log   *callLog // nil: none
	keep  bool
	onEnd func(end *callback.DeliveryEnd)

	mu   sync.Mutex
	ends []watched
}

func (w *watcher) Delivered(context.Context, *callback.Delivery) error { return nil }

func (w *watcher) StartDelivery(ctx context.Context) context.Context {
	if w.log != nil {
		w.log.note("start " + w.name)
	}
	if w.keep {
		return nil
	}
	return context.WithValue(ctx, watchKey(w.name), w.name)
}

func (w *watcher) EndDelivery(ctx context.Context, end *callback.DeliveryEnd) {
	if w.log != nil {
		w.log.note("end " + w.name)
	}
	w.mu.Lock()
	w.ends = append(w.ends, watched{ctx, *end})
	w.mu.Unlock()
	if w.onEnd != nil {
		w.onEnd(end)
	}
}

// last is the last EndDelivery the watcher saw.
func (w *watcher) last(t *testing.T) watched {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	require.NotEmpty(t, w.ends, "EndDelivery was not called")
	return w.ends[len(w.ends)-1]
}

// names are the watchers' names found in ctx, in the order asked.
func names(ctx context.Context, of ...string) []string {
	var found []string
	for _, n := range of {
		if v, ok := ctx.Value(watchKey(n)).(string); ok {
			found = append(found, v)
		}
	}
	return found
}

// deliver serves one request to h, in-process, and returns its status.
func deliver(h http.Handler, method, target string, body io.Reader) int {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, body))
	return w.Code
}

// TestDeliveryEnd serves a request down every path through a handler
// with a DeliveryObserver and checks what EndDelivery is told: the result,
// the status answered, the kind, the verification, the de-duplication and
// the delivery's ID.
func TestDeliveryEnd(t *testing.T) {
	capURL, err := travelrule.NewCallbackURL("http://vasp.example/cb", "pay-1", capKey)
	require.NoError(t, err)
	otherURL, err := travelrule.NewCallbackURL("http://vasp.example/cb", "pay-2", capKey)
	require.NoError(t, err)
	naming := `{"transferId":"tr-1","status":"approved","callback":"` + otherURL + `"}`
	kind := travelrule.KindTransferResolution // statusBody's
	pass := verifierFunc(func(*http.Request, []byte) error { return nil })
	refuse := verifierFunc(func(*http.Request, []byte) error { return errors.New("bad signature") })
	explode := verifierFunc(func(*http.Request, []byte) error { panic("verifier bug") })
	failFn := func(context.Context, *travelrule.Callback) error { return errors.New("ledger down") }
	panicFn := func(context.Context, *travelrule.Callback) error { panic("ledger bug") }

	for _, tc := range []struct {
		name   string
		opts   []callback.Option
		fn     func(context.Context, *travelrule.Callback) error // nil: succeeds
		method string                                            // "": POST
		target string                                            // "": /cb
		body   string
		broken bool // the body cannot be read
		again  bool // the same delivery was delivered before
		want   callback.DeliveryEnd
		wantID bool
	}{
		{name: "processed", opts: []callback.Option{noAuth}, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationNone, Dedup: callback.DedupFirst, Result: callback.DeliveryProcessed, Status: 204}},
		{name: "processed, capability checked", opts: []callback.Option{callback.WithCapabilityKey(capKey)}, target: capURL, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationPassed, Dedup: callback.DedupFirst, Result: callback.DeliveryProcessed, Status: 204}},
		{name: "processed, verified, without de-duplication", opts: []callback.Option{callback.WithVerifier(pass), callback.WithoutDedup()}, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationPassed, Dedup: callback.DedupOff, Result: callback.DeliveryProcessed, Status: 204}},
		{name: "duplicate", opts: []callback.Option{noAuth}, body: statusBody, again: true, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationNone, Dedup: callback.DedupDuplicate, Result: callback.DeliveryDuplicate, Status: 204}},
		{name: "busy", opts: []callback.Option{noAuth, callback.WithStore(&faultyStore{claim: callback.ClaimBusy})}, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationNone, Dedup: callback.DedupInProgress, Result: callback.DeliveryBusy, Status: 503}},
		{name: "store failed", opts: []callback.Option{noAuth, callback.WithStore(&faultyStore{claimErr: errors.New("store down")})}, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationNone, Dedup: callback.DedupFailed, Result: callback.DeliveryFailed, Status: 500}},
		{name: "store claimed nonsense", opts: []callback.Option{noAuth, callback.WithStore(&faultyStore{claim: callback.ClaimResult(99)})}, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationNone, Dedup: callback.DedupFailed, Result: callback.DeliveryFailed, Status: 500}},
		{name: "function failed", opts: []callback.Option{noAuth}, fn: failFn, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationNone, Dedup: callback.DedupFirst, Result: callback.DeliveryFailed, Status: 500}},
		{name: "function panicked", fn: panicFn, opts: []callback.Option{noAuth, callback.WithoutDedup()}, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationNone, Dedup: callback.DedupOff, Result: callback.DeliveryFailed, Status: 500}},
		{name: "handler panicked", opts: []callback.Option{callback.WithVerifier(explode)}, body: statusBody,
			want: callback.DeliveryEnd{Verification: callback.VerificationNotChecked, Result: callback.DeliveryFailed, Status: 500}},
		{name: "observer failed", opts: []callback.Option{noAuth, callback.WithObserver(&deliveries{fail: errors.New("journal down")})}, body: statusBody, wantID: true,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationNone, Result: callback.DeliveryObserverFailed, Status: 500}},
		{name: "capability refused", opts: []callback.Option{callback.WithCapabilityKey(capKey)}, target: "/cb?tr_ref=pay-1&tr_tag=forged", body: statusBody,
			want: callback.DeliveryEnd{Verification: callback.VerificationFailed, Result: callback.DeliveryUnauthenticated, Status: 401}},
		{name: "verifier refused", opts: []callback.Option{callback.WithVerifier(refuse)}, body: statusBody,
			want: callback.DeliveryEnd{Verification: callback.VerificationFailed, Result: callback.DeliveryUnauthenticated, Status: 401}},
		{name: "names another transfer", opts: []callback.Option{callback.WithCapabilityKey(capKey)}, target: capURL, body: naming,
			want: callback.DeliveryEnd{Kind: kind, Verification: callback.VerificationFailed, Result: callback.DeliveryUnauthenticated, Status: 401}},
		{name: "malformed body", opts: []callback.Option{noAuth}, body: `not json`,
			want: callback.DeliveryEnd{Verification: callback.VerificationNone, Result: callback.DeliveryMalformed, Status: 400}},
		{name: "body too large", opts: []callback.Option{noAuth, callback.WithMaxBodyBytes(16)}, body: statusBody,
			want: callback.DeliveryEnd{Verification: callback.VerificationNotChecked, Result: callback.DeliveryMalformed, Status: 413}},
		{name: "body unreadable", opts: []callback.Option{noAuth}, broken: true,
			want: callback.DeliveryEnd{Verification: callback.VerificationNotChecked, Result: callback.DeliveryMalformed, Status: 400}},
		{name: "method not allowed", opts: []callback.Option{noAuth}, method: http.MethodGet,
			want: callback.DeliveryEnd{Verification: callback.VerificationNotChecked, Result: callback.DeliveryMalformed, Status: 405}},
		{name: "misconfigured", opts: []callback.Option{callback.WithCapabilityKey([]byte("short"))}, body: statusBody,
			want: callback.DeliveryEnd{Verification: callback.VerificationNotChecked, Result: callback.DeliveryMisconfigured, Status: 500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, method, target := tc.fn, tc.method, tc.target
			if fn == nil {
				fn = (&recorder{}).fn
			}
			if method == "" {
				method = http.MethodPost
			}
			if target == "" {
				target = "/cb"
			}
			w := &watcher{name: "w"}
			h := callback.NewHandler(fn, append(tc.opts, callback.WithObserver(w))...)
			body := func() io.Reader {
				if tc.broken {
					return iotest.ErrReader(errors.New("connection reset"))
				}
				return strings.NewReader(tc.body)
			}
			if tc.again {
				deliver(h, method, target, body())
			}
			status := deliver(h, method, target, body())

			got := w.last(t).end
			assert.Equal(t, tc.want.Status, status, "the status answered")
			assert.Positive(t, got.Duration)
			if tc.wantID {
				assert.Len(t, got.ID, 69)
			} else {
				assert.Empty(t, got.ID)
			}
			got.Duration, got.ID = 0, ""
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestDeliveryObserverContext checks that the function is called with
// the context StartDelivery returned, derived from the request's.
func TestDeliveryObserverContext(t *testing.T) {
	var seen []string
	rc := &recorder{}
	srv, _ := serveOpen(t, func(ctx context.Context, cb *travelrule.Callback) error {
		seen = names(ctx, "tracer")
		return rc.fn(ctx, cb)
	}, callback.WithObserver(&watcher{name: "tracer"}))
	assert.Equal(t, 204, post(t, srv.URL+"/cb", statusBody).code)
	assert.Equal(t, []string{"tracer"}, seen, "the function's context carries the observer's value")
	assert.Equal(t, []bool{true}, rc.ctxOK, "and the request's")
}

// TestDeliveryObserverEndsAfterCompletion checks that EndDelivery runs
// once the delivery is recorded as processed in the store.
func TestDeliveryObserverEndsAfterCompletion(t *testing.T) {
	store := callback.NewMemoryStore(10)
	var claim callback.ClaimResult
	w := &watcher{name: "w", onEnd: func(end *callback.DeliveryEnd) {
		var err error
		claim, err = store.Claim(context.Background(), end.ID)
		assert.NoError(t, err)
	}}
	h := callback.NewHandler((&recorder{}).fn, callback.WithStore(store), callback.WithObserver(w), noAuth)
	require.Equal(t, 204, deliver(h, http.MethodPost, "/cb", strings.NewReader(statusBody)))
	assert.Equal(t, callback.ClaimDone, claim, "the store holds the delivery as processed when EndDelivery runs")
}

// TestDeliveryObserversOrder checks that several delivery observers start
// in the order given, each on the context the one before returned (a nil
// one keeping it), and end in reverse order, each on its own context and
// with its own copy of the end.
func TestDeliveryObserversOrder(t *testing.T) {
	log := &callLog{}
	a := &watcher{name: "a", log: log}
	b := &watcher{name: "b", log: log, keep: true}
	c := &watcher{name: "c", log: log, onEnd: func(end *callback.DeliveryEnd) { end.Result = "tampered" }}
	var fnSaw []string
	h := callback.NewHandler(func(ctx context.Context, _ *travelrule.Callback) error {
		fnSaw = names(ctx, "a", "b", "c")
		log.note("function")
		return nil
	}, callback.WithObserver(a), callback.WithObserver(&deliveries{}), callback.WithObserver(b), callback.WithObserver(c), noAuth)
	require.Equal(t, 204, deliver(h, http.MethodPost, "/cb", strings.NewReader(statusBody)))

	assert.Equal(t, []string{"start a", "start b", "start c", "function", "end c", "end b", "end a"}, log.all())
	assert.Equal(t, []string{"a", "c"}, fnSaw)
	assert.Equal(t, []string{"a"}, names(a.last(t).ctx, "a", "b", "c"), "a ends on its own context")
	assert.Equal(t, []string{"a"}, names(b.last(t).ctx, "a", "b", "c"), "b returned nil: it ends on a's")
	assert.Equal(t, []string{"a", "c"}, names(c.last(t).ctx, "a", "b", "c"))
	assert.Equal(t, callback.DeliveryProcessed, a.last(t).end.Result, "c's change of its end is its own")
	assert.Equal(t, callback.DeliveryProcessed, b.last(t).end.Result)
}

// TestDeliveryEndHoldsNothingPersonal delivers callbacks full of personal
// data, under a capability URL and a webhook-id that spell secrets, down
// several paths, and searches every DeliveryEnd's fmt forms for them.
func TestDeliveryEndHoldsNothingPersonal(t *testing.T) {
	url, err := travelrule.NewCallbackURL("http://vasp.example/cb", "ref-Zebulon-Quaxworth", capKey)
	require.NoError(t, err)
	tag := url[strings.Index(url, "tr_tag=")+len("tr_tag="):]
	secret := []byte(plantedSecret)
	v := &callback.WebhookVerifier{Secrets: [][]byte{secret}, Now: fixedClock}
	w := &watcher{name: "w"}
	fail := true
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error {
		if fail {
			fail = false
			return errors.New("Zebulon Quaxworth's bank is down")
		}
		return nil
	}, callback.WithCapabilityKey(capKey), callback.WithVerifier(v), callback.WithObserver(w))
	for _, body := range []string{plantedBody, plantedBody, plantedBody, plantedInquiry, plantedLiveInquiry, plantedLiveEnvelope, `{"transferId":"Zebulon Quaxworth"`} {
		r := httptest.NewRequest(http.MethodPost, url, strings.NewReader(body))
		setSignatureHeaders(r.Header, secret, plantedRedeliver+fmt.Sprint(len(body)), fixedNow, []byte(body))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	require.Len(t, w.ends, 7)
	var results []callback.DeliveryResult
	for _, e := range w.ends {
		results = append(results, e.end.Result)
		for _, form := range []string{fmt.Sprintf("%+v", e.end), fmt.Sprintf("%#v", e.end), fmt.Sprintf("%v", &e.end)} {
			for _, s := range append(planted, tag, "ref-Zebulon", "tr_tag") {
				for _, leak := range leakForms(s) {
					assert.NotContains(t, form, leak)
				}
			}
		}
	}
	assert.Equal(t, []callback.DeliveryResult{"failed", "processed", "duplicate", "processed", "processed", "processed", "malformed"}, results)
}

// TestDeliveryEndSaysACompletionWasLost: a processed delivery whose
// completion the store refused (ErrClaimLost) is still answered 204, and
// its DeliveryEnd says the completion was lost; one recorded says not.
func TestDeliveryEndSaysACompletionWasLost(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprint("lost ", lost), func(t *testing.T) {
			store := &faultyStore{claim: callback.ClaimNew, lease: time.Minute}
			if lost {
				store.completeErr, store.completeFails = fmt.Errorf("wrapped: %w", callback.ErrClaimLost), -1
			}
			w := &watcher{name: "w"}
			h := callback.NewHandler((&recorder{}).fn, callback.WithStore(store), callback.WithObserver(w), noAuth)
			require.Equal(t, 204, deliver(h, http.MethodPost, "/cb", strings.NewReader(statusBody)))
			end := w.last(t).end
			assert.Equal(t, callback.DeliveryProcessed, end.Result)
			assert.Equal(t, lost, end.CompletionLost)
			assert.Equal(t, lost, h.Stats().CompletionsLost == 1)
		})
	}
}
