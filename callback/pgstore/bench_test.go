//go:build unix

package pgstore_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
)

// BenchmarkClaimComplete is the store's work for one delivery that calls
// the function, a fenced claim of a new key and its completion, one after
// the other on the shared server over loopback, against a floor of the two
// plain statements that do the same without fencing or expiry (INSERT ...
// ON CONFLICT DO NOTHING, then UPDATE). Besides the wall time it reports
// cpu-ns/op, this process's CPU time (user and system, garbage collection
// included; not the server's) over the loop per delivery.
func BenchmarkClaimComplete(b *testing.B) {
	ctx := context.Background()
	b.Run("impl=floor", func(b *testing.B) {
		pool := newPool(b, sharedServer(b), 4)
		table := pgx.Identifier{newTableName(b)}.Sanitize()
		if _, err := pool.Exec(ctx, `CREATE TABLE `+table+` (key text PRIMARY KEY, token text NOT NULL, done boolean NOT NULL, expires_at timestamptz NOT NULL)`); err != nil {
			b.Fatal(err)
		}
		claim := `INSERT INTO ` + table + ` (key, token, done, expires_at) VALUES ($1, 'token', false, now()) ON CONFLICT (key) DO NOTHING`
		complete := `UPDATE ` + table + ` SET done = true WHERE key = $1`
		perDelivery(b, func(key string) {
			if tag, err := pool.Exec(ctx, claim, key); err != nil || tag.RowsAffected() != 1 {
				b.Fatalf("claim: %v", err)
			}
			if _, err := pool.Exec(ctx, complete, key); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=sdk", func(b *testing.B) {
		s, err := pgstore.New(ctx, newPool(b, sharedServer(b), 4), pgstore.WithTable(newTableName(b)))
		if err != nil {
			b.Fatal(err)
		}
		perDelivery(b, func(key string) {
			r, token, err := s.ClaimFenced(ctx, key)
			if err != nil || r != callback.ClaimNew {
				b.Fatalf("claim: %v, %v", r, err)
			}
			if err := s.CompleteFenced(ctx, key, token); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// perDelivery runs do b.N times, each with a new key, and reports
// cpu-ns/op.
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
