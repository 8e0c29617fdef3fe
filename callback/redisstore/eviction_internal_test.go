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
		assert.NoError(t, evictionRefusal(policy, storeForgets.evicted), policy)
	}
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		assert.ErrorContains(t, evictionRefusal(policy, storeForgets.evicted), "set maxmemory-policy to noeviction", policy)
	}
}

// TestPersistenceRefusal: a server with an append-only file or a save
// schedule keeps the store's keys over a restart; one with neither does
// not, and the refusal names the settings to change.
func TestPersistenceRefusal(t *testing.T) {
	tests := []struct {
		appendonly, save string
		refused          bool
	}{
		{"yes", "", false},
		{"YES", "", false},
		{"no", "3600 1 300 100 60 10000", false},
		{"no", "900 1", false},
		{"yes", "3600 1", false},
		{"no", "", true},
		{"no", " ", true},
	}
	for _, tt := range tests {
		err := persistenceRefusal(tt.appendonly, tt.save, storeForgets.restarted)
		if !tt.refused {
			assert.NoError(t, err, "appendonly %q, save %q", tt.appendonly, tt.save)
			continue
		}
		assert.EqualError(t, err, "redisstore: the Redis server keeps no persistence (appendonly is no, save is empty), so a restart forgets every processed delivery, and calls it again when it is redelivered: set appendonly yes, or a save schedule (WithoutPersistence accepts a store that may forget)")
	}
}

// TestServerRefusal is the decision on a server's answer to CONFIG GET:
// each setting judged when the server named it, persistence not judged
// under WithoutPersistence, and both refusals given together.
func TestServerRefusal(t *testing.T) {
	const (
		evicts       = "set maxmemory-policy to noeviction"
		keepsNothing = "set appendonly yes, or a save schedule"
	)
	safe := map[string]string{"maxmemory-policy": "noeviction", "appendonly": "no", "save": "3600 1"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for k, v := range safe {
			m[k] = v
		}
		m[k] = v
		return m
	}
	without := func(k string) map[string]string {
		m := with(k, "")
		delete(m, k)
		return m
	}
	tests := []struct {
		name      string
		conf      map[string]string
		mayForget bool
		want      []string // what the refusal names; none: no refusal
	}{
		{"noeviction and a save schedule", safe, false, nil},
		{"noeviction and appendonly", map[string]string{"maxmemory-policy": "noeviction", "appendonly": "yes", "save": ""}, false, nil},
		{"an evicting policy", with("maxmemory-policy", "allkeys-lru"), false, []string{evicts}},
		{"no persistence", with("save", ""), false, []string{keepsNothing}},
		{"no persistence, accepted", with("save", ""), true, nil},
		{"both", map[string]string{"maxmemory-policy": "volatile-lru", "appendonly": "no", "save": ""}, false, []string{evicts, keepsNothing}},
		{"both, persistence accepted", map[string]string{"maxmemory-policy": "volatile-lru", "appendonly": "no", "save": ""}, true, []string{evicts}},
		{"no policy named", without("maxmemory-policy"), false, nil},
		{"no save named", map[string]string{"maxmemory-policy": "noeviction", "appendonly": "no"}, false, nil},
		{"no appendonly named", map[string]string{"maxmemory-policy": "noeviction", "save": ""}, false, nil},
		{"nothing named (CONFIG refused)", map[string]string{}, false, nil},
	}
	for _, tt := range tests {
		err := serverRefusal(tt.conf, storeForgets, tt.mayForget)
		if len(tt.want) == 0 {
			assert.NoError(t, err, tt.name)
			continue
		}
		for _, w := range tt.want {
			assert.ErrorContains(t, err, w, tt.name)
		}
		if err != nil && len(tt.want) == 1 {
			assert.NotContains(t, err.Error(), "\n", tt.name)
		}
	}
	assert.ErrorContains(t, serverRefusal(with("save", ""), journalForgets, false), "forgets every entry, and lets an initiation whose outcome is unknown be sent again under its reference")
}
