package travelrule_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/vaspkit/travelrule"
)

// recorder is an Observer that records what it is told, and can refuse.
type recorder struct {
	name   string
	refuse error
	log    *[]string
	mu     sync.Mutex
	starts []travelrule.CallInfo
	ends   []travelrule.CallEnd
	ctxOK  bool // EndCall got the context StartCall returned
}

type ctxKey string

func (r *recorder) StartCall(ctx context.Context, info *travelrule.CallInfo) (context.Context, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, "start "+r.name)
	r.starts = append(r.starts, *info)
	if r.refuse != nil {
		return ctx, r.refuse
	}
	return context.WithValue(ctx, ctxKey(r.name), true), nil
}

func (r *recorder) EndCall(ctx context.Context, info *travelrule.CallInfo, end *travelrule.CallEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, "end "+r.name)
	r.ends = append(r.ends, *end)
	r.ctxOK = ctx.Value(ctxKey(r.name)) == true
}

// observedServer answers each request with status and body, and keeps the
// bodies it received.
type observedServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	n      atomic.Int64
}

func newObservedServer(t *testing.T, status int, body string) *observedServer {
	s := &observedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, b)
		s.mu.Unlock()
		s.n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func observedClient(t *testing.T, url string, obs ...travelrule.Observer) *travelrule.Client {
	opts := []travelrule.Option{travelrule.WithTokenSource(travelrule.StaticToken("observer-bearer-token")), travelrule.WithRetryMax(0)}
	for _, o := range obs {
		opts = append(opts, travelrule.WithObserver(o))
	}
	c, err := travelrule.NewClient(url, opts...)
	require.NoError(t, err)
	return c
}

