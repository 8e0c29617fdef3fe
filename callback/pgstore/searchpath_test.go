//go:build unix

package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestSearchPathChangedAfterNew starts a store on a table named without a
// schema, then makes the pool's sessions find a same-named table of
// another schema first (a tenant sharing the pool sets its search_path):
// every statement of the store still reads and writes the table New
// found, or created, and the other table is left as it was.
func TestSearchPathChangedAfterNew(t *testing.T) {
	tests := []struct {
		name string
		// before is the search_path New runs with, given the store's
		// schema and an empty one; created is whether New creates the
		// table (else it exists in the store's schema beforehand).
		before  func(store, empty string) string
		created bool
		// pool returns a pool whose sessions start with the search_path
		// path, and a func that makes them use the search_path to.
		pool func(t *testing.T, srv *pgServer, path string) (*pgxpool.Pool, func(to string))
	}{
		{"created, then AfterConnect sets another path", func(s, _ string) string { return s }, true, afterConnectPool},
		{"created, then SET on the pooled session", func(s, _ string) string { return s }, true, setPool},
		{"found after an empty schema, then AfterConnect sets another path", func(s, e string) string { return e + ", " + s }, false, afterConnectPool},
		{"found after an empty schema, then SET on the pooled session", func(s, e string) string { return e + ", " + s }, false, setPool},
	}
	srv := sharedServer(t)
	admin := newPool(t, srv, 2)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suffix := newTableName(t)[5:]
			ours, tenant, empty := "store_"+suffix, "tenant_"+suffix, "empty_"+suffix
			const name = "deliveries"
			oursQ, tenantQ := pgx.Identifier{ours, name}.Sanitize(), pgx.Identifier{tenant, name}.Sanitize()
			for _, schema := range []string{ours, tenant, empty} {
				_, err := admin.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize())
				require.NoError(t, err)
			}
			tables := []string{tenantQ}
			if !tt.created {
				tables = append(tables, oursQ)
			}
			for _, q := range tables {
				_, err := admin.Exec(ctx, `CREATE TABLE `+q+` (key text PRIMARY KEY, token text NOT NULL, done boolean NOT NULL, expires_at timestamptz NOT NULL);
CREATE INDEX ON `+q+` (expires_at)`)
				require.NoError(t, err)
			}
			// The tenant's table holds a processed delivery, which the
			// store must claim as new, and an expired row, which its
			// sweep must leave.
			processed, expired := storetest.NewKey(t), storetest.NewKey(t)
			_, err := admin.Exec(ctx, `INSERT INTO `+tenantQ+` VALUES ($1, 'tenant', true, now() + interval '1 hour'), ($2, 'tenant', false, now() - interval '1 hour')`, processed, expired)
			require.NoError(t, err)

			pool, switchTo := tt.pool(t, srv, tt.before(ours, empty))
			s := newStore(t, pool, pgstore.WithTable(name), pgstore.WithSweepInterval(0))
			assert.Contains(t, fmt.Sprint(s), oursQ, "the store's table")
			switchTo(tenant + ", " + ours)
			var path string
			require.NoError(t, pool.QueryRow(ctx, `SHOW search_path`).Scan(&path))
			require.Equal(t, tenant+", "+ours, path, "the pool's sessions have the tenant's search_path")

			r, token, err := s.ClaimFenced(ctx, processed)
			require.NoError(t, err)
			require.Equal(t, callback.ClaimNew, r, "a claim of a key the tenant's table holds as processed")
			require.NoError(t, s.CompleteFenced(ctx, processed, token))
			released := storetest.NewKey(t)
			r, token, err = s.ClaimFenced(ctx, released)
			require.NoError(t, err)
			require.Equal(t, callback.ClaimNew, r)
			require.NoError(t, s.ReleaseFenced(ctx, released, token))
			completed := storetest.NewKey(t)
			require.NoError(t, s.Complete(ctx, completed))
			ours1 := storetest.NewKey(t)
			_, err = admin.Exec(ctx, `INSERT INTO `+oursQ+` VALUES ($1, 'old', false, now() - interval '1 hour')`, ours1)
			require.NoError(t, err)
			n, err := s.Sweep(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(1), n, "rows swept")

			assert.ElementsMatch(t, []string{completed + " done", processed + " done"}, rowsOf(t, admin, oursQ), "the store's table")
			assert.ElementsMatch(t, []string{expired + " claim", processed + " done"}, rowsOf(t, admin, tenantQ), "the tenant's table")
		})
	}
}

// afterConnectPool returns a pool whose sessions set their search_path
// when they connect, and a func that changes the path of the sessions it
// connects from then on and closes those it has, as a tenant's pool
// configured anew would.
func afterConnectPool(t *testing.T, srv *pgServer, path string) (*pgxpool.Pool, func(string)) {
	var current atomic.Pointer[string]
	current.Store(&path)
	cfg, err := pgxpool.ParseConfig(srv.dsn() + " pool_max_conns=4")
	require.NoError(t, err)
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, `SELECT set_config('search_path', $1, false)`, *current.Load())
		return err
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool, func(to string) {
		current.Store(&to)
		pool.Reset()
	}
}

// setPool returns a pool of one session, whose search_path is set in its
// connection string, and a func that changes it with SET on that session.
func setPool(t *testing.T, srv *pgServer, path string) (*pgxpool.Pool, func(string)) {
	pool := newPool(t, srv, 1, "search_path='"+path+"'")
	return pool, func(to string) {
		_, err := pool.Exec(context.Background(), `SELECT set_config('search_path', $1, false)`, to)
		require.NoError(t, err)
	}
}

// rowsOf returns the rows of table (quoted) as "key done" or "key claim".
func rowsOf(t *testing.T, pool *pgxpool.Pool, table string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT key || CASE WHEN done THEN ' done' ELSE ' claim' END FROM `+table)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return got
}

// TestNewWithNoSchemaToCreateIn starts a store on a table named without a
// schema, absent, whose session's search_path names no schema that
// exists: New refuses, saying what to give instead.
func TestNewWithNoSchemaToCreateIn(t *testing.T) {
	pool := newPool(t, sharedServer(t), 1, "search_path=no_such_schema")
	_, err := pgstore.New(context.Background(), pool, pgstore.WithTable(newTableName(t)))
	require.ErrorContains(t, err, `no schema of the search_path exists to create it in: give WithTable("schema.table")`)
}
