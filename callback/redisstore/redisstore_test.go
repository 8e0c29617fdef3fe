//go:build unix

package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestStore runs the store contract against a real Redis server, each
// store with a client of its own, as replicas have.
func TestStore(t *testing.T) {
	srv := sharedRedis(t)
	storetest.Run(t, openAt(srv.Addr))
}

// TestCompletionFaults runs the store contract's fault suite: a completion
// whose store fails for a while, through a loss-free failover, a paused
// primary and a restarting proxy, each outlasting the store's timeout, is
// retried by the handler until recorded, and the function runs once.
func TestCompletionFaults(t *testing.T) {
	rig := newFaultRig(t)
	var faults []storetest.Fault
	for _, f := range rig.faults() {
		faults = append(faults, storetest.Fault{Name: f.Name, Inject: f.Inject, Heal: f.Heal})
	}
	open := openAt(rig.Addr())
	storetest.TestCompletionFaults(t, func(t *testing.T, cfg storetest.Config) callback.FencedStore {
		require.Positive(t, cfg.Timeout, "the suite sets the stores' timeout")
		rig.Hold = 2 * cfg.Timeout // each fault outlasts an attempt's timeout
		return open(t, cfg)
	}, faults...)
}

// openAt opens the stores of the contract suite on the Redis at addr, each
// with a client of its own, as replicas have.
func openAt(addr string) storetest.Open {
	return func(t *testing.T, cfg storetest.Config) callback.FencedStore {
		c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		opts := []redisstore.Option{redisstore.WithLease(cfg.Lease), redisstore.WithRetention(cfg.Retention)}
		if cfg.Timeout > 0 {
			opts = append(opts, redisstore.WithTimeout(cfg.Timeout))
		}
		s := redisstore.New(c, opts...)
		require.NoError(t, s.Err())
		return s
	}
}

func TestOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}) // nothing listens: New cannot ask its policy
	t.Cleanup(func() { _ = c.Close() })
	tests := []struct {
		name    string
		client  redis.UniversalClient
		opts    []redisstore.Option
		wantErr string
		format  string
	}{
		{"defaults", c, nil, "", `{Prefix:"travelrule:callback:" Lease:10m0s Retention:168h0m0s Timeout:5s}`},
		{"nil options are ignored", c, []redisstore.Option{nil}, "", `{Prefix:"travelrule:callback:" Lease:10m0s Retention:168h0m0s Timeout:5s}`},
		{"all set", c, []redisstore.Option{redisstore.WithPrefix("svc:"), redisstore.WithLease(time.Minute), redisstore.WithRetention(48 * time.Hour), redisstore.WithTimeout(time.Second)}, "",
			`{Prefix:"svc:" Lease:1m0s Retention:48h0m0s Timeout:1s}`},
		{"nil client", nil, nil, "redisstore: New: nil client", ""},
		{"zero lease", c, []redisstore.Option{redisstore.WithLease(0)}, "the lease must be at least 1ms", ""},
		{"sub-millisecond lease", c, []redisstore.Option{redisstore.WithLease(time.Microsecond)}, "the lease must be at least 1ms", ""},
		{"negative retention", c, []redisstore.Option{redisstore.WithRetention(-time.Hour)}, "the retention must be at least 1ms", ""},
		{"zero timeout", c, []redisstore.Option{redisstore.WithTimeout(0)}, "the timeout must be positive", ""},
		{"first fault is reported", c, []redisstore.Option{redisstore.WithTimeout(0), redisstore.WithLease(0)}, "the timeout must be positive", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := redisstore.New(tt.client, tt.opts...)
			if tt.wantErr == "" {
				require.NoError(t, s.Err())
				assert.Equal(t, tt.format, fmt.Sprint(s))
				return
			}
			require.ErrorContains(t, s.Err(), tt.wantErr)
			ctx := context.Background()
			r, err := s.Claim(ctx, "k")
			assert.Zero(t, r)
			assert.ErrorIs(t, err, s.Err(), "a misconfigured store refuses every call")
			assert.ErrorIs(t, s.Complete(ctx, "k"), s.Err())
			assert.ErrorIs(t, s.Release(ctx, "k"), s.Err())
			assert.ErrorIs(t, s.CompleteFenced(ctx, "k", "t"), s.Err())
			assert.ErrorIs(t, s.ReleaseFenced(ctx, "k", "t"), s.Err())
		})
	}
}

