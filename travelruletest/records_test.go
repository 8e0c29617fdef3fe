package travelruletest_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func TestRecords(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := newServer(t)
	c := newClient(t, srv, travelrule.WithUserAgent("records-test/1"))
	req := validRequest(rc.URL)
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	waitCallbacks(t, srv, 2)

	ts := srv.Transfers()
	require.Len(t, ts, 1)
	assert.Equal(t, res.TransferID, ts[0].ID)
	assert.Equal(t, *req, ts[0].Request)
	assert.Equal(t, travelruletest.StateCompleted, ts[0].State)
	assert.False(t, ts[0].Inquiry)
	assert.False(t, ts[0].Created.IsZero())
	assert.False(t, ts[0].Updated.Before(ts[0].Created))

	rs := srv.Requests()
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/transfers/initiate", r.Path)
	assert.Equal(t, travelruletest.OpInitiate, r.Op)
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, res.TransferID, r.TransferID)
	assert.Empty(t, r.Header.Get("Authorization"), "the token is not recorded")
	assert.Contains(t, r.Header.Get("User-Agent"), "records-test/1")
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.WithinDuration(t, time.Now(), r.Time, time.Minute)

	// Records are copies.
	rs[0].Header.Set("X-Changed", "1")
	ts[0].State = "changed"
	ds := srv.Callbacks()
	ds[0].Body[0] = 'X'
	assert.Empty(t, srv.Requests()[0].Header.Get("X-Changed"))
	assert.Equal(t, travelruletest.StateCompleted, srv.Transfers()[0].State)
	assert.Equal(t, byte('{'), srv.Callbacks()[0].Body[0])

	st := srv.Stats()
	assert.Equal(t, 1, st.Requests)
	assert.Equal(t, map[int]int{http.StatusOK: 1}, st.ByStatus)
	assert.Equal(t, 1, st.Initiated)
	assert.Equal(t, 2, st.Callbacks)
	assert.Equal(t, 2, st.CallbackAttempts)
	assert.Zero(t, st.CallbacksFailed)
	assert.Zero(t, st.Faults)
	_, ok := srv.Transfer("no-such-id")
	assert.False(t, ok)
}

func TestWaitCallbacksContext(t *testing.T) {
	srv := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	ds, err := srv.WaitCallbacks(ctx, 1)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, ds)
}

// TestRecordLimit makes many initiations under a record limit: the server
// keeps the most recent transfers, requests and callbacks only, and Stats
// counts them all.
func TestRecordLimit(t *testing.T) {
	const n = 60
	for _, tt := range []struct {
		name  string
		opts  []travelruletest.Option
		limit int
	}{
		{"limit 5", []travelruletest.Option{travelruletest.WithRecordLimit(5)}, 5},
		{"no limit", []travelruletest.Option{travelruletest.WithRecordLimit(0)}, 0},
		{"default", nil, travelruletest.DefaultRecordLimit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, append(tt.opts, travelruletest.WithoutCallbacks())...)
			c := newClient(t, srv)
			ids := make([]string, n)
			for i := range ids {
				res, err := c.InitiateTransfer(context.Background(), validRequest("https://vasp.example/cb"))
				require.NoError(t, err)
				ids[i] = res.TransferID
			}
			kept := func(all int) int {
				if tt.limit == 0 {
					return all
				}
				return min(all, tt.limit)
			}
			ds := waitCallbacks(t, srv, 2*n)
			assert.Len(t, ds, kept(2*n), "the most recent callbacks")

			ts := srv.Transfers()
			require.Len(t, ts, kept(n))
			for i, tr := range ts {
				assert.Equal(t, ids[n-kept(n)+i], tr.ID, "the most recent transfers, oldest first")
			}
			_, ok := srv.Transfer(ids[0])
			assert.Equal(t, kept(n) == n, ok)
			assert.Len(t, srv.Requests(), kept(n))

			st := srv.Stats()
			assert.Equal(t, n, st.Initiated)
			assert.Equal(t, n, st.Requests)
			assert.Equal(t, map[int]int{http.StatusOK: n}, st.ByStatus)
			assert.Equal(t, 2*n, st.Callbacks)
		})
	}
}

