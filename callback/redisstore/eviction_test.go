//go:build unix

package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestEvictionPolicy makes stores on a Redis server with each
// maxmemory-policy: a store on one that evicts reports it through Err and
// refuses its claims; one on noeviction works; and one whose user may not
// run CONFIG GET (an ACL, as on managed Redis) cannot tell and works, as
// its documentation says.
func TestEvictionPolicy(t *testing.T) {
	srv := startRedis(t)
	admin := srv.Client(t, nil)
	ctx := context.Background()
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">app-password", "~*", "&*", "+@all", "-config").Err())
	tests := []struct {
		name    string
		policy  string
		user    string
		refused bool
	}{
		{"noeviction", "noeviction", "", false},
		{"allkeys-lru", "allkeys-lru", "", true},
		{"volatile-lru (every key of the store has an expiry)", "volatile-lru", "", true},
		{"volatile-ttl", "volatile-ttl", "", true},
		{"allkeys-random", "allkeys-random", "", true},
		{"an ACL without CONFIG cannot tell", "allkeys-lru", "app", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, admin.ConfigSet(ctx, "maxmemory-policy", tt.policy).Err())
			o := &redis.Options{}
			if tt.user != "" {
				o.Username, o.Password = tt.user, "app-password"
			}
			s := redisstore.New(srv.Client(t, o))
			h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil }, callback.WithStore(s), callback.WithoutAuthentication())
			key := storetest.NewKey(t)
			r, token, err := s.ClaimFenced(ctx, key)
			if !tt.refused {
				require.NoError(t, s.Err())
				require.NoError(t, h.Err())
				require.NoError(t, err)
				assert.Equal(t, callback.ClaimNew, r)
				assert.NotEmpty(t, token)
				return
			}
			require.Error(t, s.Err())
			assert.Equal(t, fmt.Sprintf("redisstore: the Redis server's maxmemory-policy is %q, which evicts the store's keys when memory runs short and so forgets processed deliveries: set maxmemory-policy to noeviction", tt.policy), s.Err().Error())
			assert.ErrorIs(t, err, s.Err(), "every claim is refused with the reason")
			assert.ErrorIs(t, h.Err(), s.Err(), "the handler refuses to start with the store")
			assert.Zero(t, r)
			assert.Empty(t, token)
			assert.Zero(t, admin.Exists(ctx, redisstore.DefaultPrefix+key).Val(), "a refused claim writes nothing")
		})
	}
}

// TestEvictionPolicyUnknown covers the servers the store cannot ask at
// once: one that disables CONFIG (renamed away, as managed services do),
// whose policy and persistence the store cannot check, and works on; a Ring, which the store asks
// server by server; and a server that is unreachable while New asks, whose
// policy the store's first claim asks again.
func TestEvictionPolicyUnknown(t *testing.T) {
	ctx := context.Background()

	t.Run("CONFIG disabled", func(t *testing.T) {
		srv := startRedis(t, "--rename-command", "CONFIG", "", "--maxmemory-policy", "allkeys-lru", "--save", "")
		s := redisstore.New(srv.Client(t, nil))
		require.NoError(t, s.Err())
		r, _, err := s.ClaimFenced(ctx, storetest.NewKey(t))
		require.NoError(t, err)
		assert.Equal(t, callback.ClaimNew, r)
	})

	t.Run("a ring with one evicting server", func(t *testing.T) {
		good, bad := startRedis(t), startRedis(t, "--maxmemory-policy", "volatile-lru")
		ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"good": good.Addr, "bad": bad.Addr}})
		t.Cleanup(func() { _ = ring.Close() })
		s := redisstore.New(ring)
		require.ErrorContains(t, s.Err(), `maxmemory-policy is "volatile-lru"`)
		_, _, err := s.ClaimFenced(ctx, storetest.NewKey(t))
		require.ErrorIs(t, err, s.Err())
	})

	t.Run("a ring of servers that do not evict", func(t *testing.T) {
		a, b := startRedis(t), startRedis(t)
		ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}})
		t.Cleanup(func() { _ = ring.Close() })
		s := redisstore.New(ring)
		require.NoError(t, s.Err())
		r, _, err := s.ClaimFenced(ctx, storetest.NewKey(t))
		require.NoError(t, err)
		assert.Equal(t, callback.ClaimNew, r)
	})

	t.Run("unreachable at first", func(t *testing.T) {
		srv := startRedis(t, "--maxmemory-policy", "allkeys-lru")
		p := startProxy(t, srv.Addr)
		p.Stop()
		c := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		s := redisstore.New(c)
		require.NoError(t, s.Err(), "New could not ask")
		_, _, err := s.ClaimFenced(ctx, storetest.NewKey(t))
		require.ErrorContains(t, err, "redisstore: claim: asking the server's maxmemory-policy and persistence: ")
		require.NoError(t, s.Err(), "nor could the claim")

		require.NoError(t, p.Start())
		_, _, err = s.ClaimFenced(ctx, storetest.NewKey(t))
		require.ErrorContains(t, s.Err(), `maxmemory-policy is "allkeys-lru"`, "the first claim that reached the server asked it")
		require.ErrorIs(t, err, s.Err())
	})
}

// TestEvictingRedisForgets is the harm an evicting policy does: on a
// Redis with maxmemory and allkeys-lru, a delivery is processed, another
// tenant's writes fill the memory, and its redelivery would call the
// function again, its "done" key evicted. The store refuses to work on
// such a server instead: the handler answers 500 and never calls the
// function twice.
func TestEvictingRedisForgets(t *testing.T) {
	srv := startRedis(t, "--maxmemory-policy", "allkeys-lru")
	admin := srv.Client(t, nil)
	ctx := context.Background()
	used := admin.Info(ctx, "memory").Val()
	base := infoInt(t, used, "used_memory")
	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", strconv.FormatInt(base+4<<20, 10)).Err())

	var calls atomic.Int32
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error {
		calls.Add(1)
		return nil
	}, callback.WithStore(redisstore.New(srv.Client(t, nil))), callback.WithoutAuthentication())
	first := deliver(h, "msg_evicted")

	value := strings.Repeat("x", 1024)
	for batch := 0; batch < 160; batch++ { // 160 MB of another tenant's cache, 40 times the room
		pipe := admin.Pipeline()
		for i := 0; i < 1000; i++ {
			pipe.Set(ctx, fmt.Sprintf("tenant:%d:%d", batch, i), value, 0)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	require.Positive(t, infoInt(t, admin.Info(ctx, "stats").Val(), "evicted_keys"), "the server evicted keys")

	again := deliver(h, "msg_evicted")
	assert.LessOrEqual(t, calls.Load(), int32(1), "the function ran for a redelivery (answers %d then %d)", first, again)
	if calls.Load() == 0 {
		assert.Equal(t, http.StatusInternalServerError, first, "a store that refuses its claims answers 500")
	}
}

// infoInt reads the integer field name of an INFO answer.
func infoInt(t *testing.T, info, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in INFO", name)
	return 0
}
