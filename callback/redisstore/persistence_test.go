//go:build unix

package redisstore_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/callback/storetest"
	"github.com/vaspkit/travelrule/journal"
)

// persistenceCapKey is the capability key of the handlers these tests
// build.
var persistenceCapKey = []byte("persistence-test-capability-0123")

// The refusals of a server that keeps no persistence.
const (
	storeKeepsNothing   = "redisstore: the Redis server keeps no persistence (appendonly is no, save is empty), so a restart forgets every processed delivery, and calls it again when it is redelivered: set appendonly yes, or a save schedule (WithoutPersistence accepts a store that may forget)"
	journalKeepsNothing = "redisstore: the Redis server keeps no persistence (appendonly is no, save is empty), so a restart forgets every entry, and lets an initiation whose outcome is unknown be sent again under its reference: set appendonly yes, or a save schedule (WithoutPersistence accepts a store that may forget)"
)

// TestPersistence makes both stores on Redis servers with each kind of
// persistence: on one without any, both report it through Err and refuse
// their writes, and the handler and the journal refuse to start with
// them; one with an append-only file or a save schedule is accepted; one
// whose CONFIG GET is refused (disabled, or an ACL without it, as on
// managed Redis) cannot be checked and is accepted, as with eviction.
func TestPersistence(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		user    bool // through an ACL user without CONFIG
		refused bool
	}{
		{"none", []string{"--save", "", "--appendonly", "no"}, false, true},
		{"appendonly yes", []string{"--save", "", "--appendonly", "yes"}, false, false},
		{"a save schedule", []string{"--save", "900 1", "--appendonly", "no"}, false, false},
		{"CONFIG disabled cannot tell", []string{"--save", "", "--rename-command", "CONFIG", ""}, false, false},
		{"an ACL without CONFIG cannot tell", []string{"--save", ""}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv := startRedis(t, tt.args...)
			admin := srv.Client(t, nil)
			o := &redis.Options{}
			if tt.user {
				require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">app-password", "~*", "&*", "+@all", "-config").Err())
				o.Username, o.Password = "app", "app-password"
			}
			c := srv.Client(t, o)
			s, js := redisstore.New(c), redisstore.NewJournal(c)
			h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
				callback.WithCapabilityKey(persistenceCapKey), callback.WithStore(s))
			j, jErr := journal.New(js)
			_, _, claimErr := s.ClaimFenced(ctx, storetest.NewKey(t))
			_, appendErr := js.Write(ctx, journal.Step{Key: "o:1", ID: "r", Record: []byte(`{}`), Names: []string{"tid:1"}})
			if !tt.refused {
				require.NoError(t, s.Err())
				require.NoError(t, js.Err())
				require.NoError(t, h.Err())
				require.NoError(t, jErr)
				require.NotNil(t, j)
				require.NoError(t, claimErr)
				require.NoError(t, appendErr)
				return
			}
			require.EqualError(t, s.Err(), storeKeepsNothing)
			require.EqualError(t, js.Err(), journalKeepsNothing)
			assert.ErrorIs(t, claimErr, s.Err(), "every claim is refused with the reason")
			assert.ErrorIs(t, appendErr, js.Err(), "every append is refused with the reason")
			assert.ErrorIs(t, h.Err(), s.Err(), "the handler refuses to start with the store")
			assert.ErrorIs(t, jErr, js.Err(), "the journal refuses to start with the store")
			assert.Nil(t, j)
			assert.Zero(t, admin.DBSize(ctx).Val(), "a refused write writes nothing")
		})
	}
}