// TestRecordLimitKeepsPending: under a record limit of 2, an inquiry
// awaiting resolution and a transfer whose callbacks are still being
// delivered are kept however many transfers follow, and forgotten once
// settled.
func TestRecordLimitKeepsPending(t *testing.T) {
	release := make(chan struct{})
	var blocked atomic.Bool
	rc := newReceiver(t, func(r *http.Request, _ []byte, _ int) int {
		if r.URL.Path == "/slow" && !blocked.Swap(true) {
			<-release // the first callback of the slow transfer waits
		}
		return http.StatusNoContent
	})
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // before the receiver closes, should the test fail early
	srv := newServer(t, travelruletest.WithRecordLimit(2))
	c := newClient(t, srv)

	inquiry, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://x.example/cb"))
	require.NoError(t, err)
	slow, err := c.InitiateTransfer(context.Background(), validRequest(rc.URL+"/slow"))
	require.NoError(t, err)
	var last string
	for range 10 {
		res, err := c.InitiateTransfer(context.Background(), validRequest(rc.URL))
		require.NoError(t, err)
		last = res.TransferID
	}
	waitCallbacks(t, srv, 1+2*10) // the inquiry and the fast transfers' callbacks
	ids := func() []string {
		var out []string
		for _, tr := range srv.Transfers() {
			out = append(out, tr.ID)
		}
		return out
	}
	got := ids()
	require.Len(t, got, 4)
	assert.Equal(t, []string{inquiry, slow.TransferID}, got[:2], "pending ones, oldest first")
	assert.Equal(t, last, got[3])

	unblock()
	waitCallbacks(t, srv, 1+2*11)
	assert.NotContains(t, ids(), slow.TransferID, "forgotten once its callbacks are delivered")
	assert.Contains(t, ids(), inquiry)

	res, err := c.ResolveInquiry(context.Background(), inquiry, &travelrule.InquiryResolution{Approved: "true"})
	require.NoError(t, err, "an inquiry awaiting resolution is still there")
	assert.True(t, res.Status)
	assert.NotContains(t, ids(), inquiry, "forgotten once resolved")
	assert.Len(t, ids(), 2)
	assert.Equal(t, 11, srv.Stats().Initiated)
}

// TestRecordLimitIdempotency: under a record limit of 2, the answer to an
// Idempotency-Key is replayed while the key is within the idempotency
// window, however many keys follow; once the window passed, the oldest
// answers beyond the limit are forgotten and the key acts anew.
func TestRecordLimitIdempotency(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithRecordLimit(2),
		travelruletest.WithIdempotencyWindow(time.Hour), travelruletest.WithClock(clock))
	initiate := func(key string) int {
		t.Helper()
		a := post(t, srv.URL+"/transfers/initiate", token(t, srv), validRequest("http://127.0.0.1:1/cb"), "Idempotency-Key", key)
		require.Equal(t, http.StatusOK, a.Status)
		return srv.Stats().Initiated
	}
	for _, k := range []string{"k1", "k2", "k3", "k4"} {
		initiate(k)
	}
	assert.Equal(t, 4, initiate("k1"), "replayed: within the window")

	advance(time.Hour)
	assert.Equal(t, 4, initiate("k4"), "kept: among the 2 most recent")
	assert.Equal(t, 5, initiate("k5"), "a new key; the oldest answers are forgotten")
	assert.Equal(t, 6, initiate("k1"), "forgotten: acts anew")
	assert.Equal(t, 6, initiate("k1"), "and is kept again")
	assert.Equal(t, 3, srv.Stats().Replayed)
}

// TestInvalidRecordOptions: negative limits make NewServer panic.
func TestInvalidRecordOptions(t *testing.T) {
	assert.Panics(t, func() { travelruletest.NewServer(travelruletest.WithRecordLimit(-1)).Close() })
	assert.Panics(t, func() { travelruletest.NewServer(travelruletest.WithIdempotencyWindow(-time.Second)).Close() })
}