// TestObserverSeesInitiations checks what an observer is told of an
// initiation, for each way it can end.
func TestObserverSeesInitiations(t *testing.T) {
	key := []byte("observer-capability-key-0123")
	cbURL, err := travelrule.NewCallbackURL("https://vasp-a.example/cb", "pay-42", key)
	require.NoError(t, err)
	tests := []struct {
		name       string
		status     int
		body       string
		outcome    travelrule.CallOutcome
		transferID string
	}{
		{"stored", 200, `{"status":true,"data":{"transferId":"tr-9"}}`, travelrule.CallSucceeded, "tr-9"},
		{"refused", 400, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"bad"}]}`, travelrule.CallNotDone, ""},
		{"refused in a 200", 200, `{"status":false,"errors":[{"code":"INVALID_TRAVEL_ADDRESS"}]}`, travelrule.CallNotDone, ""},
		{"a 502: the service may have acted", 502, `bad gateway`, travelrule.CallOutcomeUnknown, ""},
		{"a 2xx not understood, naming a transfer", 200, `{"status":"maybe","transferId":"tr-10"}`, travelrule.CallOutcomeUnknown, "tr-10"},
		{"an echoed personal value is no transfer id", 200, `{"status":true,"data":{"transferId":"Ødegård-Müller"}}`, travelrule.CallSucceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newObservedServer(t, tt.status, tt.body)
			var log []string
			obs := &recorder{name: "a", log: &log}
			req := fullRequest()
			req.Callback = cbURL
			_, err := observedClient(t, srv.URL, obs).InitiateTransfer(context.Background(), req)
			require.Len(t, obs.starts, 1)
			require.Len(t, obs.ends, 1)
			info, end := obs.starts[0], obs.ends[0]
			assert.Equal(t, "InitiateTransfer", info.Op)
			assert.Equal(t, "pay-42", info.CallbackRef)
			assert.Empty(t, info.TransferID)
			require.Len(t, srv.bodies, 1)
			assert.Equal(t, sha256.Sum256(srv.bodies[0]), info.Digest, "the digest is of the body as sent")
			assert.Equal(t, tt.outcome, end.Outcome)
			assert.Equal(t, tt.transferID, end.TransferID)
			assert.Equal(t, 1, end.Attempts)
			assert.Equal(t, err, end.Err)
			assert.True(t, obs.ctxOK, "EndCall gets the context StartCall returned")
			if tt.outcome == travelrule.CallOutcomeUnknown {
				assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			}
			// Nothing personal in what the observer was told.
			told := fmt.Sprintf("%+v %+v %v", info, end, end.Err)
			for _, v := range []string{"Zoë", "Ødegård", "1984-02-29", "123456789", "0x742d35Cc", "山田", "observer-bearer-token", cbURL[len(cbURL)-10:]} {
				assert.NotContains(t, told, v)
			}
		})
	}
}

// TestObserverRefusalSendsNothing checks that a StartCall error ends the
// call before anything is sent, and ends the observers started before.
func TestObserverRefusalSendsNothing(t *testing.T) {
	srv := newObservedServer(t, 200, `{"status":true,"data":{"transferId":"tr-1"}}`)
	var log []string
	full := errors.New("journal store is down")
	first := &recorder{name: "first", log: &log}
	second := &recorder{name: "second", log: &log, refuse: full}
	third := &recorder{name: "third", log: &log}
	_, err := observedClient(t, srv.URL, first, second, third).InitiateTransfer(context.Background(), fullRequest())
	require.ErrorIs(t, err, full)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Contains(t, err.Error(), "nothing was sent")
	assert.Zero(t, srv.n.Load(), "no request reached the server")
	assert.Equal(t, []string{"start first", "start second", "end first"}, log)
	require.Len(t, first.ends, 1)
	assert.Equal(t, travelrule.CallNotDone, first.ends[0].Outcome)
	assert.ErrorIs(t, first.ends[0].Err, full)
}

// TestObserversOrder checks that observers start in the order given and
// end in the reverse order, and that an invalid request is not observed.
func TestObserversOrder(t *testing.T) {
	srv := newObservedServer(t, 200, `{"status":true,"data":{"transferId":"tr-1"}}`)
	var log []string
	a, b := &recorder{name: "a", log: &log}, &recorder{name: "b", log: &log}
	c := observedClient(t, srv.URL, a, b)
	_, err := c.InitiateTransfer(context.Background(), fullRequest())
	require.NoError(t, err)
	assert.Equal(t, []string{"start a", "start b", "end b", "end a"}, log)
	assert.True(t, a.ctxOK && b.ctxOK)

	log = nil
	_, err = c.InitiateTransfer(context.Background(), &travelrule.TransferRequest{})
	require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	assert.Empty(t, log, "a request refused before sending is not observed")

	_, err = travelrule.NewClient(srv.URL, travelrule.WithTokenSource(travelrule.StaticToken("x")), travelrule.WithObserver(nil))
	assert.Error(t, err)
}

// TestObserverSeesResolutionsAndTxIDs checks the transfer id and decision
// of the calls about a transfer, and that a resolution the service
// answered with a bare status false is not done.
func TestObserverSeesResolutionsAndTxIDs(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		approved string
		call     func(c *travelrule.Client) error
		op       string
		decision travelrule.Decision
		outcome  travelrule.CallOutcome
	}{
		{name: "approved", body: `{"status":true}`, approved: "true", op: "ResolveInquiry", decision: "approved", outcome: travelrule.CallSucceeded},
		{name: "rejected", body: `{"status":true}`, approved: "false", op: "ResolveInquiry", decision: "rejected", outcome: travelrule.CallSucceeded},
		{name: "not applied", body: `{"status":false}`, approved: "true", op: "ResolveInquiry", decision: "approved", outcome: travelrule.CallNotDone},
		{name: "txid", body: `{"status":true}`, op: "SubmitTxID", outcome: travelrule.CallSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newObservedServer(t, 200, tt.body)
			var log []string
			obs := &recorder{name: "a", log: &log}
			c := observedClient(t, srv.URL, obs)
			var err error
			if tt.op == "SubmitTxID" {
				_, err = c.SubmitTxID(context.Background(), "tr-77", "0xabc")
			} else {
				_, err = c.ResolveInquiry(context.Background(), "tr-77", &travelrule.InquiryResolution{Approved: tt.approved})
			}
			if tt.outcome == travelrule.CallNotDone {
				require.ErrorIs(t, err, travelrule.ErrNotApplied)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, obs.ends, 1)
			assert.Equal(t, err, obs.ends[0].Err)
			assert.Equal(t, tt.op, obs.starts[0].Op)
			assert.Equal(t, "tr-77", obs.starts[0].TransferID)
			assert.Equal(t, tt.decision, obs.starts[0].Decision)
			assert.Equal(t, tt.outcome, obs.ends[0].Outcome)
			assert.Equal(t, "tr-77", obs.ends[0].TransferID)
		})
	}
}

// watcher is an observer of calls, attempts, invalid calls and token
// fetches: what telemetry is. It adds a header to each attempt.
type watcher struct {
	recorder
	mu       sync.Mutex
	attempts []travelrule.AttemptInfo
	ends     []travelrule.AttemptEnd
	invalid  []string
	fetches  []travelrule.TokenFetch
	header   func(n int) http.Header // what to add to attempt n
	endCtxOK bool
}

type attemptKey struct{}

func newWatcher() *watcher {
	var log []string
	return &watcher{recorder: recorder{name: "w", log: &log}, endCtxOK: true}
}

func (w *watcher) StartAttempt(ctx context.Context, _ *travelrule.CallInfo, a *travelrule.AttemptInfo) context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.header != nil {
		for k, v := range w.header(a.N) {
			a.Header[k] = v
		}
	}
	w.attempts = append(w.attempts, *a)
	return context.WithValue(ctx, attemptKey{}, a.N)
}

func (w *watcher) EndAttempt(ctx context.Context, _ *travelrule.CallInfo, a *travelrule.AttemptInfo, end *travelrule.AttemptEnd) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.endCtxOK = w.endCtxOK && ctx.Value(attemptKey{}) == a.N
	w.ends = append(w.ends, *end)
}

func (w *watcher) InvalidCall(_ context.Context, op string, err *travelrule.ValidationError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.invalid = append(w.invalid, op+": "+err.Error())
}

func (w *watcher) TokenFetched(_ context.Context, f *travelrule.TokenFetch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fetches = append(w.fetches, *f)
}

// scripted answers the n-th request (from 1) with script(n, r), and keeps
// each request's headers and the attempt number its context carried.
type scripted struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
	urls    []string
}

func newScripted(t *testing.T, script func(n int, w http.ResponseWriter, r *http.Request)) *scripted {
	s := &scripted{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.urls = append(s.urls, r.URL.String())
		n := len(s.headers)
		s.mu.Unlock()
		script(n, w, r)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// seenAttempt is a transport that records the attempt number in each
// request's context: the context StartAttempt returned reaches the
// transport.
type seenAttempt struct {
	mu   sync.Mutex
	seen []any
}

func (s *seenAttempt) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Context().Value(attemptKey{}))
	s.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestAttemptObserverSeesEachAttempt: a resolution answered 503, then 200,
// is two attempts, each with its facts, its own context down to the
// transport, and the headers its observer added (those of the first
// attempt do not stay on the second; the SDK's own are never replaced).
func TestAttemptObserverSeesEachAttempt(t *testing.T) {
	srv := newScripted(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Request-Id", "req-"+fmt.Sprint(n))
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"status":true}`)
	})
	w := newWatcher()
	w.header = func(n int) http.Header {
		h := http.Header{"Traceparent": {fmt.Sprintf("00-trace-%d", n)}, "Authorization": {"Bearer stolen"}, "Bad\nName": {"x"}}
		if n == 1 {
			h["X-First-Only"] = []string{"1"}
		}
		return h
	}
	rt := &seenAttempt{}
	c, err := travelrule.NewClient(srv.URL+"/api/v3", travelrule.WithTokenSource(travelrule.StaticToken("observer-bearer-token")),
		travelrule.WithRetryWait(0, 0), travelrule.WithObserver(w), travelrule.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	_, err = c.ResolveInquiry(context.Background(), "tr-secret-id", travelrule.Reject())
	require.NoError(t, err)

	require.Len(t, w.attempts, 2)
	require.Len(t, w.ends, 2)
	host, port := srv.Listener.Addr().(*net.TCPAddr).IP.String(), srv.Listener.Addr().(*net.TCPAddr).Port
	for i, a := range w.attempts {
		assert.Equal(t, i+1, a.N)
		assert.Equal(t, "POST", a.Method)
		assert.Equal(t, host, a.ServerAddress)
		assert.Equal(t, port, a.ServerPort)
		assert.Equal(t, "/api/v3/transfers/inquiryResolution", a.URLTemplate, "the path, never the query")
	}
	first, second := w.ends[0], w.ends[1]
	assert.Equal(t, 503, first.Status)
	assert.True(t, first.Retry)
	assert.True(t, first.Written)
	assert.Equal(t, "status 503 without Retry-After", first.Reason)
	assert.Empty(t, first.ErrorType)
	assert.NoError(t, first.Err)
	assert.Equal(t, 200, second.Status)
	assert.False(t, second.Retry)
	assert.Zero(t, second.Wait)
	assert.True(t, w.endCtxOK, "EndAttempt gets the context its StartAttempt returned")
	assert.Equal(t, []any{1, 2}, rt.seen, "each attempt's request carries its own context")

	require.Len(t, srv.headers, 2)
	for i, h := range srv.headers {
		assert.Equal(t, fmt.Sprintf("00-trace-%d", i+1), h.Get("Traceparent"))
		assert.Equal(t, "Bearer observer-bearer-token", h.Get("Authorization"), "the SDK's own header wins")
	}
	assert.Equal(t, "1", srv.headers[0].Get("X-First-Only"))
	assert.Empty(t, srv.headers[1].Get("X-First-Only"), "an attempt's headers do not stay on the next")

	require.Len(t, w.recorder.ends, 1)
	end := w.recorder.ends[0]
	assert.Equal(t, 200, end.Status)
	assert.Equal(t, "req-2", end.RequestID)
	assert.Equal(t, 2, end.Attempts)
}