// TestWithoutPersistence: the option accepts a server that keeps no
// persistence, for both stores, and nothing more: an evicting policy is
// still refused.
func TestWithoutPersistence(t *testing.T) {
	ctx := context.Background()
	srv := startRedis(t, "--save", "", "--appendonly", "no")
	c := srv.Client(t, nil)
	s, js := redisstore.New(c, redisstore.WithoutPersistence()), redisstore.NewJournal(c, redisstore.WithoutPersistence())
	require.NoError(t, s.Err())
	require.NoError(t, js.Err())
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithCapabilityKey(persistenceCapKey), callback.WithStore(s))
	require.NoError(t, h.Err())
	_, err := journal.New(js)
	require.NoError(t, err)
	r, _, err := s.ClaimFenced(ctx, storetest.NewKey(t))
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimNew, r)
	_, err = js.Write(ctx, journal.Step{Key: "o:1", ID: "r", Record: []byte(`{}`), Names: []string{"tid:1"}})
	require.NoError(t, err)

	require.NoError(t, srv.Client(t, nil).ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	s, js = redisstore.New(c, redisstore.WithoutPersistence()), redisstore.NewJournal(c, redisstore.WithoutPersistence())
	require.EqualError(t, s.Err(), `redisstore: the Redis server's maxmemory-policy is "allkeys-lru", which evicts the store's keys when memory runs short and so forgets processed deliveries: set maxmemory-policy to noeviction`)
	require.ErrorContains(t, js.Err(), "set maxmemory-policy to noeviction")
	assert.NotContains(t, js.Err().Error(), "persistence")

	// Without the option, the store names both settings.
	require.ErrorContains(t, redisstore.New(c).Err(), "set maxmemory-policy to noeviction")
	require.ErrorContains(t, redisstore.New(c).Err(), "set appendonly yes, or a save schedule")
}

// TestJournalWithoutPersistenceForgets is issue #40's finding: on a Redis
// without persistence, a restart takes the journal's "sent, outcome
// unknown" entry with it, Stuck shows nothing, and a second initiation
// under the same reference is let through (ErrRefInUse went with the
// entry). journal.New refuses such a store; accepted knowingly with
// WithoutPersistence, the restart forgets; on a Redis with an append-only
// file, the entry survives, is reported stuck, and guards its reference.
func TestJournalWithoutPersistenceForgets(t *testing.T) {
	ctx := context.Background()
	initiate := func(j *journal.Journal) error {
		_, err := j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-restart-1", Digest: sha256.Sum256([]byte("x"))})
		return err
	}
	th := journal.Thresholds{OutcomeUnknown: time.Hour}

	t.Run("refused", func(t *testing.T) {
		srv := startRedis(t, "--save", "", "--appendonly", "no")
		store := redisstore.NewJournal(srv.Client(t, &redis.Options{ContextTimeoutEnabled: true}))
		j, err := journal.New(store)
		require.EqualError(t, err, "journal: New: "+journalKeepsNothing)
		require.ErrorIs(t, err, store.Err())
		assert.Nil(t, j)
	})

	for _, tt := range []struct {
		name    string
		args    []string
		opts    []redisstore.Option
		forgets bool
	}{
		{"accepted knowingly, a restart forgets", []string{"--save", "", "--appendonly", "no"}, []redisstore.Option{redisstore.WithoutPersistence()}, true},
		{"appendonly yes, the entry survives", []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startRedis(t, tt.args...)
			now := time.Now()
			j, err := journal.New(redisstore.NewJournal(srv.Client(t, &redis.Options{ContextTimeoutEnabled: true}), tt.opts...),
				journal.WithClock(func() time.Time { return now }))
			require.NoError(t, err)
			require.NoError(t, initiate(j), "the first initiation is recorded and sent; its process dies before the answer")
			require.ErrorIs(t, initiate(j), journal.ErrRefInUse, "before the restart, the reference is in use")

			srv.Restart(t)
			now = now.Add(time.Hour)
			stuck, err := j.Stuck(ctx, th)
			require.NoError(t, err)
			if tt.forgets {
				assert.Empty(t, stuck, "the restart forgot the entry")
				assert.NoError(t, initiate(j), "a second initiation under the reference is let through")
				return
			}
			require.Len(t, stuck, 1)
			assert.Equal(t, journal.RuleOutcomeUnknown, stuck[0].Rule)
			assert.ErrorIs(t, initiate(j), journal.ErrRefInUse)
		})
	}
}
