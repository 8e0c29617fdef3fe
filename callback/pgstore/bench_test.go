//go:build unix

package pgstore_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
)

// BenchmarkClaimComplete is the store's work for one delivery that calls
// the function: a fenced claim of a new key and its completion, one after
// the other on the shared server over loopback. Besides the wall time it
// reports cpu-ns/op, this process's CPU time (user and system, garbage
// collection included; not the server's) over the loop per delivery.
func BenchmarkClaimComplete(b *testing.B) {
	pool := newPool(b, sharedServer(b), 4)
	s, err := pgstore.New(context.Background(), pool, pgstore.WithTable(newTableName(b)))
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, b.N)
	prefix := newTableName(b)
	for i := range keys {
		keys[i] = prefix + ":" + strconv.Itoa(i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		r, token, err := s.ClaimFenced(ctx, keys[i])
		if err != nil || r != callback.ClaimNew {
			b.Fatalf("claim: %v, %v", r, err)
		}
		if err := s.CompleteFenced(ctx, keys[i], token); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time, user and system, the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
