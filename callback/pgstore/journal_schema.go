package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrMigrationNeeded is what [NewJournal] fails with (wrapped) when
// [WithoutCreatingTables] is set and the journal's tables are those of the
// previous release, which lack this release's index of entries: run the
// migration that the package doc shows, or start a store without the
// option once, which runs it.
var ErrMigrationNeeded = errors.New("the journal's tables lack this release's columns or indexes, and WithoutCreatingTables is set: run the migration the pgstore package doc shows")

// journalTables are the quoted names of a journal store's tables, all in
// the schema of the base table, and of their indexes.
type journalTables struct {
	records, entries, names string // schema-qualified
	schema                  string // unquoted, as are rels
	rels                    [3]string
	// The indexes, in the tables' schema, unqualified.
	expiresIdx, keyIdx, updatedIdx, stageIdx, openIdx, refIdx string
}

// newJournalTables returns the tables of the base table t, resolved.
func newJournalTables(t table) journalTables {
	entries, names := suffixed(t.rel, "_entries"), suffixed(t.rel, "_names")
	idx := func(rel, suffix string) string { return pgx.Identifier{suffixed(rel, suffix)}.Sanitize() }
	return journalTables{
		records:    pgx.Identifier{t.schema, t.rel}.Sanitize(),
		entries:    pgx.Identifier{t.schema, entries}.Sanitize(),
		names:      pgx.Identifier{t.schema, names}.Sanitize(),
		schema:     t.schema,
		rels:       [3]string{t.rel, entries, names},
		expiresIdx: idx(entries, "_expires_at_idx"),
		keyIdx:     idx(names, "_key_idx"),
		updatedIdx: idx(entries, "_updated_idx"),
		stageIdx:   idx(entries, "_stage_idx"),
		openIdx:    idx(entries, "_open_idx"),
		refIdx:     idx(entries, "_ref_idx"),
	}
}

// column is a column a table must have (or has): its type as format_type
// names it, whether it is NOT NULL, and its collation ("" for any).
// added marks a column of this release, which a migration adds.
type column struct {
	name, typ string
	notNull   bool
	collation string
	added     bool
}

// index is an index a table must have (or has): a unique one on exactly
// the columns cols, in any order, or one whose key columns start with
// cols, in order, with the predicate pred ("" for none: not partial), as
// pg_get_expr prints it. added marks an index of this release.
type index struct {
	cols   []string
	unique bool
	pred   string
	added  bool
}

// journalShape is what a journal table must be.
type journalShape struct {
	columns []column
	indexes []index
}

// journalShapes are the shapes of the records, entries and names tables.
var journalShapes = [3]journalShape{
	{
		columns: []column{{name: "key", typ: "text"}, {name: "id", typ: "text"}, {name: "rec", typ: "bytea"}, {name: "at", typ: "timestamp with time zone"}},
		indexes: []index{{cols: []string{"key", "id"}, unique: true}},
	},
	{
		columns: []column{{name: "key", typ: "text"}, {name: "since", typ: "timestamp with time zone"}, {name: "expires_at", typ: "timestamp with time zone"},
			{name: "updated", typ: "timestamp with time zone", notNull: true, added: true},
			{name: "stage", typ: "smallint", notNull: true, added: true},
			{name: "ref", typ: "text", notNull: true, collation: "C", added: true},
			{name: "open", typ: "boolean", notNull: true, added: true}},
		indexes: []index{{cols: []string{"key"}, unique: true}, {cols: []string{"expires_at"}},
			{cols: []string{"updated", "key"}, added: true}, {cols: []string{"stage", "updated", "key"}, added: true},
			{cols: []string{"updated", "key"}, pred: "open", added: true}, {cols: []string{"ref"}, added: true}},
	},
	{
		columns: []column{{name: "name", typ: "text"}, {name: "key", typ: "text"}, {name: "at", typ: "timestamp with time zone"}},
		indexes: []index{{cols: []string{"name"}, unique: true}, {cols: []string{"key"}}},
	},
}

// see ends the errors of a table of another shape.
const see = " (the pgstore package doc shows the journal's tables)"

