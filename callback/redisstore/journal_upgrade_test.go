//go:build unix

package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal"
)

// The previous release's scripts (git show v-before-#42:
// callback/redisstore/journal.go), as it sent them: its Append and its
// Lookup.
const (
	oldAppendLua = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = string.format('%.0f', now + tonumber(ARGV[4]))
redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3])
for i = 3, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1])
  redis.call('HSET', KEYS[1], string.sub(KEYS[i], #ARGV[5] + 1), '')
end
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 2) == 'n:' then
    local name = ARGV[5] .. f
    if redis.call('GET', name) == ARGV[1] then
      redis.call('PEXPIREAT', name, exp)
    else
      redis.call('HDEL', KEYS[1], f)
    end
  end
end
redis.call('PEXPIREAT', KEYS[1], exp)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. string.format('%.0f', now))
redis.call('ZADD', KEYS[2], exp, ARGV[1])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[4]) then
  redis.call('PEXPIREAT', KEYS[2], exp)
end
return 1
`
	oldLookupLua = `
local key = redis.call('GET', KEYS[1])
if key and redis.call('EXISTS', ARGV[1] .. 'e:' .. key) == 1 then return key end
return false
`
)

// oldStore writes a journal as a replica of the previous release does:
// each record with the previous release's Append, as it called it, and
// the reads a Step asks for with commands of their own. It is a
// journal.Store only so that a journal.Journal of this release makes the
// records (their format did not change); it has no index to query.
type oldStore struct {
	c         *redis.Client
	prefix    string
	retention time.Duration
}

func (s *oldStore) Write(ctx context.Context, st journal.Step) (journal.Written, error) {
	if st.Exclusive {
		for _, n := range st.Names {
			if k, _ := s.Lookup(ctx, n); k != "" && k != st.Key {
				return journal.Written{Taken: k}, nil
			}
		}
	}
	if err := s.append(ctx, st.Key, st.ID, st.Record, st.Names...); err != nil {
		return journal.Written{}, err
	}
	var w journal.Written
	var err error
	if st.Read {
		w.Records, err = s.Records(ctx, st.Key)
	}
	if st.Peek != "" && err == nil {
		w.Peeked, err = s.Records(ctx, st.Peek)
	}
	return w, err
}

// append is the previous release's JournalStore.Append.
func (s *oldStore) append(ctx context.Context, key, id string, rec []byte, names ...string) error {
	keys := []string{s.prefix + "e:" + key, s.prefix + "index"}
	for _, n := range names {
		keys = append(keys, s.prefix+"n:"+n)
	}
	return s.c.Eval(ctx, oldAppendLua, keys, key, "r:"+id, rec, s.retention.Milliseconds(), s.prefix).Err()
}

func (s *oldStore) Records(ctx context.Context, key string) ([][]byte, error) {
	var recs [][]byte
	for f, v := range s.c.HGetAll(ctx, s.prefix+"e:"+key).Val() {
		if len(f) > 2 && f[:2] == "r:" {
			recs = append(recs, []byte(v))
		}
	}
	return recs, nil
}

func (s *oldStore) Lookup(ctx context.Context, name string) (string, error) {
	key, err := s.c.Eval(ctx, oldLookupLua, []string{s.prefix + "n:" + name}, s.prefix).Text()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return key, err
}

func (s *oldStore) Entries(context.Context, journal.Query) iter.Seq2[journal.Stored, error] {
	return func(yield func(journal.Stored, error) bool) {
		yield(journal.Stored{}, errors.New("the previous release had no index of entries"))
	}
}

func (s *oldStore) Close(context.Context, string, int) error { return nil }

// initiate makes, through the observer methods the client calls, an
// initiation under ref that ends with outcome (and the transfer id tid
// when it succeeded).
func initiate(t *testing.T, j *journal.Journal, ref string, outcome travelrule.CallOutcome, tid string) {
	t.Helper()
	ctx := context.Background()
	info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: ref}
	cctx, err := j.StartCall(ctx, info)
	require.NoError(t, err)
	j.EndCall(cctx, info, &travelrule.CallEnd{Outcome: outcome, TransferID: tid, Attempts: 1})
	require.Zero(t, j.Lost())
}

// storedKeys returns the keys q yields from s, of those in mine.
func storedKeys(t *testing.T, s journal.Store, q journal.Query, mine ...string) []string {
	t.Helper()
	var got []string
	for e, err := range s.Entries(context.Background(), q) {
		require.NoError(t, err)
		if slices.Contains(mine, e.Key) {
			got = append(got, e.Key)
		}
	}
	slices.Sort(got)
	return got
}

// TestJournalPreviousRelease opens this release's store on a journal the
// previous release wrote (its layout, by its scripts), then lets a
// replica of the previous release go on writing, as during a rolling
// deploy: the entries keep their records and names, every query of the
// store lists them (without their index data it cannot filter them: the
// journal does), Stuck finds the stuck ones and closes the others, and
// the old replica's new entries, and its writes to entries Stuck closed,
// are seen by the next Stuck.
func TestJournalPreviousRelease(t *testing.T) {
	ctx := context.Background()
	c := startRedis(t).Client(t, nil)
	old := &oldStore{c: c, prefix: "up:", retention: time.Hour}
	t0 := time.Now()
	j0, err := journal.New(old, journal.WithClock(func() time.Time { return t0 }))
	require.NoError(t, err)
	initiate(t, j0, "ref-a", travelrule.CallOutcomeUnknown, "") // stuck
	initiate(t, j0, "ref-b", travelrule.CallSucceeded, "tid-b") // stored, stuck once no resolution came
	initiate(t, j0, "ref-c", travelrule.CallNotDone, "")        // not stored: never stuck
	a, b, cc := "o:ref-a", "o:ref-b", "o:ref-c"
	require.Equal(t, []string{"up:index"}, c.Keys(ctx, "up:index*").Val(), "the previous release's layout")

	s := redisstore.NewJournal(c, redisstore.WithPrefix("up:"), redisstore.WithRetention(time.Hour))
	require.NoError(t, s.Err())
	for _, k := range []string{a, b, cc} {
		want, _ := old.Records(ctx, k)
		got, err := s.Records(ctx, k)
		require.NoError(t, err)
		assert.ElementsMatch(t, want, got, "%s keeps its records", k)
	}
	got, err := s.Lookup(ctx, "tid:tid-b")
	require.NoError(t, err)
	assert.Equal(t, b, got, "names point where they did")

	all := []string{a, b, cc}
	for _, q := range []journal.Query{{}, {Open: true}, {Stages: []journal.Stage{journal.StageConfirmed}}, {RefPrefix: "nothing-"}, {From: t0.Add(-time.Hour)}} {
		assert.Equal(t, all, storedKeys(t, s, q, all...), "the store lists every entry of the previous release for %+v", q)
	}
	later := t0.Add(25 * time.Hour)
	j1, err := journal.New(s, journal.WithClock(func() time.Time { return later }))
	require.NoError(t, err)
	var byRef []string
	for e, err := range j1.Entries(ctx, journal.Query{Stages: []journal.Stage{journal.StageInitiated}}) {
		require.NoError(t, err)
		byRef = append(byRef, e.Ref)
	}
	assert.Equal(t, []string{"ref-b"}, byRef, "the journal filters what the store could not")
	assert.Equal(t, []string{a, b}, stuckKeys(t, j1))
	assert.Equal(t, []string{a, b}, storedKeys(t, s, journal.Query{Open: true}, all...), "Stuck closed the entry that needs no one")

	// The deploy goes on: a new replica writes, then an old one.
	initiate(t, j1, "ref-d", travelrule.CallSucceeded, "tid-d")
	assert.Contains(t, c.ZRange(ctx, "up:index", 0, -1).Val(), "o:ref-d", "the old replicas' index lists the new entries")
	initiate(t, j0, "ref-e", travelrule.CallOutcomeUnknown, "")
	require.NoError(t, old.append(ctx, cc, "late", []byte(`{"k":"late"}`)))
	require.NoError(t, old.append(ctx, "o:ref-d", "late", []byte(`{"k":"late"}`)))
	all = append(all, "o:ref-d", "o:ref-e")
	assert.Equal(t, []string{a, b, cc, "o:ref-d", "o:ref-e"}, storedKeys(t, s, journal.Query{Open: true}, all...),
		"an old replica's new entry is open, and so are the entries it wrote to")
	initiate(t, j1, "ref-f", travelrule.CallSucceeded, "tid-f")
	require.NoError(t, old.append(ctx, "o:ref-f", "late", []byte(`{"k":"late"}`)))
	for _, k := range []string{a, "o:ref-f"} { // written by an old replica last, before a migration for f
		_, err = s.Write(ctx, journal.Step{Key: k, ID: "new", Record: []byte(`{}`), At: later, Stage: journal.StageNone})
		require.NoError(t, err)
	}
	all = append(all, "o:ref-f")
	assert.Equal(t, all, storedKeys(t, s, journal.Query{Stages: []journal.Stage{journal.StageConfirmed}}, all...),
		"an entry an old replica wrote to, before or after this release's Writes, has no stage a filter trusts")
	assert.Equal(t, []string{a, b, "o:ref-e"}, stuckKeys(t, j1))
}

// stuckKeys returns the keys of the entries Stuck reports, sorted.
func stuckKeys(t *testing.T, j *journal.Journal) []string {
	t.Helper()
	found, err := j.Stuck(context.Background(), journal.Thresholds{})
	require.NoError(t, err)
	var keys []string
	for _, f := range found {
		keys = append(keys, "o:"+f.Entry.Ref)
	}
	slices.Sort(keys)
	return keys
}

// TestJournalMigrationBacklog opens this release's store on a journal of
// the previous release that holds more entries than one script migrates:
// the first query lists each once, newest first (by the time of its last
// write, as the server saw it), and so does the next, which migrates
// nothing.
func TestJournalMigrationBacklog(t *testing.T) {
	ctx := context.Background()
	c := startRedis(t).Client(t, nil)
	const n = 2500
	pipe := c.Pipeline()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("o:%04d", i)
		pipe.Eval(ctx, oldAppendLua, []string{"up:e:" + keys[i], "up:index"}, keys[i], "r:1", `{}`, time.Hour.Milliseconds(), "up:")
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	s := redisstore.NewJournal(c, redisstore.WithPrefix("up:"), redisstore.WithRetention(time.Hour))
	for range 2 {
		got, _ := keysOf(t, s.Entries(ctx, journal.Query{Open: true}))
		require.Equal(t, n, len(got), "every entry, once")
		assert.ElementsMatch(t, keys, got)
		assert.Equal(t, keys[n-1], got[0], "newest first")
	}
}

// TestJournalMixedRetentions queries, with a store of a short retention,
// a prefix where a store of a long one wrote more entries than one script
// migrates (as the contract suite's stores share a server): the
// migration's watermark, which follows the short retention's expiries,
// still moves past them, and every query ends.
func TestJournalMixedRetentions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := startRedis(t).Client(t, nil)
	long := redisstore.NewJournal(c, redisstore.WithPrefix("mix:"), redisstore.WithRetention(time.Hour))
	short := redisstore.NewJournal(c, redisstore.WithPrefix("mix:"), redisstore.WithRetention(time.Second))
	steps := make([]journal.Step, 1500)
	for i := range steps {
		steps[i] = journal.Step{Key: fmt.Sprintf("o:%04d", i), ID: "r", Record: []byte(`{}`), At: time.Now()}
	}
	require.NoError(t, long.WriteMany(ctx, steps))
	for range 3 {
		got, _ := keysOf(t, short.Entries(ctx, journal.Query{}))
		require.Equal(t, len(steps), len(got))
	}
}
