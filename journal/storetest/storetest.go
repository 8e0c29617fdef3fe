// Package storetest tests an implementation of [journal.Store] against the
// contract the [journal.Journal] relies on, as testing/fstest tests an
// fs.FS: records written at most once per id, names that point at
// entries, atomic steps from many replicas at once, the index of entries
// and its queries, the open entries, the retention of entries, and the
// journal's round trips (at most two per initiation). The stores of this module run it against real
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
	t.Run("Exclusive", func(t *testing.T) { TestExclusive(t, open) })
	t.Run("ReadAndPeek", func(t *testing.T) { TestReadAndPeek(t, open) })
	t.Run("Entries", func(t *testing.T) { TestEntries(t, open) })
	t.Run("Pages", func(t *testing.T) { TestPages(t, open) })
	t.Run("TimeOfRecords", func(t *testing.T) { TestTimeOfRecords(t, open) })
	t.Run("OpenAndClose", func(t *testing.T) { TestOpenAndClose(t, open) })
	t.Run("RoundTrips", func(t *testing.T) { TestRoundTrips(t, open) })
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

// write makes a Step of a record on key, with names, and fails the test
// on an error.
func write(t *testing.T, s journal.Store, key, id, rec string, names ...string) {
	t.Helper()
	_, err := s.Write(ctx(t), journal.Step{Key: key, ID: id, Record: []byte(rec), Names: names, At: time.Now()})
	require.NoError(t, err)
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

	a := `{"k":"sent","at":"2026-11-26T10:00:00Z","d":"\u00e9\n\"x\""}`
	b := make([]byte, journal.MaxRecordBytes)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	write(t, s, key, "r1", a)
	write(t, s, key, "r2", string(b))
	recs, err = s.Records(c, key)
	require.NoError(t, err)
	assert.Equal(t, sorted([][]byte{[]byte(a), b}), sorted(recs))

	long := unique("o:")
	for len(long) < journal.MaxKeyBytes {
		long += "x"
	}
	write(t, s, long, "r", a)
	recs, err = s.Records(c, long)
	require.NoError(t, err)
	assert.Len(t, recs, 1, "a key of MaxKeyBytes is kept")
}

// TestAtMostOncePerID checks that a record written twice under one id is
// kept once, and that the first one stays.
func TestAtMostOncePerID(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	key := unique("o:")
	write(t, s, key, "r", `{"n":1}`)
	write(t, s, key, "r", `{"n":2}`)
	write(t, s, key, "q", `{"n":3}`)
	recs, err := s.Records(c, key)
	require.NoError(t, err)
	assert.Equal(t, []string{`{"n":1}`, `{"n":3}`}, sorted(recs))
}

// TestNames checks that names point at the entry they were written with,
// that a later Step moves a name, and that an unknown name points
// nowhere.
func TestNames(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	k1, k2 := unique("o:"), unique("i:")
	n1, n2 := unique("tid:"), unique("ref:")
	got, err := s.Lookup(c, n1)
	require.NoError(t, err)
	assert.Empty(t, got)

	write(t, s, k1, "r", `{}`, n1, n2)
	for _, n := range []string{n1, n2} {
		got, err := s.Lookup(c, n)
		require.NoError(t, err)
		assert.Equal(t, k1, got)
	}
	// A Step with an id the entry holds still writes the names.
	write(t, s, k2, "r", `{}`)
	write(t, s, k2, "r", `{}`, n2)
	got, err = s.Lookup(c, n2)
	require.NoError(t, err)
	assert.Equal(t, k2, got, "a name written with another entry points there")
	got, err = s.Lookup(c, n1)
	require.NoError(t, err)
	assert.Equal(t, k1, got, "the other name stays")
}