// TestAttemptObserverSeesFailuresBelowHTTP: an attempt that got no answer
// names its failure with a fixed type and the client's words, without the
// query.
func TestAttemptObserverSeesFailuresBelowHTTP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens: the dial is refused
	w := newWatcher()
	c, err := travelrule.NewClient("http://"+addr, travelrule.WithTokenSource(travelrule.StaticToken("observer-bearer-token")),
		travelrule.WithRetryMax(1), travelrule.WithRetryWait(0, 0), travelrule.WithObserver(w))
	require.NoError(t, err)
	_, err = c.SubmitTxID(context.Background(), "tr-secret-id", "0xsecret-tx")
	require.Error(t, err)
	require.Len(t, w.ends, 2)
	for i, end := range w.ends {
		assert.Zero(t, end.Status)
		assert.Equal(t, "connection_refused", end.ErrorType)
		require.Error(t, end.Err)
		assert.NotContains(t, end.Err.Error(), "tr-secret-id")
		assert.False(t, end.Written)
		assert.Equal(t, i == 0, end.Retry)
	}
	assert.Contains(t, w.ends[1].Reason, "no retries left")
}

// TestCallEndCarriesTheAnswer: the status, the codes and the request id of
// the last answer, none that holds a personal value.
func TestCallEndCarriesTheAnswer(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		requestID string
		codes     []string
		wantID    string
	}{
		{"stored", 200, `{"status":true,"data":{"transferId":"tr-1"}}`, "req-ok", nil, "req-ok"},
		{"refused", 400, `{"status":false,"errors":[{"code":"VALIDATION_ERROR"},{"code":"INVALID_ASSET"}]}`, "req-400", []string{"VALIDATION_ERROR", "INVALID_ASSET"}, "req-400"},
		{"a code and an id that echo a personal value", 400, `{"status":false,"errors":[{"code":"VALIDATION_ERROR"},{"code":"ID_123456789"}]}`, "id-123456789", []string{"VALIDATION_ERROR"}, ""},
		{"no answer worth an id", 502, `bad gateway`, "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScripted(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				if tt.requestID != "" {
					w.Header().Set("X-Request-Id", tt.requestID)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			w := newWatcher()
			_, _ = observedClient(t, srv.URL, w).InitiateTransfer(context.Background(), fullRequest())
			require.Len(t, w.recorder.ends, 1)
			end := w.recorder.ends[0]
			assert.Equal(t, tt.status, end.Status)
			assert.Equal(t, tt.codes, end.Codes)
			assert.Equal(t, tt.wantID, end.RequestID)
		})
	}
}

