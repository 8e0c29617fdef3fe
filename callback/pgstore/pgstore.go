package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule/callback"
)

// Store is a [callback.FencedStore] in a PostgreSQL table, shared by every
// server of a fleet that uses the same table. Make one with [New]; it is
// safe for concurrent use. Its fmt form shows its table, lease, retention,
// timeout and sweep interval, never a key or the pool's connection string.
type Store struct {
	pool   *pgxpool.Pool
	cfg    config
	table  table
	sql    queries
	prefix string // of this Store's tokens
	tries  int    // how many times a statement runs at most (see exec)
	// The counters are behind a pointer so that fmt, which prints a
	// Store, does not copy them.
	st *state
}

// state is what a Store changes.
type state struct {
	seq       atomic.Uint64 // the number of the last token
	sweeping  atomic.Bool   // whether an automatic sweep runs
	lastSweep atomic.Int64  // when the last automatic sweep began, in ns since born
	born      time.Time
}

var _ callback.FencedStore = (*Store)(nil)

// New returns a store of deliveries in pool's database, creating its table
// and the table's index on expires_at if they are absent (any number of
// replicas may do so at once). A table named without a schema is looked
// up once, here, through the search_path of the session New runs on (the
// schema of the table found, else the first schema of the search_path
// that exists, where it is created); the store's statements then name
// that schema, whatever search_path a pooled session has later. It
// returns an error for a nil pool, an invalid option, or a table it cannot
// create; ctx and the timeout bound it. The pool's own settings (its size,
// pool_max_conns, and its connect timeout) apply to every call of the
// store.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgstore: New: nil pool")
	}
	cfg := defaults()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	t, err := parseTable(cfg.table)
	if err != nil {
		return nil, err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("pgstore: New: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: New: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	if t, err = t.resolve(ctx, pool); err != nil {
		return nil, fmt.Errorf("pgstore: New: %w", err)
	}
	if err := t.prepare(ctx, pool, cfg.noCreate); err != nil {
		return nil, fmt.Errorf("pgstore: New: %w", err)
	}
	return &Store{
		pool:   pool,
		cfg:    cfg,
		table:  t,
		sql:    newQueries(t.name),
		prefix: hex.EncodeToString(b[:]) + "-",
		// Each pooled connection may hold a session that ended; one
		// more try opens a new one.
		tries: max(maxTries, int(pool.Config().MaxConns)+1),
		st:    &state{born: time.Now()},
	}, nil
}

// Claim implements [callback.Store]; it is ClaimFenced without the token.
func (s *Store) Claim(ctx context.Context, key string) (callback.ClaimResult, error) {
	c, _, err := s.ClaimFenced(ctx, key)
	return c, err
}

