//go:build unix

package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestRoundTrips checks that each call of the store on a delivery's path
// is one round trip to the server.
func TestRoundTrips(t *testing.T) {
	srv := sharedRedis(t)
	var wire storetest.Wire
	storetest.TestRoundTrips(t, func(t *testing.T, cfg storetest.Config) callback.FencedStore {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, Dialer: wire.Dial})
		t.Cleanup(func() { _ = c.Close() })
		s := redisstore.New(c, redisstore.WithLease(cfg.Lease), redisstore.WithRetention(cfg.Retention))
		require.NoError(t, s.Err())
		return s
	}, wire.RoundTrips)
}
