//go:build unix

package pgstore_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// BenchmarkHandlerDedup is a delivery through the handler on the store, a
// claim and its completion on the shared server over loopback, against
// the floor of the same handler without de-duplication (see
// storetest.BenchmarkDelivery); impl=bare is the handler on a store of one
// plain statement each (INSERT ... ON CONFLICT DO NOTHING, then UPDATE: no
// fencing, no expiry, no bound of its own), what the two round trips cost.
// TRAVELRULE_BENCH_SERVER_CPU pins the server, which the first test to
// need it starts.
func BenchmarkHandlerDedup(b *testing.B) {
	ctx := context.Background()
	srv := sharedServer(b)
	b.Run("impl=floor", func(b *testing.B) { storetest.BenchmarkDelivery(b, nil) })
	b.Run("impl=bare", func(b *testing.B) { storetest.BenchmarkDelivery(b, newBareStore(b, srv)) })
	b.Run("impl=sdk", func(b *testing.B) {
		s, err := pgstore.New(ctx, newPool(b, srv, 4), pgstore.WithTable(newTableName(b)))
		if err != nil {
			b.Fatal(err)
		}
		storetest.BenchmarkDelivery(b, s)
	})
}

// BenchmarkHandlerDedupInterleaved is BenchmarkHandlerDedup's floor, store
// and bare store alternated by batches in one process (see
// storetest.BenchmarkDeliveryInterleaved).
func BenchmarkHandlerDedupInterleaved(b *testing.B) {
	srv := sharedServer(b)
	s, err := pgstore.New(context.Background(), newPool(b, srv, 4), pgstore.WithTable(newTableName(b)))
	if err != nil {
		b.Fatal(err)
	}
	storetest.BenchmarkDeliveryInterleaved(b, s, newBareStore(b, srv))
}

// bareStore is the least a store in a table does: one plain statement per
// call. A claim of a key held is busy, processed or not.
type bareStore struct {
	pool  *pgxpool.Pool
	table string // quoted
}

// newBareStore returns a bare store in a new table on srv.
func newBareStore(b *testing.B, srv *pgServer) bareStore {
	pool := newPool(b, srv, 4)
	table := pgx.Identifier{newTableName(b)}.Sanitize()
	if _, err := pool.Exec(context.Background(), `CREATE TABLE `+table+` (key text PRIMARY KEY, token text NOT NULL, done boolean NOT NULL, expires_at timestamptz NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return bareStore{pool, table}
}

func (s bareStore) Claim(ctx context.Context, key string) (callback.ClaimResult, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO `+s.table+` (key, token, done, expires_at) VALUES ($1, 'token', false, now()) ON CONFLICT (key) DO NOTHING`, key)
	if err != nil || tag.RowsAffected() != 1 {
		return callback.ClaimBusy, err
	}
	return callback.ClaimNew, nil
}

func (s bareStore) Complete(ctx context.Context, key string) error {
	_, err := s.pool.Exec(ctx, `UPDATE `+s.table+` SET done = true WHERE key = $1`, key)
	return err
}

func (s bareStore) Release(ctx context.Context, key string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE key = $1 AND NOT done`, key)
	return err
}

// perDelivery runs do b.N times, each with a new key, and reports
// cpu-ns/op (for BenchmarkJournalAppend).
func perDelivery(b *testing.B, do func(key string)) {
	keys := make([]string, b.N)
	prefix := newTableName(b)
	for i := range keys {
		keys[i] = prefix + ":" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		do(keys[i])
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time, user and system, the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