// fault reports what makes a table with the columns cols and the valid
// indexes have unfit for sh, or nil; migrate reports that the fault is
// only the lack of this release's columns or indexes, which a migration
// adds (the first such one is named).
func (sh journalShape) fault(cols map[string]column, have []index) (err error, migrate bool) {
	var missing error
	for _, c := range sh.columns {
		got, ok := cols[c.name]
		switch {
		case !ok && c.added:
			missing = cmp.Or(missing, fmt.Errorf("no column %s, of this release's index", c.name))
		case !ok:
			return fmt.Errorf("no column %s"+see, c.name), false
		case got.typ != c.typ:
			return fmt.Errorf("the column %s is %s, not %s"+see, c.name, got.typ, c.typ), false
		case c.notNull && !got.notNull:
			return fmt.Errorf("the column %s is not NOT NULL"+see, c.name), false
		case c.collation != "" && got.collation != c.collation:
			return fmt.Errorf("the column %s is not of collation %q"+see, c.name, c.collation), false
		}
	}
	for _, need := range sh.indexes {
		if slices.ContainsFunc(have, need.servedBy) {
			continue
		}
		switch {
		case need.added:
			missing = cmp.Or(missing, fmt.Errorf("no index %s, of this release's index", need))
		case need.unique:
			return fmt.Errorf("no primary key on %s, which the store's upserts need"+see, need), false
		default:
			return fmt.Errorf("no index %s (valid, not partial), which the store's reads or sweep need"+see, need), false
		}
	}
	return missing, missing != nil
}

// servedBy reports whether the index ix serves the need i.
func (i index) servedBy(ix index) bool {
	if i.unique {
		return ix.unique && ix.pred == "" && len(ix.cols) == len(i.cols) && !slices.ContainsFunc(i.cols, func(c string) bool { return !slices.Contains(ix.cols, c) })
	}
	return ix.pred == i.pred && len(ix.cols) >= len(i.cols) && slices.Equal(ix.cols[:len(i.cols)], i.cols)
}

// String shows the index as DDL does: its columns and predicate.
func (i index) String() string {
	s := "(" + strings.Join(i.cols, ", ") + ")"
	if i.pred != "" {
		s += " WHERE " + i.pred
	}
	return s
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readShape reads the columns and the valid indexes of the table q
// (quoted) from the catalog.
func readShape(ctx context.Context, db querier, q string) (map[string]column, []index, error) {
	rows, err := db.Query(ctx, `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull, coalesce(c.collname::text, '')
FROM pg_attribute a LEFT JOIN pg_collation c ON c.oid = a.attcollation
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, q)
	if err != nil {
		return nil, nil, fmt.Errorf("reading its columns: %w", err)
	}
	cols := map[string]column{}
	var c column
	if _, err := pgx.ForEachRow(rows, []any{&c.name, &c.typ, &c.notNull, &c.collation}, func() error { cols[c.name] = c; return nil }); err != nil {
		return nil, nil, fmt.Errorf("reading its columns: %w", err)
	}
	rows, err = db.Query(ctx, `SELECT i.indisunique, coalesce(pg_get_expr(i.indpred, i.indrelid), ''),
	array(SELECT coalesce(a.attname::text, '') FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)
		LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n WHERE k.o <= i.indnkeyatts ORDER BY k.o)
FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisvalid`, q)
	if err != nil {
		return nil, nil, fmt.Errorf("reading its indexes: %w", err)
	}
	var have []index
	var ix index
	if _, err := pgx.ForEachRow(rows, []any{&ix.unique, &ix.pred, &ix.cols}, func() error { have = append(have, ix); return nil }); err != nil {
		return nil, nil, fmt.Errorf("reading its indexes: %w", err)
	}
	return cols, have, nil
}

// check reports what makes one of the tables unfit for the store, or nil,
// and whether a migration fixes it (see journalShape.fault).
func (jt journalTables) check(ctx context.Context, db querier) (err error, migrate bool) {
	for i, q := range [3]string{jt.records, jt.entries, jt.names} {
		cols, have, err := readShape(ctx, db, q)
		if err != nil {
			return fmt.Errorf("the table %s: %w", q, err), false
		}
		if err, migrate := journalShapes[i].fault(cols, have); err != nil {
			return fmt.Errorf("the table %s: %w", q, err), migrate
		}
	}
	return nil, false
}

// prepare makes sure the three tables exist, creating the absent ones
// with their indexes, that the entries table has this release's index of
// entries, migrating a table of the previous release (see migration), and
// that each has the shape the store relies on. A table of the current
// shape is never altered, and starting a store on it takes no lock.
func (jt journalTables) prepare(ctx context.Context, pool *pgxpool.Pool, noCreate bool, retention time.Duration) error {
	absent := false
	for _, q := range [3]string{jt.records, jt.entries, jt.names} {
		var exists bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_class WHERE oid = to_regclass($1))`, q).Scan(&exists); err != nil {
			return fmt.Errorf("looking for the tables: %w", err)
		}
		absent = absent || !exists
	}
	if absent && noCreate {
		return fmt.Errorf("the tables of %s: %w", jt.records, ErrTableAbsent)
	}
	if !absent {
		err, migrate := jt.check(ctx, pool)
		switch {
		case err == nil || !migrate:
			return err
		case noCreate:
			return fmt.Errorf("%w: %w", err, ErrMigrationNeeded)
		}
	}
	if err := jt.create(ctx, pool, retention); err != nil {
		if !absent {
			return fmt.Errorf("migrating the tables of the previous release (on a large table, run the package doc's migration first): %w", err)
		}
		return fmt.Errorf("creating the tables: %w", err)
	}
	err, _ := jt.check(ctx, pool)
	return err
}

