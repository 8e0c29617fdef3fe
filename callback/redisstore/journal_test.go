//go:build unix

package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
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
			_, err := s.Write(ctx, journal.Step{Key: "k", ID: "r", Record: []byte(`{}`), Names: []string{"n"}})
			assert.ErrorIs(t, err, s.Err(), "a misconfigured store refuses every call")
			recs, err := s.Records(ctx, "k")
			assert.ErrorIs(t, err, s.Err())
			assert.Nil(t, recs)
			key, err := s.Lookup(ctx, "n")
			assert.ErrorIs(t, err, s.Err())
			assert.Empty(t, key)
			assert.ErrorIs(t, firstErr(s.Entries(ctx, journal.Query{})), s.Err())
			assert.ErrorIs(t, s.Close(ctx, "k", 1), s.Err())
		})
	}
}

// TestJournalKeys checks what the store keeps in Redis, on a server of its
// own: every key is under the prefix, there is nothing else, every key
// expires after the retention, and the index holds what the Steps said.
func TestJournalKeys(t *testing.T) {
	ctx := context.Background()
	c := startRedis(t).Client(t, nil)
	s := redisstore.NewJournal(c, redisstore.WithPrefix("svc:"), redisstore.WithRetention(time.Hour))
	require.NoError(t, s.Err())
	other := redisstore.NewJournal(c, redisstore.WithPrefix("other:"))
	at := time.UnixMilli(1_800_000_000_000)
	for _, st := range []journal.Step{
		{Key: "o:1", ID: "sent", Record: []byte(`{"k":"sent"}`), Names: []string{"tid:1", "ref:1"}, At: at, Stage: journal.StageInitiated, Ref: "ref-1"},
		{Key: "o:1", ID: "done", Record: []byte(`{"k":"done"}`), At: at.Add(time.Second), Stage: journal.StageResolved, Ref: "ref-2"},
		{Key: "i:2", ID: "recv", Record: []byte(`{"k":"recv"}`), Names: []string{"ref:1"}, At: at.Add(2 * time.Second)},
		{Key: "o:1", ID: "late", Record: []byte(`{"k":"late"}`), At: at.Add(-time.Second), Stage: journal.StageInitiated},
	} {
		_, err := s.Write(ctx, st)
		require.NoError(t, err)
	}
	require.NoError(t, s.Close(ctx, "i:2", 1))

	var keys []string
	iter := c.Scan(ctx, 0, "*", 0).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	require.NoError(t, iter.Err())
	assert.ElementsMatch(t, []string{"svc:e:o:1", "svc:e:i:2", "svc:n:tid:1", "svc:n:ref:1", "svc:index", "svc:updated", "svc:open", "svc:migrated"}, keys)
	for _, k := range keys {
		ttl := c.PTTL(ctx, k).Val()
		assert.True(t, ttl > 59*time.Minute && ttl <= time.Hour, "%s expires after the retention: %v", k, ttl)
	}
	assert.Equal(t, "i:2", c.Get(ctx, "svc:n:ref:1").Val())
	fields := c.HGetAll(ctx, "svc:e:o:1").Val()
	assert.ElementsMatch(t, []string{"r:sent", "r:done", "r:late", "n:tid:1", "at", "count", "stage", "ref"}, slices.Collect(maps.Keys(fields)),
		"a name moved to another entry is dropped from its former entry")
	assert.Equal(t, strconv.FormatInt(at.Add(time.Second).UnixMilli(), 10), fields["at"], "the latest time")
	assert.Equal(t, strconv.Itoa(int(journal.StageResolved)), fields["stage"], "the highest stage")
	assert.Equal(t, "ref-1", fields["ref"], "the first reference")
	assert.Equal(t, []string{"i:2", "o:1"}, c.ZRange(ctx, "svc:index", 0, -1).Val(), "the expiry index, as the previous release reads it")
	assert.Equal(t, []string{"o:1", "i:2"}, c.ZRange(ctx, "svc:updated", 0, -1).Val())
	assert.Equal(t, []string{"o:1"}, c.ZRange(ctx, "svc:open", 0, -1).Val())
	assert.Equal(t, "3", fields["count"])
	mark, err := strconv.ParseFloat(c.Get(ctx, "svc:migrated").Val(), 64)
	require.NoError(t, err)
	assert.Equal(t, c.ZScore(ctx, "svc:index", "o:1").Val(), mark, "no earlier release wrote: the watermark follows the last Write")

	recs, err := other.Records(ctx, "o:1")
	require.NoError(t, err)
	assert.Empty(t, recs, "stores with other prefixes share nothing")
	got, err := other.Lookup(ctx, "tid:1")
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestJournalLookupNeedsEntry removes an entry behind the store's back, as
// an eviction would: its names point nowhere, and the index drops it.
func TestJournalLookupNeedsEntry(t *testing.T) {
	ctx := context.Background()
	c := sharedRedis(t).Client(t, nil)
	s := redisstore.NewJournal(c, redisstore.WithPrefix("lookup:"))
	key, name := uniqueJournal("o:"), uniqueJournal("tid:")
	_, err := s.Write(ctx, journal.Step{Key: key, ID: "r", Record: []byte(`{}`), Names: []string{name}, At: time.Now()})
	require.NoError(t, err)
	got, err := s.Lookup(ctx, name)
	require.NoError(t, err)
	require.Equal(t, key, got)
	require.NoError(t, c.Del(ctx, "lookup:e:"+key).Err())
	got, err = s.Lookup(ctx, name)
	require.NoError(t, err)
	assert.Empty(t, got, "a name whose entry is gone points nowhere")
	for _, q := range []journal.Query{{}, {Open: true}} {
		for e, err := range s.Entries(ctx, q) {
			require.NoError(t, err)
			assert.NotEqual(t, key, e.Key)
		}
	}
	for _, set := range []string{"lookup:updated", "lookup:open"} {
		assert.Equal(t, redis.Nil, c.ZScore(ctx, set, key).Err(), "%s drops an entry that is gone", set)
	}
}

// TestJournalTrim checks that a Write takes the entries that expired out
// of every sorted set of the index (an entry of a store with a longer
// retention on the same prefix keeps the sets).
func TestJournalTrim(t *testing.T) {
	ctx := context.Background()
	c := sharedRedis(t).Client(t, nil)
	prefix := uniqueJournal("trim") + ":"
	long := redisstore.NewJournal(c, redisstore.WithPrefix(prefix), redisstore.WithRetention(time.Hour))
	short := redisstore.NewJournal(c, redisstore.WithPrefix(prefix), redisstore.WithRetention(50*time.Millisecond))
	gone := uniqueJournal("o:")
	for _, w := range []struct {
		s   *redisstore.JournalStore
		key string
	}{{long, uniqueJournal("o:")}, {short, gone}} {
		_, err := w.s.Write(ctx, journal.Step{Key: w.key, ID: "r", Record: []byte(`{}`), At: time.Now()})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return c.Exists(ctx, prefix+"e:"+gone).Val() == 0 }, 10*time.Second, 5*time.Millisecond)
	_, err := long.Write(ctx, journal.Step{Key: uniqueJournal("o:"), ID: "r", Record: []byte(`{}`), At: time.Now()})
	require.NoError(t, err)
	for _, set := range []string{"index", "updated", "open"} {
		assert.Equal(t, redis.Nil, c.ZScore(ctx, prefix+set, gone).Err(), "%s drops an entry that expired", set)
	}
}

