//go:build unix

package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// waitBound ends a wait for the server's clock or a background sweep; it
// is never reached by a passing test.
const waitBound = 30 * time.Second

// TestSweep completes 2500 deliveries with a short retention, next to
// others that stay, waits until the server's clock has passed their
// expiry, and sweeps: the sweep, in batches of 1000, deletes exactly the
// 2500 expired rows.
func TestSweep(t *testing.T) {
	const expiring = 2500
	pool := newPool(t, sharedServer(t), 16)
	ctx := context.Background()
	table := newTableName(t)
	short := newStore(t, pool, pgstore.WithTable(table), pgstore.WithRetention(100*time.Millisecond), pgstore.WithSweepInterval(0))
	long := newStore(t, pool, pgstore.WithTable(table), pgstore.WithSweepInterval(0))

	completeNew(t, short, expiring)
	kept := make([]string, 10)
	for i := range kept {
		kept[i] = storetest.NewKey(t)
		if i%2 == 0 {
			require.NoError(t, long.Complete(ctx, kept[i]))
		} else {
			claimed, err := long.Claim(ctx, kept[i])
			require.NoError(t, err)
			require.Equal(t, callback.ClaimNew, claimed)
		}
	}
	quoted := pgx.Identifier{table}.Sanitize()
	waitCount(t, pool, quoted, "expires_at < now()", expiring)

	// A claim on a store whose automatic sweep is off starts none: had
	// one started, it would race the sweep below.
	_, err := short.Claim(ctx, storetest.NewKey(t))
	require.NoError(t, err)
	n, err := short.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(expiring), n, "rows the sweep deleted")
	assert.Equal(t, int64(len(kept)+1), countRows(t, pool, quoted, "true"), "rows left")
	for i, key := range kept {
		r, err := short.Claim(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, []callback.ClaimResult{callback.ClaimDone, callback.ClaimBusy}[i%2], r, "a row that had not expired")
	}
	n, err = short.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "a second sweep")
	assert.Equal(t, table+"_expires_at_idx", indexOf(t, pool, "public", table))
}

// TestAutomaticSweep lets processed deliveries expire, then claims on a
// store whose automatic sweep is on: the claim starts a sweep, and the
// expired rows disappear.
func TestAutomaticSweep(t *testing.T) {
	pool := newPool(t, sharedServer(t), 8)
	ctx := context.Background()
	table := newTableName(t)
	quoted := pgx.Identifier{table}.Sanitize()
	short := newStore(t, pool, pgstore.WithTable(table), pgstore.WithRetention(50*time.Millisecond), pgstore.WithSweepInterval(0))
	completeNew(t, short, 100)
	waitCount(t, pool, quoted, "expires_at < now()", 100)
	require.Equal(t, int64(100), countRows(t, pool, quoted, "true"), "rows before the claim")

	auto := newStore(t, pool, pgstore.WithTable(table), pgstore.WithSweepInterval(10*time.Millisecond))
	r, err := auto.Claim(ctx, storetest.NewKey(t))
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)
	waitCount(t, pool, quoted, "true", 1)
}

// waitCount polls the count of table's rows where cond holds until it is
// want, and fails t after waitBound.
func waitCount(t *testing.T, pool *pgxpool.Pool, table, cond string, want int64) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		n := countRows(t, pool, table, cond)
		if n == want {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d rows where %s after %v, not %d", n, cond, waitBound, want)
		<-tick.C
	}
}

// completeNew completes n new keys in s, 16 at a time.
func completeNew(t *testing.T, s *pgstore.Store, n int) {
	t.Helper()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = storetest.NewKey(t)
	}
	errs := make(chan error, n)
	next := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for key := range next {
				errs <- s.Complete(context.Background(), key)
			}
		})
	}
	for _, key := range keys {
		next <- key
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
