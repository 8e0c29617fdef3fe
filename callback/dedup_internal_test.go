package callback

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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
)

func TestDedupKey(t *testing.T) {
	a := dedupKey("", "ref", []byte("{}"))
	assert.Len(t, a, 69)
	assert.NotEqual(t, a, dedupKey("", "ref2", []byte("{}")))
	assert.NotEqual(t, a, dedupKey("", "", []byte("ref{}")))
	assert.Equal(t, dedupKey("id", "r", []byte("x")), dedupKey("id", "r", []byte("y")))
	assert.Len(t, dedupKey("id", "r", nil), 69)
	assert.NotEqual(t, dedupKey("id", "", nil), dedupKey("", "", []byte("id")))
}

// TestHandlerEndsOnlyItsOwnClaim lets the first delivery's claim lapse
// while its function still runs, so that a redelivery claims it again: when
// the first call then fails, its release must not end the second call's
// claim (a third delivery is told the delivery is in progress, and the
// function is not called a third time), and the log says the lease was too
// short.
func TestHandlerEndsOnlyItsOwnClaim(t *testing.T) {
	now := time.Unix(1_750_000_000, 0)
	var clock sync.Mutex
	store := NewMemoryStore(0)
	store.st.now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }

	type call struct {
		entered chan struct{}
		result  chan error
	}
	calls := make(chan call, 3)
	var logs bytes.Buffer
	var logMu sync.Mutex
	var unexpected atomic.Int32
	h := NewHandler(func(ctx context.Context, _ *travelrule.Callback) error {
		select {
		case c := <-calls:
			close(c.entered)
			return <-c.result
		default:
			unexpected.Add(1)
			return nil
		}
	}, WithStore(store), WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))), WithoutAuthentication())
	require.NoError(t, h.Err())

	deliver := func() int {
		r := httptest.NewRequest(http.MethodPost, "/cb", strings.NewReader(`{"transferId":"tr-1","status":"approved","timestamp":"2025-03-01T12:00:05Z"}`))
		r.Header.Set(HeaderID, "msg_1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	start := func(c call) chan int {
		calls <- c
		code := make(chan int, 1)
		go func() { code <- deliver() }()
		<-c.entered
		return code
	}
	first := call{make(chan struct{}), make(chan error, 1)}
	second := call{make(chan struct{}), make(chan error, 1)}
	t.Cleanup(func() { first.result <- nil; second.result <- nil })

	firstCode := start(first)
	clock.Lock()
	now = now.Add(DefaultLease)
	clock.Unlock()
	secondCode := start(second)

	first.result <- errors.New("integrator failed")
	assert.Equal(t, http.StatusInternalServerError, <-firstCode)
	assert.Equal(t, http.StatusServiceUnavailable, deliver(), "the failed first call released the second call's claim")

	second.result <- nil
	assert.Equal(t, http.StatusNoContent, <-secondCode)
	assert.Equal(t, http.StatusNoContent, deliver())
	assert.Zero(t, unexpected.Load(), "the function was called a third time")
	logMu.Lock()
	defer logMu.Unlock()
	assert.Contains(t, logs.String(), "lease lapsed before the function returned")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestCompletionBackoff checks the pauses between a completion's
// attempts: from 10-20 ms, doubling, to at most an eighth of the lease
// and 5 s, never under 10-20 ms, with the jitter in the upper half.
func TestCompletionBackoff(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		failed int
		lease  time.Duration
		jitter float64
		want   time.Duration
	}{
		{1, DefaultLease, 0, 10 * ms},
		{1, DefaultLease, 0.5, 15 * ms},
		{1, DefaultLease, 0.999999, 20 * ms},
		{2, DefaultLease, 0, 20 * ms},
		{3, DefaultLease, 0, 40 * ms},
		{8, DefaultLease, 0, 1280 * ms},
		{9, DefaultLease, 0, 2500 * ms},
		{9, DefaultLease, 0.999999, 5000 * ms},
		{100, DefaultLease, 0.999999, 5000 * ms},
		{1 << 40, DefaultLease, 0, 2500 * ms},
		{5, time.Second, 0, 125 * ms / 2},
		{100, time.Second, 0.999999, 125 * ms},
		{1, 10 * ms, 0, 10 * ms},
		{100, 10 * ms, 0.999999, 20 * ms},
	}
	for _, tt := range tests {
		got := completionBackoff(tt.failed, tt.lease, tt.jitter)
		assert.InDelta(t, tt.want, got, float64(ms/100), "failed %d, lease %v, jitter %v", tt.failed, tt.lease, tt.jitter)
	}
}
