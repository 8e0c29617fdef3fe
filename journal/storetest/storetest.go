// Package storetest tests an implementation of [journal.Store] against the
// contract the [journal.Journal] relies on, as testing/fstest tests an
// fs.FS: records written at most once per id, names that point at
// entries, atomic appends from many replicas at once, scans, and the
// retention of entries. The stores of this module run it against real
// Redis and PostgreSQL servers; run it on a store of your own from a test:
//
//	func TestMyJournalStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, cfg storetest.Config) journal.Store {
//			return mystore.New(sharedBackend, mystore.WithRetention(cfg.Retention))
//		})
//	}
//
// The retention test waits, by polling the store, for a retention of a
// second to pass.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/journal"
)

// Config is what a test asks of a store it opens.
type Config struct {
	// Retention is how long an entry is kept after its last record.
	Retention time.Duration
}

// Open returns a new store with cfg on the backend under test. All the
// stores that Open returns share that backend, as the replicas of one
// service share theirs; Open may register their clean-up with t.Cleanup.
type Open func(t *testing.T, cfg Config) journal.Store

// Replicas is how many concurrent appends the concurrency tests make,
// spread over two stores.
const Replicas = 100

// short is the retention of the test that waits for one to pass.
const short = time.Second

// long is a retention that no test waits for.
const long = time.Hour

// bound ends a test whose store never forgets an entry; it is never
// reached by a passing test.
const bound = 30 * time.Second

// Run runs every test of the suite as a subtest of t.
func Run(t *testing.T, open Open) {
	t.Run("AppendAndRead", func(t *testing.T) { TestAppendAndRead(t, open) })
	t.Run("AtMostOncePerID", func(t *testing.T) { TestAtMostOncePerID(t, open) })
	t.Run("Names", func(t *testing.T) { TestNames(t, open) })
	t.Run("Replicas", func(t *testing.T) { TestReplicas(t, open) })
	t.Run("Scan", func(t *testing.T) { TestScan(t, open) })
	t.Run("Retention", func(t *testing.T) { TestRetention(t, open) })
	t.Run("Fleet", func(t *testing.T) { TestFleet(t, open) })
	t.Run("Trust", func(t *testing.T) { TestTrust(t, open) })
}

// unique returns a fresh name with prefix, so that tests on a shared
// backend do not see each other's entries.
func unique(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	return c
}

// sorted returns the records as strings, sorted.
func sorted(recs [][]byte) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r)
	}
	slices.Sort(out)
	return out
}

// TestAppendAndRead checks that records come back byte for byte, and that
// a key with no entry has no records.
func TestAppendAndRead(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	key := unique("o:")
	recs, err := s.Records(c, key)
	require.NoError(t, err)
	assert.Empty(t, recs, "a key with no entry has no records")

	a := []byte(`{"k":"sent","at":"2026-11-26T10:00:00Z","d":"\u00e9\n\"x\""}`)
	b := make([]byte, journal.MaxRecordBytes)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	require.NoError(t, s.Append(c, key, "r1", a))
	require.NoError(t, s.Append(c, key, "r2", b))
	recs, err = s.Records(c, key)
	require.NoError(t, err)
	assert.Equal(t, sorted([][]byte{a, b}), sorted(recs))

	long := unique("o:")
	for len(long) < journal.MaxKeyBytes {
		long += "x"
	}
	require.NoError(t, s.Append(c, long, "r", a))
	recs, err = s.Records(c, long)
	require.NoError(t, err)
	assert.Len(t, recs, 1, "a key of MaxKeyBytes is kept")
}

// TestAtMostOncePerID checks that a record appended twice under one id is
// kept once, and that the first one stays.
func TestAtMostOncePerID(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	key := unique("o:")
	require.NoError(t, s.Append(c, key, "r", []byte(`{"n":1}`)))
	require.NoError(t, s.Append(c, key, "r", []byte(`{"n":2}`)))
	require.NoError(t, s.Append(c, key, "q", []byte(`{"n":3}`)))
	recs, err := s.Records(c, key)
	require.NoError(t, err)
	assert.Equal(t, []string{`{"n":1}`, `{"n":3}`}, sorted(recs))
}

// TestNames checks that names point at the entry they were appended with,
// that a later append moves a name, and that an unknown name points
// nowhere.
func TestNames(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	k1, k2 := unique("o:"), unique("i:")
	n1, n2 := unique("tid:"), unique("ref:")
	got, err := s.Lookup(c, n1)
	require.NoError(t, err)
	assert.Empty(t, got)

	require.NoError(t, s.Append(c, k1, "r", []byte(`{}`), n1, n2))
	for _, n := range []string{n1, n2} {
		got, err := s.Lookup(c, n)
		require.NoError(t, err)
		assert.Equal(t, k1, got)
	}
	// Appending an id the entry holds still writes the names.
	require.NoError(t, s.Append(c, k2, "r", []byte(`{}`)))
	require.NoError(t, s.Append(c, k2, "r", []byte(`{}`), n2))
	got, err = s.Lookup(c, n2)
	require.NoError(t, err)
	assert.Equal(t, k2, got, "a name appended with another entry points there")
	got, err = s.Lookup(c, n1)
	require.NoError(t, err)
	assert.Equal(t, k1, got, "the other name stays")
}

