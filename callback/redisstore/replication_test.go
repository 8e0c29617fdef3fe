//go:build unix

package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// pair is a Redis primary and its replica, which a test fails over from
// one to the other with Redis 7's FAILOVER, losing no write.
type pair struct {
	servers [2]*redisServer
	admins  [2]*redis.Client
}

// startPair starts two servers, the second a replica of the first, and
// waits until the replica is in sync.
func startPair(t testing.TB) *pair {
	t.Helper()
	p := &pair{}
	p.servers[0] = startRedis(t, "--repl-diskless-sync-delay", "0")
	host, port, _ := net.SplitHostPort(p.servers[0].Addr)
	p.servers[1] = startRedis(t, "--repl-diskless-sync-delay", "0", "--replicaof", host, port)
	for i, s := range p.servers {
		p.admins[i] = s.Client(t, &redis.Options{MaxRetries: -1})
	}
	p.waitPrimary(t, 0)
	return p
}

// Primary returns which server is the primary now, or -1 if neither is
// one with the other as its replica in sync.
func (p *pair) primary(ctx context.Context) int {
	for i, a := range p.admins {
		info, err := a.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "role:master") && strings.Contains(info, "state=online") {
			other, err := p.admins[1-i].Info(ctx, "replication").Result()
			if err == nil && strings.Contains(other, "role:slave") && strings.Contains(other, "master_link_status:up") {
				return i
			}
		}
	}
	return -1
}

// waitPrimary waits until server i is the primary, with the other its
// replica in sync.
func (p *pair) waitPrimary(t testing.TB, i int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("server %d the primary, its replica in sync", i), func(ctx context.Context) bool {
		return p.primary(ctx) == i
	})
}

// Failover makes the replica the primary, and the primary its replica,
// with FAILOVER, which first waits for the replica to have every write.
func (p *pair) Failover(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	from := p.primary(ctx)
	if from < 0 {
		p.waitPrimary(t, 0)
		from = 0
	}
	if err := p.admins[from].Do(ctx, "FAILOVER").Err(); err != nil {
		t.Fatalf("FAILOVER: %v", err)
	}
	p.waitPrimary(t, 1-from)
}
