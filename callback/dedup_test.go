package callback_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

func TestCallbackHandlerDedup(t *testing.T) {
	secret := []byte("whsec-test-secret-1")
	verifier := callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{secret}, Now: fixedClock})
	type delivery struct {
		id, ref, body string
		svix          bool // signature headers under the svix library's names
	}
	other := `{"transferId":"tr-1","status":"approved","txId":"0xfeed","timestamp":"2025-03-01T12:00:05Z"}`
	tests := []struct {
		name       string
		opts       []callback.Option
		deliveries []delivery
		wantCalls  int
	}{
		{"same body twice", []callback.Option{noAuth}, []delivery{{body: statusBody}, {body: statusBody}}, 1},
		{"same body three times", []callback.Option{noAuth}, []delivery{{body: statusBody}, {body: statusBody}, {body: statusBody}}, 1},
		{"different bodies", []callback.Option{noAuth}, []delivery{{body: statusBody}, {body: other}}, 2},
		// The id alone identifies a delivery that has one, whatever its
		// body (see the package's De-duplication section).
		{"same webhook-id, body re-rendered", []callback.Option{verifier}, []delivery{{id: "msg_1", body: statusBody}, {id: "msg_1", body: statusBody[:len(statusBody)-1] + ` }`}}, 1},
		{"same webhook-id, another body", []callback.Option{verifier}, []delivery{{id: "msg_1", body: statusBody}, {id: "msg_1", body: other}}, 1},
		{"different webhook-ids, same body", []callback.Option{verifier}, []delivery{{id: "msg_1", body: statusBody}, {id: "msg_2", body: statusBody}}, 2},
		{"same svix-id, body re-rendered", []callback.Option{verifier}, []delivery{{id: "msg_1", body: statusBody, svix: true}, {id: "msg_1", body: other, svix: true}}, 1},
		{"different svix-ids, same body", []callback.Option{verifier}, []delivery{{id: "msg_1", body: statusBody, svix: true}, {id: "msg_2", body: statusBody, svix: true}}, 2},
		{"one id as svix-id, then as webhook-id", []callback.Option{verifier}, []delivery{{id: "msg_1", body: statusBody, svix: true}, {id: "msg_1", body: other}}, 1},
		{"one id as webhook-id, then as svix-id", []callback.Option{verifier}, []delivery{{id: "msg_1", body: statusBody}, {id: "msg_1", body: other, svix: true}}, 1},
		{"svix-id without a verifier: unsigned, so the body keys it", []callback.Option{noAuth}, []delivery{{id: "msg_1", body: statusBody, svix: true}, {id: "msg_1", body: other, svix: true}}, 2},
		{"a replay with a made-up webhook-id, without a verifier", []callback.Option{noAuth}, []delivery{{id: "msg_1", body: statusBody}, {id: "msg_forged", body: statusBody}}, 1},
		{"same body at two references", []callback.Option{callback.WithCapabilityKey(capKey)}, []delivery{{ref: "a", body: statusBody}, {ref: "b", body: statusBody}, {ref: "a", body: statusBody}}, 2},
		{"de-duplication off", []callback.Option{noAuth, callback.WithoutDedup()}, []delivery{{body: statusBody}, {body: statusBody}}, 2},
		{"custom store", []callback.Option{noAuth, callback.WithStore(callback.NewMemoryStore(10))}, []delivery{{body: statusBody}, {body: statusBody}}, 1},
		{"store forgets the oldest", []callback.Option{noAuth, callback.WithStore(callback.NewMemoryStore(1))}, []delivery{{body: statusBody}, {body: other}, {body: statusBody}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &recorder{}
			srv, h := serve(t, rc.fn, tt.opts...)
			require.NoError(t, h.Err())
			for _, d := range tt.deliveries {
				url := srv.URL + "/cb"
				if d.ref != "" {
					var err error
					url, err = travelrule.NewCallbackURL(url, d.ref, capKey)
					require.NoError(t, err)
				}
				var hd http.Header
				if d.id != "" {
					hd = http.Header{}
					setSignatureHeaders(hd, secret, d.id, fixedNow, []byte(d.body))
					if d.svix {
						hd = asSvix(hd)
					}
				}
				assert.Equal(t, http.StatusNoContent, send(t, http.MethodPost, url, d.body, hd).code)
			}
			assert.Equal(t, tt.wantCalls, rc.count())
		})
	}
}

