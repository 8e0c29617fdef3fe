//go:build unix

package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// TestContract runs the contract suite: every store it opens is a replica
// with a pool of its own, and all share one table.
func TestContract(t *testing.T) {
	srv := sharedServer(t)
	table := newTableName(t)
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) callback.FencedStore {
		return newStore(t, newPool(t, srv, 50), append(configOptions(cfg), pgstore.WithTable(table))...)
	})
}

// configOptions are the options of a store that storetest opens with cfg.
func configOptions(cfg storetest.Config) []pgstore.Option {
	opts := []pgstore.Option{pgstore.WithLease(cfg.Lease), pgstore.WithRetention(cfg.Retention)}
	if cfg.Timeout > 0 {
		opts = append(opts, pgstore.WithTimeout(cfg.Timeout))
	}
	return opts
}

// TestContractUnderRepeatableRead runs the contract suite on a database
// whose sessions default to REPEATABLE READ, where a claim that meets a
// concurrent change of its row fails with a serialization failure instead
// of waiting: the store answers such a claim busy, so the handler answers
// 503 and the sender comes back.
func TestContractUnderRepeatableRead(t *testing.T) {
	srv := sharedServer(t)
	table := newTableName(t)
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) callback.FencedStore {
		return newStore(t, newPool(t, srv, 50, "default_transaction_isolation='repeatable read'"),
			append(configOptions(cfg), pgstore.WithTable(table))...)
	})
}

// newTableName returns a table name no test used before.
func newTableName(t testing.TB) string {
	var b [6]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return "test_" + hex.EncodeToString(b[:])
}

// newStore returns pgstore.New(pool, opts...), failing t on an error.
func newStore(t testing.TB, pool *pgxpool.Pool, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	s, err := pgstore.New(context.Background(), pool, opts...)
	require.NoError(t, err)
	return s
}

// TestEndAfterAConcurrentClaimUnderRepeatableRead completes, or releases,
// a claim while another session holds its row as a busy claim does (it
// rewrote the row and has not committed yet), on a database whose
// sessions default to REPEATABLE READ: the statement waits, fails with a
// serialization failure when the other session commits, and the store
// runs it again, so the claim still ends.
func TestEndAfterAConcurrentClaimUnderRepeatableRead(t *testing.T) {
	tests := []struct {
		name string
		end  func(s *pgstore.Store, ctx context.Context, key, token string) error
		want callback.ClaimResult
	}{
		{"complete", (*pgstore.Store).CompleteFenced, callback.ClaimDone},
		{"release", (*pgstore.Store).ReleaseFenced, callback.ClaimNew},
	}
	srv := sharedServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			table := newTableName(t)
			s := newStore(t, newPool(t, srv, 4, "default_transaction_isolation='repeatable read'"), pgstore.WithTable(table), pgstore.WithSweepInterval(0))
			key := storetest.NewKey(t)
			r, token, err := s.ClaimFenced(ctx, key)
			require.NoError(t, err)
			require.Equal(t, callback.ClaimNew, r)

			other := newPool(t, srv, 2)
			tx, err := other.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			_, err = tx.Exec(ctx, `UPDATE `+pgx.Identifier{table}.Sanitize()+` SET token = token WHERE key = $1`, key)
			require.NoError(t, err)
			ended := make(chan error, 1)
			go func() { ended <- tt.end(s, ctx, key, token) }()
			waitForLockWait(t, other, table)
			require.NoError(t, tx.Commit(ctx))
			require.NoError(t, <-ended, "the claim did not end")
			r, _, err = s.ClaimFenced(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, tt.want, r)
		})
	}
}

// waitForLockWait polls the server until a session waits for a lock in a
// statement on table, and fails t after 30 seconds.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool, table string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		require.NoError(t, pool.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0`, table).Scan(&n))
		if n > 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "no statement on the table waited for a lock")
		<-tick.C
	}
}
