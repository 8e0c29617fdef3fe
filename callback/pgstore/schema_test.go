//go:build unix

package pgstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestTableNames makes stores on tables whose names need quoting, or are
// of the longest length, or are in a schema: each works, has its index,
// and a second New on it finds both.
func TestTableNames(t *testing.T) {
	pool := newPool(t, sharedServer(t), 4)
	ctx := context.Background()
	suffix := newTableName(t)[5:]
	schema := `sch"ema ` + suffix
	_, err := pool.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	tests := []struct{ name, schema, table, index string }{
		{"quote", "public", `q"uote` + suffix, `q"uote` + suffix + "_expires_at_idx"},
		{"space and case", "public", "With Space " + suffix, "With Space " + suffix + "_expires_at_idx"},
		{"63 bytes", "public", strings.Repeat("l", 51) + suffix, ""},
		{"in a schema", schema, "deliveries", "deliveries_expires_at_idx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.table
			if tt.schema != "public" {
				name = tt.schema + "." + tt.table
			}
			s := newStore(t, pool, pgstore.WithTable(name))
			key := storetest.NewKey(t)
			r, token, err := s.ClaimFenced(ctx, key)
			require.NoError(t, err)
			require.Equal(t, callback.ClaimNew, r)
			require.NoError(t, s.CompleteFenced(ctx, key, token))

			again := newStore(t, pool, pgstore.WithTable(name))
			r, err = again.Claim(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, callback.ClaimDone, r, "a second store on the table")
			assert.Equal(t, int64(1), countRows(t, pool, pgx.Identifier{tt.schema, tt.table}.Sanitize(), "true"))
			index := indexOf(t, pool, tt.schema, tt.table)
			if tt.index != "" {
				assert.Equal(t, tt.index, index)
			}
			assert.LessOrEqual(t, len(index), 63)
		})
	}
	_, err = pgstore.New(ctx, pool, pgstore.WithTable("no_such_schema_"+suffix+".t"))
	require.Error(t, err, "a table in a schema that does not exist")
}

// indexOf returns the name of the index on expires_at of the table, and
// fails t unless there is exactly one.
func indexOf(t *testing.T, pool *pgxpool.Pool, schema, table string) string {
	t.Helper()
	var names []string
	rows, err := pool.Query(context.Background(),
		`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 AND indexdef LIKE '%(expires_at)'`,
		schema, table)
	require.NoError(t, err)
	names, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, names, 1, "indexes on expires_at")
	return names[0]
}

