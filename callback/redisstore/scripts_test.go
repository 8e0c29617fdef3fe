//go:build unix

package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestLateCompletionAfterScriptFlush holds a completion in a proxy until
// its client gave up and went, and Redis emptied its script cache in the
// meantime (as a restart or a failover does); then lets it through. The
// command carries its script, so it runs, and the delivery is processed:
// an EVALSHA would be answered NOSCRIPT, to nobody, and the claim would
// stay a claim until its lease lapsed.
func TestLateCompletionAfterScriptFlush(t *testing.T) {
	srv := startRedis(t)
	admin := srv.Client(t, nil)
	p := startProxy(t, srv.Addr)
	c := redis.NewClient(&redis.Options{Addr: p.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	s := redisstore.New(c, redisstore.WithPrefix("late:"), redisstore.WithTimeout(300*time.Millisecond))
	require.NoError(t, s.Err())
	ctx := context.Background()
	key := storetest.NewKey(t)
	r, token, err := s.ClaimFenced(ctx, key)
	require.NoError(t, err)
	require.Equal(t, callback.ClaimNew, r)

	p.Hold()
	err = s.CompleteFenced(ctx, key, token)
	var timeout net.Error
	require.ErrorAs(t, err, &timeout, "the completion is held past the store's timeout")
	require.True(t, timeout.Timeout(), "the completion is held past the store's timeout: %v", err)
	require.NoError(t, c.Close(), "the client goes, as a replica that gave up does")
	require.NoError(t, admin.ScriptFlush(ctx).Err())
	p.Release()
	waitFor(t, "the server to read the held completion and close its connection", func(context.Context) bool { return p.Pipes() == 0 })

	assert.Equal(t, "d:"+token, admin.Get(ctx, "late:"+key).Val(), "the late completion ran")
	other := redisstore.New(admin, redisstore.WithPrefix("late:"))
	r, _, err = other.ClaimFenced(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, callback.ClaimDone, r, "a redelivery finds the delivery processed")
}

// TestScriptCacheFlushed empties Redis's script cache before each call of
// the store: each call is one command, an EVAL that carries its script,
// with no NOSCRIPT answer and no second round trip.
func TestScriptCacheFlushed(t *testing.T) {
	srv := startRedis(t)
	admin := srv.Client(t, nil)
	c := srv.Client(t, nil)
	rec := &recorder{}
	c.AddHook(rec)
	s := redisstore.New(c)
	require.NoError(t, s.Err())
	ctx := context.Background()
	key := storetest.NewKey(t)
	var token string

	steps := []struct {
		name string
		call func(t *testing.T)
	}{
		{"claim", func(t *testing.T) {
			var r callback.ClaimResult
			var err error
			r, token, err = s.ClaimFenced(ctx, key)
			require.NoError(t, err)
			require.Equal(t, callback.ClaimNew, r)
		}},
		{"complete", func(t *testing.T) { require.NoError(t, s.CompleteFenced(ctx, key, token)) }},
		{"claim of a processed delivery", func(t *testing.T) {
			r, _, err := s.ClaimFenced(ctx, key)
			require.NoError(t, err)
			require.Equal(t, callback.ClaimDone, r)
		}},
		{"release", func(t *testing.T) { require.NoError(t, s.Release(ctx, key)) }},
	}
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, admin.ScriptFlush(ctx).Err())
			rec.reset()
			tt.call(t)
			sent := rec.sent()
			require.Len(t, sent, 1, "one command: %q", sent)
			assert.Equal(t, "eval", sent[0][0], "the command sends its script")
			assert.Contains(t, sent[0][1], "redis.call(", "the command carries the script's source")
		})
	}
}

// recorder is a go-redis hook that records the commands a client sends.
type recorder struct {
	mu   sync.Mutex
	cmds [][]string
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = nil
}

func (r *recorder) sent() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmds
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := make([]string, 0, len(cmd.Args()))
		for _, a := range cmd.Args() {
			args = append(args, fmt.Sprint(a))
		}
		args[0] = strings.ToLower(args[0])
		if len(args) > 0 && args[0] != "hello" && args[0] != "client" {
			r.mu.Lock()
			r.cmds = append(r.cmds, args)
			r.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
