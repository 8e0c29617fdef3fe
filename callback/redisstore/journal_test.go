//go:build unix

package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// TestJournalStore runs the journal store contract against a real Redis
// server, each store with a client of its own, as replicas have.
func TestJournalStore(t *testing.T) {
	storetest.Run(t, openJournalAt(sharedRedis(t).Addr))
}

// TestJournalStoreRing runs the contract through a ring of two servers,
// with a hash tag in the prefix, which puts the whole journal on one of
// them, as it does in a cluster.
func TestJournalStoreRing(t *testing.T) {
	a, b := startRedis(t), startRedis(t)
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) journal.Store {
		ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = ring.Close() })
		s := redisstore.NewJournal(ring, redisstore.WithPrefix("{journal}:"), redisstore.WithRetention(cfg.Retention))
		require.NoError(t, s.Err())
		return s
	})
	ctx := context.Background()
	held := 0
	for _, srv := range []*redisServer{a, b} {
		if n := srv.Client(t, nil).DBSize(ctx).Val(); n > 0 {
			held++
		}
	}
	assert.Equal(t, 1, held, "one server holds the whole journal")
}

// openJournalAt opens the stores of the contract suite on the Redis at
// addr, each with a client of its own.
func openJournalAt(addr string) storetest.Open {
	return func(t *testing.T, cfg storetest.Config) journal.Store {
		c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		s := redisstore.NewJournal(c, redisstore.WithRetention(cfg.Retention))
		require.NoError(t, s.Err())
		return s
	}
}

func TestJournalOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}) // nothing listens: NewJournal cannot ask its policy
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: -1})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close(); _ = cluster.Close(); _ = ring.Close() })
	quick := redisstore.WithTimeout(100 * time.Millisecond) // a cluster client retries its dials until the timeout
	tests := []struct {
		name    string
		client  redis.UniversalClient
		opts    []redisstore.Option
		wantErr string
		format  string
	}{
		{"defaults", c, nil, "", `{Prefix:"travelrule:journal:" Retention:720h0m0s Timeout:5s}`},
		{"nil options are ignored", c, []redisstore.Option{nil}, "", `{Prefix:"travelrule:journal:" Retention:720h0m0s Timeout:5s}`},
		{"all set", c, []redisstore.Option{redisstore.WithPrefix("svc:"), redisstore.WithRetention(48 * time.Hour), redisstore.WithTimeout(time.Second)}, "",
			`{Prefix:"svc:" Retention:48h0m0s Timeout:1s}`},
		{"a millisecond of retention", c, []redisstore.Option{redisstore.WithRetention(time.Millisecond)}, "", `{Prefix:"travelrule:journal:" Retention:1ms Timeout:5s}`},
		{"a cluster with a hash tag", cluster, []redisstore.Option{redisstore.WithPrefix("{travelrule:journal}:"), quick}, "", `{Prefix:"{travelrule:journal}:" Retention:720h0m0s Timeout:100ms}`},
		{"a ring with a hash tag", ring, []redisstore.Option{redisstore.WithPrefix("svc:{j}:"), quick}, "", `{Prefix:"svc:{j}:" Retention:720h0m0s Timeout:100ms}`},
		{"nil client", nil, nil, "redisstore: NewJournal: nil client", ""},
		{"zero retention", c, []redisstore.Option{redisstore.WithRetention(0)}, "the retention must be at least 1ms", ""},
		{"negative retention", c, []redisstore.Option{redisstore.WithRetention(-time.Hour)}, "the retention must be at least 1ms", ""},
		{"sub-millisecond retention", c, []redisstore.Option{redisstore.WithRetention(time.Microsecond)}, "the retention must be at least 1ms", ""},
		{"zero timeout", c, []redisstore.Option{redisstore.WithTimeout(0)}, "the timeout must be positive", ""},
		{"a lease", c, []redisstore.Option{redisstore.WithLease(time.Minute)}, "WithLease has no meaning for a journal store", ""},
		{"an invalid lease", c, []redisstore.Option{redisstore.WithLease(0)}, "the lease must be at least 1ms", ""},
		{"a cluster without a hash tag", cluster, []redisstore.Option{quick}, "give WithPrefix a hash tag", ""},
		{"a cluster with an empty hash tag", cluster, []redisstore.Option{redisstore.WithPrefix("{}journal:"), quick}, "give WithPrefix a hash tag", ""},
		{"a ring without a hash tag", ring, []redisstore.Option{redisstore.WithPrefix("svc}{:"), quick}, "give WithPrefix a hash tag", ""},
		{"first fault is reported", c, []redisstore.Option{redisstore.WithTimeout(0), redisstore.WithRetention(0)}, "the timeout must be positive", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := redisstore.NewJournal(tt.client, tt.opts...)
			if tt.wantErr == "" {
				require.NoError(t, s.Err())
				assert.Equal(t, tt.format, fmt.Sprint(s))
				assert.Equal(t, "redisstore.JournalStore"+tt.format, fmt.Sprintf("%#v", s))
				return
			}
			require.ErrorContains(t, s.Err(), tt.wantErr)
			ctx := context.Background()
			assert.ErrorIs(t, s.Append(ctx, "k", "r", []byte(`{}`), "n"), s.Err(), "a misconfigured store refuses every call")
			recs, err := s.Records(ctx, "k")
			assert.ErrorIs(t, err, s.Err())
			assert.Nil(t, recs)
			key, err := s.Lookup(ctx, "n")
			assert.ErrorIs(t, err, s.Err())
			assert.Empty(t, key)
			assert.ErrorIs(t, s.Scan(ctx, func(string, [][]byte) error { return nil }), s.Err())
		})
	}
}

