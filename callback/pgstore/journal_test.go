//go:build unix

package pgstore_test

import (
	"context"
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
// after nearly every append, so that sweeps meet appends, and once on a
// database whose sessions default to REPEATABLE READ.
func TestJournalStore(t *testing.T) {
	tests := []struct {
		name  string
		extra []string // settings of the pools
		opts  []pgstore.Option
	}{
		{"default", nil, nil},
		{"sweeping", nil, []pgstore.Option{pgstore.WithSweepInterval(time.Millisecond)}},
		{"repeatable read", []string{"default_transaction_isolation='repeatable read'"}, nil},
	}
	srv := sharedServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := newTableName(t)
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
			require.NoError(t, other.Append(ctx, "o:1", "r", []byte(`{"theirs":1}`), "n"))

			pool, switchTo := setPool(t, srv, ours)
			s := newJournal(t, pool, pgstore.WithTable(base))
			switchTo(tenant + ", " + ours)
			require.NoError(t, s.Append(ctx, "o:1", "r", []byte(`{"ours":1}`), "n"))
			require.NoError(t, s.Append(ctx, "o:1", "q", []byte(`{"ours":2}`), "m"))
			recs, err := s.Records(ctx, "o:1")
			require.NoError(t, err)
			assert.ElementsMatch(t, [][]byte{[]byte(`{"ours":1}`), []byte(`{"ours":2}`)}, recs)

			var tables [2][]string
			for i, schema := range []string{ours, tenant} {
				rows, err := admin.Query(ctx, `SELECT tablename::text FROM pg_tables WHERE schemaname = $1 UNION ALL
SELECT indexname::text FROM pg_indexes WHERE schemaname = $1`, schema)
				require.NoError(t, err)
				tables[i], err = pgx.CollectRows(rows, pgx.RowTo[string])
				require.NoError(t, err)
			}
			assert.Len(t, tables[0], 8, "tables and indexes (three primary keys, the index on expires_at and on the names' key)")
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

// TestNewJournalRefusesATableOfAnotherShape starts a store on tables made
// beforehand, one of which differs from what the store needs: NewJournal
// refuses, saying what differs.
func TestNewJournalRefusesATableOfAnotherShape(t *testing.T) {
	records := `CREATE TABLE %[1]s (key text NOT NULL, id text NOT NULL, rec bytea NOT NULL, at timestamptz NOT NULL, PRIMARY KEY (key, id))`
	entries := `CREATE TABLE %[1]s_entries (key text PRIMARY KEY, since timestamptz NOT NULL, expires_at timestamptz NOT NULL);
CREATE INDEX ON %[1]s_entries (expires_at)`
	names := `CREATE TABLE %[1]s_names (name text PRIMARY KEY, key text NOT NULL, at timestamptz NOT NULL);
CREATE INDEX ON %[1]s_names (key)`
	tests := []struct {
		name string
		ddl  []string
		want string
	}{
		{"as the store makes them", []string{records, entries, names}, ""},
		{"a record of text", []string{strings.Replace(records, "rec bytea", "rec text", 1), entries, names}, "the column rec is text, not bytea"},
		{"no primary key on records", []string{strings.Replace(records, ", PRIMARY KEY (key, id)", "", 1), entries, names}, "no primary key on [id key]"},
		{"a primary key on the key alone", []string{strings.Replace(records, "(key, id)", "(key)", 1), entries, names}, "no primary key on [id key]"},
		{"no index on expires_at", []string{records, strings.Split(entries, ";")[0], names}, "no index whose first column is expires_at"},
		{"no column since", []string{records, strings.Replace(entries, "since", "born", 1), names}, "no column since"},
		{"no index on the names' key", []string{records, entries, strings.Split(names, ";")[0]}, "no index whose first column is key"},
	}
	pool := newPool(t, sharedServer(t), 2)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := newTableName(t)
			for _, ddl := range tt.ddl {
				_, err := pool.Exec(context.Background(), fmt.Sprintf(ddl, table))
				require.NoError(t, err)
			}
			_, err := pgstore.NewJournal(context.Background(), pool, pgstore.WithTable(table))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// TestJournalConcurrentNew starts replicas at once on tables that do not
// exist yet, a few times: every NewJournal succeeds.
func TestJournalConcurrentNew(t *testing.T) {
	const replicas = 8
	pool := newPool(t, sharedServer(t), replicas)
	for range 5 {
		table := newTableName(t)
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

// TestJournalExpiredEntryStartsAnew appends to an entry that expired but
// was not swept: the entry starts anew, with the new record alone (even
// under an id it held before), and its earlier names point nowhere.
func TestJournalExpiredEntryStartsAnew(t *testing.T) {
	pool := newPool(t, sharedServer(t), 4)
	ctx := context.Background()
	table := newTableName(t)
	s := newJournal(t, pool, pgstore.WithTable(table), pgstore.WithRetention(200*time.Millisecond), pgstore.WithSweepInterval(0))
	require.NoError(t, s.Append(ctx, "o:1", "a", []byte(`{"life":1}`), "old"))
	require.NoError(t, s.Append(ctx, "o:1", "b", []byte(`{"life":1,"n":2}`)))
	waitExpired(t, s, "o:1")
	got, err := s.Lookup(ctx, "old")
	require.NoError(t, err)
	assert.Empty(t, got, "a name of an expired entry")
	assert.Equal(t, [3]int64{2, 1, 1}, countAll(t, pool, journalTables("public", table)), "rows before a sweep")

	require.NoError(t, s.Append(ctx, "o:1", "a", []byte(`{"life":2}`), "new"))
	recs, err := s.Records(ctx, "o:1")
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte(`{"life":2}`)}, recs)
	for name, want := range map[string]string{"old": "", "new": "o:1"} {
		got, err := s.Lookup(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
	var scanned [][]byte
	require.NoError(t, s.Scan(ctx, func(key string, recs [][]byte) error {
		scanned = append(scanned, recs...)
		return nil
	}))
	assert.Equal(t, [][]byte{[]byte(`{"life":2}`)}, scanned)
}

// TestJournalSweep appends to 1200 entries with a short retention, with
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

	appendEntries(t, short, "short", expiring)
	appendEntries(t, long, "long", kept)
	// A name of an expiring entry that a kept entry takes over stays.
	require.NoError(t, long.Append(ctx, "long:0", "r2", []byte(`{}`), "ref:short:0"))
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

// TestJournalScanPages scans 1234 entries, which Scan reads in pages of
// 500: it sees each once, with its records, and fn may call the store
// (whose pool has a single connection).
func TestJournalScanPages(t *testing.T) {
	const entries = 1234
	ctx := context.Background()
	s := newJournal(t, newPool(t, sharedServer(t), 1), pgstore.WithTable(newTableName(t)))
	appendEntries(t, s, "o", entries)
	seen := map[string]int{}
	require.NoError(t, s.Scan(ctx, func(key string, recs [][]byte) error {
		assert.Zero(t, seen[key], "entry %s seen twice", key)
		seen[key] = len(recs)
		got, err := s.Lookup(ctx, "ref:"+key)
		assert.Equal(t, key, got)
		return err
	}))
	assert.Equal(t, entries, len(seen), "entries scanned")
	for i := range entries {
		assert.Equal(t, 2, seen[fmt.Sprint("o:", i)], "records of an entry")
	}
}

// TestJournalAutomaticSweep lets entries expire, then appends on a store
// whose automatic sweep is on: the append starts a sweep, and the expired
// entries' rows disappear.
func TestJournalAutomaticSweep(t *testing.T) {
	pool := newPool(t, sharedServer(t), 8)
	table := newTableName(t)
	tables := journalTables("public", table)
	short := newJournal(t, pool, pgstore.WithTable(table), pgstore.WithRetention(50*time.Millisecond), pgstore.WithSweepInterval(0))
	appendEntries(t, short, "short", 100)
	waitCount(t, pool, tables[1], "expires_at <= now()", 100)
	require.Equal(t, [3]int64{200, 100, 100}, countAll(t, pool, tables), "rows before the append")

	auto := newJournal(t, pool, pgstore.WithTable(table), pgstore.WithSweepInterval(10*time.Millisecond))
	require.NoError(t, auto.Append(context.Background(), "o:1", "r", []byte(`{}`)))
	for i, want := range []int64{1, 1, 0} {
		waitCount(t, pool, tables[i], "true", want)
	}
}

// appendEntries appends two records to each of n entries prefix:i, the
// first with the name ref:prefix:i, 16 at a time.
func appendEntries(t *testing.T, s *pgstore.JournalStore, prefix string, n int) {
	t.Helper()
	errs := make(chan error, 2*n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range next {
				key := fmt.Sprint(prefix, ":", i)
				errs <- s.Append(context.Background(), key, "r0", []byte(`{"k":"sent"}`), "ref:"+key)
				errs <- s.Append(context.Background(), key, "r1", []byte(`{"k":"acked"}`))
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

// BenchmarkJournalAppend is the store's work for one record of a new
// entry, of about 200 bytes, with one name, on the shared server over
// loopback. Besides the wall time it reports cpu-ns/op, this process's
// CPU time (not the server's) per append.
func BenchmarkJournalAppend(b *testing.B) {
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
		if err := s.Append(ctx, key, "sent", rec, key); err != nil {
			b.Fatal(err)
		}
	})
}