// countRows counts the rows of table (quoted) where cond holds.
func countRows(t testing.TB, pool *pgxpool.Pool, table, cond string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE `+cond).Scan(&n))
	return n
}

// TestConcurrentNew starts replicas at once on a table that does not exist
// yet, a few times: every New succeeds.
func TestConcurrentNew(t *testing.T) {
	const replicas = 8
	pool := newPool(t, sharedServer(t), replicas)
	for round := 0; round < 5; round++ {
		table := newTableName(t)
		errs := make([]error, replicas)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range replicas {
			wg.Go(func() {
				<-start
				_, errs[i] = pgstore.New(context.Background(), pool, pgstore.WithTable(table))
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, replica %d", round, i)
		}
	}
}

// TestNewOnAMigratedTable makes the table and its index as a migration
// would, under names of its own, then starts a store as a role that may
// only read and write the table's rows: New finds both and creates
// nothing, and the store works.
func TestNewOnAMigratedTable(t *testing.T) {
	ctx := context.Background()
	srv := sharedServer(t)
	owner := newPool(t, srv, 2)
	table, role := newTableName(t), "app_"+newTableName(t)
	quoted, quotedRole := pgx.Identifier{table}.Sanitize(), pgx.Identifier{role}.Sanitize()
	_, err := owner.Exec(ctx, `CREATE TABLE `+quoted+` (key text PRIMARY KEY, token text NOT NULL, done boolean NOT NULL, expires_at timestamptz NOT NULL);
CREATE INDEX `+pgx.Identifier{table + "_by_expiry"}.Sanitize()+` ON `+quoted+` (expires_at);
CREATE ROLE `+quotedRole+` LOGIN;
GRANT SELECT, INSERT, UPDATE, DELETE ON `+quoted+` TO `+quotedRole)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = owner.Exec(context.Background(), `DROP TABLE `+quoted+`; DROP ROLE `+quotedRole)
	})

	app := newPool(t, srv, 2, "user="+role)
	s := newStore(t, app, pgstore.WithTable(table))
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)
	require.NoError(t, s.CompleteFenced(ctx, key, token))
	assert.Equal(t, table+"_by_expiry", indexOf(t, owner, "public", table), "New made no index of its own")
}

// TestNewTakesNoLockOnATableInUse starts a store while another session
// holds a write lock on the table (an open transaction that wrote to it):
// New, which finds the table and index, neither waits for it nor makes
// the replicas' claims wait.
func TestNewTakesNoLockOnATableInUse(t *testing.T) {
	ctx := context.Background()
	srv := sharedServer(t)
	pool := newPool(t, srv, 4)
	table := newTableName(t)
	s := newStore(t, pool, pgstore.WithTable(table))
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `DELETE FROM `+pgx.Identifier{table}.Sanitize()+` WHERE false`)
	require.NoError(t, err)

	// A New that waited would fail at its timeout; one that does not
	// returns in milliseconds.
	_, err = pgstore.New(ctx, newPool(t, srv, 2), pgstore.WithTable(table), pgstore.WithTimeout(30*time.Second))
	require.NoError(t, err, "New waited for the open transaction")
	r, _, err := s.ClaimFenced(ctx, storetest.NewKey(t))
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimNew, r)
}

// TestNewRefusesAMisshapenTable gives New tables that a migration could
// have made wrong: New refuses each, naming what is wrong, and alters
// none (a store on a table it cannot rely on would answer 500 to every
// delivery, or, with a timestamp without time zone, let replicas in two
// time zones both claim one delivery).
func TestNewRefusesAMisshapenTable(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t, sharedServer(t), 2)
	const good = `key text PRIMARY KEY, token text NOT NULL, done boolean NOT NULL, expires_at timestamptz NOT NULL`
	tests := []struct {
		name, columns, index, wantErr string
	}{
		{"no primary key", `key text, token text NOT NULL, done boolean NOT NULL, expires_at timestamptz NOT NULL`, "(expires_at)", "column key is not its primary key"},
		{"a short token", `key text PRIMARY KEY, token varchar(8), done boolean NOT NULL, expires_at timestamptz NOT NULL`, "(expires_at)", "column token is character varying(8), not text"},
		{"done as a number", `key text PRIMARY KEY, token text NOT NULL, done integer NOT NULL, expires_at timestamptz NOT NULL`, "(expires_at)", "column done is integer, not boolean"},
		{"a time without zone", `key text PRIMARY KEY, token text NOT NULL, done boolean NOT NULL, expires_at timestamp NOT NULL`, "(expires_at)", "column expires_at is timestamp without time zone, not timestamp with time zone"},
		{"no token", `key text PRIMARY KEY, done boolean NOT NULL, expires_at timestamptz NOT NULL`, "(expires_at)", "no column token"},
		{"no index on expires_at", good, "", "no index on expires_at"},
		{"a partial index", good, "(expires_at) WHERE done", "no index on expires_at"},
		{"an expression index", good, "((expires_at IS NOT NULL))", "no index on expires_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := pgx.Identifier{newTableName(t)}.Sanitize()
			_, err := pool.Exec(ctx, `CREATE TABLE `+table+` (`+tt.columns+`)`)
			require.NoError(t, err)
			if tt.index != "" {
				_, err = pool.Exec(ctx, `CREATE INDEX ON `+table+` `+tt.index)
				require.NoError(t, err)
			}
			indexes := countIndexes(t, pool, table)
			_, err = pgstore.New(ctx, pool, pgstore.WithTable(strings.Trim(table, `"`)))
			require.ErrorContains(t, err, tt.wantErr)
			assert.Equal(t, indexes, countIndexes(t, pool, table), "New altered the table")
		})
	}
}

// countIndexes is how many indexes the table (quoted) has.
func countIndexes(t *testing.T, pool *pgxpool.Pool, table string) int {
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_index WHERE indrelid = to_regclass($1)`, table).Scan(&n))
	return n
}
