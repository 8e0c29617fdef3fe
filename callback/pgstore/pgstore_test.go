//go:build unix

package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
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
		return newStore(t, newPool(t, srv, 50), pgstore.WithTable(table),
			pgstore.WithLease(cfg.Lease), pgstore.WithRetention(cfg.Retention))
	})
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
		return newStore(t, newPool(t, srv, 50, "default_transaction_isolation='repeatable read'"), pgstore.WithTable(table),
			pgstore.WithLease(cfg.Lease), pgstore.WithRetention(cfg.Retention))
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
