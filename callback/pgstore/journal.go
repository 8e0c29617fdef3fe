package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule/journal"
)

// DefaultJournalTable is the base table a [JournalStore] keeps its records
// in unless set with [WithTable]; its entries and names are in two more
// tables, named after it with the suffixes "_entries" and "_names".
const DefaultJournalTable = "travelrule_journal"

// scanPage is how many entries a statement of [JournalStore.Scan] reads
// at most.
const scanPage = 500

// JournalStore is a [journal.Store] in three PostgreSQL tables, shared by
// every replica of a service that uses the same base table. Make one with
// [NewJournal]; it is safe for concurrent use. Its fmt form shows its
// tables, retention, timeout and sweep interval, never a key, a record or
// the pool's connection string.
type JournalStore struct {
	pool   *pgxpool.Pool
	cfg    config
	tables journalTables
	sql    journalQueries
	tries  int    // how many times a statement runs at most
	st     *state // behind a pointer, so that fmt does not copy it
}

var _ journal.Store = (*JournalStore)(nil)

// NewJournal returns a journal store in pool's database, creating its
// tables and their indexes if they are absent (any number of replicas may
// do so at once; a table that exists is checked, never altered). The
// options are those of [New], but for [WithTable], which names the base
// table (default "travelrule_journal"), [WithRetention], whose default is
// [journal.DefaultRetention] (30 days), and [WithLease], which means
// nothing to a journal and which NewJournal refuses. A base table named
// without a schema is looked up once, here, through the search_path of the
// session NewJournal runs on, as [New] does; the three tables are in that
// schema. It returns an error for a nil pool, an invalid option, or a
// table it cannot create or use; ctx and the timeout bound it.
func NewJournal(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*JournalStore, error) {
	if pool == nil {
		return nil, errors.New("pgstore: NewJournal: nil pool")
	}
	cfg := defaults()
	cfg.table, cfg.retention = DefaultJournalTable, journal.DefaultRetention
	const unset = -1
	cfg.lease = unset
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.lease != unset {
		return nil, errors.New("pgstore: NewJournal: WithLease does not apply to a journal store, which holds no claims")
	}
	cfg.lease = time.Millisecond // for check, which wants a valid one
	if err := cfg.check(); err != nil {
		return nil, err
	}
	t, err := parseTable(cfg.table)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: NewJournal: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	if t, err = t.resolve(ctx, pool); err != nil {
		return nil, fmt.Errorf("pgstore: NewJournal: %w", err)
	}
	jt := newJournalTables(t)
	if err := jt.prepare(ctx, pool, cfg.noCreate); err != nil {
		return nil, fmt.Errorf("pgstore: NewJournal: %w", err)
	}
	return &JournalStore{
		pool:   pool,
		cfg:    cfg,
		tables: jt,
		sql:    newJournalQueries(jt),
		tries:  max(maxTries, int(pool.Config().MaxConns)+1),
		st:     &state{born: time.Now()},
	}, nil
}

// Append implements [journal.Store] in one statement, on the server's
// clock, so that concurrent appends of any number of replicas take turns
// on the entry's row. An entry that expired, whether or not it was swept,
// starts anew: its earlier records and names are no longer read, and
// appending an id it held adds the new record. The entry is then kept
// until the retention after this Append, or later if an Append with a
// longer retention said so. It may start an automatic sweep (see
// [WithSweepInterval]). A nil rec is stored as an empty one.
func (s *JournalStore) Append(ctx context.Context, key, id string, rec []byte, names ...string) error {
	if rec == nil {
		rec = []byte{}
	}
	if names == nil {
		names = []string{}
	}
	err := s.run(ctx, true, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, s.sql.append, key, id, rec, names, s.cfg.retention.Microseconds())
		return err
	})
	s.maybeSweep()
	if err != nil {
		return fmt.Errorf("pgstore: journal append: %w", err)
	}
	return nil
}

// Records implements [journal.Store]: the records of the entry key
// unless it expired, whether or not it was swept.
func (s *JournalStore) Records(ctx context.Context, key string) ([][]byte, error) {
	var recs [][]byte
	err := s.run(ctx, false, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, s.sql.records, key)
		if err != nil {
			return err
		}
		recs, err = pgx.CollectRows(rows, pgx.RowTo[[]byte])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: journal records: %w", err)
	}
	return recs, nil
}

// Lookup implements [journal.Store]: the key that name points at, unless
// its entry expired or the name was written before the entry last
// expired.
func (s *JournalStore) Lookup(ctx context.Context, name string) (string, error) {
	var key string
	err := s.run(ctx, false, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, s.sql.lookup, name).Scan(&key)
		if errors.Is(err, pgx.ErrNoRows) {
			key, err = "", nil
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("pgstore: journal lookup: %w", err)
	}
	return key, nil
}