// TestExclusive checks that an Exclusive Step whose name points at
// another entry writes nothing and says which entry holds the name, and
// that one whose names are free or its own writes.
func TestExclusive(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	k1, k2, name := unique("o:"), unique("i:"), unique("ref:")
	w, err := s.Write(c, journal.Step{Key: k1, ID: "a", Record: []byte(`{"n":1}`), Names: []string{name}, Exclusive: true, At: time.Now()})
	require.NoError(t, err)
	assert.Empty(t, w.Taken, "a free name is taken")
	w, err = s.Write(c, journal.Step{Key: k1, ID: "b", Record: []byte(`{"n":2}`), Names: []string{name}, Exclusive: true, At: time.Now()})
	require.NoError(t, err)
	assert.Empty(t, w.Taken, "a name of the entry's own is no obstacle")
	w, err = s.Write(c, journal.Step{Key: k2, ID: "c", Record: []byte(`{"n":3}`), Names: []string{unique("tid:"), name}, Exclusive: true, At: time.Now(), Read: true})
	require.NoError(t, err)
	assert.Equal(t, k1, w.Taken)
	assert.Empty(t, w.Records)
	recs, err := s.Records(c, k2)
	require.NoError(t, err)
	assert.Empty(t, recs, "a Step refused for its name writes no record")
	got, err := s.Lookup(c, name)
	require.NoError(t, err)
	assert.Equal(t, k1, got, "nor the names")
}

// TestReplicas makes Steps from two stores at once: every distinct id is
// kept, of many Steps of one id exactly one record stays, each Step reads
// the records of those that came before it (so that of two, the later
// sees the earlier), and of many Exclusive Steps of one name on different
// entries exactly one writes.
func TestReplicas(t *testing.T, open Open) {
	cfg := Config{Retention: long}
	stores := []journal.Store{open(t, cfg), open(t, cfg)}
	c := ctx(t)
	distinct, same, name := unique("o:"), unique("o:"), unique("ref:")
	var wg sync.WaitGroup
	type result struct {
		w    journal.Written
		err  error
		what string
	}
	results := make(chan result, 3*Replicas)
	for i := range Replicas {
		s := stores[i%2]
		steps := []journal.Step{
			{Key: distinct, ID: fmt.Sprint("r", i), Record: []byte(fmt.Sprintf(`{"n":%d}`, i)), Names: []string{"name:" + distinct}, Read: true},
			{Key: same, ID: "only", Record: []byte(fmt.Sprintf(`{"n":%d}`, i))},
			{Key: unique("o:"), ID: "x", Record: []byte(`{}`), Names: []string{name}, Exclusive: true},
		}
		for k, st := range steps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st.At = time.Now()
				w, err := s.Write(c, st)
				results <- result{w, err, [...]string{"distinct", "same", "exclusive"}[k]}
			}()
		}
	}
	wg.Wait()
	close(results)
	seen := map[int]bool{}
	winners := 0
	for r := range results {
		require.NoError(t, r.err)
		switch r.what {
		case "distinct":
			seen[len(r.w.Records)] = true
		case "exclusive":
			if r.w.Taken == "" {
				winners++
			}
		}
	}
	for n := 1; n <= Replicas; n++ {
		assert.True(t, seen[n], "no Step read %d records: Steps are not atomic", n)
	}
	assert.Equal(t, 1, winners, "one Exclusive Step of a name writes")
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

// TestReadAndPeek checks that a Step reads its entry's records after the
// write when it asks, and another entry's when it peeks.
func TestReadAndPeek(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	key, other := unique("o:"), unique("u:")
	w, err := s.Write(c, journal.Step{Key: key, ID: "a", Record: []byte(`{"n":1}`), At: time.Now(), Peek: other})
	require.NoError(t, err)
	assert.Empty(t, w.Records, "no Read, no records")
	assert.Empty(t, w.Peeked, "an entry that does not exist has none")
	write(t, s, other, "u", `{"u":1}`)
	w, err = s.Write(c, journal.Step{Key: key, ID: "b", Record: []byte(`{"n":2}`), At: time.Now(), Read: true, Peek: other})
	require.NoError(t, err)
	assert.Equal(t, []string{`{"n":1}`, `{"n":2}`}, sorted(w.Records))
	assert.Equal(t, []string{`{"u":1}`}, sorted(w.Peeked))
}