// ClaimFenced implements [callback.FencedStore] in one statement, on the
// server's clock: it takes key when no row holds it or its row expired (a
// claim whose lease lapsed, or a delivery processed longer ago than the
// retention), whether or not the row was swept yet. It may start an
// automatic sweep (see [WithSweepInterval]).
func (s *Store) ClaimFenced(ctx context.Context, key string) (callback.ClaimResult, string, error) {
	if err := ctx.Err(); err != nil {
		return 0, "", fmt.Errorf("pgstore: claim: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	ours := s.prefix + strconv.FormatUint(s.st.seq.Add(1), 10)
	var done bool
	var token string
	claim := func() error {
		return s.pool.QueryRow(ctx, s.sql.claim, key, ours, s.cfg.lease.Microseconds()).Scan(&done, &token)
	}
	err := claim()
	// Run again with the same token, a claim that took effect before
	// its session ended finds its own row and is new.
	for try := 1; try < s.tries && isEndedSession(err) && ctx.Err() == nil; try++ {
		err = claim()
	}
	if isSerializationFailure(err) {
		// Under REPEATABLE READ or SERIALIZABLE (a database or role whose
		// default_transaction_isolation is one of them), a claim that
		// meets a concurrent change of its row fails instead of waiting
		// for it: another holder claimed, completed or released the
		// delivery meanwhile, so it is busy, and the sender comes back.
		s.maybeSweep()
		return callback.ClaimBusy, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("pgstore: claim: %w", err)
	}
	s.maybeSweep()
	switch {
	case done:
		return callback.ClaimDone, "", nil
	case token == ours:
		return callback.ClaimNew, ours, nil
	}
	return callback.ClaimBusy, "", nil
}

// CompleteFenced implements [callback.FencedStore] in one statement: it
// marks key processed under token, to be remembered for the retention,
// when token's claim holds key (whether or not its lease lapsed), when no
// claim holds key and key is not processed (the lease lapsed and nobody
// claimed the delivery since, whether or not the row was swept), or when
// key was processed under token already (a completion run again after its
// answer was lost: that changes nothing). When another token's claim holds
// key, or key was processed under another token, it changes nothing and
// returns [callback.ErrClaimLost]. Any other error (the database
// unreachable, read-only, a statement timed out or cancelled, a connection
// that died) means the completion may be run again: it is never
// ErrClaimLost.
func (s *Store) CompleteFenced(ctx context.Context, key, token string) error {
	return s.exec(ctx, "complete", true, s.sql.completeFenced, key, token, s.cfg.retention.Microseconds())
}

// ReleaseFenced implements [callback.FencedStore]: it forgets key's claim if
// it is token's and key was not processed; else it changes nothing and
// returns [callback.ErrClaimLost].
func (s *Store) ReleaseFenced(ctx context.Context, key, token string) error {
	return s.exec(ctx, "release", true, s.sql.releaseFenced, key, token)
}

// Lease returns how long a claim of the store holds before it lapses (see
// [WithLease]).
func (s *Store) Lease() time.Duration {
	return s.cfg.lease
}

// Complete implements [callback.Store]: it marks key processed, to be
// remembered for the retention, whoever holds its claim.
func (s *Store) Complete(ctx context.Context, key string) error {
	return s.exec(ctx, "complete", false, s.sql.complete, key, s.cfg.retention.Microseconds())
}

// Release implements [callback.Store]: it forgets key's claim, whoever
// holds it, unless key was processed.
func (s *Store) Release(ctx context.Context, key string) error {
	return s.exec(ctx, "release", false, s.sql.release, key)
}

// exec runs the statement sql of the operation op (for errors) with args,
// bounded by the timeout; when fenced, a statement that changed no row
// means that the claim was lost.
func (s *Store) exec(ctx context.Context, op string, fenced bool, sql string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: %s: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, sql, args...)
	// Under REPEATABLE READ or SERIALIZABLE, a statement that waited for a
	// concurrent change of its row (a claim, busy or not, rewrites it)
	// fails instead of reading the new row; run again, it reads it. The
	// statements change nothing when they fail, so running them again is
	// safe, and a few times is enough: each failure means another
	// statement on this row committed meanwhile. A statement sent on a
	// pooled connection whose session had ended runs again on another
	// (see isEndedSession): a completion and an unfenced release run twice
	// do what they do once, and a fenced release run again after it took
	// effect finds no claim and reports it lost, which the handler only
	// logs.
	for try := 1; try < s.tries && (isSerializationFailure(err) || isEndedSession(err)) && ctx.Err() == nil; try++ {
		tag, err = s.pool.Exec(ctx, sql, args...)
	}
	if err != nil {
		return fmt.Errorf("pgstore: %s: %w", op, err)
	}
	if fenced && tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: %s: %w", op, callback.ErrClaimLost)
	}
	return nil
}

// maxTries is how many times, at least, a statement runs when it meets
// serialization failures or ended sessions.
const maxTries = 5

// isEndedSession reports whether err says that the pooled connection a
// statement was sent on had lost its session, so that the pool drops the
// connection and another may run the statement: the server's FATAL error
// (the session was terminated, by pg_terminate_backend, a restart or a
// failover, SQLSTATE 57P01, or by idle_session_timeout, 57P05, before it
// read the statement, or while it ran it, which rolls the statement back
// unless it had just committed) or a failure before anything was sent.
// After a restart, every connection the pool used within the last second
// (which it hands out without a ping) fails so once. A failure to open a
// connection is not one of these: the server refused a session, and
// another attempt would meet the same refusal.
func isEndedSession(err error) bool {
	var connectErr *pgconn.ConnectError
	if err == nil || errors.As(err, &connectErr) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.SeverityUnlocalized == "FATAL" || pgErr.Severity == "FATAL"
	}
	return pgconn.SafeToRetry(err)
}

// isSerializationFailure reports whether err is PostgreSQL's
// serialization failure (SQLSTATE 40001).
func isSerializationFailure(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40001"
}

// Format implements fmt.Formatter: every verb prints the store's table and
// settings, never a key or the pool's connection string. It has a value
// receiver so that a Store and a pointer to it print the same.
func (s Store) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "pgstore.Store")
	}
	fmt.Fprintf(f, "{Table:%s Lease:%v Retention:%v Timeout:%v SweepInterval:%v}",
		s.table.name, s.cfg.lease, s.cfg.retention, s.cfg.timeout, s.cfg.sweepInterval)
}