// TestKeys checks what the store keeps in Redis: one key per delivery,
// under the prefix, that expires after the lease while claimed and after
// the retention once processed, and that holds no more than a token.
func TestKeys(t *testing.T) {
	ctx := context.Background()
	srv := sharedRedis(t)
	c := srv.Client(t, nil)
	a := redisstore.New(c, redisstore.WithPrefix("svc-a:"), redisstore.WithLease(time.Minute), redisstore.WithRetention(time.Hour))
	b := redisstore.New(c, redisstore.WithPrefix("svc-b:"))
	key := storetest.NewKey(t)

	r, token, err := a.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)
	assert.Equal(t, "b:"+token, c.Get(ctx, "svc-a:"+key).Val())
	ttl := c.PTTL(ctx, "svc-a:"+key).Val()
	assert.True(t, ttl > 0 && ttl <= time.Minute, "the claim expires after the lease: %v", ttl)
	r, _, err = b.ClaimFenced(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimNew, r, "stores with other prefixes share nothing")

	require.NoError(t, a.CompleteFenced(ctx, key, token))
	assert.Equal(t, "d:"+token, c.Get(ctx, "svc-a:"+key).Val())
	ttl = c.PTTL(ctx, "svc-a:"+key).Val()
	assert.True(t, ttl > time.Minute && ttl <= time.Hour, "a processed delivery expires after the retention: %v", ttl)

	require.NoError(t, a.Complete(ctx, key), "an unfenced completion")
	assert.Equal(t, "d:", c.Get(ctx, "svc-a:"+key).Val())
	ttl = c.PTTL(ctx, "svc-a:"+key).Val()
	assert.True(t, ttl > time.Minute && ttl <= time.Hour, "an unfenced completion keeps the retention: %v", ttl)
}

// TestResentCommands runs each script twice, as go-redis does when a
// reply is lost on a connection that breaks: the second run changes
// nothing and answers as the first did, so that a claim the client sent
// again is still the caller's, and a completion sent again succeeds.
func TestResentCommands(t *testing.T) {
	ctx := context.Background()
	srv := sharedRedis(t)
	c := srv.Client(t, nil)
	s := redisstore.New(c, redisstore.WithPrefix("resent:"))
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)

	// The claim script as the store sent it, sent again.
	n, err := c.Eval(ctx, redisstore.ClaimLua, []string{"resent:" + key}, token, 60000).Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(callback.ClaimNew), n, "a claim sent again is still the caller's")
	n, err = c.Eval(ctx, redisstore.ClaimLua, []string{"resent:" + key}, "other-token", 60000).Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(callback.ClaimBusy), n, "another token's claim is busy")

	require.NoError(t, s.CompleteFenced(ctx, key, token))
	require.NoError(t, s.CompleteFenced(ctx, key, token), "a completion sent again succeeds")
	require.NoError(t, s.Release(ctx, key))
	r, _, err = s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimDone, r, "an unfenced release leaves a processed delivery")
}

// TestServerGoesAway kills the Redis server while a claim is held: every
// later call fails promptly with an error, and the handler answers 500 so
// that the sender delivers the callback again.
func TestServerGoesAway(t *testing.T) {
	srv := startRedis(t)
	s := redisstore.New(srv.Client(t, nil))
	ctx := context.Background()
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)

	srv.Kill()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // ends a hung test only
	defer cancel()
	began := time.Now()
	r, _, err = s.ClaimFenced(ctx, storetest.NewKey(t))
	require.Error(t, err)
	assert.Zero(t, r)
	require.NoError(t, ctx.Err(), "the claim failed by itself, not by the test's bound")
	t.Logf("a claim with the server gone failed after %v (go-redis's default dial retries): %v", time.Since(began).Round(time.Millisecond), err)
	assert.Error(t, s.CompleteFenced(context.WithoutCancel(ctx), key, token))

	var calls int
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { calls++; return nil }, callback.WithStore(s), callback.WithoutAuthentication())
	assert.Equal(t, http.StatusInternalServerError, deliver(h, "msg_1"))
	assert.Zero(t, calls, "the function ran without a claim")
}

