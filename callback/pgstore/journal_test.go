//go:build unix

package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/journal"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// TestJournalStore runs the journal's contract suite: every store it
// opens is a replica with a pool of its own, and all share one set of
// tables; once with the automatic sweep at its default, once sweeping
// after nearly every write, so that sweeps meet writes, once on a
// database whose sessions default to REPEATABLE READ, and to
// SERIALIZABLE, and once on tables of
// the previous release, which the first store migrates.
func TestJournalStore(t *testing.T) {
	tests := []struct {
		name     string
		extra    []string // settings of the pools
		opts     []pgstore.Option
		previous bool // the tables are the previous release's
	}{
		{"default", nil, nil, false},
		{"sweeping", nil, []pgstore.Option{pgstore.WithSweepInterval(time.Millisecond)}, false},
		{"repeatable read", []string{"default_transaction_isolation='repeatable read'"}, nil, false},
		{"serializable", []string{"default_transaction_isolation=serializable"}, nil, false},
		{"migrated", nil, nil, true},
	}
	srv := sharedServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := newTableName(t)
			if tt.previous {
				newPreviousRelease(t, newPool(t, srv, 2), table, time.Hour)
			}
			storetest.Run(t, func(t *testing.T, cfg storetest.Config) journal.Store {
				opts := append([]pgstore.Option{pgstore.WithTable(table), pgstore.WithRetention(cfg.Retention)}, tt.opts...)
				return newJournal(t, newPool(t, srv, 50, tt.extra...), opts...)
			})
		})
	}
}

// newJournal returns pgstore.NewJournal(pool, opts...), failing t on an
// error.
func newJournal(t testing.TB, pool *pgxpool.Pool, opts ...pgstore.Option) *pgstore.JournalStore {
	t.Helper()
	s, err := pgstore.NewJournal(context.Background(), pool, opts...)
	require.NoError(t, err)
	return s
}

// journalTables are the quoted names of the records, entries and names
// tables of the base table base in schema.
func journalTables(schema, base string) [3]string {
	return [3]string{
		pgx.Identifier{schema, base}.Sanitize(),
		pgx.Identifier{schema, base + "_entries"}.Sanitize(),
		pgx.Identifier{schema, base + "_names"}.Sanitize(),
	}
}

// countAll returns the counts of rows of tables.
func countAll(t testing.TB, pool *pgxpool.Pool, tables [3]string) [3]int64 {
	t.Helper()
	var n [3]int64
	for i, q := range tables {
		n[i] = countRows(t, pool, q, "true")
	}
	return n
}