// TestCallbackHandlerConcurrentDuplicates sends one delivery many times at
// once while the function is still working on the first: the function runs
// once, the others are told to come back (503), and a later redelivery is
// acknowledged without a call.
func TestCallbackHandlerConcurrentDuplicates(t *testing.T) {
	const n = 16
	var calls atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	srv, _ := serveOpen(t, func(ctx context.Context, _ *travelrule.Callback) error {
		if calls.Add(1) == 1 {
			close(entered)
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	// Registered after serve's, so it runs before the server closes: a
	// failing test ends instead of waiting for the function forever.
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce)
	type result struct {
		code int
		err  error
	}
	results := make(chan result, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := trySend(http.MethodPost, srv.URL+"/cb", statusBody, nil)
			results <- result{a.code, err}
		}()
	}
	bound := time.NewTimer(30 * time.Second) // ends a failing test only
	defer bound.Stop()
	select {
	case <-entered:
	case <-bound.C:
		t.Fatal("the function was never called")
	}
	for busy := 0; busy < n-1; busy++ {
		var r result
		select {
		case r = <-results:
		case <-bound.C:
			t.Fatalf("%d of %d duplicates answered while the first was in progress: duplicates reached the function", busy, n-1)
		}
		require.NoError(t, r.err)
		require.Equal(t, http.StatusServiceUnavailable, r.code)
	}
	releaseOnce()
	wg.Wait()
	r := <-results
	require.NoError(t, r.err)
	assert.Equal(t, http.StatusNoContent, r.code)
	assert.Equal(t, int32(1), calls.Load())

	a := post(t, srv.URL+"/cb", statusBody)
	assert.Equal(t, http.StatusNoContent, a.code)
	assert.Equal(t, int32(1), calls.Load())
}

// TestCallbackHandlerConcurrentRace hammers the handler with duplicates and
// distinct deliveries at once (run with -race).
func TestCallbackHandlerConcurrentRace(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv, _ := serveOpen(t, func(_ context.Context, cb *travelrule.Callback) error {
		mu.Lock()
		seen[cb.TransferID]++
		mu.Unlock()
		return nil
	})
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body := `{"transferId":"t` + string(rune('a'+i%8)) + `","status":"completed"}`
			for { // the sender comes back after each 503
				a, err := trySend(http.MethodPost, srv.URL+"/cb", body, nil)
				if !assert.NoError(t, err) {
					return
				}
				if a.code != http.StatusServiceUnavailable {
					assert.Equal(t, http.StatusNoContent, a.code)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	require.Len(t, seen, 8)
	for id, n := range seen {
		assert.Equal(t, 1, n, id)
	}
}

// TestCallbackHandlerSharedStore is a fleet of two servers with one store:
// a redelivery to the other server is still a duplicate.
func TestCallbackHandlerSharedStore(t *testing.T) {
	store := callback.NewMemoryStore(100)
	rc := &recorder{}
	a, _ := serveOpen(t, rc.fn, callback.WithStore(store))
	b, _ := serveOpen(t, rc.fn, callback.WithStore(store))
	assert.Equal(t, http.StatusNoContent, post(t, a.URL+"/cb", statusBody).code)
	assert.Equal(t, http.StatusNoContent, post(t, b.URL+"/cb", statusBody).code)
	assert.Equal(t, 1, rc.count())
	assert.Equal(t, "{Size:100 Done:1 Busy:0}", fmt.Sprint(store))
}

// faultyStore is a Store (without tokens) whose answers a test sets: its
// Complete fails with completeErr completeFails times, or always when
// completeFails is negative, then succeeds.
type faultyStore struct {
	claim          callback.ClaimResult
	claimErr       error
	completeErr    error
	completeFails  int32
	releaseErr     error
	lease          time.Duration // what Lease returns
	gate           chan struct{} // when set, completions after the first wait until it is closed
	completed      atomic.Int32
	released       atomic.Int32
	claimedContext atomic.Bool
}

func (s *faultyStore) Claim(ctx context.Context, key string) (callback.ClaimResult, error) {
	s.claimedContext.Store(ctx.Value(http.ServerContextKey) != nil && len(key) == 69)
	return s.claim, s.claimErr
}

func (s *faultyStore) Complete(ctx context.Context, _ string) error {
	n := s.completed.Add(1)
	if n > 1 && s.gate != nil {
		<-s.gate
	}
	if s.completeFails < 0 || n <= s.completeFails {
		return s.completeErr
	}
	return nil
}

func (s *faultyStore) Release(ctx context.Context, _ string) error {
	s.released.Add(1)
	return s.releaseErr
}

func (s *faultyStore) Lease() time.Duration { return s.lease }

// TestCallbackHandlerStoreFaults answers a delivery with a store that fails
// in each of its calls: a claim that fails is answered 500 without a call;
// a completion that fails is retried until it succeeds, or the store
// answers ErrClaimLost, or the store's lease has passed, and the ones given
// up are counted lost; a release that fails is not retried.
func TestCallbackHandlerStoreFaults(t *testing.T) {
	boom := errors.New("redis: connection refused")
	const lease = 300 * time.Millisecond // the lease of the stores that say theirs
	tests := []struct {
		name          string
		store         *faultyStore
		fnErr         error
		want          int
		wantCalls     int
		wantCompleted int32
		wantReleased  int32
		wantStats     callback.Stats
	}{
		{"claim fails", &faultyStore{claimErr: boom}, nil, http.StatusInternalServerError, 0, 0, 0, callback.Stats{}},
		{"invalid claim result", &faultyStore{}, nil, http.StatusInternalServerError, 0, 0, 0, callback.Stats{}},
		{"done", &faultyStore{claim: callback.ClaimDone}, nil, http.StatusNoContent, 0, 0, 0, callback.Stats{}},
		{"busy", &faultyStore{claim: callback.ClaimBusy}, nil, http.StatusServiceUnavailable, 0, 0, 0, callback.Stats{}},
		{"completed at once", &faultyStore{claim: callback.ClaimNew}, nil, http.StatusNoContent, 1, 1, 0, callback.Stats{}},
		{"complete fails three times, then succeeds", &faultyStore{claim: callback.ClaimNew, completeErr: boom, completeFails: 3},
			nil, http.StatusNoContent, 1, 4, 0, callback.Stats{CompletionRetries: 3}},
		{"complete fails three times, then succeeds, without a Lease method's answer", &faultyStore{claim: callback.ClaimNew, completeErr: boom, completeFails: 3},
			nil, http.StatusNoContent, 1, 4, 0, callback.Stats{CompletionRetries: 3}},
		{"complete answers ErrClaimLost: not retried", &faultyStore{claim: callback.ClaimNew, completeErr: fmt.Errorf("wrapped: %w", callback.ErrClaimLost), completeFails: -1, lease: lease},
			nil, http.StatusNoContent, 1, 1, 0, callback.Stats{CompletionsLost: 1}},
		{"fn fails: released, not completed", &faultyStore{claim: callback.ClaimNew}, boom, http.StatusInternalServerError, 1, 0, 1, callback.Stats{}},
		{"fn fails and release fails: not retried", &faultyStore{claim: callback.ClaimNew, releaseErr: boom}, boom, http.StatusInternalServerError, 1, 0, 1, callback.Stats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.store.lease == 0 && !strings.Contains(tt.name, "without a Lease") {
				tt.store.lease = lease
			}
			rc := &recorder{fail: func(int) error { return tt.fnErr }}
			srv, h := serveOpen(t, rc.fn, callback.WithStore(tt.store))
			a := post(t, srv.URL+"/cb", statusBody)
			assert.Equal(t, tt.want, a.code)
			if tt.want == http.StatusServiceUnavailable {
				assert.NotEmpty(t, a.header.Get("Retry-After"))
			}
			assert.Equal(t, tt.wantStats.CompletionRetries > 0, a.close, "an answer before the completion's retries, and only it, ends its connection")
			srv.Close() // waits for the handler, and so for the completion's retries
			assert.Equal(t, tt.wantCalls, rc.count())
			assert.Equal(t, tt.wantCompleted, tt.store.completed.Load())
			assert.Equal(t, tt.wantReleased, tt.store.released.Load())
			assert.Equal(t, tt.wantStats, h.Stats())
			assert.True(t, tt.store.claimedContext.Load(), "Claim gets the request's context and a 69-character key")
		})
	}
}

// TestCallbackHandlerCompletionGivesUp lets the store fail every
// completion: the sender has its 204 at once, the handler retries for the
// store's lease (1 s here) and then gives up, counting the completion lost
// and logging it at Error without personal data.
func TestCallbackHandlerCompletionGivesUp(t *testing.T) {
	const lease = time.Second
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gate := make(chan struct{})
	store := &faultyStore{claim: callback.ClaimNew, completeErr: errors.New("READONLY You can't write against a read only replica."), completeFails: -1, lease: lease, gate: gate}
	rc := &recorder{}
	srv, h := serveOpen(t, rc.fn, callback.WithStore(store), callback.WithLogger(logger))
	inquiryBody := `{"transferId":"tr-9","status":"inquiry","originator":{"firstName":"Ada","lastName":"Lovelace","walletAddress":"bc1qSECRETWALLET"}}`

	began := time.Now()
	// The retries wait on the gate: the answer arrives while they do, so
	// the sender does not wait for them.
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	assert.Equal(t, http.StatusNoContent, postWithin(t, srv.URL+"/cb", inquiryBody).code)
	release()
	srv.Close()
	gaveUp := time.Since(began)
	// It gives up when the next pause (at most lease/8) would end past the
	// lease.
	assert.GreaterOrEqual(t, gaveUp, lease-lease/8, "the handler gave up before the lease passed")
	st := h.Stats()
	assert.Equal(t, uint64(1), st.CompletionsLost)
	assert.Equal(t, uint64(store.completed.Load()-1), st.CompletionRetries, "every failed attempt but the last was retried")
	assert.GreaterOrEqual(t, st.CompletionRetries, uint64(5), "retries within the lease")

	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	for _, s := range []string{"Ada", "Lovelace", "bc1q"} {
		assert.NotContains(t, logs, s)
	}
	assert.Contains(t, logs, `"level":"ERROR","msg":"callback: gave up recording a processed delivery`)
	assert.Contains(t, logs, `"level":"WARN","msg":"callback: de-duplication store failed to record a processed delivery; retrying"`)
	assert.Equal(t, 1, strings.Count(logs, "retrying"), "the retries are logged once")
}

// flakyStore is a MemoryStore whose completions fail while failing is set.
type flakyStore struct {
	*callback.MemoryStore
	failing  atomic.Bool
	attempts atomic.Int32
}

func (s *flakyStore) CompleteFenced(ctx context.Context, key, token string) error {
	s.attempts.Add(1)
	if s.failing.Load() {
		return errors.New("READONLY You can't write against a read only replica.")
	}
	return s.MemoryStore.CompleteFenced(ctx, key, token)
}

// TestCallbackHandlerCompletionRetried makes the store fail completions
// for a while after the function succeeded: the sender has its 204 at
// once; a redelivery meanwhile is told to come back (503), since the claim
// holds; the server's graceful shutdown waits for the completion; and once
// the store works again the delivery is recorded, with the retries counted
// and nothing lost.
func TestCallbackHandlerCompletionRetried(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store := &flakyStore{MemoryStore: callback.NewMemoryStore(10)}
	store.failing.Store(true)
	rc := &recorder{}
	srv, h := serveOpen(t, rc.fn, callback.WithStore(store), callback.WithLogger(logger))
	t.Cleanup(func() { store.failing.Store(false) }) // ends a failing test's retries

	first := postWithin(t, srv.URL+"/cb", statusBody)
	require.Equal(t, http.StatusNoContent, first.code, "the answer, while the completion fails")
	assert.True(t, first.close, "the answer before the retries ends its connection")
	waitUntil(t, "a completion retried", func() bool { return h.Stats().CompletionRetries > 0 })
	a := postWithin(t, srv.URL+"/cb", statusBody)
	assert.Equal(t, http.StatusServiceUnavailable, a.code, "a redelivery while the completion is retried")
	assert.NotEmpty(t, a.header.Get("Retry-After"))
	assert.Equal(t, 1, rc.count())

	shutdown := make(chan error, 1)
	go func() { shutdown <- srv.Config.Shutdown(context.Background()) }()
	seen := store.attempts.Load()
	waitUntil(t, "two more attempts", func() bool { return store.attempts.Load() >= seen+2 })
	select {
	case err := <-shutdown:
		t.Fatalf("the shutdown did not wait for the completion: %v", err)
	default:
	}
	store.failing.Store(false)
	select {
	case err := <-shutdown:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the shutdown never ended")
	}
	assert.Equal(t, "{Size:10 Done:1 Busy:0}", fmt.Sprint(store.MemoryStore), "the delivery is recorded as processed")
	st := h.Stats()
	assert.GreaterOrEqual(t, st.CompletionRetries, uint64(3))
	assert.Equal(t, uint64(store.attempts.Load()-1), st.CompletionRetries, "every failed attempt was retried")
	assert.Zero(t, st.CompletionsLost)
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, buf.String(), `"level":"INFO","msg":"callback: delivery recorded as processed after the store failed"`)
}

// waitUntil polls done every 5 ms until it reports true, and fails the
// test if it does not within 30 s; what names what it waits for.
func waitUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		require.True(t, time.Now().Before(deadline), "waited 30 s for %s", what)
		time.Sleep(5 * time.Millisecond)
	}
}