// TestValidationObserverSeesInvalidCalls: a call that fails the client's
// checks, its options' included, is told to a ValidationObserver, never
// to StartCall, and nothing is sent.
func TestValidationObserverSeesInvalidCalls(t *testing.T) {
	srv := newObservedServer(t, 200, `{"status":true}`)
	w := newWatcher()
	c := observedClient(t, srv.URL, w)
	ctx := context.Background()
	_, err := c.InitiateTransfer(ctx, &travelrule.TransferRequest{})
	require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	_, err = c.ResolveInquiry(ctx, "", travelrule.Reject())
	require.Error(t, err)
	_, err = c.SubmitTxID(ctx, "tr-1", "0xabc", travelrule.WithCallHeader("Authorization", "Bearer other"))
	require.Error(t, err)
	_, err = c.SearchVASPs(ctx, nil)
	require.Error(t, err)
	require.Len(t, w.invalid, 4)
	assert.Contains(t, w.invalid[0], "InitiateTransfer: travelrule: invalid request")
	assert.Contains(t, w.invalid[1], "ResolveInquiry: ")
	assert.Contains(t, w.invalid[2], "SubmitTxID: travelrule: invalid request: WithCallHeader: Authorization is set by the client")
	assert.Contains(t, w.invalid[3], "SearchVASPs: ")
	assert.Empty(t, w.recorder.starts)
	assert.Zero(t, srv.n.Load())
}

// TestTokenObserverSeesFetches: each fetch of a token is told once, with
// a fixed type for a failure, before the calls that waited for it end.
func TestTokenObserverSeesFetches(t *testing.T) {
	srv := newObservedServer(t, 200, `{"status":true}`)
	failing := oauth2.TokenSource(tokenFunc(func() (*oauth2.Token, error) { return nil, nil }))
	w := newWatcher()
	c, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(failing), travelrule.WithObserver(w))
	require.NoError(t, err)
	_, err = c.SubmitTxID(context.Background(), "tr-1", "0xabc")
	require.Error(t, err)
	w.mu.Lock()
	require.Len(t, w.fetches, 1, "reported before the call ended")
	assert.Equal(t, "token_source", w.fetches[0].ErrorType)
	assert.Error(t, w.fetches[0].Err)
	w.mu.Unlock()

	w = newWatcher()
	c, err = travelrule.NewClient(srv.URL, travelrule.WithTokenSource(tokenFunc(func() (*oauth2.Token, error) {
		return &oauth2.Token{AccessToken: "fetched-bearer-token"}, nil
	})), travelrule.WithObserver(w))
	require.NoError(t, err)
	for range 3 {
		_, err = c.SubmitTxID(context.Background(), "tr-1", "0xabc")
		require.NoError(t, err)
	}
	require.Len(t, w.fetches, 1, "one fetch serves the calls after it")
	assert.Empty(t, w.fetches[0].ErrorType)
	assert.NoError(t, w.fetches[0].Err)
	assert.NotContains(t, fmt.Sprintf("%+v", w.fetches), "fetched-bearer-token")
}

type tokenFunc func() (*oauth2.Token, error)

func (f tokenFunc) Token() (*oauth2.Token, error) { return f() }

// TestCallEndKeepsTheLastAnswerWhenTheWaitIsCut: a 429 whose retry never
// comes (the caller gives up during the wait) still ends the call with the
// 429 as its last answer.
func TestCallEndKeepsTheLastAnswerWhenTheWaitIsCut(t *testing.T) {
	srv := newScripted(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelOnEnd{watcher: newWatcher(), cancel: cancel}
	c, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(travelrule.StaticToken("observer-bearer-token")),
		travelrule.WithRetryAfterMax(time.Minute), travelrule.WithObserver(w))
	require.NoError(t, err)
	_, err = c.SubmitTxID(ctx, "tr-1", "0xabc")
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, w.ends, 1)
	assert.True(t, w.ends[0].Retry, "the client had decided to retry")
	require.Len(t, w.recorder.ends, 1)
	assert.Equal(t, http.StatusTooManyRequests, w.recorder.ends[0].Status)
	assert.Equal(t, "canceled", w.recorder.ends[0].ErrorType)
}

// cancelOnEnd cancels the call's context once its first attempt ended:
// the caller gives up during the wait.
type cancelOnEnd struct {
	*watcher
	cancel context.CancelFunc
}

func (c *cancelOnEnd) EndAttempt(ctx context.Context, info *travelrule.CallInfo, a *travelrule.AttemptInfo, end *travelrule.AttemptEnd) {
	c.watcher.EndAttempt(ctx, info, a, end)
	c.cancel()
}

// panicky is a transport that panics.
type panicky struct{}

func (panicky) RoundTrip(*http.Request) (*http.Response, error) { panic("transport bug") }

// TestObserversEndWhenTheTransportPanics: the attempt and the call an
// observer started are ended (outcome unknown: the request may have left)
// before the panic goes on to the caller.
func TestObserversEndWhenTheTransportPanics(t *testing.T) {
	w := newWatcher()
	c, err := travelrule.NewClient("https://trp.example", travelrule.WithTokenSource(travelrule.StaticToken("observer-bearer-token")),
		travelrule.WithObserver(w), travelrule.WithHTTPClient(&http.Client{Transport: panicky{}}))
	require.NoError(t, err)
	require.PanicsWithValue(t, "transport bug", func() {
		_, _ = c.InitiateTransfer(context.Background(), fullRequest())
	})
	require.Len(t, w.ends, 1)
	assert.Equal(t, "panic", w.ends[0].ErrorType)
	require.Len(t, w.recorder.ends, 1)
	assert.Equal(t, travelrule.CallOutcomeUnknown, w.recorder.ends[0].Outcome)
	assert.Equal(t, "panic", w.recorder.ends[0].ErrorType)
}