// TestJournalPagesWhileClosing reads the open entries as Journal.Stuck
// does, closing each one it reads and writing others, across many pages
// of entries that share one time (the cursor's member leaves the set
// before the next page is read): every entry not written meanwhile is
// read exactly once. A query whose filter selects a few entries of many
// finds them all, each page's script looking at a bounded number.
func TestJournalPagesWhileClosing(t *testing.T) {
	ctx := context.Background()
	c := startRedis(t).Client(t, nil)
	s := redisstore.NewJournal(c, redisstore.WithPrefix("pages:"), redisstore.WithRetention(time.Hour))
	const n = 5000
	at := time.Now().Truncate(time.Millisecond)
	steps := make([]journal.Step, n)
	for i := range steps {
		steps[i] = journal.Step{Key: fmt.Sprintf("k%04d", i), ID: "1", Record: []byte(fmt.Sprintf(`{"i":%d}`, i)),
			At: at.Add(time.Duration(i/1500) * time.Millisecond), Ref: "plain"} // ties of 1500
		if i%1000 == 7 {
			steps[i].Ref = "rare-" + fmt.Sprint(i)
		}
	}
	require.NoError(t, s.WriteMany(ctx, steps))

	rare, _ := keysOf(t, s.Entries(ctx, journal.Query{RefPrefix: "rare-"}))
	assert.Equal(t, []string{"k4007", "k3007", "k2007", "k1007", "k0007"}, rare, "newest first, ties in reverse order of their keys")

	seen := map[string]int{}
	touched := map[string]bool{}
	for e, err := range s.Entries(ctx, journal.Query{Open: true}) {
		require.NoError(t, err)
		seen[e.Key]++
		assert.Len(t, e.Records, 1)
		require.NoError(t, s.Close(ctx, e.Key, len(e.Records)))
		if len(seen)%100 == 0 { // a Write while the query runs
			k := fmt.Sprintf("k%04d", (len(seen)*7)%n)
			touched[k] = true
			_, err := s.Write(ctx, journal.Step{Key: k, ID: "2", Record: []byte(`{}`), At: at.Add(time.Hour)})
			require.NoError(t, err)
		}
	}
	for i := range n {
		key := fmt.Sprintf("k%04d", i)
		assert.LessOrEqual(t, seen[key], 1, "%s read twice", key)
		if !touched[key] {
			assert.Equal(t, 1, seen[key], "%s read once", key)
		}
	}
}

