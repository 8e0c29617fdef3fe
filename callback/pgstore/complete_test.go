//go:build unix

package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestCompleteFenced completes a delivery under a token against each row
// the table may hold for it (left by this version or an earlier one, by
// this replica or another): the completion records the delivery processed
// under the token when the token's claim holds it, lapsed or not, when no
// claim holds it, and when it was recorded so already (changing nothing);
// it changes nothing and returns ErrClaimLost when another token's claim
// holds it or it was processed under another token.
func TestCompleteFenced(t *testing.T) {
	const retention = 2 * time.Hour
	type row struct {
		token string
		done  bool
		// expires is when the row expires, in whole minutes from the
		// minute the subtest began in, by the server's clock.
		expires int
	}
	tests := []struct {
		name   string
		before *row // nil: no row, as after a sweep
		lost   bool
		// after is the row after the completion; expires -1 means now
		// plus the retention.
		after row
	}{
		{"the token's claim in its lease", &row{"ours", false, 60}, false, row{"ours", true, -1}},
		{"the token's claim, lapsed", &row{"ours", false, -60}, false, row{"ours", true, -1}},
		{"no row: the lapsed claim was swept", nil, false, row{"ours", true, -1}},
		{"another's claim, lapsed", &row{"theirs", false, -60}, false, row{"ours", true, -1}},
		{"processed under the token", &row{"ours", true, 60}, false, row{"ours", true, 60}},
		{"processed under the token, retention past", &row{"ours", true, -60}, false, row{"ours", true, -1}},
		{"processed under another token, retention past", &row{"theirs", true, -60}, false, row{"ours", true, -1}},
		{"another's claim in its lease", &row{"theirs", false, 60}, true, row{"theirs", false, 60}},
		{"processed under another token", &row{"theirs", true, 60}, true, row{"theirs", true, 60}},
		{"processed by an unfenced completion", &row{"", true, 60}, true, row{"", true, 60}},
	}
	ctx := context.Background()
	pool := newPool(t, sharedServer(t), 4)
	table := newTableName(t)
	quoted := pgx.Identifier{table}.Sanitize()
	s := newStore(t, pool, pgstore.WithTable(table), pgstore.WithRetention(retention), pgstore.WithSweepInterval(0))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := storetest.NewKey(t)
			// The minute is read once, for the rows written and read back
			// alike: the statements' own now() may fall on either side of
			// a minute's turn.
			var minute time.Time
			require.NoError(t, pool.QueryRow(ctx, `SELECT date_trunc('minute', now())`).Scan(&minute))
			if b := tt.before; b != nil {
				_, err := pool.Exec(ctx, `INSERT INTO `+quoted+` VALUES ($1, $2, $3, $4::timestamptz + $5 * interval '1 minute')`,
					key, b.token, b.done, minute, b.expires)
				require.NoError(t, err)
			}
			err := s.CompleteFenced(ctx, key, "ours")
			if tt.lost {
				require.ErrorIs(t, err, callback.ErrClaimLost)
			} else {
				require.NoError(t, err)
			}
			var got row
			var fromRetention time.Duration
			require.NoError(t, pool.QueryRow(ctx, `SELECT token, done,
	CASE WHEN expires_at = date_trunc('minute', expires_at) THEN extract(epoch FROM expires_at - $3::timestamptz)::int / 60 ELSE -1 END,
	expires_at - (now() + $2 * interval '1 microsecond')
FROM `+quoted+` WHERE key = $1`, key, retention.Microseconds(), minute).Scan(&got.token, &got.done, &got.expires, &fromRetention))
			if tt.after.expires == -1 {
				// A completion just now, by the server's clock.
				assert.InDelta(t, 0, fromRetention.Seconds(), 60, "the row expires after the retention")
			}
			assert.Equal(t, tt.after, got, "the row after the completion")
		})
	}
}

// TestCompleteAfterTheLeaseLapsedAndTheSweep completes a claim whose lease
// lapsed and whose row was swept, with no delivery claimed since: the
// completion records the delivery, and a redelivery is done.
func TestCompleteAfterTheLeaseLapsedAndTheSweep(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t, sharedServer(t), 4)
	table := newTableName(t)
	s := newStore(t, pool, pgstore.WithTable(table), pgstore.WithLease(50*time.Millisecond), pgstore.WithSweepInterval(0))
	assert.Equal(t, 50*time.Millisecond, s.Lease())
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)
	quoted := pgx.Identifier{table}.Sanitize()
	waitCount(t, pool, quoted, "expires_at < now()", 1)
	n, err := s.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "rows swept")

	require.NoError(t, s.CompleteFenced(ctx, key, token), "the completion of a lapsed, swept claim")
	require.NoError(t, s.CompleteFenced(ctx, key, token), "the same completion run again")
	r, _, err = s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimDone, r, "a redelivery")
}