// TestCallHeaderValuesStayOut: a server that echoes a WithCallHeader value
// (a gateway's key) in its request id gets it into no error text and no
// observer's CallEnd.
func TestCallHeaderValuesStayOut(t *testing.T) {
	const gatewayKey = "gwkey-7f3a9c0d1e2b"
	for _, status := range []int{200, 400} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := newScripted(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Request-Id", r.Header.Get("X-Gateway-Key"))
				w.WriteHeader(status)
				io.WriteString(w, `{"status":`+map[int]string{200: "true", 400: "false"}[status]+`}`)
			})
			w := newWatcher()
			res, err := observedClient(t, srv.URL, w).ResolveInquiry(context.Background(), "tr-1", travelrule.Reject(),
				travelrule.WithCallHeader("X-Gateway-Key", gatewayKey))
			if status == 200 {
				require.NoError(t, err)
				assert.Empty(t, res.RequestID)
			} else {
				require.Error(t, err)
				assert.NotContains(t, err.Error(), gatewayKey)
				assert.NotContains(t, fmt.Sprintf("%+v", err), gatewayKey)
			}
			require.Len(t, w.recorder.ends, 1)
			assert.Empty(t, w.recorder.ends[0].RequestID)
		})
	}
}

// TestTokenFetchHoldsNoToken: a login answered 2xx in a shape the client
// does not understand may hold the token in its body; the observer gets
// the error without it.
func TestTokenFetchHoldsNoToken(t *testing.T) {
	const access = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ2YXNwIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
	srv := newScripted(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"status":"pending","accessToken":"`+access+`"}`)
	})
	w := newWatcher()
	c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey("observer-api-key-0123456789"), travelrule.WithObserver(w))
	require.NoError(t, err)
	_, err = c.SubmitTxID(context.Background(), "tr-1", "0xabc")
	require.ErrorIs(t, err, travelrule.ErrLoginFailed)
	require.Len(t, w.fetches, 1)
	f := w.fetches[0]
	assert.Equal(t, "token_answer_invalid", f.ErrorType)
	var le *travelrule.LoginError
	require.ErrorAs(t, f.Err, &le)
	assert.Empty(t, le.Body)
	assert.NotContains(t, fmt.Sprintf("%+v %#v", f, le), "c2lnbmF0dXJlLW9mLXRoZS10b2tlbg")
	require.Len(t, w.recorder.ends, 1)
	assert.Equal(t, "token_answer_invalid", w.recorder.ends[0].ErrorType)
}

// detacher is an AttemptObserver that returns a context of its own,
// made from context.Background: the client takes only its values, and
// the given context's where it has none, so that its httptrace hooks
// (which keep net/http from sending a request again by itself) and the
// caller's cancellation stay.
type detacher struct{ headerSetter }

func (detacher) StartAttempt(context.Context, *travelrule.CallInfo, *travelrule.AttemptInfo) context.Context {
	return context.Background()
}

// TestDetachedAttemptContextIsNotUsed: on a reused HTTP/1 connection the
// server reads the whole request and closes unanswered. With a detached
// context net/http would send it again below the retry policy; the client
// keeps its own, so the request is sent once.
func TestDetachedAttemptContextIsNotUsed(t *testing.T) {
	var n atomic.Int32
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			rawAnswer(func(io.Writer, *http.Request) {})(w, r)
			return
		}
		answer(200, `{"status":true}`)(w, r)
	}, travelrule.WithObserver(detacher{}))
	_, err := c.SubmitTxID(context.Background(), "tr-1", "0xabc") // primes a kept-alive connection
	require.NoError(t, err)
	// A call that may be repeated, with an Idempotency-Key header: one
	// net/http's HTTP/1 transport would send again by itself.
	_, err = c.SubmitTxID(context.Background(), "tr-1", "0xabc", travelrule.WithCallRetryMax(0), travelrule.WithCallIdempotencyKey("k-1"))
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.EqualValues(t, 2, ts.hits.Load(), "sent once")
}

// attemptPanicker panics in StartAttempt of attempt n, or in EndAttempt.
type attemptPanicker struct {
	*watcher
	startN int
	inEnd  bool
}

func (p *attemptPanicker) StartAttempt(ctx context.Context, info *travelrule.CallInfo, a *travelrule.AttemptInfo) context.Context {
	if a.N == p.startN {
		panic("observer bug")
	}
	return p.watcher.StartAttempt(ctx, info, a)
}

func (p *attemptPanicker) EndAttempt(ctx context.Context, info *travelrule.CallInfo, a *travelrule.AttemptInfo, end *travelrule.AttemptEnd) {
	p.watcher.EndAttempt(ctx, info, a, end)
	if p.inEnd {
		panic("observer bug")
	}
}

// TestAttemptObserverPanics: a panicking AttemptObserver's panic reaches
// the caller as it was; every attempt and the call observed are ended
// once, the call not done when nothing was handed to the transport.
func TestAttemptObserverPanics(t *testing.T) {
	tests := []struct {
		name     string
		startN   int
		inEnd    bool
		attempts int
		outcome  travelrule.CallOutcome
	}{
		{"StartAttempt of the first attempt", 1, false, 0, travelrule.CallNotDone},
		{"StartAttempt of the second attempt", 2, false, 1, travelrule.CallOutcomeUnknown},
		{"EndAttempt", 0, true, 1, travelrule.CallOutcomeUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newObservedServer(t, http.StatusBadGateway, ``)
			first := newWatcher() // an observer before the panicking one
			p := &attemptPanicker{watcher: newWatcher(), startN: tt.startN, inEnd: tt.inEnd}
			c, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(travelrule.StaticToken("observer-bearer-token")),
				travelrule.WithRetryWait(0, 0), travelrule.WithObserver(first), travelrule.WithObserver(p))
			require.NoError(t, err)
			require.PanicsWithValue(t, "observer bug", func() {
				_, _ = c.ResolveInquiry(context.Background(), "tr-1", travelrule.Reject())
			})
			assert.Len(t, first.ends, len(first.attempts), "each attempt started is ended once")
			assert.Len(t, p.ends, len(p.attempts))
			require.Len(t, first.recorder.ends, 1, "the call is ended once")
			assert.Equal(t, tt.outcome, first.recorder.ends[0].Outcome)
			if tt.outcome == travelrule.CallOutcomeUnknown {
				assert.ErrorIs(t, first.recorder.ends[0].Err, travelrule.ErrOutcomeUnknown)
			}
			assert.EqualValues(t, tt.attempts, srv.n.Load())
		})
	}
}

// endPanicker panics in EndCall.
type endPanicker struct{ recorder }

func (p *endPanicker) EndCall(ctx context.Context, info *travelrule.CallInfo, end *travelrule.CallEnd) {
	p.recorder.EndCall(ctx, info, end)
	panic("observer bug")
}

// TestEndCallPanics: an observer whose EndCall panics does not keep the
// observers before it (a journal, say) from ending the call, once.
func TestEndCallPanics(t *testing.T) {
	srv := newObservedServer(t, 200, `{"status":true}`)
	var log []string
	journal := &recorder{name: "journal", log: &log}
	bad := &endPanicker{recorder{name: "bad", log: &log}}
	c := observedClient(t, srv.URL, journal, bad)
	require.PanicsWithValue(t, "observer bug", func() {
		_, _ = c.SubmitTxID(context.Background(), "tr-1", "0xabc")
	})
	assert.Equal(t, []string{"start journal", "start bad", "end bad", "end journal"}, log)
	require.Len(t, journal.ends, 1)
	assert.Equal(t, travelrule.CallSucceeded, journal.ends[0].Outcome)
}

// TestCallEndHidesEchoes: a server that echoes the call's txid, transfer
// id, idempotency key or the client's API key, or free text, in its
// request id or its codes gets none of them into CallEnd, which
// telemetry exports.
func TestCallEndHidesEchoes(t *testing.T) {
	const (
		apiKey     = "observer-api-key-0123456789"
		transferID = "3f1c2b4a-1111-4222-8333-444455556666"
		txID       = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"
		key        = "idem-key-secret-12345678"
	)
	for _, echo := range []string{apiKey, transferID, txID, key, "Dear ops: customer flagged"} {
		for _, status := range []int{200, 404} {
			t.Run(fmt.Sprint(status, " ", echo[:8]), func(t *testing.T) {
				srv := newScripted(t, func(_ int, w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/auth/token" {
						io.WriteString(w, `{"accessToken":"echo-test-token","expiresIn":3600}`)
						return
					}
					w.Header().Set("X-Request-Id", "id-"+echo)
					w.WriteHeader(status)
					if status == 200 {
						io.WriteString(w, `{"status":true}`)
						return
					}
					io.WriteString(w, `{"status":false,"errors":[{"code":"TRANSFER_NOT_FOUND"},{"code":"X`+strings.NewReplacer(" ", "_", ":", "_").Replace(echo)+`"}]}`)
				})
				w := newWatcher()
				c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(apiKey), travelrule.WithObserver(w))
				require.NoError(t, err)
				_, _ = c.SubmitTxID(context.Background(), transferID, txID, travelrule.WithCallIdempotencyKey(key))
				require.Len(t, w.recorder.ends, 1)
				end := w.recorder.ends[0]
				assert.Empty(t, end.RequestID)
				told := fmt.Sprintf("%v %v %v", end.RequestID, end.Codes, end.ErrorType)
				assert.NotContains(t, told, echo)
				if status == 404 {
					assert.Contains(t, end.Codes, "TRANSFER_NOT_FOUND", "the service's own codes are told")
				}
			})
		}
	}
}

// uncanceler is an AttemptObserver that returns a context that never
// ends: the attempt still ends with the caller's.
type uncanceler struct{ headerSetter }

func (uncanceler) StartAttempt(ctx context.Context, _ *travelrule.CallInfo, _ *travelrule.AttemptInfo) context.Context {
	return context.WithoutCancel(ctx)
}

// TestAttemptEndsWithTheCaller: the caller cancels once the server has
// the request; the server sees the request's context end, though the
// observer's context never would.
func TestAttemptEndsWithTheCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan bool, 1)
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		cancel()
		select {
		case <-r.Context().Done():
			ended <- true
		case <-time.After(10 * time.Second): // a guard, not a wait: the attempt should have ended at once
			ended <- false
		}
	}, travelrule.WithObserver(uncanceler{}))
	_, err := c.SubmitTxID(ctx, "tr-1", "0xabc")
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, <-ended, "the attempt ended with the caller's context")
}

// TestCallEndShowsWhatIsNotAnEcho: the service's documented codes are told
// even when a short personal value ("Li") is inside them, and a request
// id is told even when a short transfer id ("12") is inside it; a part of
// the API key in a request id is not.
func TestCallEndShowsWhatIsNotAnEcho(t *testing.T) {
	const apiKey = "trp_live_0123456789abcdef"
	tests := []struct {
		name      string
		requestID string
		wantID    string
	}{
		{"an ordinary request id", "req_1207", "req_1207"},
		{"the API key's start", "req-trp_live_0123456789a", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScripted(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/auth/token" {
					io.WriteString(w, `{"accessToken":"echo-test-token","expiresIn":3600}`)
					return
				}
				w.Header().Set("X-Request-Id", tt.requestID)
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"status":false,"errors":[{"code":"VALIDATION_ERROR"},{"code":"INVALID_REQUEST"}]}`)
			})
			w := newWatcher()
			c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(apiKey), travelrule.WithObserver(w))
			require.NoError(t, err)
			req := fullRequest()
			req.Originator.FirstName = "Li"
			_, err = c.InitiateTransfer(context.Background(), req)
			require.Error(t, err)
			_, err = c.SubmitTxID(context.Background(), "12", "0xabc")
			require.Error(t, err)
			require.Len(t, w.recorder.ends, 2)
			for _, end := range w.recorder.ends {
				assert.Equal(t, []string{"VALIDATION_ERROR", "INVALID_REQUEST"}, end.Codes)
				assert.Equal(t, tt.wantID, end.RequestID)
			}
		})
	}
}