// Scan implements [journal.Store]. It reads the entries that have not
// expired in pages of 500, in the order of their keys, each page in one
// statement bounded by the timeout, and calls fn with each entry of a page
// once the page is read, so that fn may call the store, and memory holds
// one page at a time.
func (s *JournalStore) Scan(ctx context.Context, fn func(key string, recs [][]byte) error) error {
	type entry struct {
		key  string
		recs [][]byte
	}
	after, started := "", false
	for {
		var page []entry
		var last string
		var n int
		err := s.run(ctx, false, func(ctx context.Context) error {
			page, last, n = page[:0], "", 0
			sql, args := s.sql.scanFirst, []any{scanPage}
			if started {
				sql, args = s.sql.scan, []any{scanPage, after}
			}
			rows, err := s.pool.Query(ctx, sql, args...)
			if err != nil {
				return err
			}
			var key string
			var rec []byte
			_, err = pgx.ForEachRow(rows, []any{&key, &rec}, func() error {
				if key != last || n == 0 {
					n++
					last = key
					page = append(page, entry{key: key})
				}
				if rec != nil {
					e := &page[len(page)-1]
					e.recs = append(e.recs, rec)
				}
				rec = nil
				return nil
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("pgstore: journal scan: %w", err)
		}
		for _, e := range page {
			if len(e.recs) == 0 {
				continue // an entry with no record of its own: none is written so
			}
			if err := fn(e.key, e.recs); err != nil {
				return err
			}
		}
		if n < scanPage {
			return nil
		}
		after, started = last, true
	}
}

// Sweep deletes the entries that expired, with their records and the
// names that point at them, in batches of 1000 entries, each bounded by
// the timeout, until a batch deletes fewer or ctx ends, and returns how
// many entries it deleted. Expired entries are not read whether or not
// they were swept; sweeping keeps the tables small. A store sweeps on its
// own (see [WithSweepInterval]); with WithSweepInterval(0), call Sweep from
// a scheduled job instead. Sweeps of several replicas at once skip each
// other's entries.
func (s *JournalStore) Sweep(ctx context.Context) (int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("pgstore: journal sweep: %w", err)
		}
		var n int64
		err := func() error {
			ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
			defer cancel()
			return s.pool.QueryRow(ctx, s.sql.sweep, sweepBatch).Scan(&n)
		}()
		total += n
		if err != nil {
			return total, fmt.Errorf("pgstore: journal sweep: %w", err)
		}
		if n < sweepBatch {
			return total, nil
		}
	}
}

// serializationTries is how many times a write runs at most while it
// meets serialization failures.
const serializationTries = 10

// run calls do with ctx bounded by the timeout, and again after an ended
// session (see isEndedSession; up to s.tries runs in all), or, when write,
// after a serialization failure (an append that met a concurrent one
// under REPEATABLE READ or SERIALIZABLE; up to serializationTries runs,
// each after a random pause of up to a millisecond per run so far, so that
// the appends that collided do not collide again).
func (s *JournalStore) run(ctx context.Context, write bool, do func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	err := do(ctx)
	for try := 1; ctx.Err() == nil; try++ {
		switch {
		case isEndedSession(err) && try < s.tries:
		case write && isSerializationFailure(err) && try < serializationTries:
			t := time.NewTimer(rand.N(time.Duration(try) * time.Millisecond))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return err
			}
		default:
			return err
		}
		err = do(ctx)
	}
	return err
}

// maybeSweep starts a sweep in the background when the automatic sweep is
// on, none runs, and the interval has passed since the last one began (or
// none has run yet), as [Store] does. Its errors are dropped: the next
// sweep tries again.
func (s *JournalStore) maybeSweep() { s.st.maybeSweep(s.cfg.sweepInterval, s.Sweep) }

// Format implements fmt.Formatter: every verb prints the store's tables
// and settings, never a key, a record or the pool's connection string. It
// has a value receiver so that a JournalStore and a pointer to it print
// the same.
func (s JournalStore) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "pgstore.JournalStore")
	}
	fmt.Fprintf(f, "{Tables:[%s %s %s] Retention:%v Timeout:%v SweepInterval:%v}",
		s.tables.records, s.tables.entries, s.tables.names, s.cfg.retention, s.cfg.timeout, s.cfg.sweepInterval)
}

// journalTables are the quoted names of a journal store's tables, all in
// the schema of the base table, and of their indexes.
type journalTables struct {
	records, entries, names string // schema-qualified
	expiresIdx, keyIdx      string // in the tables' schema, unqualified
	schema                  string // unquoted, as are rels
	rels                    [3]string
}