// postWithin is post that fails the test if the answer does not come
// within 30 s.
func postWithin(t *testing.T, url, body string) answer {
	t.Helper()
	type result struct {
		a   answer
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := trySend(http.MethodPost, url, body, nil)
		done <- result{a, err}
	}()
	select {
	case r := <-done:
		require.NoError(t, r.err)
		return r.a
	case <-time.After(30 * time.Second):
		t.Fatal("no answer within 30 s")
		return answer{}
	}
}

// hangingStore is a store whose Complete and Release wait until their
// context ends, as database/sql's calls do when the server hangs; they
// report each call's deadline, and end when the test does.
type hangingStore struct {
	lease     time.Duration
	deadlines chan time.Time // each call's context's deadline (zero: none)
	testEnded chan struct{}
}

func (s *hangingStore) Claim(context.Context, string) (callback.ClaimResult, error) {
	return callback.ClaimNew, nil
}

func (s *hangingStore) Complete(ctx context.Context, _ string) error { return s.hang(ctx) }
func (s *hangingStore) Release(ctx context.Context, _ string) error  { return s.hang(ctx) }
func (s *hangingStore) Lease() time.Duration                         { return s.lease }

func (s *hangingStore) hang(ctx context.Context) error {
	d, _ := ctx.Deadline()
	s.deadlines <- d
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.testEnded:
		return errors.New("the test ended")
	}
}

