//go:build unix

package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// appRole is the role the stores of the fault tests connect as: not a
// superuser, so that a connection limit holds it.
const appRole = "app"

// faultBed is a server of its own for the fault tests, which change it
// as a whole, the role the stores connect as, directly or through
// PgBouncer, and the table they share.
type faultBed struct {
	srv     *pgServer
	bouncer *pgBouncer // nil: the stores connect directly
	admin   *pgxpool.Pool
	table   string // unquoted, in the schema public
}

// newFaultBed starts a server for t, with PgBouncer in front of it when
// viaPgBouncer, and makes the stores' role and table.
func newFaultBed(t *testing.T, viaPgBouncer bool) *faultBed {
	t.Helper()
	if viaPgBouncer {
		_, err := findPgBouncer()
		serverOrSkip(t, err)
	}
	b := &faultBed{srv: ownServer(t, "faults-"+strconv.FormatBool(viaPgBouncer)), table: newTableName(t)}
	// A setting of the session outranks the configuration file, so the
	// admin's sessions stay writable while the server is read-only.
	b.admin = newPool(t, b.srv, 4, "default_transaction_read_only=off")
	newStore(t, b.admin, pgstore.WithTable(b.table))
	_, err := b.admin.Exec(context.Background(), `CREATE ROLE `+appRole+` LOGIN;
GRANT SELECT, INSERT, UPDATE, DELETE ON `+b.quoted()+` TO `+appRole)
	require.NoError(t, err)
	if viaPgBouncer {
		b.bouncer = startPgBouncer(t, b.srv, appRole)
	}
	return b
}

// quoted is the bed's table, quoted.
func (b *faultBed) quoted() string {
	return pgx.Identifier{b.table}.Sanitize()
}

// pool returns a pool of the stores' role for a store whose timeout is
// timeout, closed when t ends. A direct session's statement_timeout is
// half that, so that the server, not the client, ends a statement that
// waits for a lock, and the connection is kept.
func (b *faultBed) pool(t *testing.T, timeout time.Duration) *pgxpool.Pool {
	if b.bouncer != nil {
		return b.bouncer.newPool(t, appRole, 20)
	}
	return newPool(t, b.srv, 20, "user="+appRole, "statement_timeout="+strconv.FormatInt((timeout/2).Milliseconds(), 10))
}

// open opens a store on the bed, as storetest's Open does.
func (b *faultBed) open(t *testing.T, cfg storetest.Config) callback.FencedStore {
	return b.store(t, cfg)
}

// store returns a store on the bed with cfg.
func (b *faultBed) store(t *testing.T, cfg storetest.Config) *pgstore.Store {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = pgstore.DefaultTimeout
	}
	return newStore(t, b.pool(t, timeout), append(configOptions(cfg), pgstore.WithTable(b.table))...)
}

// faultBound ends an injection or a healing that never takes effect; it
// is never reached by a passing test.
const faultBound = 30 * time.Second

// readOnly makes the server read-only for a moment, as a failover or a
// disk-full guard does: every session's next transaction, pooled ones
// included, is read only, and a write fails with SQLSTATE 25006.
func (b *faultBed) readOnly() storetest.Fault {
	set := func(t *testing.T, on bool) {
		ctx := context.Background()
		alter := `ALTER SYSTEM RESET default_transaction_read_only`
		if on {
			alter = `ALTER SYSTEM SET default_transaction_read_only = on`
		}
		_, err := b.admin.Exec(ctx, alter)
		require.NoError(t, err)
		_, err = b.admin.Exec(ctx, `SELECT pg_reload_conf()`)
		require.NoError(t, err)
		// A new session starts with the postmaster's settings: once it
		// has the new one, the postmaster has signalled every session,
		// and each reads the file again before its next statement.
		want := map[bool]string{true: "on", false: "off"}[on]
		b.poll(t, "the server's default_transaction_read_only to be "+want, func(ctx context.Context) (bool, error) {
			conn, err := pgx.Connect(ctx, b.srv.dsn()+" user="+appRole)
			if err != nil {
				return false, err
			}
			defer conn.Close(ctx)
			var got string
			err = conn.QueryRow(ctx, `SHOW default_transaction_read_only`).Scan(&got)
			return got == want, err
		})
	}
	return storetest.Fault{
		Name:   "read-only",
		Inject: func(t *testing.T) { set(t, true) },
		Heal:   func(t *testing.T) { set(t, false) },
	}
}

// migrationLock holds, in a migration's open transaction, the ACCESS
// EXCLUSIVE lock that ALTER TABLE takes: the stores' statements wait for
// it until statement_timeout cancels them (SQLSTATE 57014); the migration
// then commits.
func (b *faultBed) migrationLock() storetest.Fault {
	var tx pgx.Tx
	return storetest.Fault{
		Name: "migration lock",
		Inject: func(t *testing.T) {
			var err error
			tx, err = b.admin.Begin(context.Background())
			require.NoError(t, err)
			_, err = tx.Exec(context.Background(), `ALTER TABLE `+b.quoted()+` ADD COLUMN IF NOT EXISTS migrated boolean`)
			require.NoError(t, err)
		},
		Heal: func(t *testing.T) {
			if tx != nil {
				require.NoError(t, tx.Commit(context.Background()))
				tx = nil
			}
		},
	}
}