// create creates the tables that are absent, each with its index, then
// runs the migration when the entries table lacks this release's columns
// or indexes (a table just created, or one of the previous release),
// taking turns with other replicas on a transaction-scoped advisory lock
// named by the base table (CREATE TABLE IF NOT EXISTS is not safe against
// itself, and a replica that waited finds the migration done). ctx and
// the timeout bound it, and it is one transaction: a migration that runs
// out of time changes nothing.
func (jt journalTables) create(ctx context.Context, pool *pgxpool.Pool, retention time.Duration) error {
	ddl := jt.previousRelease()
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
		if _, migrate := jt.check(ctx, tx); !migrate {
			return nil
		}
		for _, stmt := range jt.migration(retention) {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}

// previousRelease is the DDL of the tables as the previous release made
// them; the migration makes them this release's.
func (jt journalTables) previousRelease() [3][]string {
	return [3][]string{
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
}

// migration is the DDL that adds this release's index of entries to the
// entries table, each statement doing nothing where it was done: the
// columns, with the defaults that the previous release's rows, and those
// its replicas still insert, take (no index data, open, and updated at
// the server's now()), updated set for the rows that exist from when
// their last Append was (their expires_at less the retention), and the
// indexes of the queries.
func (jt journalTables) migration(retention time.Duration) []string {
	e := jt.entries
	return []string{
		`ALTER TABLE ` + e + ` ADD COLUMN IF NOT EXISTS updated timestamptz,
	ADD COLUMN IF NOT EXISTS stage smallint NOT NULL DEFAULT ` + strconv.Itoa(legacyStage) + `,
	ADD COLUMN IF NOT EXISTS ref text COLLATE "C" NOT NULL DEFAULT '',
	ADD COLUMN IF NOT EXISTS open boolean NOT NULL DEFAULT true`,
		`UPDATE ` + e + ` SET updated = expires_at - interval '` + strconv.FormatInt(retention.Microseconds(), 10) + ` microseconds' WHERE updated IS NULL`,
		`ALTER TABLE ` + e + ` ALTER COLUMN updated SET DEFAULT now(), ALTER COLUMN updated SET NOT NULL`,
		`CREATE INDEX IF NOT EXISTS ` + jt.updatedIdx + ` ON ` + e + ` (updated, key)`,
		`CREATE INDEX IF NOT EXISTS ` + jt.stageIdx + ` ON ` + e + ` (stage, updated, key)`,
		`CREATE INDEX IF NOT EXISTS ` + jt.openIdx + ` ON ` + e + ` (updated, key) WHERE open`,
		`CREATE INDEX IF NOT EXISTS ` + jt.refIdx + ` ON ` + e + ` (ref)`,
	}
}