// TestCallbackHandlerStoreHangs gives the handler a store whose completion
// and release wait until their context ends: each attempt's context ends
// one lease after the function returned, the first attempt's included, so
// the handler answers and returns instead of holding the request (and a
// goroutine) forever; the completion given up is counted lost.
func TestCallbackHandlerStoreHangs(t *testing.T) {
	const lease = 200 * time.Millisecond
	tests := []struct {
		name      string
		fnErr     error
		want      int
		wantStats callback.Stats
	}{
		{"complete hangs", nil, http.StatusNoContent, callback.Stats{CompletionsLost: 1}},
		{"release hangs", errors.New("downstream refused"), http.StatusInternalServerError, callback.Stats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &hangingStore{lease: lease, deadlines: make(chan time.Time, 64), testEnded: make(chan struct{})}
			rc := &recorder{fail: func(int) error { return tt.fnErr }}
			srv, h := serveOpen(t, rc.fn, callback.WithStore(store))
			// Registered after serve's, so it runs before the server
			// closes: a failing test ends instead of waiting forever.
			t.Cleanup(sync.OnceFunc(func() { close(store.testEnded) }))
			before := time.Now()
			a := postWithin(t, srv.URL+"/cb", statusBody)
			assert.Equal(t, tt.want, a.code)
			srv.Close() // returns once the handler has
			require.NotEmpty(t, store.deadlines, "the store was called")
			for len(store.deadlines) > 0 {
				d := <-store.deadlines
				require.False(t, d.IsZero(), "the store's call has a deadline")
				assert.False(t, d.Before(before.Add(lease)), "the deadline is one lease after the function returned")
				assert.False(t, d.After(time.Now()), "the deadline is no later than the handler's return")
			}
			assert.Equal(t, 1, rc.count())
			assert.Equal(t, tt.wantStats, h.Stats())
		})
	}
}
