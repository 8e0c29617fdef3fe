package pgstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule/journal"
)

// DefaultJournalTable is the base table a [JournalStore] keeps its records
// in unless set with [WithTable]; its entries and names are in two more
// tables, named after it with the suffixes "_entries" and "_names".
const DefaultJournalTable = "travelrule_journal"

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
	// ownTx is set once a Write or a Close found its session's
	// transactions not READ COMMITTED: their pipelines then begin a READ
	// COMMITTED transaction of their own (see write).
	ownTx *atomic.Bool
}

var _ journal.Store = (*JournalStore)(nil)

// NewJournal returns a journal store in pool's database, creating its
// tables and their indexes if they are absent, and adding this release's
// columns and indexes to tables of the previous release (any number of
// replicas may do so at once; the package doc shows the migration). A
// table of this release's shape is checked, never altered. The options
// are those of [New], but for [WithTable], which names the base table
// (default "travelrule_journal"), [WithRetention], whose default is
// [journal.DefaultRetention] (30 days), and [WithLease], which means
// nothing to a journal and which NewJournal refuses. A base table named
// without a schema is looked up once, here, through the search_path of the
// session NewJournal runs on, as [New] does; the three tables are in that
// schema. It returns an error for a nil pool, an invalid option, or a
// table it cannot create, migrate or use ([ErrMigrationNeeded] with
// [WithoutCreatingTables]); ctx and the timeout bound it.
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
	if err := jt.prepare(ctx, pool, cfg.noCreate, cfg.retention); err != nil {
		return nil, fmt.Errorf("pgstore: NewJournal: %w", err)
	}
	return &JournalStore{
		pool:   pool,
		cfg:    cfg,
		tables: jt,
		sql:    newJournalQueries(jt),
		tries:  max(maxTries, int(pool.Config().MaxConns)+1),
		st:     &state{born: time.Now()},
		ownTx:  &atomic.Bool{},
	}, nil
}

// Write implements [journal.Store] in one round trip: a pipeline of
// statements in one transaction, on the server's clock, that takes turns
// with the Writes of the same entry and of the same names (see
// journalQueries.lock), checks an Exclusive Step's names, writes the
// record, the names and the index, then reads. An entry that expired,
// whether or not it was swept, starts anew: its earlier records and names
// are no longer read, and a Step of an id it held adds the new record. The
// entry is then kept until the retention after this Write, or later if a
// Write with a longer retention said so. It may start an automatic sweep
// (see [WithSweepInterval]). A nil record is stored as an empty one.
func (s *JournalStore) Write(ctx context.Context, st journal.Step) (journal.Written, error) {
	var w journal.Written
	err := s.run(ctx, true, func(ctx context.Context) (err error) {
		w, err = s.write(ctx, st)
		return err
	})
	s.maybeSweep()
	if err != nil {
		return journal.Written{}, fmt.Errorf("pgstore: journal write: %w", err)
	}
	return w, nil
}

// write sends the pipeline of a Write once: lock, write, read, in the
// implicit transaction of one pipeline, where under READ COMMITTED each
// statement reads with a snapshot taken after the locks. Under REPEATABLE
// READ or SERIALIZABLE the snapshot is the transaction's, taken before
// them: a Write whose entry's row, or a name's, a concurrent one changed
// since fails with a serialization failure, and a peek, which changes
// nothing, may read too early. So the first Write to find its session so
// sets ownTx, and reads again what it peeked at, after it committed, in
// one more round trip (or fails, and runs again); the pipelines after it
// begin a READ COMMITTED transaction of their own.
func (s *JournalStore) write(ctx context.Context, st journal.Step) (journal.Written, error) {
	rec, names := st.Record, st.Names
	if rec == nil {
		rec = []byte{}
	}
	if names == nil {
		names = []string{}
	}
	b, own := s.batch()
	var readCommitted bool
	b.Queue(s.sql.lock, s.tables.names, lockNames(st)).QueryRow(func(row pgx.Row) error { return row.Scan(&readCommitted, nil) })
	var taken *string
	b.Queue(s.sql.write, st.Key, st.ID, rec, names, s.cfg.retention.Microseconds(), st.At,
		int16(min(max(st.Stage, 0), 1<<15-1)), st.Ref, st.Exclusive).QueryRow(func(row pgx.Row) error { return row.Scan(&taken) })
	var w journal.Written
	if st.Read || st.Peek != "" {
		read := ""
		if st.Read {
			read = st.Key
		}
		b.Queue(s.sql.read, read, st.Peek).Query(func(rows pgx.Rows) error { return collectReads(rows, st, &w) })
	}
	err := s.send(ctx, b, own, &readCommitted)
	switch {
	case err != nil:
		return journal.Written{}, err
	case taken != nil:
		return journal.Written{Taken: *taken}, nil
	case st.Peek != "" && !readCommitted:
		if w.Peeked, err = s.records(ctx, st.Peek); err != nil {
			return journal.Written{}, err
		}
	}
	return w, nil
}

// batch returns a new pipeline, which begins a READ COMMITTED transaction
// when ownTx is set (own).
func (s *JournalStore) batch() (b *pgx.Batch, own bool) {
	b = &pgx.Batch{}
	if own = s.ownTx.Load(); own {
		b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	}
	return b, own
}

