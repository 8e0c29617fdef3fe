// Package storetest tests an implementation of [callback.FencedStore]
// against the contract the [callback.Handler] relies on, as testing/fstest
// tests an fs.FS: atomic claims across replicas, one call of the function
// for any number of concurrent deliveries, lapsed leases, fencing tokens
// and the retention of processed deliveries. The stores of this module run
// it against real Redis and PostgreSQL servers; run it on a store of your
// own from a test:
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, cfg storetest.Config) callback.FencedStore {
//			return mystore.New(sharedBackend, mystore.WithLease(cfg.Lease), mystore.WithRetention(cfg.Retention))
//		})
//	}
//
// The lease and retention tests wait, by polling the store, for leases and
// retentions of a quarter of a second to pass; a check that a claim still
// holds is made only when it comes within the lease, so that a slow
// machine cannot fail it.
//
// [TestCompletionFaults] checks, with faults of the store's server that
// the caller makes (a failover, a paused server, a read-only database), that
// a handler whose completion fails keeps trying until the store recovers,
// so that the delivery is processed once. [TestRoundTrips] checks that a
// delivery costs the store one call to claim and one to end the claim,
// each one round trip to its server ([Wire] counts them).
// [BenchmarkDelivery] measures a delivery through a handler on a store
// against the same handler without one.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
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

// Config is what a test asks of a store it opens.
type Config struct {
	// Lease is how long a claim holds before it lapses.
	Lease time.Duration
	// Retention is how long a processed delivery is remembered.
	Retention time.Duration
	// Timeout bounds each call of the store (the time-out of its
	// operations); zero means the store's default. TestCompletionFaults
	// sets it so that a fault that makes writes hang fails them quickly.
	Timeout time.Duration
}

// Open returns a new store with cfg on the backend under test. All the
// stores that Open returns share that backend, as the replicas of one
// service share theirs; Open may register their clean-up with t.Cleanup.
type Open func(t *testing.T, cfg Config) callback.FencedStore

// Replicas is how many concurrent claims and deliveries the concurrency
// tests make, spread over two stores.
const Replicas = 200

// short is the lease or retention of the tests that wait for one to pass.
const short = 250 * time.Millisecond

// long is a lease or retention that no test waits for.
const long = time.Hour

// bound ends a test whose store never answers or never lets a claim
// lapse; it is never reached by a passing test.
const bound = 30 * time.Second

// Run runs every test of the suite as a subtest of t.
func Run(t *testing.T, open Open) {
	t.Run("Protocol", func(t *testing.T) { testProtocol(t, open) })
	t.Run("UnfencedMethods", func(t *testing.T) { testUnfenced(t, open) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testConcurrentClaims(t, open) })
	t.Run("HandlersCallOnce", func(t *testing.T) { testHandlersCallOnce(t, open, false) })
	t.Run("HandlersCallAgainAfterFailure", func(t *testing.T) { testHandlersCallOnce(t, open, true) })
	t.Run("LeaseLapsesAndFences", func(t *testing.T) { testLeaseLapse(t, open) })
	t.Run("LapsedClaimCompletes", func(t *testing.T) { testLapsedCompletion(t, open) })
	t.Run("RetentionExpires", func(t *testing.T) { testRetention(t, open) })
	t.Run("EndedContext", func(t *testing.T) { testEndedContext(t, open) })
}

// NewKey returns a key no test used before, of the length and alphabet of
// the handler's keys.
func NewKey(t testing.TB) string {
	var b [32]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return "test:" + hex.EncodeToString(b[:])
}

// newCallbackBody returns a callback no test delivered before. A handler
// without a Standard Webhooks verifier keys deliveries by their body.
func newCallbackBody(t testing.TB) string {
	return `{"transferId":"msg_` + NewKey(t)[5:] + `","status":"APPROVED","statusComment":"ok"}`
}

// claim claims key in s and returns the answer and token.
func claim(t testing.TB, s callback.FencedStore, key string) (callback.ClaimResult, string) {
	t.Helper()
	r, token, err := s.ClaimFenced(context.Background(), key)
	require.NoError(t, err)
	return r, token
}

// claimNew claims key in s, requires ClaimNew and returns the token.
func claimNew(t testing.TB, s callback.FencedStore, key string) string {
	t.Helper()
	r, token := claim(t, s, key)
	require.Equal(t, callback.ClaimNew, r)
	require.NotEmpty(t, token, "a fenced claim has a token")
	return token
}

func testProtocol(t *testing.T, open Open) {
	ctx := context.Background()
	a, b := open(t, Config{Lease: long, Retention: long}), open(t, Config{Lease: long, Retention: long})
	key, other := NewKey(t), NewKey(t)

	first := claimNew(t, a, key)
	for _, s := range []callback.FencedStore{a, b} {
		r, token := claim(t, s, key)
		assert.Equal(t, callback.ClaimBusy, r, "a claim in progress is busy on every replica")
		assert.Empty(t, token, "only ClaimNew has a token")
	}
	second := claimNew(t, b, other)
	assert.NotEqual(t, first, second)
	require.ErrorIs(t, a.CompleteFenced(ctx, key, second), callback.ErrClaimLost, "a token is its own key's")
	require.ErrorIs(t, a.ReleaseFenced(ctx, other, first), callback.ErrClaimLost, "a token is its own key's")

	require.NoError(t, b.ReleaseFenced(ctx, key, first), "any replica ends a claim by its token")
	third := claimNew(t, b, key)
	assert.NotEqual(t, first, third, "every claim has a token of its own")
	require.ErrorIs(t, a.CompleteFenced(ctx, key, first), callback.ErrClaimLost, "a released token completed the next claim")
	r, _ := claim(t, a, key)
	require.Equal(t, callback.ClaimBusy, r, "a released token ended the next claim")

	require.NoError(t, a.CompleteFenced(ctx, key, third))
	for _, s := range []callback.FencedStore{a, b} {
		r, _ := claim(t, s, key)
		assert.Equal(t, callback.ClaimDone, r, "a processed delivery is done on every replica")
		require.NoError(t, s.CompleteFenced(ctx, key, third), "a repeated completion of one's own claim, on any replica, is a success")
	}
	require.ErrorIs(t, b.CompleteFenced(ctx, key, first), callback.ErrClaimLost, "a completion of a delivery processed under another token")
	require.ErrorIs(t, b.CompleteFenced(ctx, key, second), callback.ErrClaimLost, "a completion of a delivery processed under another token")
	require.ErrorIs(t, a.ReleaseFenced(ctx, key, third), callback.ErrClaimLost, "a processed delivery cannot be released")
	r, _ = claim(t, b, key)
	assert.Equal(t, callback.ClaimDone, r)
	r, _ = claim(t, a, other)
	assert.Equal(t, callback.ClaimBusy, r, "keys are independent")
}

// testUnfenced runs the methods of callback.Store, which end a claim
// whoever holds it.
func testUnfenced(t *testing.T, open Open) {
	ctx := context.Background()
	a, b := open(t, Config{Lease: long, Retention: long}), open(t, Config{Lease: long, Retention: long})
	key := NewKey(t)
	r, err := a.Claim(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)
	r, err = b.Claim(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimBusy, r)
	require.NoError(t, b.Release(ctx, key))
	r, err = b.Claim(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)
	require.NoError(t, a.Complete(ctx, key))
	r, err = a.Claim(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimDone, r)
	require.NoError(t, b.Release(ctx, key), "releasing a processed delivery changes nothing")
	r, err = b.Claim(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimDone, r)
}

// testConcurrentClaims claims each of a few keys Replicas times at once,
// half on each of two stores: exactly one claim of each key is new.
func testConcurrentClaims(t *testing.T, open Open) {
	stores := []callback.FencedStore{open(t, Config{Lease: long, Retention: long}), open(t, Config{Lease: long, Retention: long})}
	for round := 0; round < 5; round++ {
		key := NewKey(t)
		var counts [4]atomic.Int32
		errs := make(chan error, Replicas)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < Replicas; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r, _, err := stores[i%2].ClaimFenced(context.Background(), key)
				if err != nil {
					errs <- err
					return
				}
				if r >= callback.ClaimNew && r <= callback.ClaimBusy {
					counts[r].Add(1)
				}
			}()
		}
		began := time.Now()
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, int32(1), counts[callback.ClaimNew].Load(), "claims of one key that were new")
		require.Equal(t, int32(Replicas-1), counts[callback.ClaimBusy].Load(), "claims of one key that were busy")
		t.Logf("round %d: %d concurrent claims of one key on two replicas: 1 new, %d busy, in %v",
			round, Replicas, Replicas-1, time.Since(began).Round(time.Millisecond))
	}
}