// TestReplicas appends from two stores at once: every distinct id is kept,
// and of many appends of one id exactly one record stays.
func TestReplicas(t *testing.T, open Open) {
	cfg := Config{Retention: long}
	stores := []journal.Store{open(t, cfg), open(t, cfg)}
	c := ctx(t)
	distinct, same := unique("o:"), unique("o:")
	var wg sync.WaitGroup
	errs := make(chan error, 2*Replicas)
	for i := range Replicas {
		wg.Add(2)
		s := stores[i%2]
		go func() {
			defer wg.Done()
			errs <- s.Append(c, distinct, fmt.Sprint("r", i), []byte(fmt.Sprintf(`{"n":%d}`, i)), "name:"+distinct)
		}()
		go func() {
			defer wg.Done()
			errs <- s.Append(c, same, "only", []byte(fmt.Sprintf(`{"n":%d}`, i)))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	recs, err := stores[0].Records(c, distinct)
	require.NoError(t, err)
	assert.Len(t, recs, Replicas, "every distinct id is kept")
	recs, err = stores[1].Records(c, same)
	require.NoError(t, err)
	assert.Len(t, recs, 1, "one id is kept once")
	got, err := stores[1].Lookup(c, "name:"+distinct)
	require.NoError(t, err)
	assert.Equal(t, distinct, got)
}

// TestScan checks that Scan visits each entry once, with its records, and
// stops at fn's error.
func TestScan(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	want := map[string][]string{}
	for i := range 5 {
		key := unique("o:")
		for j := range i + 1 {
			rec := fmt.Sprintf(`{"e":%d,"r":%d}`, i, j)
			require.NoError(t, s.Append(c, key, fmt.Sprint(j), []byte(rec)))
			want[key] = append(want[key], rec)
		}
		slices.Sort(want[key])
	}
	seen := map[string][]string{}
	require.NoError(t, s.Scan(c, func(key string, recs [][]byte) error {
		if _, ok := want[key]; ok { // the backend may hold other tests' entries
			_, again := seen[key]
			assert.False(t, again, "entry %s seen twice", key)
			seen[key] = sorted(recs)
		}
		return nil
	}))
	assert.Equal(t, want, seen)

	stop := errors.New("stop")
	calls := 0
	err := s.Scan(c, func(string, [][]byte) error { calls++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, calls, "Scan stops at fn's error")
}

// TestRetention checks that appends keep an entry past its first record's
// retention, and that an entry is forgotten, with its names, once a
// retention passed after its last record.
func TestRetention(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: short}), ctx(t)
	var key, name string
	// Keep appending for twice the retention, checking after each append
	// that the first record is still there. The check is made only while
	// every gap so far, from the start of one append to the end of the
	// check after the next, came within the retention: a machine that
	// stalled longer may have let the entry lapse, as it should, and the
	// sequence starts again on a new entry (at most a few times).
	for try := 0; ; try++ {
		require.Less(t, try, 5, "the machine stalled for a retention (%s) in every try", short)
		key, name = unique("o:"), unique("ref:")
		prev := time.Now()
		require.NoError(t, s.Append(c, key, "first", []byte(`{"n":0}`), name))
		stalled := false
		for i, start := 1, time.Now(); time.Since(start) < 2*short; i++ {
			begin := time.Now()
			require.NoError(t, s.Append(c, key, fmt.Sprint(i), []byte(`{}`)))
			recs, err := s.Records(c, key)
			require.NoError(t, err)
			if time.Since(prev) >= short {
				stalled = true
				break
			}
			prev = begin
			require.Contains(t, sorted(recs), `{"n":0}`, "an append keeps the whole entry")
		}
		if !stalled {
			break
		}
	}

	// Now stop: the entry and its name go.
	deadline := time.Now().Add(bound)
	for {
		recs, err := s.Records(c, key)
		require.NoError(t, err)
		got, err := s.Lookup(c, name)
		require.NoError(t, err)
		if len(recs) == 0 && got == "" {
			break
		}
		require.True(t, time.Now().Before(deadline), "entry still kept %s after its last record", bound)
		time.Sleep(20 * time.Millisecond) // polling the store, not waiting on time
	}
	seen := false
	require.NoError(t, s.Scan(c, func(k string, _ [][]byte) error {
		seen = seen || k == key
		return nil
	}))
	assert.False(t, seen, "Scan does not return a forgotten entry")
}