// newJournalTables returns the tables of the base table t, resolved.
func newJournalTables(t table) journalTables {
	entries, names := suffixed(t.rel, "_entries"), suffixed(t.rel, "_names")
	return journalTables{
		records:    pgx.Identifier{t.schema, t.rel}.Sanitize(),
		entries:    pgx.Identifier{t.schema, entries}.Sanitize(),
		names:      pgx.Identifier{t.schema, names}.Sanitize(),
		expiresIdx: pgx.Identifier{suffixed(entries, "_expires_at_idx")}.Sanitize(),
		keyIdx:     pgx.Identifier{suffixed(names, "_key_idx")}.Sanitize(),
		schema:     t.schema,
		rels:       [3]string{t.rel, entries, names},
	}
}

// journalShape is what a journal table must be: its columns and types (as
// format_type names them), the columns of a valid, non-partial unique
// index the store's ON CONFLICT needs, and the first column of a valid,
// non-partial index the store's reads or sweep need ("" for none).
type journalShape struct {
	columns [][2]string
	unique  []string // sorted
	indexed string
}

// journalShapes are the shapes of the records, entries and names tables.
var journalShapes = [3]journalShape{
	{[][2]string{{"key", "text"}, {"id", "text"}, {"rec", "bytea"}, {"at", "timestamp with time zone"}}, []string{"id", "key"}, ""},
	{[][2]string{{"key", "text"}, {"since", "timestamp with time zone"}, {"expires_at", "timestamp with time zone"}}, []string{"key"}, "expires_at"},
	{[][2]string{{"name", "text"}, {"key", "text"}, {"at", "timestamp with time zone"}}, []string{"name"}, "key"},
}