// TestServerHangs freezes the Redis server, which keeps its connections
// and answers nothing: a claim ends with the caller's deadline, and a
// completion, whose context never ends, with the store's timeout.
func TestServerHangs(t *testing.T) {
	srv := startRedis(t)
	c := srv.Client(t, &redis.Options{ContextTimeoutEnabled: true})
	s := redisstore.New(c, redisstore.WithTimeout(300*time.Millisecond))
	ctx := context.Background()
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)

	srv.Freeze()
	t.Cleanup(srv.Thaw)
	claimCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	r, _, err = s.ClaimFenced(claimCtx, storetest.NewKey(t))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, r)
	err = s.CompleteFenced(context.WithoutCancel(ctx), key, token)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the store's timeout bounds a call whose context never ends")

	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil }, callback.WithStore(s), callback.WithoutAuthentication())
	assert.Equal(t, http.StatusInternalServerError, deliver(h, "msg_2"))

	// A client without ContextTimeoutEnabled ignores the deadline while it
	// waits: its own time-outs end the call.
	plain := redisstore.New(srv.Client(t, &redis.Options{DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond}))
	bound, cancelBound := context.WithTimeout(ctx, 30*time.Second) // ends a hung test only
	defer cancelBound()
	began := time.Now()
	r, _, err = plain.ClaimFenced(bound, storetest.NewKey(t))
	require.Error(t, err)
	assert.Zero(t, r)
	require.NoError(t, bound.Err(), "the claim ended by the test's bound, not the client's time-outs")
	t.Logf("a claim on a frozen server through a client without ContextTimeoutEnabled (200ms time-outs) failed after %v: %v",
		time.Since(began).Round(time.Millisecond), err)
}

// TestErrorsHoldNoSecrets makes every call fail on a server that wants a
// password the client does not have: no error, and no fmt form of the
// store, holds the password or a key.
func TestErrorsHoldNoSecrets(t *testing.T) {
	srv := startRedis(t, "--requirepass", "server-secret-7f3a")
	const password = "client-secret-92bd"
	c := srv.Client(t, &redis.Options{Password: password, MaxRetries: -1})
	s := redisstore.New(c)
	ctx := context.Background()
	key := storetest.NewKey(t)
	_, _, claimErr := s.ClaimFenced(ctx, key)
	errs := []error{claimErr, s.CompleteFenced(ctx, key, "tok"), s.ReleaseFenced(ctx, key, "tok"), s.Complete(ctx, key), s.Release(ctx, key)}
	for _, err := range errs {
		require.Error(t, err)
		for _, secret := range []string{password, "server-secret-7f3a", key, key[5:]} {
			assert.NotContains(t, err.Error(), secret)
		}
	}
	assert.Contains(t, claimErr.Error(), "redisstore: claim: ")
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(format, s), password)
	}
}

