//go:build unix

package redisstore_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// BenchmarkClaimComplete is the store's work for one delivery, a claim and
// its completion, each delivery with a new key, on a real Redis server,
// against a floor of the two plain commands that do the same without
// fencing (SET NX with the lease, then SET with the retention). Besides
// the wall time it reports cpu-ns/op, this process's CPU time (user and
// system, garbage collection included) per delivery: the server's own
// time is not in it.
func BenchmarkClaimComplete(b *testing.B) {
	srv := sharedRedis(b)
	ctx := context.Background()
	b.Run("impl=floor", func(b *testing.B) {
		c := srv.Client(b, nil)
		perDelivery(b, func(key string) {
			ok, err := c.SetNX(ctx, "floor:"+key, "b:token", callback.DefaultLease).Result()
			if err != nil || !ok {
				b.Fatalf("claim: %v %v", ok, err)
			}
			if err := c.Set(ctx, "floor:"+key, "d:token", callback.DefaultRetention).Err(); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=sdk", func(b *testing.B) {
		s := redisstore.New(srv.Client(b, nil))
		perDelivery(b, func(key string) {
			r, token, err := s.ClaimFenced(ctx, key)
			if err != nil || r != callback.ClaimNew {
				b.Fatalf("claim: %v %v", r, err)
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
	for i := range keys {
		keys[i] = storetest.NewKey(b)
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
