//go:build unix

package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
)

// TestPgBouncerPauseAtCompletion pauses PgBouncer once the function has
// returned, before the completion, and holds the pause for several of the
// store's time-outs, while a redelivery's claim is held too (the sender
// timed out, say); then it resumes PgBouncer. Each attempt held past the
// time-out fails and is tried again: the delivery is recorded processed
// after RESUME, and a redelivery after the claim's lease has lapsed, by
// the server's clock, is acknowledged without calling the function again.
func TestPgBouncerPauseAtCompletion(t *testing.T) {
	const (
		timeout = 500 * time.Millisecond // the store's, per statement
		lease   = 6 * time.Second
		held    = 3 // completions that fail while paused
	)
	ctx := context.Background()
	b := newFaultBed(t, true)
	pool := b.bouncer.newPool(t, appRole, 4)
	var s *pgstore.Store
	b.poll(t, "the store", func(context.Context) (bool, error) {
		// New is bounded by the short timeout too: on a loaded machine
		// its first connection may take longer.
		var err error
		s, err = pgstore.New(ctx, pool, pgstore.WithTable(b.table), pgstore.WithLease(lease),
			pgstore.WithRetention(time.Hour), pgstore.WithTimeout(timeout), pgstore.WithSweepInterval(0))
		return err == nil, nil
	})
	pause := b.pgBouncerPause()
	t.Cleanup(func() { pause.Heal(t) }) // a failing test's; healing twice does nothing

	capKey := []byte("pgbouncer-pause-capability-key")
	var calls atomic.Int32
	entered, paused := make(chan struct{}), make(chan struct{})
	fn := func(context.Context, *travelrule.Callback) error {
		if calls.Add(1) == 1 {
			close(entered)
			<-paused
		}
		return nil
	}
	h := callback.NewHandler(fn, callback.WithStore(s), callback.WithCapabilityKey(capKey))
	require.NoError(t, h.Err())
	target, err := travelrule.NewCallbackURL("https://vasp.example/travelrule/callback", newTableName(t), capKey)
	require.NoError(t, err)
	deliver := func() int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, target, strings.NewReader(statusBody)))
		return w.Code
	}

	first := make(chan int, 1)
	go func() { first <- deliver() }()
	select {
	case <-entered:
	case <-time.After(faultBound):
		t.Fatal("the function was never called")
	}
	var expires time.Time // of the claim, by the server's clock
	require.NoError(t, b.admin.QueryRow(ctx, `SELECT expires_at FROM `+b.quoted()).Scan(&expires))
	pause.Inject(t)
	close(paused)
	retried := func(n uint64) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			st := h.Stats()
			if st.CompletionsLost > 0 {
				return false, fmt.Errorf("the handler gave the completion up while paused: %+v", st)
			}
			return st.CompletionRetries >= n, nil
		}
	}
	b.poll(t, "a completion to fail while paused", retried(1))
	assert.Equal(t, http.StatusInternalServerError, deliver(), "a redelivery whose claim the pause held past the time-out")
	b.poll(t, "completions to fail while paused", retried(held))
	assert.Equal(t, []string{"claim"}, states(t, b), "the table while paused")
	pause.Heal(t)
	select {
	case code := <-first:
		assert.Equal(t, http.StatusNoContent, code, "the first delivery's answer")
	case <-time.After(faultBound):
		t.Fatal("the first delivery's handler never returned")
	}
	st := h.Stats()
	t.Logf("recorded after RESUME, %d failed attempts", st.CompletionRetries)
	assert.Zero(t, st.CompletionsLost, "completions lost")
	assert.Equal(t, []string{"done"}, states(t, b), "the table after RESUME")

	b.poll(t, "the claim's lease to lapse", func(ctx context.Context) (bool, error) {
		var lapsed bool
		err := b.admin.QueryRow(ctx, `SELECT now() > $1`, expires).Scan(&lapsed)
		return lapsed, err
	})
	// A claim that the short timeout ended on a loaded machine (500) is
	// redelivered, as the sender would.
	var code int
	b.poll(t, "a redelivery the store answers", func(context.Context) (bool, error) {
		code = deliver()
		return code != http.StatusInternalServerError, nil
	})
	assert.Equal(t, http.StatusNoContent, code, "a redelivery after the lease")
	assert.Equal(t, int32(1), calls.Load(), "calls of the function")
	assert.Equal(t, []string{"done"}, states(t, b), "the table after the redelivery")
}

// states are the states ("claim" or "done") of the rows of b's table.
func states(t *testing.T, b *faultBed) []string {
	t.Helper()
	var got []string
	for _, r := range rowsOf(t, b.admin, b.quoted()) {
		got = append(got, r[strings.LastIndexByte(r, ' ')+1:])
	}
	return got
}