// writeEntries writes four entries of three Steps' stages, times and
// references for TestEntries, and returns the time they start from, the
// prefix of their references and their keys.
func writeEntries(t *testing.T, s journal.Store) (time.Time, string, []string) {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	prefix := unique("ref-")
	keys := []string{unique("o:"), unique("o:"), unique("i:"), unique("o:")}
	for i, st := range []struct {
		entry int
		stage journal.Stage
		at    time.Duration
		ref   string
	}{
		{0, journal.StageNone, 0, prefix + "-a"},
		{0, journal.StageInitiated, 10 * time.Second, ""},
		{1, journal.StageNone, 5 * time.Second, prefix + "-b"},
		{2, journal.StageInitiated, 20 * time.Second, ""},
		{2, journal.StageInquiryAnswered, 30 * time.Second, "later-" + prefix},
		{3, journal.StageResolved, 40 * time.Second, "other"},
		{3, journal.StageInitiated, 15 * time.Second, prefix + "-ignored"}, // earlier At, lower stage, second ref: none count
	} {
		_, err := s.Write(ctx(t), journal.Step{Key: keys[st.entry], ID: fmt.Sprint(i), Record: []byte(fmt.Sprintf(`{"n":%d}`, i)),
			At: base.Add(st.at), Stage: st.stage, Ref: st.ref})
		require.NoError(t, err)
	}
	return base, prefix, keys
}

// collect returns the keys that q yields, in order, of those in mine (the
// backend may hold other tests' entries), with their records.
func collect(t *testing.T, s journal.Store, q journal.Query, mine map[string]bool) ([]string, map[string][]string) {
	t.Helper()
	var keys []string
	recs := map[string][]string{}
	for e, err := range s.Entries(ctx(t), q) {
		require.NoError(t, err)
		if mine[e.Key] {
			require.NotContains(t, keys, e.Key, "an entry yielded twice")
			keys = append(keys, e.Key)
			recs[e.Key] = sorted(e.Records)
		}
	}
	return keys, recs
}

// TestEntries checks the index's queries: by stage (the highest of an
// entry's Steps), by the time of its latest Step, by the prefix of its
// first reference, newest first, with the entries' records; and that a
// loop that breaks stops.
func TestEntries(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	base, prefix, keys := writeEntries(t, s)
	mine := map[string]bool{}
	for _, k := range keys {
		mine[k] = true
	}
	for _, tc := range []struct {
		name string
		q    journal.Query
		want []int
	}{
		{"all, newest first", journal.Query{}, []int{3, 2, 0, 1}},
		{"stage", journal.Query{Stages: []journal.Stage{journal.StageInitiated}}, []int{0}},
		{"stages", journal.Query{Stages: []journal.Stage{journal.StageNone, journal.StageResolved}}, []int{3, 1}},
		{"from", journal.Query{From: base.Add(10 * time.Second)}, []int{3, 2, 0}},
		{"to", journal.Query{To: base.Add(10 * time.Second)}, []int{1}},
		{"range", journal.Query{From: base.Add(5 * time.Second), To: base.Add(31 * time.Second)}, []int{2, 0, 1}},
		{"ref prefix", journal.Query{RefPrefix: prefix}, []int{0, 1}},
		{"all of them", journal.Query{RefPrefix: prefix, Stages: []journal.Stage{journal.StageNone}, From: base}, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := collect(t, s, tc.q, mine)
			var want []string
			for _, i := range tc.want {
				want = append(want, keys[i])
			}
			assert.Equal(t, want, got)
		})
	}
	_, recs := collect(t, s, journal.Query{}, mine)
	assert.Equal(t, []string{`{"n":0}`, `{"n":1}`}, recs[keys[0]], "an entry comes with its records")

	calls := 0
	for _, err := range s.Entries(c, journal.Query{}) {
		require.NoError(t, err)
		calls++
		break
	}
	assert.Equal(t, 1, calls)
}

// TestTimeOfRecords checks that an entry's time in the index is that of
// its latest record: a Step of an id the entry holds (a callback
// delivered again) writes no record and moves it not.
func TestTimeOfRecords(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	key := unique("o:")
	for _, at := range []time.Duration{0, time.Hour} {
		_, err := s.Write(c, journal.Step{Key: key, ID: "cb:d-1", Record: []byte(`{}`), At: base.Add(at)})
		require.NoError(t, err)
	}
	mine := map[string]bool{key: true}
	got, _ := collect(t, s, journal.Query{To: base.Add(time.Minute)}, mine)
	assert.Equal(t, []string{key}, got, "the entry's time is its record's")
	got, _ = collect(t, s, journal.Query{From: base.Add(time.Minute)}, mine)
	assert.Empty(t, got)
}