// TestNewJournalOptions checks the options NewJournal refuses, and its
// defaults: the table travelrule_journal, found through the search_path,
// and a retention of journal.DefaultRetention; its fmt form shows neither
// the connection string nor anything of it.
func TestNewJournalOptions(t *testing.T) {
	srv := sharedServer(t)
	pool := newPool(t, srv, 2)
	tests := []struct {
		name string
		pool *pgxpool.Pool
		opts []pgstore.Option
		want string // in the error
	}{
		{"nil pool", nil, nil, "nil pool"},
		{"a lease", pool, []pgstore.Option{pgstore.WithLease(time.Minute)}, "WithLease does not apply"},
		{"no retention", pool, []pgstore.Option{pgstore.WithRetention(0)}, "WithRetention"},
		{"no timeout", pool, []pgstore.Option{pgstore.WithTimeout(0)}, "WithTimeout"},
		{"a negative sweep interval", pool, []pgstore.Option{pgstore.WithSweepInterval(-time.Second)}, "WithSweepInterval"},
		{"three parts", pool, []pgstore.Option{pgstore.WithTable("a.b.c")}, "more than two parts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pgstore.NewJournal(context.Background(), tt.pool, tt.opts...)
			require.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("defaults", func(t *testing.T) {
		s := newJournal(t, pool)
		want := `{Tables:["public"."travelrule_journal" "public"."travelrule_journal_entries" "public"."travelrule_journal_names"] Retention:720h0m0s Timeout:5s SweepInterval:1m0s}`
		for _, form := range []string{fmt.Sprint(s), fmt.Sprintf("%v", *s), fmt.Sprintf("%+v", s)} {
			assert.Equal(t, want, form)
		}
		assert.Equal(t, "pgstore.JournalStore"+want, fmt.Sprintf("%#v", s))
		assert.NotContains(t, fmt.Sprintf("%#v", s), srv.dsn())
		assert.Equal(t, [3]int64{}, countAll(t, pool, journalTables("public", pgstore.DefaultJournalTable)))
	})
}

// write makes a Step of a record on key, with names, at the journal's
// time at, failing t on an error.
func write(t testing.TB, s journal.Store, key, id, rec string, names ...string) {
	t.Helper()
	_, err := s.Write(context.Background(), journal.Step{Key: key, ID: id, Record: []byte(rec), Names: names, At: time.Now()})
	require.NoError(t, err)
}

// keys returns the keys that q yields, in order.
func keys(t testing.TB, s journal.Store, q journal.Query) []string {
	t.Helper()
	var out []string
	for e, err := range s.Entries(context.Background(), q) {
		require.NoError(t, err)
		out = append(out, e.Key)
	}
	return out
}

// TestJournalTables starts a store on a base table named without a
// schema, then makes the pool's session find same-named tables of another
// schema first: the store still reads and writes the tables it created in
// the schema of the search_path NewJournal ran with, and leaves the
// others alone. A base table of 63 bytes, PostgreSQL's limit, gets tables
// and indexes of its own too.
func TestJournalTables(t *testing.T) {
	srv := sharedServer(t)
	admin := newPool(t, srv, 2)
	ctx := context.Background()
	long := strings.Repeat("j", 63)
	for _, base := range []string{"journal", long} {
		t.Run(fmt.Sprint(len(base)), func(t *testing.T) {
			suffix := newTableName(t)[5:]
			ours, tenant := "ours_"+suffix, "tenant_"+suffix
			for _, schema := range []string{ours, tenant} {
				_, err := admin.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize())
				require.NoError(t, err)
			}
			other := newJournal(t, admin, pgstore.WithTable(tenant+"."+base))
			write(t, other, "o:1", "r", `{"theirs":1}`, "n")

			pool, switchTo := setPool(t, srv, ours)
			s := newJournal(t, pool, pgstore.WithTable(base))
			switchTo(tenant + ", " + ours)
			write(t, s, "o:1", "r", `{"ours":1}`, "n")
			write(t, s, "o:1", "q", `{"ours":2}`, "m")
			recs, err := s.Records(ctx, "o:1")
			require.NoError(t, err)
			assert.ElementsMatch(t, [][]byte{[]byte(`{"ours":1}`), []byte(`{"ours":2}`)}, recs)
			assert.Equal(t, []string{"o:1"}, keys(t, s, journal.Query{Open: true}))
			require.NoError(t, s.Close(ctx, "o:1", 2))
			assert.Empty(t, keys(t, s, journal.Query{Open: true}))
			assert.Equal(t, []string{"o:1"}, keys(t, other, journal.Query{Open: true}), "the other tables' entry is still open")

			var tables [2][]string
			for i, schema := range []string{ours, tenant} {
				rows, err := admin.Query(ctx, `SELECT tablename::text FROM pg_tables WHERE schemaname = $1 UNION ALL
SELECT indexname::text FROM pg_indexes WHERE schemaname = $1`, schema)
				require.NoError(t, err)
				tables[i], err = pgx.CollectRows(rows, pgx.RowTo[string])
				require.NoError(t, err)
			}
			assert.Len(t, tables[0], 12, "tables and indexes (three primary keys, the entries' indexes on expires_at, updated, stage, open and ref, the names' on key)")
			assert.ElementsMatch(t, tables[0], tables[1], "both schemas have the same tables and indexes")
			for _, name := range tables[0] {
				assert.LessOrEqual(t, len(name), 63, name)
			}
			if base != long {
				assert.Contains(t, fmt.Sprint(s), pgx.Identifier{ours, base}.Sanitize())
				assert.Equal(t, [3]int64{2, 1, 2}, countAll(t, admin, journalTables(ours, base)), "the store's tables")
				assert.Equal(t, [3]int64{1, 1, 1}, countAll(t, admin, journalTables(tenant, base)), "the other tables")
			}
		})
	}
}

// The DDL of the tables as this release makes them (the package doc's),
// with %[1]s for the base table.
const (
	recordsDDL = `CREATE TABLE %[1]s (key text NOT NULL, id text NOT NULL, rec bytea NOT NULL, at timestamptz NOT NULL, PRIMARY KEY (key, id))`
	entriesDDL = `CREATE TABLE %[1]s_entries (key text PRIMARY KEY, since timestamptz NOT NULL, expires_at timestamptz NOT NULL,
	updated timestamptz NOT NULL DEFAULT now(), stage smallint NOT NULL DEFAULT -1, ref text COLLATE "C" NOT NULL DEFAULT '', open boolean NOT NULL DEFAULT true);
CREATE INDEX ON %[1]s_entries (expires_at);
CREATE INDEX ON %[1]s_entries (updated, key);
CREATE INDEX ON %[1]s_entries (stage, updated, key);
CREATE INDEX ON %[1]s_entries (updated, key) WHERE open;
CREATE INDEX ON %[1]s_entries (ref)`
	namesDDL = `CREATE TABLE %[1]s_names (name text PRIMARY KEY, key text NOT NULL, at timestamptz NOT NULL);
CREATE INDEX ON %[1]s_names (key)`
)

// without returns ddl without its statement that contains s.
func without(ddl, s string) string {
	var out []string
	for _, stmt := range strings.Split(ddl, ";\n") {
		if !strings.Contains(stmt, s) {
			out = append(out, stmt)
		}
	}
	return strings.Join(out, ";\n")
}

// TestNewJournalRefusesATableOfAnotherShape starts a store on tables made
// beforehand, one of which differs from what the store needs: NewJournal
// refuses, saying what differs, but for a table that lacks only this
// release's columns or indexes, which it adds (and which a store
// WithoutCreatingTables refuses with ErrMigrationNeeded).
func TestNewJournalRefusesATableOfAnotherShape(t *testing.T) {
	tests := []struct {
		name string
		ddl  []string
		want string // in the error; "migrate" for none, after a migration
	}{
		{"as the store makes them", []string{recordsDDL, entriesDDL, namesDDL}, ""},
		{"a record of text", []string{strings.Replace(recordsDDL, "rec bytea", "rec text", 1), entriesDDL, namesDDL}, "the column rec is text, not bytea"},
		{"no primary key on records", []string{strings.Replace(recordsDDL, ", PRIMARY KEY (key, id)", "", 1), entriesDDL, namesDDL}, "no primary key on (key, id)"},
		{"a primary key on the key alone", []string{strings.Replace(recordsDDL, "(key, id)", "(key)", 1), entriesDDL, namesDDL}, "no primary key on (key, id)"},
		{"no index on expires_at", []string{recordsDDL, without(entriesDDL, "(expires_at)"), namesDDL}, "no index (expires_at)"},
		{"no column since", []string{recordsDDL, strings.Replace(entriesDDL, "since", "born", 1), namesDDL}, "no column since"},
		{"no index on the names' key", []string{recordsDDL, entriesDDL, without(namesDDL, "(key)")}, "no index (key)"},
		{"a stage of another type", []string{recordsDDL, strings.Replace(entriesDDL, "stage smallint", "stage integer", 1), namesDDL}, "the column stage is integer, not smallint"},
		{"a ref of another collation", []string{recordsDDL, strings.Replace(entriesDDL, `COLLATE "C"`, `COLLATE "POSIX"`, 1), namesDDL}, `the column ref is not of collation "C"`},
		{"an updated that may be NULL", []string{recordsDDL, strings.Replace(entriesDDL, "updated timestamptz NOT NULL", "updated timestamptz", 1), namesDDL}, "the column updated is not NOT NULL"},
		{"the previous release's", []string{recordsDDL, `CREATE TABLE %[1]s_entries (key text PRIMARY KEY, since timestamptz NOT NULL, expires_at timestamptz NOT NULL);
CREATE INDEX ON %[1]s_entries (expires_at)`, namesDDL}, "migrate"},
		{"no index on open entries", []string{recordsDDL, without(entriesDDL, "WHERE open"), namesDDL}, "migrate"},
		{"no index on ref", []string{recordsDDL, without(entriesDDL, "(ref)"), namesDDL}, "migrate"},
	}
	pool := newPool(t, sharedServer(t), 2)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := newTableName(t)
			for _, ddl := range tt.ddl {
				_, err := pool.Exec(ctx, fmt.Sprintf(ddl, table))
				require.NoError(t, err)
			}
			_, err := pgstore.NewJournal(ctx, pool, pgstore.WithTable(table), pgstore.WithoutCreatingTables())
			switch tt.want {
			case "":
				require.NoError(t, err)
				return
			case "migrate":
				require.ErrorIs(t, err, pgstore.ErrMigrationNeeded)
				assert.ErrorContains(t, err, "this release's index")
				_, err = pgstore.NewJournal(ctx, pool, pgstore.WithTable(table))
				require.NoError(t, err, "a store that may create tables migrates")
				_, err = pgstore.NewJournal(ctx, pool, pgstore.WithTable(table), pgstore.WithoutCreatingTables())
				require.NoError(t, err, "then one that may not opens")
				return
			}
			require.ErrorContains(t, err, tt.want)
			assert.NotErrorIs(t, err, pgstore.ErrMigrationNeeded)
			_, err = pgstore.NewJournal(ctx, pool, pgstore.WithTable(table))
			require.ErrorContains(t, err, tt.want, "a store that may create tables refuses it too")
		})
	}
}

