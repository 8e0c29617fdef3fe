//go:build unix

package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestRoundTrips checks that each call of the store on a delivery's path
// is one statement in one round trip, in each of the pool's query modes:
// the default, which prepares each statement once per connection, and
// those for PgBouncer in transaction mode. The automatic sweep, which runs
// beside the deliveries on a connection of its own, is off, so that its
// statements are not counted.
func TestRoundTrips(t *testing.T) {
	srv := sharedServer(t)
	for _, mode := range []string{"cache_statement", "exec", "simple_protocol"} {
		t.Run("mode="+mode, func(t *testing.T) {
			var wire storetest.Wire
			storetest.TestRoundTrips(t, func(t *testing.T, cfg storetest.Config) callback.FencedStore {
				pc, err := pgxpool.ParseConfig(srv.dsn() + " pool_max_conns=4 default_query_exec_mode=" + mode)
				require.NoError(t, err)
				pc.ConnConfig.DialFunc = wire.Dial
				pool, err := pgxpool.NewWithConfig(context.Background(), pc)
				require.NoError(t, err)
				t.Cleanup(pool.Close)
				return newStore(t, pool, append(configOptions(cfg), pgstore.WithTable(newTableName(t)), pgstore.WithSweepInterval(0))...)
			}, wire.RoundTrips)
		})
	}
}