// TestJournalKeys checks what the store keeps in Redis, on a server of its
// own: every key is under the prefix, there is nothing else, and every key
// expires after the retention.
func TestJournalKeys(t *testing.T) {
	ctx := context.Background()
	c := startRedis(t).Client(t, nil)
	s := redisstore.NewJournal(c, redisstore.WithPrefix("svc:"), redisstore.WithRetention(time.Hour))
	require.NoError(t, s.Err())
	other := redisstore.NewJournal(c, redisstore.WithPrefix("other:"))
	require.NoError(t, s.Append(ctx, "o:1", "sent", []byte(`{"k":"sent"}`), "tid:1", "ref:1"))
	require.NoError(t, s.Append(ctx, "o:1", "done", []byte(`{"k":"done"}`)))
	require.NoError(t, s.Append(ctx, "i:2", "recv", []byte(`{"k":"recv"}`), "ref:1"))
	require.NoError(t, s.Append(ctx, "o:1", "late", []byte(`{"k":"late"}`)))

	var keys []string
	iter := c.Scan(ctx, 0, "*", 0).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	require.NoError(t, iter.Err())
	assert.ElementsMatch(t, []string{"svc:e:o:1", "svc:e:i:2", "svc:n:tid:1", "svc:n:ref:1", "svc:index"}, keys)
	for _, k := range keys {
		ttl := c.PTTL(ctx, k).Val()
		assert.True(t, ttl > 59*time.Minute && ttl <= time.Hour, "%s expires after the retention: %v", k, ttl)
	}
	assert.Equal(t, "i:2", c.Get(ctx, "svc:n:ref:1").Val())
	assert.ElementsMatch(t, []string{"r:sent", "r:done", "r:late", "n:tid:1"}, c.HKeys(ctx, "svc:e:o:1").Val(),
		"a name moved to another entry is dropped from its former entry")
	assert.Equal(t, []string{"i:2", "o:1"}, c.ZRange(ctx, "svc:index", 0, -1).Val())

	recs, err := other.Records(ctx, "o:1")
	require.NoError(t, err)
	assert.Empty(t, recs, "stores with other prefixes share nothing")
	got, err := other.Lookup(ctx, "tid:1")
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestJournalLookupNeedsEntry removes an entry behind the store's back, as
// an eviction would: its names point nowhere.
func TestJournalLookupNeedsEntry(t *testing.T) {
	ctx := context.Background()
	c := sharedRedis(t).Client(t, nil)
	s := redisstore.NewJournal(c, redisstore.WithPrefix("lookup:"))
	key, name := uniqueJournal("o:"), uniqueJournal("tid:")
	require.NoError(t, s.Append(ctx, key, "r", []byte(`{}`), name))
	got, err := s.Lookup(ctx, name)
	require.NoError(t, err)
	require.Equal(t, key, got)
	require.NoError(t, c.Del(ctx, "lookup:e:"+key).Err())
	got, err = s.Lookup(ctx, name)
	require.NoError(t, err)
	assert.Empty(t, got, "a name whose entry is gone points nowhere")
}

// TestJournalScanPages scans more entries than a page holds, many of them
// expiring in the same millisecond (appended at once by a script, as a
// burst of appends in one millisecond would be), while another store
// appends to some of them: every entry not appended to is visited exactly
// once, and none twice.
func TestJournalScanPages(t *testing.T) {
	ctx := context.Background()
	c := startRedis(t).Client(t, nil)
	s := redisstore.NewJournal(c, redisstore.WithPrefix("pages:"), redisstore.WithRetention(time.Hour))
	// 1200 entries: 700 share one expiry (more than a page), 500 have
	// expiries of their own, some below and some above the shared one.
	const n = 1200
	top := time.Now().Add(time.Hour).UnixMilli()
	pipe := c.Pipeline()
	for i := range n {
		key := fmt.Sprintf("k%04d", i)
		score := top - 1000 // the shared expiry
		if i >= 700 {
			score = top - 2000 + int64(i-700)*4 // spread around it
		}
		pipe.HSet(ctx, "pages:e:"+key, "r:1", fmt.Sprintf(`{"i":%d}`, i))
		pipe.PExpireAt(ctx, "pages:e:"+key, time.UnixMilli(score))
		pipe.ZAdd(ctx, "pages:index", redis.Z{Score: float64(score), Member: key})
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)

	seen := map[string]int{}
	touched := map[string]bool{}
	require.NoError(t, s.Scan(ctx, func(key string, recs [][]byte) error {
		seen[key]++
		assert.Len(t, recs, 1)
		if len(seen)%100 == 0 { // an append while the scan runs
			k := fmt.Sprintf("k%04d", (len(seen)*7)%n)
			touched[k] = true
			return s.Append(ctx, k, "2", []byte(`{}`))
		}
		return nil
	}))
	for i := range n {
		key := fmt.Sprintf("k%04d", i)
		assert.LessOrEqual(t, seen[key], 1, "%s visited twice", key)
		if !touched[key] {
			assert.Equal(t, 1, seen[key], "%s visited once", key)
		}
	}
}

// TestJournalEvictionPolicy makes a journal store on a Redis server whose
// maxmemory-policy evicts: it reports it through Err and refuses its
// appends, writing nothing.
func TestJournalEvictionPolicy(t *testing.T) {
	ctx := context.Background()
	srv := startRedis(t, "--maxmemory-policy", "volatile-lru")
	c := srv.Client(t, nil)
	s := redisstore.NewJournal(c)
	require.EqualError(t, s.Err(), `redisstore: the Redis server's maxmemory-policy is "volatile-lru", which evicts the journal's keys when memory runs short and so forgets entries: set maxmemory-policy to noeviction`)
	require.ErrorIs(t, s.Append(ctx, "o:1", "r", []byte(`{}`), "tid:1"), s.Err())
	assert.Zero(t, c.DBSize(ctx).Val(), "a refused append writes nothing")

	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	s = redisstore.NewJournal(c)
	require.NoError(t, s.Err())
	require.NoError(t, s.Append(ctx, "o:1", "r", []byte(`{}`), "tid:1"))
}

// TestJournalErrorsHoldNoSecrets makes every call fail on a server that
// wants a password the client does not have: no error, and no fmt form of
// the store, holds the password, a key or a name.
func TestJournalErrorsHoldNoSecrets(t *testing.T) {
	srv := startRedis(t, "--requirepass", "server-secret-7f3a")
	const password = "client-secret-92bd"
	c := srv.Client(t, &redis.Options{Password: password, MaxRetries: -1})
	s := redisstore.NewJournal(c)
	ctx := context.Background()
	key, name := uniqueJournal("o:"), uniqueJournal("tid:")
	_, recErr := s.Records(ctx, key)
	_, lookErr := s.Lookup(ctx, name)
	errs := []error{s.Append(ctx, key, "r", []byte(`{}`), name), recErr, lookErr, s.Scan(ctx, func(string, [][]byte) error { return nil })}
	for _, err := range errs {
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "redisstore: journal "), err.Error())
		for _, secret := range []string{password, "server-secret-7f3a", key, name} {
			assert.NotContains(t, err.Error(), secret)
		}
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(format, s), password)
	}
}

// BenchmarkJournalAppend is the store's work for one Append of a 200-byte
// record with one name, each to a new entry, on a real Redis server of its
// own.
func BenchmarkJournalAppend(b *testing.B) {
	ctx := context.Background()
	s := redisstore.NewJournal(startRedis(b).Client(b, nil))
	if err := s.Err(); err != nil {
		b.Fatal(err)
	}
	rec := []byte(`{"k":"sent","at":"2026-11-26T10:00:00Z","d":"` + strings.Repeat("x", 150) + `"}`)
	keys, names := make([]string, b.N), make([]string, b.N)
	for i := range keys {
		keys[i], names[i] = uniqueJournal("o:"), uniqueJournal("tid:")
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := s.Append(ctx, keys[i], "sent", rec, names[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// uniqueJournal returns a fresh key or name with prefix.
func uniqueJournal(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