// testHandlersCallOnce delivers one callback Replicas times at once,
// through two handlers on two stores, while the function holds the first
// call: the function is called once and every other delivery is told to
// come back (503). When fail is set, that call fails (500), and a
// redelivery calls the function again; once a call succeeded, redeliveries
// are acknowledged (204) without a call.
func testHandlersCallOnce(t *testing.T, open Open, fail bool) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // ends a failing test's calls that still wait
	var calls atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	fn := func(ctx context.Context, _ *travelrule.Callback) error {
		if calls.Add(1) > 1 {
			return nil
		}
		close(entered)
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		if fail {
			return errIntegrator
		}
		return nil
	}
	var handlers []*callback.Handler
	for i := 0; i < 2; i++ {
		h := callback.NewHandler(fn, callback.WithStore(open(t, Config{Lease: long, Retention: long})), callback.WithoutAuthentication())
		require.NoError(t, h.Err())
		handlers = append(handlers, h)
	}
	id := "msg_" + NewKey(t)[5:]
	// The handlers have no Standard Webhooks verifier, so they key
	// deliveries by body: each test's callback is its own.
	body := `{"transferId":"` + id + `","status":"APPROVED","statusComment":"ok"}`
	deliver := func(h *callback.Handler) int {
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/travelrule/callback", strings.NewReader(body))
		r.Header.Set(callback.HeaderID, id)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}

	began := time.Now()
	answers := deliverAtOnce(t, func(i int) int { return deliver(handlers[i%2]) }, entered, release)
	want := map[int]int{http.StatusServiceUnavailable: Replicas - 1, http.StatusNoContent: 1}
	if fail {
		want = map[int]int{http.StatusServiceUnavailable: Replicas - 1, http.StatusInternalServerError: 1}
	}
	assert.Equal(t, want, answers, "answers to the concurrent deliveries")
	assert.Equal(t, int32(1), calls.Load(), "calls of the function for the concurrent deliveries")
	t.Logf("%d concurrent deliveries of one callback through two handlers on two stores: %v, one call, in %v",
		Replicas, answers, time.Since(began).Round(time.Millisecond))

	wantCalls := int32(1)
	if fail {
		wantCalls = 2
		assert.Equal(t, http.StatusNoContent, deliver(handlers[1]), "the redelivery after the failed call")
	}
	for _, h := range handlers {
		assert.Equal(t, http.StatusNoContent, deliver(h), "a redelivery after the successful call")
	}
	assert.Equal(t, wantCalls, calls.Load(), "calls of the function")
}