// terminated terminates the stores' sessions, as a restart of the server
// or a failover does, and refuses new ones until healed: a statement on a
// pooled connection fails (SQLSTATE 57P01, or the connection is found
// dead), and so does opening one (53300).
func (b *faultBed) terminated() storetest.Fault {
	limit := func(t *testing.T, n int) {
		_, err := b.admin.Exec(context.Background(), `ALTER ROLE `+appRole+` CONNECTION LIMIT `+strconv.Itoa(n))
		require.NoError(t, err)
	}
	return storetest.Fault{
		Name: "sessions terminated",
		Inject: func(t *testing.T) {
			limit(t, 0)
			b.poll(t, "the stores' sessions to end", func(ctx context.Context) (bool, error) {
				var left int
				err := b.admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1`, appRole).Scan(&left)
				return left == 0, err
			})
		},
		Heal: func(t *testing.T) {
			limit(t, -1)
			b.poll(t, "a session of the stores' role", func(ctx context.Context) (bool, error) {
				conn, err := pgx.Connect(ctx, b.srv.dsn()+" user="+appRole)
				if err != nil {
					return false, nil
				}
				return true, conn.Close(ctx)
			})
		},
	}
}

// pgBouncerPause pauses PgBouncer, as before a switchover: it waits for
// the transactions in progress, closes no connection, and holds every
// query until it resumes, so a store's statement waits until its timeout.
func (b *faultBed) pgBouncerPause() storetest.Fault {
	var paused bool
	return storetest.Fault{
		Name: "PgBouncer PAUSE",
		Inject: func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), faultBound)
			defer cancel()
			paused = true // a PAUSE that timed out may still take effect
			require.NoError(t, b.bouncer.admin(ctx, `PAUSE`))
		},
		Heal: func(t *testing.T) {
			if !paused {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), faultBound)
			defer cancel()
			require.NoError(t, b.bouncer.admin(ctx, `RESUME`))
			paused = false
			b.poll(t, "a query through PgBouncer", func(ctx context.Context) (bool, error) {
				conn, err := pgx.Connect(ctx, b.bouncer.dsn(appRole, "postgres"))
				if err != nil {
					return false, nil
				}
				defer conn.Close(ctx)
				_, err = conn.Exec(ctx, `SELECT 1`)
				return err == nil, nil
			})
		},
	}
}

// poll calls f, with a context of a second, every 10ms until it reports
// true, failing t on an error of f or after faultBound.
func (b *faultBed) poll(t *testing.T, what string, f func(ctx context.Context) (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(faultBound)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ok, err := f(ctx)
		cancel()
		require.NoError(t, err, "waiting for %s", what)
		if ok {
			return
		}
		require.True(t, time.Now().Before(deadline), "waited %v for %s", faultBound, what)
		<-tick.C
	}
}

// TestCompletionFaults runs storetest's fault suite: a handler's
// completion that one of these faults of PostgreSQL fails is tried again
// until it is recorded once it heals, and the function is called once.
// The stores connect directly, or through PgBouncer.
func TestCompletionFaults(t *testing.T) {
	t.Run("direct", func(t *testing.T) {
		b := newFaultBed(t, false)
		storetest.TestCompletionFaults(t, b.open, b.readOnly(), b.migrationLock(), b.terminated())
	})
	t.Run("PgBouncer", func(t *testing.T) {
		b := newFaultBed(t, true)
		storetest.TestCompletionFaults(t, b.open, b.pgBouncerPause(), b.readOnly())
	})
}

// TestFaultsFailCompletionsToBeRetried claims a delivery, injects a fault
// and completes the claim for longer than the store's timeout: each
// completion fails with the fault's own error, never ErrClaimLost (which
// would end the handler's retries), and changes nothing; once healed, the
// completion succeeds and the delivery is done.
func TestFaultsFailCompletionsToBeRetried(t *testing.T) {
	const timeout = 400 * time.Millisecond
	tests := []struct {
		name         string
		viaPgBouncer bool
		fault        func(*faultBed) storetest.Fault
		// want checks each failed completion's error.
		want func(t *testing.T, err error)
	}{
		{"read-only", false, (*faultBed).readOnly, sqlState("25006")},
		{"read-only behind PgBouncer", true, (*faultBed).readOnly, sqlState("25006")},
		{"migration lock past statement_timeout", false, (*faultBed).migrationLock, sqlState("57014")},
		{"sessions terminated", false, (*faultBed).terminated, sqlState("57P01", "53300")},
		{"PgBouncer PAUSE", true, (*faultBed).pgBouncerPause, func(t *testing.T, err error) {
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			b := newFaultBed(t, tt.viaPgBouncer)
			s := b.store(t, storetest.Config{Lease: time.Hour, Retention: time.Hour, Timeout: timeout})
			key := storetest.NewKey(t)
			r, token, err := s.ClaimFenced(ctx, key)
			require.NoError(t, err)
			require.Equal(t, callback.ClaimNew, r)
			f := tt.fault(b)
			t.Cleanup(func() { f.Heal(t) }) // a failing test's; healing twice does nothing
			f.Inject(t)
			began := time.Now()
			attempt := 1
			for ; ; attempt++ {
				err := s.CompleteFenced(ctx, key, token)
				require.Error(t, err, "completion %d during the fault", attempt)
				if attempt == 1 {
					t.Logf("a completion during the fault: %v", err)
				}
				require.NotErrorIs(t, err, callback.ErrClaimLost, "completion %d during the fault", attempt)
				assertHides(t, err, key)
				tt.want(t, err)
				if time.Since(began) > 2*timeout {
					break
				}
				time.Sleep(timeout / 4) // a handler's pause between attempts
			}
			t.Logf("%d completions failed in %v", attempt, time.Since(began).Round(time.Millisecond))
			f.Heal(t)
			assert.Equal(t, []string{key + " claim"}, rowsOf(t, b.admin, b.quoted()), "the table after the failed completions")
			require.NoError(t, s.CompleteFenced(ctx, key, token), "the completion once healed")
			r, _, err = s.ClaimFenced(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, callback.ClaimDone, r)
		})
	}
}

// sqlState returns a check that an error is a PostgreSQL error of one of
// codes.
func sqlState(codes ...string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var pgErr *pgconn.PgError
		if assert.True(t, errors.As(err, &pgErr), "not an error of the server: %v", err) {
			assert.Contains(t, codes, pgErr.Code, fmt.Sprintf("SQLSTATE of %v", err))
		}
	}
}

// TestEndedSessions terminates the sessions of every connection of a
// store's pool, as a restart or failover of the server does, with the
// pool handing them out unchecked (as it does those used within the last
// second): each operation of the store, run on one dead connection after
// another, reaches a new session and succeeds.
func TestEndedSessions(t *testing.T) {
	const conns = 8 // more than maxTries, so that the pool's size bounds the tries
	claim := func(t *testing.T, s *pgstore.Store, key string) string {
		r, token, err := s.ClaimFenced(context.Background(), key)
		require.NoError(t, err, "a claim")
		require.Equal(t, callback.ClaimNew, r)
		return token
	}
	tests := []struct {
		name string
		// before runs on live sessions, during on ended ones; both on key.
		before func(t *testing.T, s *pgstore.Store, key string) string
		during func(t *testing.T, s *pgstore.Store, key, token string)
		// want is the table's row of key after.
		want []string
	}{
		{"claim", func(*testing.T, *pgstore.Store, string) string { return "" },
			func(t *testing.T, s *pgstore.Store, key, _ string) { claim(t, s, key) }, []string{"claim"}},
		{"fenced completion", claim, func(t *testing.T, s *pgstore.Store, key, token string) {
			require.NoError(t, s.CompleteFenced(context.Background(), key, token))
		}, []string{"done"}},
		{"fenced release", claim, func(t *testing.T, s *pgstore.Store, key, token string) {
			require.NoError(t, s.ReleaseFenced(context.Background(), key, token))
		}, nil},
		{"completion", claim, func(t *testing.T, s *pgstore.Store, key, _ string) {
			require.NoError(t, s.Complete(context.Background(), key))
		}, []string{"done"}},
		{"release", claim, func(t *testing.T, s *pgstore.Store, key, _ string) {
			require.NoError(t, s.Release(context.Background(), key))
		}, nil},
	}
	srv := sharedServer(t)
	admin := newPool(t, srv, 2)
	table := newTableName(t)
	quoted := pgx.Identifier{table}.Sanitize()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			app := "pgstore-" + newTableName(t)
			cfg, err := pgxpool.ParseConfig(srv.dsn() + " application_name=" + app + " pool_max_conns=" + strconv.Itoa(conns))
			require.NoError(t, err)
			cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			require.NoError(t, err)
			t.Cleanup(pool.Close)
			s := newStore(t, pool, pgstore.WithTable(table), pgstore.WithSweepInterval(0))
			key := storetest.NewKey(t)
			token := tt.before(t, s, key)

			// Every connection of the pool holds a session, then every
			// session ends.
			held := make([]*pgxpool.Conn, conns)
			for i := range held {
				held[i], err = pool.Acquire(ctx)
				require.NoError(t, err)
			}
			for _, c := range held {
				c.Release()
			}
			var ended int
			require.NoError(t, admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&ended))
			require.Equal(t, conns, ended, "sessions terminated")
			waitCount(t, admin, "pg_stat_activity", "application_name = '"+app+"'", 0)

			tt.during(t, s, key, token)
			var states []string
			for _, r := range rowsOf(t, admin, quoted) {
				if strings.HasPrefix(r, key+" ") {
					states = append(states, strings.TrimPrefix(r, key+" "))
				}
			}
			assert.Equal(t, tt.want, states, "the row of the key")
		})
	}
}
