//go:build unix

package redisstore_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// BenchmarkHandlerDedup is a delivery through the handler on the store, a
// claim and its completion on the shared server, against the floor of the
// same handler without de-duplication (see storetest.BenchmarkDelivery);
// impl=bare is the handler on a store of one plain command each (SET NX
// with the lease, then SET with the retention: no fencing, no bound of
// its own), what the two round trips cost. TRAVELRULE_BENCH_SERVER_CPU
// pins the server, which the first test to need it starts.
func BenchmarkHandlerDedup(b *testing.B) {
	srv := sharedRedis(b)
	b.Run("impl=floor", func(b *testing.B) { storetest.BenchmarkDelivery(b, nil) })
	b.Run("impl=bare", func(b *testing.B) { storetest.BenchmarkDelivery(b, bareStore{srv.Client(b, nil)}) })
	b.Run("impl=sdk", func(b *testing.B) {
		storetest.BenchmarkDelivery(b, redisstore.New(srv.Client(b, &redis.Options{ContextTimeoutEnabled: true})))
	})
}

// BenchmarkHandlerDedupInterleaved is BenchmarkHandlerDedup's floor, store
// and bare store alternated by batches in one process (see
// storetest.BenchmarkDeliveryInterleaved).
func BenchmarkHandlerDedupInterleaved(b *testing.B) {
	srv := sharedRedis(b)
	storetest.BenchmarkDeliveryInterleaved(b, redisstore.New(srv.Client(b, &redis.Options{ContextTimeoutEnabled: true})), bareStore{srv.Client(b, nil)})
}

// bareStore is the least a store on Redis does: one plain command per
// call. A claim of a key held is busy, processed or not.
type bareStore struct{ c *redis.Client }

func (s bareStore) Claim(ctx context.Context, key string) (callback.ClaimResult, error) {
	ok, err := s.c.SetNX(ctx, "bare:"+key, "b", callback.DefaultLease).Result()
	if err != nil || !ok {
		return callback.ClaimBusy, err
	}
	return callback.ClaimNew, nil
}

func (s bareStore) Complete(ctx context.Context, key string) error {
	return s.c.Set(ctx, "bare:"+key, "d", callback.DefaultRetention).Err()
}

func (s bareStore) Release(ctx context.Context, key string) error {
	return s.c.Del(ctx, "bare:"+key).Err()
}

// cpuTime is the CPU time, user and system, the process has used (for
// BenchmarkJournalAppend).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