// deliverAtOnce makes Replicas deliveries at once, the ith with
// deliver(i), waits until the function was entered and every other
// delivery was answered, then releases the function and returns the
// count of each answer.
func deliverAtOnce(t *testing.T, deliver func(i int) int, entered, release chan struct{}) map[int]int {
	t.Helper()
	codes := make(chan int, Replicas)
	for i := 0; i < Replicas; i++ {
		go func() { codes <- deliver(i) }()
	}
	timeout := time.NewTimer(bound)
	defer timeout.Stop()
	select {
	case <-entered:
	case <-timeout.C:
		t.Fatal("the function was never called")
	}
	answers := map[int]int{}
	for i := 0; i < Replicas-1; i++ {
		select {
		case code := <-codes:
			answers[code]++
		case <-timeout.C:
			t.Fatalf("%d of %d deliveries answered while the first call held the claim: %v", i, Replicas-1, answers)
		}
	}
	close(release)
	answers[<-codes]++
	return answers
}

// testLeaseLapse lets a claim of a short lease lapse: the delivery can be
// claimed again, and the first holder can neither complete nor release the
// second holder's claim.
func testLeaseLapse(t *testing.T, open Open) {
	ctx := context.Background()
	a := open(t, Config{Lease: short, Retention: long})
	b := open(t, Config{Lease: long, Retention: long})
	var key, first string
	for attempt := 1; ; attempt++ {
		key = NewKey(t)
		began := time.Now()
		first = claimNew(t, a, key)
		r, _ := claim(t, b, key)
		if time.Since(began) < short {
			require.Equal(t, callback.ClaimBusy, r, "a claim holds for its lease")
			break
		}
		require.Less(t, attempt, 5, "five claims and checks each took longer than the %v lease: the machine is too slow for this test", short)
	}
	second := waitFor(t, b, key, callback.ClaimNew)
	require.NotEqual(t, first, second)

	require.ErrorIs(t, a.CompleteFenced(ctx, key, first), callback.ErrClaimLost, "the lapsed holder completed the new claim")
	require.ErrorIs(t, a.ReleaseFenced(ctx, key, first), callback.ErrClaimLost, "the lapsed holder released the new claim")
	r, _ := claim(t, a, key)
	require.Equal(t, callback.ClaimBusy, r, "the new claim still holds")
	require.NoError(t, b.CompleteFenced(ctx, key, second))
	r, _ = claim(t, a, key)
	assert.Equal(t, callback.ClaimDone, r)
	require.ErrorIs(t, a.CompleteFenced(ctx, key, first), callback.ErrClaimLost, "the lapsed holder completed a delivery processed under another token")
	require.NoError(t, a.CompleteFenced(ctx, key, second), "a repeated completion is a success")
}