// prepare makes sure the three tables exist, creating the absent ones
// with their indexes, and that each has the shape the store relies on. A
// table that exists is never altered.
func (jt journalTables) prepare(ctx context.Context, pool *pgxpool.Pool, noCreate bool) error {
	quoted := [3]string{jt.records, jt.entries, jt.names}
	absent := false
	for _, q := range quoted {
		var exists bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_class WHERE oid = to_regclass($1))`, q).Scan(&exists); err != nil {
			return fmt.Errorf("looking for the tables: %w", err)
		}
		absent = absent || !exists
	}
	if absent && noCreate {
		return fmt.Errorf("the tables of %s: %w", jt.records, ErrTableAbsent)
	}
	if absent {
		if err := jt.create(ctx, pool); err != nil {
			return fmt.Errorf("creating the tables: %w", err)
		}
	}
	for i, q := range quoted {
		if err := journalShapes[i].check(ctx, pool, q); err != nil {
			return fmt.Errorf("the table %s: %w", q, err)
		}
	}
	return nil
}

// create creates the tables that are absent, each with its index, taking
// turns with other replicas on a transaction-scoped advisory lock named by
// the base table (CREATE TABLE IF NOT EXISTS is not safe against itself).
func (jt journalTables) create(ctx context.Context, pool *pgxpool.Pool) error {
	ddl := [3][]string{
		{`CREATE TABLE ` + jt.records + ` (
	key text NOT NULL,
	id text NOT NULL,
	rec bytea NOT NULL,
	at timestamptz NOT NULL,
	PRIMARY KEY (key, id)
)`},
		{`CREATE TABLE ` + jt.entries + ` (
	key text PRIMARY KEY,
	since timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
)`, `CREATE INDEX ` + jt.expiresIdx + ` ON ` + jt.entries + ` (expires_at)`},
		{`CREATE TABLE ` + jt.names + ` (
	name text PRIMARY KEY,
	key text NOT NULL,
	at timestamptz NOT NULL
)`, `CREATE INDEX ` + jt.keyIdx + ` ON ` + jt.names + ` (key)`},
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, jt.records); err != nil {
			return err
		}
		for i, rel := range jt.rels {
			// Read from pg_class, with the statement's snapshot, which
			// shows a table that another replica created while this one
			// waited for the lock (to_regclass may not).
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = $1 AND c.relname = $2)`, jt.schema, rel).Scan(&exists); err != nil {
				return err
			}
			if exists {
				continue
			}
			for _, stmt := range ddl[i] {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// check reports what makes the table q (quoted) unfit for the store, or
// nil.
func (sh journalShape) check(ctx context.Context, pool *pgxpool.Pool, q string) error {
	const see = " (the pgstore package doc shows the journal's tables)"
	rows, err := pool.Query(ctx, `SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
	WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, q)
	if err != nil {
		return fmt.Errorf("reading its columns: %w", err)
	}
	types := map[string]string{}
	var name, typ string
	if _, err := pgx.ForEachRow(rows, []any{&name, &typ}, func() error { types[name] = typ; return nil }); err != nil {
		return fmt.Errorf("reading its columns: %w", err)
	}
	for _, c := range sh.columns {
		switch types[c[0]] {
		case c[1]:
		case "":
			return fmt.Errorf("no column %s"+see, c[0])
		default:
			return fmt.Errorf("the column %s is %s, not %s"+see, c[0], types[c[0]], c[1])
		}
	}
	var unique, indexed bool
	err = pool.QueryRow(ctx, `SELECT
	EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indisvalid AND i.indpred IS NULL
		AND i.indnkeyatts = cardinality($2::text[])
		AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n WHERE k.o <= i.indnkeyatts) = $2::text[]),
	$3::text = '' OR EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		WHERE i.indrelid = to_regclass($1) AND a.attname = $3 AND i.indisvalid AND i.indpred IS NULL)`,
		q, sh.unique, sh.indexed).Scan(&unique, &indexed)
	switch {
	case err != nil:
		return fmt.Errorf("reading its indexes: %w", err)
	case !unique:
		return fmt.Errorf("no primary key on %v, which the store's upserts need"+see, sh.unique)
	case !indexed:
		return fmt.Errorf("no index whose first column is %s (valid, not partial)"+see, sh.indexed)
	}
	return nil
}

// scan is the statement that reads a page of at most $1 entries that
// have not expired, where cond holds, and their records: a row for each
// record, or one with a NULL record for an entry that has none.
func scan(jt journalTables, cond string) string {
	return `SELECT p.key, r.rec FROM (
	SELECT key, since FROM ` + jt.entries + ` WHERE ` + cond + `expires_at > now() ORDER BY key LIMIT $1
) p LEFT JOIN ` + jt.records + ` r ON r.key = p.key AND r.at >= p.since
ORDER BY p.key`
}

// journalQueries is the SQL of a journal store's operations. Retentions
// are passed in microseconds; every time is the server's (now(), the start
// of the statement), so the replicas' clocks do not matter.
type journalQueries struct {
	append, records, lookup, scanFirst, scan, sweep string
}

// newJournalQueries returns the SQL for the tables jt.
//
// An entry's row holds since, when it last started anew (its first Append
// after it expired, or ever), and expires_at. A record or a name written
// by an Append carries the at that Append gave the entry, never before
// its since: so the records and names of an entry's life before it
// expired, which the sweep may not have deleted yet, have an at before
// since and are not read.
func newJournalQueries(jt journalTables) journalQueries {
	return journalQueries{
		// The entry's upsert comes first (the others read what it
		// returns), so that it waits for the row lock of a concurrent
		// Append or sweep on the same entry, and computes since and
		// expires_at from the row as it is then. A record whose id the
		// entry held in an earlier life is replaced. Names are written in
		// their order, so that two Appends with the same names do not
		// deadlock.
		append: `WITH e AS (
	INSERT INTO ` + jt.entries + ` AS e (key, since, expires_at)
	VALUES ($1, now(), now() + $5::bigint * interval '1 microsecond')
	ON CONFLICT (key) DO UPDATE SET
		since = CASE WHEN e.expires_at <= now() THEN now() ELSE e.since END,
		expires_at = greatest(e.expires_at, excluded.expires_at)
	RETURNING since, greatest(since, now()) AS at
), r AS (
	INSERT INTO ` + jt.records + ` AS r (key, id, rec, at)
	SELECT $1, $2, $3, e.at FROM e
	ON CONFLICT (key, id) DO UPDATE SET rec = excluded.rec, at = excluded.at
	WHERE r.at < (SELECT since FROM e)
)
INSERT INTO ` + jt.names + ` AS n (name, key, at)
SELECT x.name, $1, e.at FROM e, (SELECT DISTINCT unnest($4::text[]) AS name) x ORDER BY x.name
ON CONFLICT (name) DO UPDATE SET key = excluded.key, at = excluded.at`,
		records: `SELECT r.rec FROM ` + jt.entries + ` e JOIN ` + jt.records + ` r ON r.key = e.key
WHERE e.key = $1 AND e.expires_at > now() AND r.at >= e.since`,
		lookup: `SELECT n.key FROM ` + jt.names + ` n JOIN ` + jt.entries + ` e ON e.key = n.key
WHERE n.name = $1 AND e.expires_at > now() AND n.at >= e.since`,
		scanFirst: scan(jt, ""),
		scan:      scan(jt, "key > $2 AND "),
		// The entries are locked and deleted first, so that an Append on
		// one of them waits and then starts it anew; records and names
		// are deleted by key (a name that an Append points elsewhere
		// meanwhile is checked again and kept).
		sweep: `WITH gone AS (
	DELETE FROM ` + jt.entries + ` WHERE key IN (
		SELECT key FROM ` + jt.entries + ` WHERE expires_at <= now()
		ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
	RETURNING key
), r AS (
	DELETE FROM ` + jt.records + ` WHERE key IN (SELECT key FROM gone)
), n AS (
	DELETE FROM ` + jt.names + ` WHERE key IN (SELECT key FROM gone)
)
SELECT count(*) FROM gone`,
	}
}