// keysOf returns the keys an Entries query yields, in order, and their
// records.
func keysOf(t *testing.T, seq iter.Seq2[journal.Stored, error]) ([]string, map[string][][]byte) {
	t.Helper()
	var keys []string
	recs := map[string][][]byte{}
	for e, err := range seq {
		require.NoError(t, err)
		keys = append(keys, e.Key)
		recs[e.Key] = e.Records
	}
	return keys, recs
}

// firstErr returns the first error an Entries query yields.
func firstErr(seq iter.Seq2[journal.Stored, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestJournalEvictionPolicy makes a journal store on a Redis server whose
// maxmemory-policy evicts: it reports it through Err and refuses its
// writes, writing nothing.
func TestJournalEvictionPolicy(t *testing.T) {
	ctx := context.Background()
	srv := startRedis(t, "--maxmemory-policy", "volatile-lru")
	c := srv.Client(t, nil)
	s := redisstore.NewJournal(c)
	require.EqualError(t, s.Err(), `redisstore: the Redis server's maxmemory-policy is "volatile-lru", which evicts the journal's keys when memory runs short and so forgets entries: set maxmemory-policy to noeviction`)
	step := journal.Step{Key: "o:1", ID: "r", Record: []byte(`{}`), Names: []string{"tid:1"}, At: time.Now()}
	_, err := s.Write(ctx, step)
	require.ErrorIs(t, err, s.Err())
	assert.Zero(t, c.DBSize(ctx).Val(), "a refused write writes nothing")

	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	s = redisstore.NewJournal(c)
	require.NoError(t, s.Err())
	_, err = s.Write(ctx, step)
	require.NoError(t, err)
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
	_, writeErr := s.Write(ctx, journal.Step{Key: key, ID: "r", Record: []byte(`{}`), Names: []string{name}, Peek: key, Read: true})
	_, recErr := s.Records(ctx, key)
	_, lookErr := s.Lookup(ctx, name)
	errs := []error{writeErr, recErr, lookErr, firstErr(s.Entries(ctx, journal.Query{RefPrefix: name})), s.Close(ctx, key, 1)}
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

// BenchmarkJournalWrite is the store's work for one Write of a 200-byte
// record with one name, each to a new entry, on a real Redis server of
// its own.
func BenchmarkJournalWrite(b *testing.B) {
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
		st := journal.Step{Key: keys[i], ID: "sent", Record: rec, Names: []string{names[i]}, Exclusive: true, Read: true, At: time.Now()}
		if _, err := s.Write(ctx, st); err != nil {
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
