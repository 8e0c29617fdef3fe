package pgstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maxName is PostgreSQL's limit on the length of a name, in bytes
// (NAMEDATALEN - 1); the server truncates longer names.
const maxName = 63

// indexSuffix ends the name of the index on expires_at.
const indexSuffix = "_expires_at_idx"

// table is a store's table: its schema and name as given, and their
// quoted forms.
type table struct {
	schema string // as given; "" until resolved when the name has none
	rel    string // the table's own name
	name   string // quoted: "schema"."t" once resolved, "t" before when given so
	index  string // the index, quoted; it lives in the table's schema
}

// parseTable splits name, "table" or "schema.table", into its parts and
// quotes them. The error does not repeat the name.
func parseTable(name string) (table, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return table{}, errors.New(`pgstore: WithTable: the name has more than two parts; give "table" or "schema.table"`)
	}
	for _, p := range parts {
		switch {
		case p == "":
			return table{}, errors.New(`pgstore: WithTable: the name, or a part of "schema.table", is empty`)
		case len(p) > maxName:
			return table{}, fmt.Errorf("pgstore: WithTable: a part of the name is %d bytes long, over PostgreSQL's limit of %d", len(p), maxName)
		case strings.IndexByte(p, 0) >= 0:
			return table{}, errors.New("pgstore: WithTable: the name holds a NUL byte")
		case !utf8.ValidString(p):
			return table{}, errors.New("pgstore: WithTable: the name is not valid UTF-8")
		}
	}
	t := table{rel: parts[len(parts)-1], index: pgx.Identifier{indexName(parts[len(parts)-1])}.Sanitize()}
	if len(parts) == 2 {
		t.schema = parts[0]
	}
	return t.in(t.schema), nil
}

// in returns t in schema ("": none), its name quoted accordingly.
func (t table) in(schema string) table {
	t.schema = schema
	if schema == "" {
		t.name = pgx.Identifier{t.rel}.Sanitize()
	} else {
		t.name = pgx.Identifier{schema, t.rel}.Sanitize()
	}
	return t
}

// resolve returns t in its schema. A name without one is looked up once,
// here, through the search_path of the session that runs it: the schema
// of the table it finds, or, when there is none, the first schema of the
// search_path that exists (current_schema()), where prepare creates it.
// Every statement of the store then names the schema, so that a pooled
// session whose search_path was changed later (by a tenant sharing the
// pool, or its AfterConnect) still reaches this table, never a
// same-named one of another schema.
func (t table) resolve(ctx context.Context, pool *pgxpool.Pool) (table, error) {
	if t.schema != "" {
		return t, nil
	}
	var schema *string
	err := pool.QueryRow(ctx, `SELECT coalesce(
	(SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)),
	current_schema()::text)`, t.name).Scan(&schema)
	switch {
	case err != nil:
		return table{}, fmt.Errorf("looking for the table's schema: %w", err)
	case schema == nil:
		return table{}, errors.New(`the table is not in the search_path, and no schema of the search_path exists to create it in: give WithTable("schema.table")`)
	}
	return t.in(*schema), nil
}

// indexName is the name of the index on expires_at of the table named t
// (see suffixed).
func indexName(t string) string { return suffixed(t, indexSuffix) }

// suffixed is the name t+suffix, or, when that is over 63 bytes, the
// start of t, a hash of all of t (so that two long names that start alike
// get two names) and the suffix, 63 bytes at most.
func suffixed(t, suffix string) string {
	if len(t)+len(suffix) <= maxName {
		return t + suffix
	}
	h := fnv.New32a()
	h.Write([]byte(t))
	tail := fmt.Sprintf("_%08x%s", h.Sum32(), suffix)
	head := t[:maxName-len(tail)]
	for !utf8.ValidString(head) { // do not cut a character in two
		head = head[:len(head)-1]
	}
	return head + tail
}