// send ends the pipeline b (committing the transaction it began, if own)
// and sends it; once its lock statement has said that the transaction is
// not READ COMMITTED (readCommitted false), it sets ownTx, whether or not
// the pipeline failed after.
func (s *JournalStore) send(ctx context.Context, b *pgx.Batch, own bool, readCommitted *bool) error {
	if own {
		b.Queue(`COMMIT`)
	}
	*readCommitted = true
	err := s.pool.SendBatch(ctx, b).Close()
	if !*readCommitted {
		s.ownTx.Store(true)
	}
	return err
}

// collectReads files the rows of a Write's read in w.
func collectReads(rows pgx.Rows, st journal.Step, w *journal.Written) error {
	var key string
	var rec []byte
	_, err := pgx.ForEachRow(rows, []any{&key, &rec}, func() error {
		if st.Read && key == st.Key {
			w.Records = append(w.Records, rec)
		}
		if key == st.Peek {
			w.Peeked = append(w.Peeked, rec)
		}
		rec = nil
		return nil
	})
	return err
}

// Records implements [journal.Store] in one statement: the records of the
// entry key unless it expired, whether or not it was swept.
func (s *JournalStore) Records(ctx context.Context, key string) ([][]byte, error) {
	var recs [][]byte
	err := s.run(ctx, false, func(ctx context.Context) (err error) {
		recs, err = s.records(ctx, key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: journal records: %w", err)
	}
	return recs, nil
}

// records reads the records of the entry key once.
func (s *JournalStore) records(ctx context.Context, key string) ([][]byte, error) {
	rows, err := s.pool.Query(ctx, s.sql.records, key)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[[]byte])
}

// Lookup implements [journal.Store] in one statement: the key that name
// points at, unless its entry expired or the name was written before the
// entry last expired.
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

// Entries implements [journal.Store]. It reads the entries that have not
// expired in pages of 500, newest first, each page and its records in one
// statement bounded by the timeout (see pageSQL for the indexes it uses),
// and yields a page's entries once the page is read, so that the loop's
// body may call the store, and memory holds one page at a time.
func (s *JournalStore) Entries(ctx context.Context, q journal.Query) iter.Seq2[journal.Stored, error] {
	return func(yield func(journal.Stored, error) bool) {
		var after *cursor
		for {
			page, last, err := s.page(ctx, q, after)
			if err != nil {
				yield(journal.Stored{}, fmt.Errorf("pgstore: journal entries: %w", err))
				return
			}
			for _, e := range page {
				if !yield(e, nil) {
					return
				}
			}
			if len(page) < pageSize {
				return
			}
			after = &last
		}
	}
}

// page reads the page of entries after c, and where it ends.
func (s *JournalStore) page(ctx context.Context, q journal.Query, c *cursor) ([]journal.Stored, cursor, error) {
	sql, args := pageSQL(s.tables, q, c)
	var page []journal.Stored
	var last cursor
	err := s.run(ctx, false, func(ctx context.Context) error {
		page, last = page[:0], cursor{}
		rows, err := s.pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		var at cursor
		var rec []byte
		_, err = pgx.ForEachRow(rows, []any{&at.key, &at.updated, &rec}, func() error {
			if len(page) == 0 || at.key != last.key {
				last = at
				page = append(page, journal.Stored{Key: at.key})
			}
			if rec != nil {
				e := &page[len(page)-1]
				e.Records = append(e.Records, rec)
			}
			rec = nil
			return nil
		})
		return err
	})
	return page, last, err
}

// Close implements [journal.Store] in one round trip: a pipeline that
// locks the entry's row, so that a Write under way commits first, then
// takes it out of the open entries if it holds n records of its own, read
// with a new snapshot (in a transaction of its own once ownTx is set; the
// first Close to find its session not READ COMMITTED may fail with a
// serialization failure, and runs again so).
func (s *JournalStore) Close(ctx context.Context, key string, n int) error {
	err := s.run(ctx, true, func(ctx context.Context) error {
		b, own := s.batch()
		var readCommitted bool
		b.Queue(s.sql.lockEntry, key).QueryRow(func(row pgx.Row) error { return row.Scan(&readCommitted, nil) })
		b.Queue(s.sql.close, key, n)
		return s.send(ctx, b, own, &readCommitted)
	})
	if err != nil {
		return fmt.Errorf("pgstore: journal close: %w", err)
	}
	return nil
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

// conflictTries is how many times a write runs at most while it meets
// serialization failures or deadlocks.
const conflictTries = 10

// run calls do with ctx bounded by the timeout, and again after an ended
// session (see isEndedSession; up to s.tries runs in all), or, when write,
// after a serialization failure or a deadlock (isConflict; up to
// conflictTries runs, each after a random pause of up to a millisecond
// per run so far, so that the writes that collided do not collide again).
// A write that failed so changed nothing.
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
		case write && isConflict(err) && try < conflictTries:
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

// isConflict reports whether err is a serialization failure (SQLSTATE
// 40001: under REPEATABLE READ or SERIALIZABLE, a concurrent Write came
// first) or a deadlock (40P01): the transaction met a concurrent one and
// was rolled back. Writes, Closes and sweeps take their locks in an order
// that excludes deadlocks among them; a sweep of the previous release,
// which locked names in no order, could still meet one.
func isConflict(err error) bool {
	var pgErr *pgconn.PgError
	return isSerializationFailure(err) || errors.As(err, &pgErr) && pgErr.Code == "40P01"
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