// TestPages checks that Entries yields every entry once, newest first,
// across the pages a store reads, even when many entries share a time.
func TestPages(t *testing.T, open Open) {
	s := open(t, Config{Retention: long})
	prefix := unique("page-")
	const n = 1234
	at := time.Now().Truncate(time.Second)
	mine := map[string]bool{}
	var want []string
	for i := range n {
		key := fmt.Sprintf("o:%s-%04d", prefix, i)
		mine[key] = true
		_, err := s.Write(ctx(t), journal.Step{Key: key, ID: "r", Record: []byte(`{}`), At: at.Add(time.Duration(i/100) * time.Millisecond), Ref: prefix})
		require.NoError(t, err)
		want = append(want, key)
	}
	got, _ := collect(t, s, journal.Query{RefPrefix: prefix}, mine)
	require.Len(t, got, n)
	assert.ElementsMatch(t, want, got)
	for i := 1; i < n; i++ {
		assert.GreaterOrEqual(t, got[i-1][len(got[i-1])-4:len(got[i-1])-2], got[i][len(got[i])-4:len(got[i])-2], "newest first")
	}
}

// TestOpenAndClose checks the index of open entries: a Step opens its
// entry, Close closes it only if it still holds the records counted, and
// a Step after Close opens it again.
func TestOpenAndClose(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: long}), ctx(t)
	key, other := unique("o:"), unique("o:")
	mine := map[string]bool{key: true, other: true}
	write(t, s, key, "a", `{"n":1}`)
	write(t, s, other, "a", `{"n":1}`)
	openKeys := func() []string {
		got, _ := collect(t, s, journal.Query{Open: true}, mine)
		slices.Sort(got)
		return got
	}
	want := []string{key, other}
	slices.Sort(want)
	assert.Equal(t, want, openKeys())

	require.NoError(t, s.Close(c, key, 1))
	assert.Equal(t, []string{other}, openKeys(), "closed")
	all, _ := collect(t, s, journal.Query{}, mine)
	assert.Len(t, all, 2, "a closed entry is still kept")

	write(t, s, key, "b", `{"n":2}`)
	assert.Equal(t, want, openKeys(), "a Step opens it again")
	require.NoError(t, s.Close(c, key, 1))
	assert.Equal(t, want, openKeys(), "Close of a count the entry no longer holds changes nothing")
	require.NoError(t, s.Close(c, key, 2))
	require.NoError(t, s.Close(c, unique("o:"), 0), "closing an entry that does not exist is no error")
	assert.Equal(t, []string{other}, openKeys())
}

// TestRetention checks that Steps keep an entry past its first record's
// retention, and that an entry is forgotten, with its names and its place
// in the index, once a retention passed after its last record.
func TestRetention(t *testing.T, open Open) {
	s, c := open(t, Config{Retention: short}), ctx(t)
	var key, name string
	// Keep writing for twice the retention, checking after each Step
	// that the first record is still there. The check is made only while
	// every gap so far, from the start of one Step to the end of the
	// check after the next, came within the retention: a machine that
	// stalled longer may have let the entry lapse, as it should, and the
	// sequence starts again on a new entry (at most a few times).
	for try := 0; ; try++ {
		require.Less(t, try, 5, "the machine stalled for a retention (%s) in every try", short)
		key, name = unique("o:"), unique("ref:")
		prev := time.Now()
		write(t, s, key, "first", `{"n":0}`, name)
		stalled := false
		for i, start := 1, time.Now(); time.Since(start) < 2*short; i++ {
			begin := time.Now()
			write(t, s, key, fmt.Sprint(i), `{}`)
			recs, err := s.Records(c, key)
			require.NoError(t, err)
			if time.Since(prev) >= short {
				stalled = true
				break
			}
			prev = begin
			require.Contains(t, sorted(recs), `{"n":0}`, "a Step keeps the whole entry")
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
	for _, q := range []journal.Query{{}, {Open: true}} {
		got, _ := collect(t, s, q, map[string]bool{key: true})
		assert.Empty(t, got, "Entries does not yield a forgotten entry")
	}
}