// faulty is an observer of calls and attempts that panics (or refuses)
// where it is told to, and logs what it is told.
type faulty struct {
	name                            string
	log                             *[]string
	startPanics, endPanics, refuses bool
	attemptPanics, endAttemptPanics bool
}

func (f *faulty) StartCall(ctx context.Context, _ *travelrule.CallInfo) (context.Context, error) {
	*f.log = append(*f.log, "start "+f.name)
	switch {
	case f.startPanics:
		panic(f.name)
	case f.refuses:
		return ctx, errors.New("refused")
	}
	return ctx, nil
}

func (f *faulty) EndCall(context.Context, *travelrule.CallInfo, *travelrule.CallEnd) {
	*f.log = append(*f.log, "end "+f.name)
	if f.endPanics {
		panic(f.name)
	}
}

func (f *faulty) StartAttempt(ctx context.Context, _ *travelrule.CallInfo, _ *travelrule.AttemptInfo) context.Context {
	*f.log = append(*f.log, "attempt "+f.name)
	if f.attemptPanics {
		panic(f.name)
	}
	return ctx
}

func (f *faulty) EndAttempt(context.Context, *travelrule.CallInfo, *travelrule.AttemptInfo, *travelrule.AttemptEnd) {
	*f.log = append(*f.log, "attempt end "+f.name)
	if f.endAttemptPanics {
		panic(f.name)
	}
}

