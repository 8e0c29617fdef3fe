//go:build unix

package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// previousRelease is a journal store of the previous release, as far as
// its tables go: its DDL and its Append, copied from the code of that
// release (git show <release>:callback/pgstore/journal.go), so that tests
// can make a journal as it wrote one, and go on writing as one of its
// replicas still running during a rolling deploy does.
type previousRelease struct {
	pool      *pgxpool.Pool
	tables    [3]string // records, entries, names; quoted
	retention time.Duration
}

// newPreviousRelease creates the tables of the base table base in the
// public schema as the previous release did, and returns a store of that
// release on them.
func newPreviousRelease(t testing.TB, pool *pgxpool.Pool, base string, retention time.Duration) *previousRelease {
	t.Helper()
	p := &previousRelease{pool: pool, tables: journalTables("public", base), retention: retention}
	records, entries, names := p.tables[0], p.tables[1], p.tables[2]
	for _, ddl := range []string{`CREATE TABLE ` + records + ` (
	key text NOT NULL,
	id text NOT NULL,
	rec bytea NOT NULL,
	at timestamptz NOT NULL,
	PRIMARY KEY (key, id)
)`, `CREATE TABLE ` + entries + ` (
	key text PRIMARY KEY,
	since timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
)`, `CREATE INDEX ` + pgx.Identifier{base + "_entries_expires_at_idx"}.Sanitize() + ` ON ` + entries + ` (expires_at)`,
		`CREATE TABLE ` + names + ` (
	name text PRIMARY KEY,
	key text NOT NULL,
	at timestamptz NOT NULL
)`, `CREATE INDEX ` + pgx.Identifier{base + "_names_key_idx"}.Sanitize() + ` ON ` + names + ` (key)`} {
		_, err := pool.Exec(context.Background(), ddl)
		require.NoError(t, err)
	}
	return p
}

// Append is the previous release's JournalStore.Append.
func (p *previousRelease) Append(t testing.TB, key, id string, rec []byte, names ...string) {
	t.Helper()
	records, entries, tnames := p.tables[0], p.tables[1], p.tables[2]
	if names == nil {
		names = []string{}
	}
	_, err := p.pool.Exec(context.Background(), `WITH e AS (
	INSERT INTO `+entries+` AS e (key, since, expires_at)
	VALUES ($1, now(), now() + $5::bigint * interval '1 microsecond')
	ON CONFLICT (key) DO UPDATE SET
		since = CASE WHEN e.expires_at <= now() THEN now() ELSE e.since END,
		expires_at = greatest(e.expires_at, excluded.expires_at)
	RETURNING since, greatest(since, now()) AS at
), r AS (
	INSERT INTO `+records+` AS r (key, id, rec, at)
	SELECT $1, $2, $3, e.at FROM e
	ON CONFLICT (key, id) DO UPDATE SET rec = excluded.rec, at = excluded.at
	WHERE r.at < (SELECT since FROM e)
)
INSERT INTO `+tnames+` AS n (name, key, at)
SELECT x.name, $1, e.at FROM e, (SELECT DISTINCT unnest($4::text[]) AS name) x ORDER BY x.name
ON CONFLICT (name) DO UPDATE SET key = excluded.key, at = excluded.at`, key, id, rec, names, p.retention.Microseconds())
	require.NoError(t, err)
}
