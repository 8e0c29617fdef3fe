package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// The store keeps its promise only on a Redis that never evicts: under
// maxmemory, every other policy forgets keys when memory runs short, and a
// processed delivery forgotten is called again when it is redelivered. The
// volatile-* policies evict only keys that have an expiry, and every key
// of the store has one. So the store asks each server its client sends to
// for its maxmemory-policy (CONFIG GET) and refuses its claims if one
// evicts.

// policyAnswer is what the servers said of their eviction policy: refusal
// is why the store must refuse its claims, or nil.
type policyAnswer struct{ refusal error }

// What an evicting server makes each store forget, for its refusal.
const (
	storeForgets   = "the store's keys when memory runs short and so forgets processed deliveries"
	journalForgets = "the journal's keys when memory runs short and so forgets entries"
)

// evictionRefusal returns why a store on a server whose maxmemory-policy
// is policy must refuse its writes, naming what it would forget, or nil
// for noeviction.
func evictionRefusal(policy, forgets string) error {
	if strings.EqualFold(policy, "noeviction") {
		return nil
	}
	return fmt.Errorf("redisstore: the Redis server's maxmemory-policy is %q, which evicts %s: set maxmemory-policy to noeviction", policy, forgets)
}

// cannotAsk reports whether err is a server's refusal to answer CONFIG GET
// at all, as an ACL without the command (NOPERM) or a managed service that
// renamed or disabled it (an ERR reply: unknown command) answer: the store
// cannot check such a server, and its documentation says what to set. Any
// other failure (the server unreachable, loading its data, out of client
// connections, a cluster without a quorum) is asked again.
func cannotAsk(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false
	}
	return redis.IsPermissionError(err) || strings.HasPrefix(reply.Error(), "ERR ") && !redis.IsMaxClientsError(err)
}

// shards is a client that sends to several servers: a cluster client or a
// ring.
type shards interface {
	ForEachShard(ctx context.Context, fn func(ctx context.Context, c *redis.Client) error) error
}

// askPolicy asks every server that c sends to for its maxmemory-policy.
// It returns the answer (its refusal naming what the store forgets), or
// the error of a server that gave none.
func askPolicy(ctx context.Context, c redis.UniversalClient, forgets string) (*policyAnswer, error) {
	sh, ok := c.(shards)
	if !ok {
		return askServer(ctx, c, forgets)
	}
	var (
		mu     sync.Mutex
		answer = &policyAnswer{}
	)
	err := sh.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
		a, err := askServer(ctx, c, forgets)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if answer.refusal == nil {
			answer.refusal = a.refusal
		}
		return nil
	})
	if answer.refusal != nil { // one server's refusal is enough
		return answer, nil
	}
	if err != nil {
		return nil, err
	}
	return answer, nil
}

// askServer asks one server for its maxmemory-policy.
func askServer(ctx context.Context, c redis.Cmdable, forgets string) (*policyAnswer, error) {
	m, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil {
		if cannotAsk(err) {
			return &policyAnswer{}, nil
		}
		return nil, err
	}
	policy := m["maxmemory-policy"]
	if policy == "" { // a server, or a proxy, without the parameter
		return &policyAnswer{}, nil
	}
	return &policyAnswer{refusal: evictionRefusal(policy, forgets)}, nil
}

// checkPolicy returns why the store must refuse claims (nil if it need
// not), asking the servers first if no earlier call had their answer. An
// error from asking is the second result.
func (s *Store) checkPolicy(ctx context.Context) (refusal, err error) {
	return checkPolicy(ctx, s.c, &s.policy, storeForgets)
}

// checkPolicy returns why a store on c must refuse its writes (nil if it
// need not), from the answer kept in known, asking the servers first if no
// earlier call had their answer. An error from asking is the second result.
func checkPolicy(ctx context.Context, c redis.UniversalClient, known *atomic.Pointer[policyAnswer], forgets string) (refusal, err error) {
	if a := known.Load(); a != nil {
		return a.refusal, nil
	}
	a, err := askPolicy(ctx, c, forgets)
	if err != nil {
		return nil, fmt.Errorf("asking the server's maxmemory-policy: %w", err)
	}
	known.CompareAndSwap(nil, a) // of concurrent askers, the first answer counts
	return known.Load().refusal, nil
}