// panicHandler is a slog handler that panics: a logger of the caller's
// that fails inside the client.
type panicHandler struct{ slog.Handler }

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("logger") }

// TestEveryObserverEndsWhateverPanics: whatever panics (observers, one
// after another, the transport, the caller's logger), every observer
// whose StartCall returned is told the call ended, once, and every one
// whose StartAttempt returned is told the attempt ended, once; a panic
// reaches the caller (the transport's, when an observer panics after it).
func TestEveryObserverEndsWhateverPanics(t *testing.T) {
	tests := []struct {
		name      string
		observers func(log *[]string) []*faulty
		transport http.RoundTripper
		logger    bool
		want      []string
		panicked  any
	}{
		{"two EndCalls panic", func(log *[]string) []*faulty {
			return []*faulty{{name: "journal", log: log}, {name: "bad1", log: log, endPanics: true}, {name: "bad2", log: log, endPanics: true}}
		}, nil, false, []string{"start journal", "start bad1", "start bad2", "attempt journal", "attempt bad1", "attempt bad2",
			"attempt end bad2", "attempt end bad1", "attempt end journal", "end bad2", "end bad1", "end journal"}, "bad1"},
		{"a StartCall panics", func(log *[]string) []*faulty {
			return []*faulty{{name: "journal", log: log}, {name: "bad", log: log, startPanics: true}}
		}, nil, false, []string{"start journal", "start bad", "end journal"}, "bad"},
		{"a StartCall refuses and an EndCall panics", func(log *[]string) []*faulty {
			return []*faulty{{name: "journal", log: log}, {name: "bad", log: log, endPanics: true}, {name: "refuser", log: log, refuses: true}}
		}, nil, false, []string{"start journal", "start bad", "start refuser", "end bad", "end journal"}, "bad"},
		{"two EndAttempts panic", func(log *[]string) []*faulty {
			return []*faulty{{name: "journal", log: log}, {name: "bad1", log: log, endAttemptPanics: true}, {name: "bad2", log: log, endAttemptPanics: true}}
		}, nil, false, []string{"start journal", "start bad1", "start bad2", "attempt journal", "attempt bad1", "attempt bad2",
			"attempt end bad2", "attempt end bad1", "attempt end journal", "end bad2", "end bad1", "end journal"}, "bad1"},
		{"the transport panics, then an EndAttempt", func(log *[]string) []*faulty {
			return []*faulty{{name: "journal", log: log}, {name: "bad", log: log, endAttemptPanics: true}}
		}, panicky{}, false, []string{"start journal", "start bad", "attempt journal", "attempt bad",
			"attempt end bad", "attempt end journal", "end bad", "end journal"}, "transport bug"},
		{"the caller's logger panics after the answer", func(log *[]string) []*faulty {
			return []*faulty{{name: "journal", log: log}}
		}, nil, true, []string{"start journal", "attempt journal", "attempt end journal", "end journal"}, "logger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := 200
			if tt.logger {
				status = 502 // an outcome unknown, logged at Warn
			}
			srv := newObservedServer(t, status, `{"status":true,"transferId":"tr-1"}`)
			var log []string
			opts := []travelrule.Option{travelrule.WithTokenSource(travelrule.StaticToken("observer-bearer-token")), travelrule.WithRetryMax(0)}
			for _, o := range tt.observers(&log) {
				opts = append(opts, travelrule.WithObserver(o))
			}
			if tt.transport != nil {
				opts = append(opts, travelrule.WithHTTPClient(&http.Client{Transport: tt.transport}))
			}
			if tt.logger {
				opts = append(opts, travelrule.WithLogger(slog.New(panicHandler{})))
			}
			c, err := travelrule.NewClient(srv.URL, opts...)
			require.NoError(t, err)
			require.PanicsWithValue(t, tt.panicked, func() {
				_, _ = c.InitiateTransfer(context.Background(), fullRequest())
			})
			assert.Equal(t, tt.want, log)
		})
	}
}