// testLapsedCompletion lets two claims of a short lease lapse while their
// functions run, as a function that outlives its lease does: the holder's
// completion still records the delivery as processed when nobody else
// holds it, whether the store forgot the lapsed claim or still has it, and
// when another claim of the delivery was made and released since; a
// repeated completion is a success; and a completion by another token of
// a delivery so processed fails.
func testLapsedCompletion(t *testing.T, open Open) {
	ctx := context.Background()
	a := open(t, Config{Lease: short, Retention: long})
	b := open(t, Config{Lease: long, Retention: long})
	alone, released := NewKey(t), NewKey(t)
	aloneToken := claimNew(t, a, alone)
	releasedToken := claimNew(t, a, released)
	// released was claimed after alone, with the same lease: once it can be
	// claimed again, alone's claim has lapsed too, and nobody claimed it.
	second := waitFor(t, b, released, callback.ClaimNew)
	require.NoError(t, b.ReleaseFenced(ctx, released, second), "the second holder's function failed")

	for _, c := range []struct{ name, key, token string }{{"nobody claimed it again", alone, aloneToken}, {"a later claim was released", released, releasedToken}} {
		require.NoError(t, a.CompleteFenced(ctx, c.key, c.token), "%s: the completion of a lapsed claim with nobody holding the delivery", c.name)
		for _, s := range []callback.FencedStore{a, b} {
			r, _ := claim(t, s, c.key)
			assert.Equal(t, callback.ClaimDone, r, "%s: the delivery is processed on every replica", c.name)
			require.NoError(t, s.CompleteFenced(ctx, c.key, c.token), "%s: a repeated completion", c.name)
		}
	}
	require.ErrorIs(t, b.CompleteFenced(ctx, released, second), callback.ErrClaimLost, "a completion of a delivery processed under another token")
	require.ErrorIs(t, b.ReleaseFenced(ctx, alone, aloneToken), callback.ErrClaimLost, "a release of a processed delivery")
	r, _ := claim(t, b, alone)
	assert.Equal(t, callback.ClaimDone, r)
}

// testRetention lets a processed delivery of a short retention expire: it
// is done until then, and can be claimed again after.
func testRetention(t *testing.T, open Open) {
	ctx := context.Background()
	a := open(t, Config{Lease: long, Retention: short})
	b := open(t, Config{Lease: long, Retention: long})
	var key string
	for attempt := 1; ; attempt++ {
		key = NewKey(t)
		token := claimNew(t, a, key)
		began := time.Now()
		require.NoError(t, a.CompleteFenced(ctx, key, token))
		r, _ := claim(t, b, key)
		if time.Since(began) < short {
			require.Equal(t, callback.ClaimDone, r, "a processed delivery is remembered for the retention")
			break
		}
		require.Less(t, attempt, 5, "five completions and checks each took longer than the %v retention: the machine is too slow for this test", short)
	}
	token := waitFor(t, b, key, callback.ClaimNew)
	require.NoError(t, b.ReleaseFenced(ctx, key, token))
}

// waitFor claims key in s until the answer is want, polling, and returns
// the token of that claim; it fails the test after bound.
func waitFor(t *testing.T, s callback.FencedStore, key string, want callback.ClaimResult) string {
	t.Helper()
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(short / 10)
	defer tick.Stop()
	for {
		r, token := claim(t, s, key)
		if r == want {
			return token
		}
		require.True(t, time.Now().Before(deadline), "the claim answered %v, not %v, for %v", r, want, bound)
		<-tick.C
	}
}

// testEndedContext claims with a context that has ended: the claim fails
// with the context's error and claims nothing.
func testEndedContext(t *testing.T, open Open) {
	s := open(t, Config{Lease: long, Retention: long})
	key := NewKey(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, token, err := s.ClaimFenced(ctx, key)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, r)
	assert.Empty(t, token)
	claimNew(t, s, key)
}

// errIntegrator is the error of a failing call of the function.
var errIntegrator = errors.New("storetest: the integrator's function failed")

// poll calls done until it reports true, every 10 ms, and fails the test
// if it does not within bound; what names what it waits for.
func poll(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		require.True(t, time.Now().Before(deadline), "waited %v for %s", bound, what)
		<-tick.C
	}
}
