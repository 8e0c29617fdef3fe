package storetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// TestRoundTrips checks the cost of a delivery through a
// [callback.Handler] on a store from open: one call of the store to claim
// the delivery and one to end the claim, nothing else. A new delivery is a
// ClaimFenced and a CompleteFenced, a redelivery of a processed one a
// ClaimFenced, a delivery whose function fails a ClaimFenced and a
// ReleaseFenced. When trips is not nil, it also checks that each of those
// calls is one round trip to the store's server: trips returns how many
// the store's connections made so far ([Wire.RoundTrips]). It counts after
// a few deliveries of each kind, so that the store's connections are open
// and their statements prepared; no other client may use the connections
// that trips counts meanwhile.
func TestRoundTrips(t *testing.T, open Open, trips func() int64) {
	s := &countingStore{FencedStore: open(t, Config{Lease: long, Retention: long}), trips: trips}
	var fail bool // whether the function fails
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error {
		if fail {
			return errIntegrator
		}
		return nil
	}, callback.WithStore(s), callback.WithoutAuthentication())
	require.NoError(t, h.Err())
	deliver := func(body string, failing bool) int {
		fail = failing
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/travelrule/callback", strings.NewReader(body)))
		return w.Code
	}
	const warmUp, rounds = 3, 10
	for round := 0; round < warmUp+rounds; round++ {
		body := newCallbackBody(t)
		for _, d := range []struct {
			name    string
			body    string
			failing bool
			code    int
			want    map[string]int
		}{
			{"a new delivery", body, false, http.StatusNoContent, map[string]int{"ClaimFenced": 1, "CompleteFenced": 1}},
			{"a redelivery of a processed one", body, false, http.StatusNoContent, map[string]int{"ClaimFenced": 1}},
			{"a delivery whose function fails", newCallbackBody(t), true, http.StatusInternalServerError, map[string]int{"ClaimFenced": 1, "ReleaseFenced": 1}},
		} {
			s.reset()
			require.Equal(t, d.code, deliver(d.body, d.failing), d.name)
			if round < warmUp {
				continue
			}
			calls, roundTrips := s.counts()
			require.Equal(t, d.want, calls, "%s: the calls of the store (round %d)", d.name, round-warmUp+1)
			if trips != nil {
				assert.Equal(t, d.want, roundTrips, "%s: the round trips to the store's server of each call (round %d)", d.name, round-warmUp+1)
			}
		}
	}
}

// countingStore counts the calls of the store it wraps, and the round
// trips that each kind of call made when trips counts them.
type countingStore struct {
	callback.FencedStore
	trips func() int64 // nil: not counted

	mu         sync.Mutex
	calls      map[string]int
	roundTrips map[string]int
}

// Lease passes on the lease of the store it wraps (see [callback.Store]).
func (s *countingStore) Lease() time.Duration {
	if l, ok := s.FencedStore.(interface{ Lease() time.Duration }); ok {
		return l.Lease()
	}
	return callback.DefaultLease
}

func (s *countingStore) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls, s.roundTrips = map[string]int{}, map[string]int{}
}

// counts returns copies of the counts since the last reset.
func (s *countingStore) counts() (calls, roundTrips map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls, roundTrips = map[string]int{}, map[string]int{}
	for op, n := range s.calls {
		calls[op] = n
	}
	for op, n := range s.roundTrips {
		roundTrips[op] = n
	}
	return calls, roundTrips
}

// count runs the call op of the wrapped store and counts it.
func (s *countingStore) count(op string, call func()) {
	var before int64
	if s.trips != nil {
		before = s.trips()
	}
	call()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	if s.trips != nil {
		s.roundTrips[op] += int(s.trips() - before)
	}
}

func (s *countingStore) Claim(ctx context.Context, key string) (r callback.ClaimResult, err error) {
	s.count("Claim", func() { r, err = s.FencedStore.Claim(ctx, key) })
	return r, err
}

func (s *countingStore) Complete(ctx context.Context, key string) (err error) {
	s.count("Complete", func() { err = s.FencedStore.Complete(ctx, key) })
	return err
}

func (s *countingStore) Release(ctx context.Context, key string) (err error) {
	s.count("Release", func() { err = s.FencedStore.Release(ctx, key) })
	return err
}

func (s *countingStore) ClaimFenced(ctx context.Context, key string) (r callback.ClaimResult, token string, err error) {
	s.count("ClaimFenced", func() { r, token, err = s.FencedStore.ClaimFenced(ctx, key) })
	return r, token, err
}

func (s *countingStore) CompleteFenced(ctx context.Context, key, token string) (err error) {
	s.count("CompleteFenced", func() { err = s.FencedStore.CompleteFenced(ctx, key, token) })
	return err
}

func (s *countingStore) ReleaseFenced(ctx context.Context, key, token string) (err error) {
	s.count("ReleaseFenced", func() { err = s.FencedStore.ReleaseFenced(ctx, key, token) })
	return err
}
