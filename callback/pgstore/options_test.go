package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback/pgstore"
)

// TestNewRefuses checks that New reports a nil pool, invalid options and
// an ended context with an error, before it uses the pool: the pool here
// points at a port where no server listens, and pgxpool connects lazily.
func TestNewRefuses(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "host=127.0.0.1 port=1 user=u password=hunter2-secret sslmode=disable")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	long := strings.Repeat("x", 64)
	tests := []struct {
		name string
		pool *pgxpool.Pool
		ctx  context.Context
		opts []pgstore.Option
		want string
	}{
		{"nil pool", nil, nil, nil, "nil pool"},
		{"zero lease", pool, nil, []pgstore.Option{pgstore.WithLease(0)}, "WithLease"},
		{"negative lease", pool, nil, []pgstore.Option{pgstore.WithLease(-time.Second)}, "WithLease"},
		{"sub-millisecond lease", pool, nil, []pgstore.Option{pgstore.WithLease(time.Microsecond)}, "WithLease"},
		{"sub-millisecond retention", pool, nil, []pgstore.Option{pgstore.WithRetention(999 * time.Microsecond)}, "WithRetention"},
		{"zero retention", pool, nil, []pgstore.Option{pgstore.WithRetention(0)}, "WithRetention"},
		{"negative retention", pool, nil, []pgstore.Option{pgstore.WithRetention(-time.Hour)}, "WithRetention"},
		{"zero timeout", pool, nil, []pgstore.Option{pgstore.WithTimeout(0)}, "WithTimeout"},
		{"negative timeout", pool, nil, []pgstore.Option{pgstore.WithTimeout(-time.Second)}, "WithTimeout"},
		{"negative sweep interval", pool, nil, []pgstore.Option{pgstore.WithSweepInterval(-time.Minute)}, "WithSweepInterval"},
		{"empty table", pool, nil, []pgstore.Option{pgstore.WithTable("")}, "empty"},
		{"empty schema", pool, nil, []pgstore.Option{pgstore.WithTable(".t")}, "empty"},
		{"empty table after schema", pool, nil, []pgstore.Option{pgstore.WithTable("s.")}, "empty"},
		{"three parts", pool, nil, []pgstore.Option{pgstore.WithTable("db.s.t")}, "more than two parts"},
		{"table over 63 bytes", pool, nil, []pgstore.Option{pgstore.WithTable(long)}, "64 bytes"},
		{"schema over 63 bytes", pool, nil, []pgstore.Option{pgstore.WithTable(long + ".t")}, "64 bytes"},
		{"NUL in the name", pool, nil, []pgstore.Option{pgstore.WithTable("a\x00b")}, "NUL"},
		{"invalid UTF-8", pool, nil, []pgstore.Option{pgstore.WithTable("a\xffb")}, "UTF-8"},
		{"ended context", pool, ended, nil, context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			var s *pgstore.Store
			var err error
			require.NotPanics(t, func() { s, err = pgstore.New(ctx, tt.pool, tt.opts...) })
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "pgstore: "), "error %q names the package", err)
			assert.NotContains(t, err.Error(), "hunter2")
		})
	}
}