// TestObserversAgainstTheLiveService: what observers are told of the live
// service's ways (live-service.md), against its double, not the sandbox:
// the API-key login is a token fetch; an expired JWT is a 403 answered
// with a new login and one retry; a refused login names the key in its
// message, which no observer is told; TRANSFER_NOT_FOUND names the
// transfer id, and observers get the code alone.
func TestObserversAgainstTheLiveService(t *testing.T) {
	live := newLiveService(t)
	w := newWatcher()
	c := live.client(t, liveKey, travelrule.WithObserver(w))
	ctx := context.Background()

	_, err := c.InitiateTransfer(ctx, minimalRequest())
	require.NoError(t, err)
	live.expireTokens()
	_, err = c.InitiateTransfer(ctx, minimalRequest())
	require.NoError(t, err)
	_, err = c.ResolveInquiry(ctx, "no-such-transfer-0001", travelrule.Reject())
	require.ErrorIs(t, err, travelrule.CodeTransferNotFound)

	w.mu.Lock()
	require.Len(t, w.fetches, 2, "the first login, and one after the expired JWT's 403")
	for _, f := range w.fetches {
		assert.Empty(t, f.ErrorType)
	}
	w.mu.Unlock()
	require.Len(t, w.ends, 4, "one attempt, two for the expired JWT, one for the resolution")
	assert.Equal(t, http.StatusForbidden, w.ends[1].Status)
	assert.True(t, w.ends[1].Retry)
	assert.Contains(t, w.ends[1].Reason, "retrying with a new token")
	assert.Equal(t, 2, w.attempts[2].N)
	assert.Equal(t, "/v1/transfers/initiate", w.attempts[2].URLTemplate)
	assert.Equal(t, http.StatusOK, w.ends[2].Status)
	assert.Equal(t, "/v1/transfers/inquiryResolution", w.attempts[3].URLTemplate)

	require.Len(t, w.recorder.ends, 3)
	assert.Equal(t, 2, w.recorder.ends[1].Attempts)
	notFound := w.recorder.ends[2]
	assert.Equal(t, http.StatusNotFound, notFound.Status)
	assert.Equal(t, []string{"TRANSFER_NOT_FOUND"}, notFound.Codes)

	refused := newWatcher()
	live.setKey(liveInactiveKey, "inactive")
	_, err = live.client(t, liveInactiveKey, travelrule.WithObserver(refused)).InitiateTransfer(ctx, minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrAPIKeyRefused)
	require.Len(t, refused.fetches, 1)
	assert.Equal(t, "token_refused", refused.fetches[0].ErrorType)
	require.Len(t, refused.recorder.ends, 1)
	assert.Equal(t, "token_refused", refused.recorder.ends[0].ErrorType)

	told := fmt.Sprintf("%+v %+v %+v %+v %v %v", w.attempts, w.ends, w.recorder.ends, refused.recorder.ends, refused.fetches[0].Err, refused.recorder.ends[0].Err)
	// The transfer id is told as CallEnd.TransferID (the journal joins on
	// it), never as a query.
	for _, secret := range []string{liveKey, liveInactiveKey, "eyJhbGciOiJFZERTQSJ9", "q=", "publicId"} {
		assert.NotContains(t, told, secret)
	}
}

// TestCallInfoCarriesTheCallsKey: the key of WithCallIdempotencyKey is
// what an observer (a journal) records as the call's, before sending.
func TestCallInfoCarriesTheCallsKey(t *testing.T) {
	srv := newObservedServer(t, 200, `{"status":true,"transferId":"tr-1"}`)
	w := newWatcher()
	_, err := observedClient(t, srv.URL, w).InitiateTransfer(context.Background(), fullRequest(), travelrule.WithCallIdempotencyKey("payment-77"))
	require.NoError(t, err)
	require.Len(t, w.recorder.starts, 1)
	assert.Equal(t, "payment-77", w.recorder.starts[0].IdempotencyKey)
}

// tracer is an AttemptObserver that returns, made from
// context.Background, a context with an httptrace of its own: the
// client's hooks, which keep net/http from sending a request again by
// itself, are put back under it.
type tracer struct{ headerSetter }

func (tracer) StartAttempt(context.Context, *travelrule.CallInfo, *travelrule.AttemptInfo) context.Context {
	return httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{})
}

// TestObserversHttptraceHidesNotTheClients: as
// TestDetachedAttemptContextIsNotUsed, with an observer whose context
// carries its own httptrace.
func TestObserversHttptraceHidesNotTheClients(t *testing.T) {
	var n atomic.Int32
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			rawAnswer(func(io.Writer, *http.Request) {})(w, r)
			return
		}
		answer(200, `{"status":true}`)(w, r)
	}, travelrule.WithObserver(tracer{}))
	_, err := c.SubmitTxID(context.Background(), "tr-1", "0xabc")
	require.NoError(t, err)
	_, err = c.SubmitTxID(context.Background(), "tr-1", "0xabc", travelrule.WithCallRetryMax(0), travelrule.WithCallIdempotencyKey("k-1"))
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.EqualValues(t, 2, ts.hits.Load(), "sent once")
}

// A transfer id the caller passes on (a sender may have chosen it) reaches
// observers only when it has an identifier's shape.
func TestObserverToldTransferIDOnlyOfIdentifierShape(t *testing.T) {
	for _, tt := range []struct{ id, told string }{
		{"tr-77", "tr-77"},
		{"Ada Lovelace 1815-12-10", ""},
		{"tr-\u00c5da", ""},
	} {
		srv := newObservedServer(t, 200, `{"status":true}`)
		var log []string
		obs := &recorder{name: "a", log: &log}
		c := observedClient(t, srv.URL, obs)
		_, err := c.ResolveInquiry(context.Background(), tt.id, travelrule.Reject())
		require.NoError(t, err)
		require.Len(t, obs.ends, 1)
		assert.Equal(t, tt.told, obs.starts[0].TransferID, tt.id)
		assert.Equal(t, tt.told, obs.ends[0].TransferID, tt.id)
	}
}
