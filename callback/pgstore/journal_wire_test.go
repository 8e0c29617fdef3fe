//go:build unix

package pgstore_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/journal"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// turns counts the round trips of the connections it dialed: the times a
// connection sent something after it had received (or before it ever
// did).
type turns struct {
	mu sync.Mutex
	n  int
}

func (t *turns) get() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// turnConn is a connection whose round trips turns counts.
type turnConn struct {
	net.Conn
	t    *turns
	sent bool // the last thing done was sending
}

func (c *turnConn) Write(b []byte) (int, error) {
	c.t.mu.Lock()
	if !c.sent {
		c.t.n++
	}
	c.sent = true
	c.t.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *turnConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.t.mu.Lock()
	c.sent = false
	c.t.mu.Unlock()
	return n, err
}

// countingPool returns a pool of one connection to srv whose round trips
// the returned turns counts.
func countingPool(t *testing.T, srv *pgServer) (*pgxpool.Pool, *turns) {
	cfg, err := pgxpool.ParseConfig(srv.dsn() + " pool_max_conns=1")
	require.NoError(t, err)
	tr := &turns{}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &turnConn{Conn: c, t: tr}, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool, tr
}

// TestJournalRoundTrips counts the round trips on the wire of each
// method, once the pool's connection has prepared its statements: each
// is one, and a page of Entries is one.
func TestJournalRoundTrips(t *testing.T) {
	pool, tr := countingPool(t, sharedServer(t))
	s := newJournal(t, pool, pgstore.WithTable(newTableName(t)), pgstore.WithSweepInterval(0))
	ctx := context.Background()
	step := journal.Step{Key: "o:1", ID: "a", Record: []byte(`{}`), Names: []string{"ref:1", "tid:1"}, Exclusive: true,
		At: time.Now(), Stage: journal.StageInitiated, Ref: "1", Read: true, Peek: "u:1"}
	ops := []struct {
		name string
		do   func() error
	}{
		{"an Exclusive Write that reads and peeks", func() error { _, err := s.Write(ctx, step); return err }},
		{"a plain Write", func() error {
			_, err := s.Write(ctx, journal.Step{Key: "o:2", ID: "b", Record: []byte(`{}`), At: time.Now()})
			return err
		}},
		{"a refused Write", func() error {
			w, err := s.Write(ctx, journal.Step{Key: "o:3", ID: "c", Names: []string{"ref:1"}, Exclusive: true, At: time.Now()})
			assert.Equal(t, "o:1", w.Taken)
			return err
		}},
		{"Records", func() error { _, err := s.Records(ctx, "o:1"); return err }},
		{"Lookup", func() error { _, err := s.Lookup(ctx, "ref:1"); return err }},
		{"a page of Entries", func() error {
			for _, err := range s.Entries(ctx, journal.Query{Stages: []journal.Stage{journal.StageInitiated}}) {
				return err
			}
			return nil
		}},
		{"a page of open Entries", func() error {
			for _, err := range s.Entries(ctx, journal.Query{Open: true}) {
				return err
			}
			return nil
		}},
		{"Close", func() error { return s.Close(ctx, "o:2", 1) }},
	}
	for _, op := range ops {
		require.NoError(t, op.do(), op.name) // prepares its statements
		before := tr.get()
		require.NoError(t, op.do(), op.name)
		assert.Equal(t, 1, tr.get()-before, "round trips of %s", op.name)
	}
}

// TestJournalBehindPgBouncer runs the contract suite through PgBouncer in
// transaction pooling mode, where each transaction may run on another
// server session: a Write's and a Close's locks and reads are in one
// transaction, and hold.
func TestJournalBehindPgBouncer(t *testing.T) {
	srv := sharedServer(t)
	b := startPgBouncer(t, srv)
	table := newTableName(t)
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) journal.Store {
		return newJournal(t, b.newPool(t, "postgres", 20), pgstore.WithTable(table), pgstore.WithRetention(cfg.Retention))
	})
}

// TestJournalFailedWriteWritesNothing makes a Write's statement fail on
// the server (its statement_timeout ends its wait for a lock that another
// session holds): the Write fails, nothing of it was written (its
// transaction is the pipeline's, rolled back whole), and the store's pool
// of one connection goes on.
func TestJournalFailedWriteWritesNothing(t *testing.T) {
	srv := sharedServer(t)
	ctx := context.Background()
	table := newTableName(t)
	s := newJournal(t, newPool(t, srv, 1, "statement_timeout=200"), pgstore.WithTable(table))
	write(t, s, "o:1", "a", `{"n":1}`)

	other := newPool(t, srv, 1)
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT FROM `+journalTables("public", table)[1]+` WHERE key = 'o:1' FOR UPDATE`)
	require.NoError(t, err)
	_, err = s.Write(ctx, journal.Step{Key: "o:1", ID: "b", Record: []byte(`{"n":2}`), Names: []string{"ref:b"}, At: time.Now()})
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	assert.Equal(t, "57014", pgErr.Code, "cancelled by statement_timeout")
	require.NoError(t, tx.Rollback(ctx))

	recs, err := s.Records(ctx, "o:1")
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte(`{"n":1}`)}, recs, "no record")
	got, err := s.Lookup(ctx, "ref:b")
	require.NoError(t, err)
	assert.Empty(t, got, "no name")
	require.NoError(t, s.Close(ctx, "o:1", 1))
	write(t, s, "o:1", "c", `{"n":3}`)
	recs, err = s.Records(ctx, "o:1")
	require.NoError(t, err)
	assert.Len(t, recs, 2)
}