// deliver delivers a status callback with the webhook-id id to h and
// returns the status of the answer.
func deliver(h http.Handler, id string) int {
	r := httptest.NewRequest(http.MethodPost, "/travelrule/callback", strings.NewReader(`{"transferId":"tr-1","status":"approved","timestamp":"2026-11-23T08:00:00Z"}`))
	r.Header.Set(callback.HeaderID, id)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// TestCompleteFenced completes a claim on each state its key can be in
// when the completion arrives, written as the store writes them: the
// claim's own (lapsed or not), nothing (the lease lapsed and the key
// expired), completed by the same token already (a completion sent again
// after a lost reply), another token's claim or completion, an unfenced
// completion. It records the delivery as processed by the token unless
// another token holds it, which it leaves as it was.
func TestCompleteFenced(t *testing.T) {
	ctx := context.Background()
	c := sharedRedis(t).Client(t, nil)
	s := redisstore.New(c, redisstore.WithPrefix("complete:"), redisstore.WithRetention(time.Hour))
	const token = "tok-1"
	tests := []struct {
		name   string
		before string // "" for no key
		lost   bool
		after  string
	}{
		{"the claim holds the key", "b:" + token, false, "d:" + token},
		{"nothing holds the key (the lease lapsed, the key expired)", "", false, "d:" + token},
		{"completed by the same token already", "d:" + token, false, "d:" + token},
		{"another token's claim", "b:tok-2", true, "b:tok-2"},
		{"completed by another token", "d:tok-2", true, "d:tok-2"},
		{"an unfenced completion", "d:", true, "d:"},
		{"a token that extends this one", "b:" + token + "0", true, "b:" + token + "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := storetest.NewKey(t)
			if tt.before != "" {
				require.NoError(t, c.Set(ctx, "complete:"+key, tt.before, time.Minute).Err())
			}
			err := s.CompleteFenced(ctx, key, token)
			if tt.lost {
				require.ErrorIs(t, err, callback.ErrClaimLost)
				assert.Equal(t, "redisstore: complete: "+callback.ErrClaimLost.Error(), err.Error())
				ttl := c.PTTL(ctx, "complete:"+key).Val()
				assert.True(t, ttl > 0 && ttl <= time.Minute, "the key keeps its expiry: %v", ttl)
			} else {
				require.NoError(t, err)
				ttl := c.PTTL(ctx, "complete:"+key).Val()
				assert.True(t, ttl > time.Minute && ttl <= time.Hour, "a processed delivery expires after the retention: %v", ttl)
			}
			assert.Equal(t, tt.after, c.Get(ctx, "complete:"+key).Val())
		})
	}
}

// TestReleaseFenced releases a claim on each state its key can be in:
// only the claim's own is ended; every other state is left as it was and
// answered ErrClaimLost, as the contract says (callback.FencedStore).
func TestReleaseFenced(t *testing.T) {
	ctx := context.Background()
	c := sharedRedis(t).Client(t, nil)
	s := redisstore.New(c, redisstore.WithPrefix("release:"))
	const token = "tok-1"
	tests := []struct {
		name   string
		before string // "" for no key
		lost   bool
	}{
		{"the claim holds the key", "b:" + token, false},
		{"nothing holds the key (the claim's key expired)", "", true},
		{"completed by the same token", "d:" + token, true},
		{"another token's claim", "b:tok-2", true},
		{"completed by another token", "d:tok-2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := storetest.NewKey(t)
			if tt.before != "" {
				require.NoError(t, c.Set(ctx, "release:"+key, tt.before, time.Minute).Err())
			}
			err := s.ReleaseFenced(ctx, key, token)
			if !tt.lost {
				require.NoError(t, err)
				assert.Zero(t, c.Exists(ctx, "release:"+key).Val(), "the claim's key is deleted")
				return
			}
			require.ErrorIs(t, err, callback.ErrClaimLost)
			if tt.before == "" {
				assert.Zero(t, c.Exists(ctx, "release:"+key).Val())
			} else {
				assert.Equal(t, tt.before, c.Get(ctx, "release:"+key).Val(), "left as it was")
			}
		})
	}
	require.NoError(t, s.Release(ctx, storetest.NewKey(t)), "an unfenced release of nothing has nothing to end")
}

// TestCompleteAfterLeaseLapsed lets a claim's key expire in Redis, as a
// function that outlives its lease does, with no other delivery: its
// completion still records the delivery, so that a redelivery does not
// call the function again.
func TestCompleteAfterLeaseLapsed(t *testing.T) {
	ctx := context.Background()
	c := sharedRedis(t).Client(t, nil)
	s := redisstore.New(c, redisstore.WithPrefix("lapsed:"), redisstore.WithLease(time.Millisecond))
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)
	waitFor(t, "the claim's key to expire", func(ctx context.Context) bool {
		return c.Exists(ctx, "lapsed:"+key).Val() == 0
	})
	require.NoError(t, s.CompleteFenced(ctx, key, token))
	r, _, err = s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimDone, r, "the redelivery finds the delivery processed")
}
