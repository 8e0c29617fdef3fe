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

// table is the quoted names of a store's table and of its index.
type table struct {
	name  string // the table, quoted and qualified as given: "schema"."t" or "t"
	index string // the index, quoted; it lives in the table's schema
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
	return table{
		name:  pgx.Identifier(parts).Sanitize(),
		index: pgx.Identifier{indexName(parts[len(parts)-1])}.Sanitize(),
	}, nil
}

// indexName is the name of the index on expires_at of the table named t:
// t + "_expires_at_idx", or, when that is over 63 bytes, the start of t,
// a hash of all of t (so that two long names that start alike get two
// indexes) and the suffix, 63 bytes at most.
func indexName(t string) string {
	if len(t)+len(indexSuffix) <= maxName {
		return t + indexSuffix
	}
	h := fnv.New32a()
	h.Write([]byte(t))
	tail := fmt.Sprintf("_%08x%s", h.Sum32(), indexSuffix)
	head := t[:maxName-len(tail)]
	for !utf8.ValidString(head) { // do not cut a character in two
		head = head[:len(head)-1]
	}
	return head + tail
}

// prepare makes sure the table and an index on its expires_at column
// exist, and that the store can read the table's columns. It looks first,
// and runs DDL only for what is missing, so that a role with only SELECT,
// INSERT, UPDATE and DELETE on a table made by a migration can start, and
// so that starting a replica takes no lock on a table in use (CREATE INDEX
// IF NOT EXISTS locks the table before it checks the name).
func (t table) prepare(ctx context.Context, pool *pgxpool.Pool) error {
	hasTable, hasIndex, err := t.look(ctx, pool)
	if err != nil {
		return err
	}
	if !hasTable || !hasIndex {
		if err := t.create(ctx, pool); err != nil {
			return fmt.Errorf("creating the table: %w", err)
		}
	}
	if _, err := pool.Exec(ctx, `SELECT key, token, done, expires_at FROM `+t.name+` WHERE false`); err != nil {
		return fmt.Errorf("reading the table: %w", err)
	}
	return nil
}

// look reports whether the table exists and has an index whose first
// column is expires_at, under any name.
func (t table) look(ctx context.Context, pool *pgxpool.Pool) (hasTable, hasIndex bool, err error) {
	err = pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, EXISTS (
	SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
	WHERE i.indrelid = to_regclass($1) AND a.attname = 'expires_at')`, t.name).Scan(&hasTable, &hasIndex)
	if err != nil {
		return false, false, fmt.Errorf("looking for the table: %w", err)
	}
	return hasTable, hasIndex, nil
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
