//go:build unix

package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// password is in the connection strings of the tests that check that
// errors and fmt never show it (the servers trust every connection, so it
// is never asked for).
const password = "hunter2-pg-password"

// hangBound ends a test whose store call never returns; it is never
// reached by a passing test.
const hangBound = 30 * time.Second

// within returns f's error, failing t if f has not returned after
// hangBound.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangBound):
		t.Fatalf("the store's call did not return in %v", hangBound)
		return nil
	}
}

// TestServerGoesAway stops the store's server: a claim fails (it is not
// new) before its context ends, and a handler on the store answers a
// delivery 500 without calling the function, so that the sender delivers
// again.
func TestServerGoesAway(t *testing.T) {
	srv := ownServer(t, "gone")
	pool := newPool(t, srv, 4, "password="+password)
	s := newStore(t, pool, pgstore.WithTable(newTableName(t)))
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(context.Background(), key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)

	srv.stop()
	other := storetest.NewKey(t)
	err = within(t, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := s.Claim(ctx, other)
		assert.NotEqual(t, callback.ClaimNew, r, "a claim with the server gone")
		return err
	})
	require.Error(t, err, "a claim with the server gone")
	t.Logf("a claim with the server gone: %v", err)
	assertHides(t, err, other)
	err = within(t, func() error { return s.CompleteFenced(context.WithoutCancel(context.Background()), key, token) })
	require.Error(t, err, "a completion with the server gone")
	assert.NotErrorIs(t, err, callback.ErrClaimLost, "the claim may still be held: the store cannot tell")
	assertHides(t, err, key)

	var calls atomic.Int32
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error {
		calls.Add(1)
		return nil
	}, callback.WithStore(s), callback.WithoutAuthentication())
	req := httptest.NewRequest(http.MethodPost, "/travelrule/callback", strings.NewReader(statusBody))
	req.Header.Set(callback.HeaderID, "msg_"+other[5:])
	w := httptest.NewRecorder()
	require.NoError(t, within(t, func() error { h.ServeHTTP(w, req); return nil }))
	assert.Equal(t, http.StatusInternalServerError, w.Code, "the answer to a delivery with the server gone")
	assert.Zero(t, calls.Load(), "calls of the function")
}

// TestStoreHangs holds a lock on the store's table from another session,
// so that every statement on it waits: each call ends with
// context.DeadlineExceeded, from the caller's context or from the store's
// timeout when the context never ends (as for Complete and Release in the
// handler).
func TestStoreHangs(t *testing.T) {
	srv := sharedServer(t)
	pool := newPool(t, srv, 4)
	table := newTableName(t)
	s := newStore(t, pool, pgstore.WithTable(table), pgstore.WithTimeout(300*time.Millisecond), pgstore.WithSweepInterval(0))
	ctx := context.Background()
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)
	lockTable(t, srv, table)

	other := storetest.NewKey(t)
	err = within(t, func() error {
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := s.Claim(ctx, other)
		return err
	})
	require.ErrorIs(t, err, context.DeadlineExceeded, "a claim of a context of 200ms")
	t.Logf("a claim of a locked table: %v", err)
	assertHides(t, err, other)
	never := context.WithoutCancel(ctx)
	calls := map[string]func() error{
		"CompleteFenced": func() error { return s.CompleteFenced(never, key, token) },
		"ReleaseFenced":  func() error { return s.ReleaseFenced(never, key, token) },
		"Complete":       func() error { return s.Complete(never, key) },
		"Release":        func() error { return s.Release(never, key) },
		"Sweep":          func() error { _, err := s.Sweep(never); return err },
	}
	for name, call := range calls {
		err := within(t, call)
		require.ErrorIs(t, err, context.DeadlineExceeded, "%s with a context that never ends and a timeout of 300ms", name)
		assertHides(t, err, key)
	}
}

// lockTable locks table in another session until t ends, so that every
// statement on it waits.
func lockTable(t *testing.T, srv *pgServer, table string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.dsn())
	require.NoError(t, err)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = tx.Rollback(ctx)
		_ = conn.Close(ctx)
	})
	_, err = tx.Exec(ctx, `LOCK TABLE `+pgx.Identifier{table}.Sanitize()+` IN ACCESS EXCLUSIVE MODE`)
	require.NoError(t, err)
}

// TestErrorsHideKeys makes the server refuse a key (PostgreSQL's text
// holds no NUL byte): the error does not repeat it.
func TestErrorsHideKeys(t *testing.T) {
	s := newStore(t, newPool(t, sharedServer(t), 2, "password="+password), pgstore.WithTable(newTableName(t)))
	key := "a-key-the-errors-must-not-show\x00" + storetest.NewKey(t)
	_, err := s.Claim(context.Background(), key)
	require.Error(t, err)
	t.Logf("a claim of a key with a NUL byte: %v", err)
	assert.True(t, strings.HasPrefix(err.Error(), "pgstore: claim: "), err.Error())
	assertHides(t, err, key)
	assert.NotContains(t, err.Error(), "a-key-the-errors")
	for op, err := range map[string]error{
		"complete": s.Complete(context.Background(), key),
		"release":  s.ReleaseFenced(context.Background(), key, "token"),
	} {
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "pgstore: "+op+": "), err.Error())
		assert.NotContains(t, err.Error(), "a-key-the-errors")
	}
}

// TestFormat checks that fmt shows a store's table, in the schema New
// found it in, and settings, never the connection string.
func TestFormat(t *testing.T) {
	table := newTableName(t)
	s := newStore(t, newPool(t, sharedServer(t), 2, "password="+password), pgstore.WithTable(table), pgstore.WithLease(time.Minute))
	want := `{Table:"public"."` + table + `" Lease:1m0s Retention:168h0m0s Timeout:5s SweepInterval:1m0s}`
	for _, verb := range []string{"%v", "%+v", "%s"} {
		assert.Equal(t, want, fmt.Sprintf(verb, s), verb)
		assert.Equal(t, want, fmt.Sprintf(verb, *s), verb)
	}
	assert.Equal(t, "pgstore.Store"+want, fmt.Sprintf("%#v", s))
}

// assertHides checks that err shows neither key nor the password.
func assertHides(t *testing.T, err error, key string) {
	t.Helper()
	assert.NotContains(t, err.Error(), key, "the error shows the key")
	assert.NotContains(t, err.Error(), password, "the error shows the password")
}

// statusBody is a status callback.
const statusBody = `{"transferId":"6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11","status":"approved","timestamp":"2026-11-23T08:00:00Z"}`