// prepare makes sure the table exists, creating it with its index if it
// is absent, and that its shape is the one the store relies on. A table
// that exists is never altered: a role with only SELECT, INSERT, UPDATE
// and DELETE on a table made by a migration can start, and starting a
// replica takes no lock on a table in use (CREATE INDEX IF NOT EXISTS
// locks the table before it checks the name, and building an index on a
// large table stops its writes).
func (t table) prepare(ctx context.Context, pool *pgxpool.Pool, noCreate bool) error {
	sh, err := t.look(ctx, pool)
	if err != nil {
		return err
	}
	if !sh.exists && noCreate {
		return fmt.Errorf("the table %s: %w", t.name, ErrTableAbsent)
	}
	if !sh.exists {
		if err := t.create(ctx, pool); err != nil {
			return fmt.Errorf("creating the table: %w", err)
		}
		if sh, err = t.look(ctx, pool); err != nil {
			return err
		}
	}
	if err := sh.fault(); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `SELECT key, token, done, expires_at FROM `+t.name+` WHERE false`); err != nil {
		return fmt.Errorf("reading the table: %w", err)
	}
	return nil
}

// shape is what the store needs to know of its table.
type shape struct {
	exists bool
	// types are the types of the columns key, token, done and expires_at,
	// "" for a column that is absent.
	types [4]string
	// keyUnique: a valid unique index on key alone (the primary key), which
	// the claim's ON CONFLICT needs; expiresIndexed: a valid index, not
	// partial, whose first column is expires_at, which the sweep uses.
	keyUnique, expiresIndexed bool
}

// columns are the table's columns and their types, as format_type names
// them, in the order of shape.types.
var columns = [4][2]string{{"key", "text"}, {"token", "text"}, {"done", "boolean"}, {"expires_at", "timestamp with time zone"}}

// look reads the table's shape from the catalog. to_regclass finds a
// table by the catalog's latest state, the rest of the statement reads it
// as of the statement's start: a table that another replica's New created
// in between is found but has no columns yet. So the table is taken to
// exist only when its pg_class row is visible to the statement too; when
// it is not, prepare creates it (a no-op by then, under the lock) and
// looks again.
func (t table) look(ctx context.Context, pool *pgxpool.Pool) (shape, error) {
	var sh shape
	var types [4]*string
	err := pool.QueryRow(ctx, `SELECT r.oid IS NOT NULL,
	(SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = r.oid AND attname = 'key' AND NOT attisdropped),
	(SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = r.oid AND attname = 'token' AND NOT attisdropped),
	(SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = r.oid AND attname = 'done' AND NOT attisdropped),
	(SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = r.oid AND attname = 'expires_at' AND NOT attisdropped),
	EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		WHERE i.indrelid = r.oid AND a.attname = 'key' AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indnkeyatts = 1),
	EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		WHERE i.indrelid = r.oid AND a.attname = 'expires_at' AND i.indisvalid AND i.indpred IS NULL)
FROM (SELECT (SELECT c.oid FROM pg_class c WHERE c.oid = to_regclass($1)) AS oid) r`, t.name).Scan(&sh.exists, &types[0], &types[1], &types[2], &types[3], &sh.keyUnique, &sh.expiresIndexed)
	if err != nil {
		return shape{}, fmt.Errorf("looking for the table: %w", err)
	}
	for i, p := range types {
		if p != nil {
			sh.types[i] = *p
		}
	}
	return sh, nil
}

// fault reports what makes a table of shape sh unfit for the store, or
// nil. A table made by a migration must be the one the package doc shows.
func (sh shape) fault() error {
	const see = " (the pgstore package doc shows the table)"
	for i, c := range columns {
		switch sh.types[i] {
		case c[1]:
		case "":
			return fmt.Errorf("the table has no column %s"+see, c[0])
		default:
			return fmt.Errorf("the table's column %s is %s, not %s"+see, c[0], sh.types[i], c[1])
		}
	}
	if !sh.keyUnique {
		return errors.New("the table's column key is not its primary key" + see)
	}
	if !sh.expiresIndexed {
		return errors.New("the table has no index on expires_at for the sweep (a valid index, not partial, whose first column is expires_at): create one with CREATE INDEX ON <table> (expires_at)")
	}
	return nil
}

// create creates the table and its index if absent. CREATE TABLE IF NOT
// EXISTS is not safe against itself (two sessions may both find the table
// absent and one fails on the table's row type), so replicas starting at
// once take turns on a transaction-scoped advisory lock named by the
// table.
func (t table) create(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, t.name); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, createTable(t.name)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+t.index+` ON `+t.name+` (expires_at)`)
		return err
	})
}

// createTable is the statement that creates the table named t (quoted).
func createTable(t string) string {
	return `CREATE TABLE IF NOT EXISTS ` + t + ` (
	key text PRIMARY KEY,
	token text NOT NULL,
	done boolean NOT NULL,
	expires_at timestamptz NOT NULL
)`
}
