package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
)

// reply is an error answer of a Redis server, as go-redis returns one.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// TestCannotAsk sorts the failures of CONFIG GET: a server that refuses
// the command is not asked again (the store cannot check it); any other
// failure is transient, and the store's next claim asks again.
func TestCannotAsk(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{reply("NOPERM User app has no permissions to run the 'config|get' command"), true},
		{reply("ERR unknown command 'config', with args beginning with: 'get' 'maxmemory-policy' "), true},
		{fmt.Errorf("wrapped: %w", reply("ERR unknown command 'CONFIG'")), true},
		{reply("ERR max number of clients reached"), false},
		{reply("LOADING Redis is loading the dataset in memory"), false},
		{reply("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), false},
		{reply("CLUSTERDOWN The cluster is down"), false},
		{reply("NOAUTH Authentication required."), false},
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false},
		{context.DeadlineExceeded, false},
		{errors.New("ERR not a reply of the server"), false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, cannotAsk(tt.err), "%v", tt.err)
	}
}

// TestEvictionRefusal: only noeviction keeps the store's keys.
func TestEvictionRefusal(t *testing.T) {
	for _, policy := range []string{"noeviction", "NoEviction"} {
		assert.NoError(t, evictionRefusal(policy, storeForgets), policy)
	}
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		assert.ErrorContains(t, evictionRefusal(policy, storeForgets), "set maxmemory-policy to noeviction", policy)
	}
}