// TestJournalConcurrentNew starts replicas at once on tables that do not
// exist yet, and on tables of the previous release, a few times: every
// NewJournal succeeds.
func TestJournalConcurrentNew(t *testing.T) {
	const replicas = 8
	pool := newPool(t, sharedServer(t), replicas)
	for i := range 6 {
		table := newTableName(t)
		if i%2 == 1 {
			newPreviousRelease(t, pool, table, time.Hour).Append(t, "o:1", "r", []byte(`{}`), "n")
		}
		errs := make(chan error, replicas)
		var wg sync.WaitGroup
		for range replicas {
			wg.Go(func() {
				_, err := pgstore.NewJournal(context.Background(), pool, pgstore.WithTable(table))
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	}
}

// waitExpired polls s until key has no records, and fails t after
// waitBound.
func waitExpired(t *testing.T, s journal.Store, key string) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		recs, err := s.Records(context.Background(), key)
		require.NoError(t, err)
		if len(recs) == 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "entry still kept after %v", waitBound)
		time.Sleep(10 * time.Millisecond) // polling the store, not waiting on time
	}
}

// TestJournalExpiredEntryStartsAnew writes to an entry that expired but
// was not swept: the entry starts anew, with the new record alone (even
// under an id it held before), its earlier names point nowhere, and its
// index holds the new Step's alone (its stage, time and reference), open
// again.
func TestJournalExpiredEntryStartsAnew(t *testing.T) {
	pool := newPool(t, sharedServer(t), 4)
	ctx := context.Background()
	table := newTableName(t)
	s := newJournal(t, pool, pgstore.WithTable(table), pgstore.WithRetention(200*time.Millisecond), pgstore.WithSweepInterval(0))
	at := time.Now()
	_, err := s.Write(ctx, journal.Step{Key: "o:1", ID: "a", Record: []byte(`{"life":1}`), Names: []string{"old"},
		At: at, Stage: journal.StageResolved, Ref: "first"})
	require.NoError(t, err)
	write(t, s, "o:1", "b", `{"life":1,"n":2}`)
	require.NoError(t, s.Close(ctx, "o:1", 2))
	waitExpired(t, s, "o:1")
	got, err := s.Lookup(ctx, "old")
	require.NoError(t, err)
	assert.Empty(t, got, "a name of an expired entry")
	assert.Equal(t, [3]int64{2, 1, 1}, countAll(t, pool, journalTables("public", table)), "rows before a sweep")
	assert.Empty(t, keys(t, s, journal.Query{}), "an expired entry is not yielded")

	_, err = s.Write(ctx, journal.Step{Key: "o:1", ID: "a", Record: []byte(`{"life":2}`), Names: []string{"new"},
		At: at.Add(-time.Hour), Stage: journal.StageInitiated, Ref: "second"})
	require.NoError(t, err)
	recs, err := s.Records(ctx, "o:1")
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte(`{"life":2}`)}, recs)
	for name, want := range map[string]string{"old": "", "new": "o:1"} {
		got, err := s.Lookup(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
	var all [][]byte
	for e, err := range s.Entries(ctx, journal.Query{}) {
		require.NoError(t, err)
		all = append(all, e.Records...)
	}
	assert.Equal(t, [][]byte{[]byte(`{"life":2}`)}, all)
	for _, tc := range []struct {
		q    journal.Query
		want []string
	}{
		{journal.Query{Open: true}, []string{"o:1"}},
		{journal.Query{Stages: []journal.Stage{journal.StageInitiated}}, []string{"o:1"}},
		{journal.Query{Stages: []journal.Stage{journal.StageResolved}}, nil},
		{journal.Query{RefPrefix: "second"}, []string{"o:1"}},
		{journal.Query{RefPrefix: "first"}, nil},
		{journal.Query{From: at.Add(-time.Minute)}, nil},
	} {
		assert.Equal(t, tc.want, keys(t, s, tc.q), "%+v", tc.q)
	}
}

// TestJournalCloseWaitsForAWriteUnderWay closes an entry while a Write of
// a second record is under way (another session wrote it as a Write does,
// holding the entry's row, and commits once Close waits for it): Close
// counts the records after the Write, so the entry, which holds more than
// Close was told, stays open.
func TestJournalCloseWaitsForAWriteUnderWay(t *testing.T) {
	srv := sharedServer(t)
	ctx := context.Background()
	table := newTableName(t)
	tables := journalTables("public", table)
	s := newJournal(t, newPool(t, srv, 2), pgstore.WithTable(table))
	write(t, s, "o:1", "a", `{"n":1}`)

	other := newPool(t, srv, 2)
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `UPDATE `+tables[1]+` SET open = true WHERE key = 'o:1'`)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO `+tables[0]+` (key, id, rec, at) VALUES ('o:1', 'b', '{"n":2}', now())`)
	require.NoError(t, err)
	closed := make(chan error, 1)
	go func() { closed <- s.Close(ctx, "o:1", 1) }()
	waitForLockWait(t, other, table)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-closed)
	assert.Equal(t, []string{"o:1"}, keys(t, s, journal.Query{Open: true}), "an entry of two records, closed at one, stays open")
	require.NoError(t, s.Close(ctx, "o:1", 2))
	assert.Empty(t, keys(t, s, journal.Query{Open: true}))
}

// TestJournalSweep writes to 1200 entries with a short retention, with
// names, next to entries that stay, waits until they expired, and sweeps:
// the sweep, in batches of 1000 entries, deletes the expired entries'
// rows of the three tables and nothing else.
func TestJournalSweep(t *testing.T) {
	const expiring, kept = 1200, 10
	pool := newPool(t, sharedServer(t), 16)
	ctx := context.Background()
	table := newTableName(t)
	tables := journalTables("public", table)
	short := newJournal(t, pool, pgstore.WithTable(table), pgstore.WithRetention(100*time.Millisecond), pgstore.WithSweepInterval(0))
	long := newJournal(t, pool, pgstore.WithTable(table), pgstore.WithSweepInterval(0))

	writeEntries(t, short, "short", expiring)
	writeEntries(t, long, "long", kept)
	// A name of an expiring entry that a kept entry takes over stays.
	write(t, long, "long:0", "r2", `{}`, "ref:short:0")
	require.Equal(t, [3]int64{2*expiring + 2*kept + 1, expiring + kept, expiring + kept}, countAll(t, pool, tables))
	waitCount(t, pool, tables[1], "expires_at <= now()", expiring)

	n, err := short.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(expiring), n, "entries the sweep deleted")
	assert.Equal(t, [3]int64{2*kept + 1, kept, kept + 1}, countAll(t, pool, tables), "rows left")
	for i := range kept {
		recs, err := short.Records(ctx, fmt.Sprint("long:", i))
		require.NoError(t, err)
		want := 2
		if i == 0 {
			want = 3 // and r2
		}
		assert.Len(t, recs, want)
	}
	got, err := short.Lookup(ctx, "ref:short:0")
	require.NoError(t, err)
	assert.Equal(t, "long:0", got)
	n, err = short.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "a second sweep")
}

// TestJournalEntriesPages reads 1234 entries, which Entries reads in
// pages of 500: it yields each once, newest first, with its records, and
// the loop's body may call the store (whose pool has a single
// connection), closing what it read.
func TestJournalEntriesPages(t *testing.T) {
	const entries = 1234
	ctx := context.Background()
	s := newJournal(t, newPool(t, sharedServer(t), 1), pgstore.WithTable(newTableName(t)))
	writeEntries(t, s, "o", entries)
	seen := map[string]int{}
	var last time.Time
	for e, err := range s.Entries(ctx, journal.Query{Open: true}) {
		require.NoError(t, err)
		assert.Zero(t, seen[e.Key], "entry %s yielded twice", e.Key)
		seen[e.Key] = len(e.Records)
		got, err := s.Lookup(ctx, "ref:"+e.Key)
		require.NoError(t, err)
		assert.Equal(t, e.Key, got)
		require.NoError(t, s.Close(ctx, e.Key, len(e.Records)))
		at := entryTime(t, e.Records)
		if !last.IsZero() {
			assert.False(t, at.After(last), "newest first")
		}
		last = at
	}
	assert.Equal(t, entries, len(seen), "entries yielded")
	for i := range entries {
		assert.Equal(t, 2, seen[fmt.Sprint("o:", i)], "records of an entry")
	}
	assert.Empty(t, keys(t, s, journal.Query{Open: true}), "each closed in the loop")
	assert.Len(t, keys(t, s, journal.Query{}), entries)
}

// TestJournalAutomaticSweep lets entries expire, then writes on a store
// whose automatic sweep is on: the write starts a sweep, and the expired
// entries' rows disappear.
func TestJournalAutomaticSweep(t *testing.T) {
	pool := newPool(t, sharedServer(t), 8)
	table := newTableName(t)
	tables := journalTables("public", table)
	short := newJournal(t, pool, pgstore.WithTable(table), pgstore.WithRetention(50*time.Millisecond), pgstore.WithSweepInterval(0))
	writeEntries(t, short, "short", 100)
	waitCount(t, pool, tables[1], "expires_at <= now()", 100)
	require.Equal(t, [3]int64{200, 100, 100}, countAll(t, pool, tables), "rows before the write")

	auto := newJournal(t, pool, pgstore.WithTable(table), pgstore.WithSweepInterval(10*time.Millisecond))
	write(t, auto, "o:1", "r", `{}`)
	for i, want := range []int64{1, 1, 0} {
		waitCount(t, pool, tables[i], "true", want)
	}
}

// writeEntries writes two records to each of n entries prefix:i, the
// first with the name ref:prefix:i, 16 at a time; entry i's records are
// at i ms after a base time, the second one later than the first.
func writeEntries(t *testing.T, s *pgstore.JournalStore, prefix string, n int) {
	t.Helper()
	errs := make(chan error, 2*n)
	next := make(chan int)
	base := time.Now().Add(-time.Hour)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range next {
				key := fmt.Sprint(prefix, ":", i)
				at := base.Add(time.Duration(i) * time.Millisecond)
				for k, rec := range []string{"sent", "acked"} {
					st := journal.Step{Key: key, ID: fmt.Sprint("r", k), Record: []byte(fmt.Sprintf(`{"k":%q,"at":%q}`, rec, at.Format(time.RFC3339Nano))), At: at}
					if k == 0 {
						st.Names = []string{"ref:" + key}
					}
					_, err := s.Write(context.Background(), st)
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// entryTime is the time of writeEntries' records.
func entryTime(t *testing.T, recs [][]byte) time.Time {
	t.Helper()
	var r struct{ At time.Time }
	require.NoError(t, json.Unmarshal(recs[0], &r))
	return r.At
}

// BenchmarkJournalWrite is the store's work for one Step of a new entry,
// a record of about 200 bytes with one name, on the shared server over
// loopback. Besides the wall time it reports cpu-ns/op, this process's
// CPU time (not the server's) per Write.
func BenchmarkJournalWrite(b *testing.B) {
	s, err := pgstore.NewJournal(context.Background(), newPool(b, sharedServer(b), 4), pgstore.WithTable(newTableName(b)))
	if err != nil {
		b.Fatal(err)
	}
	rec := []byte(`{"k":"sent","at":"2026-11-26T10:00:00.000000Z","transfer":"tr_01JD7ZQ6B6W3N8Y4X2K9V5M1C0","status":"pending","next":"2026-11-26T10:05:00.000000Z","attempt":1,"code":"","by":"originator","v":1,"pad":"x"}`)
	if len(rec) < 190 || len(rec) > 210 {
		b.Fatalf("the record is %d bytes", len(rec))
	}
	ctx := context.Background()
	perDelivery(b, func(key string) {
		if _, err := s.Write(ctx, journal.Step{Key: key, ID: "sent", Record: rec, Names: []string{key}, At: time.Now()}); err != nil {
			b.Fatal(err)
		}
	})
}
