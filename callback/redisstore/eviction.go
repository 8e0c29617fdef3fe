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

// The stores keep their promise only on a Redis that neither evicts nor
// forgets on a restart. Under maxmemory, every policy but noeviction
// forgets keys when memory runs short (the volatile-* policies evict only
// keys that have an expiry, and every key of the stores has one); a server
// that keeps neither an append-only file nor snapshots starts empty after
// a restart. A processed delivery forgotten is called again when it is
// redelivered; a journal entry forgotten no longer guards its reference.
// So each store asks every server its client sends to for the settings
// (CONFIG GET) and refuses its writes if one evicts or keeps nothing,
// unless [WithoutPersistence] accepts the latter.

// configAnswer is what the servers said of their settings: refusal is why
// the store must refuse its writes, or nil.
type configAnswer struct{ refusal error }

// checked are the settings the stores ask each server for, in one
// pipelined round trip of one CONFIG GET each (CONFIG GET takes one
// parameter before Redis 7).
var checked = [...]string{"maxmemory-policy", "appendonly", "save"}

// forgets is what a server makes a store forget, for its refusal.
type forgets struct {
	evicted   string // under an evicting maxmemory-policy
	restarted string // on a restart without persistence
}

// What each store forgets.
var (
	storeForgets = forgets{
		evicted:   "the store's keys when memory runs short and so forgets processed deliveries",
		restarted: "every processed delivery, and calls it again when it is redelivered",
	}
	journalForgets = forgets{
		evicted:   "the journal's keys when memory runs short and so forgets entries",
		restarted: "every entry, and lets an initiation whose outcome is unknown be sent again under its reference",
	}
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

// persistenceRefusal returns why a store on a server whose appendonly and
// save settings are those must refuse its writes, naming what a restart
// would forget, or nil if the server keeps an append-only file or a
// snapshot schedule. It never quotes a save schedule.
func persistenceRefusal(appendonly, save, forgets string) error {
	if strings.EqualFold(appendonly, "yes") || strings.TrimSpace(save) != "" {
		return nil
	}
	return fmt.Errorf("redisstore: the Redis server keeps no persistence (appendonly is no, save is empty), so a restart forgets %s: set appendonly yes, or a save schedule (WithoutPersistence accepts a store that may forget)", forgets)
}

// serverRefusal returns why a store on a server whose CONFIG GET answered
// conf must refuse its writes, or nil; mayForget accepts a server without
// persistence. A setting the server did not name (a proxy, or a fork
// without it) is not judged.
func serverRefusal(conf map[string]string, of forgets, mayForget bool) error {
	var evicts, keepsNothing error
	if policy := conf["maxmemory-policy"]; policy != "" {
		evicts = evictionRefusal(policy, of.evicted)
	}
	appendonly, hasAOF := conf["appendonly"]
	save, hasSave := conf["save"]
	if !mayForget && hasAOF && hasSave {
		keepsNothing = persistenceRefusal(appendonly, save, of.restarted)
	}
	return errors.Join(evicts, keepsNothing)
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

// askConfig asks every server that c sends to for its settings. It
// returns the answer (the first refusal of a server), or the error of a
// server that gave none.
func askConfig(ctx context.Context, c redis.UniversalClient, of forgets, mayForget bool) (*configAnswer, error) {
	sh, ok := c.(shards)
	if !ok {
		return askServer(ctx, c, of, mayForget)
	}
	var (
		mu     sync.Mutex
		answer = &configAnswer{}
	)
	err := sh.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
		a, err := askServer(ctx, c, of, mayForget)
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

// askServer asks one server for its settings, in one round trip.
func askServer(ctx context.Context, c redis.Cmdable, of forgets, mayForget bool) (*configAnswer, error) {
	cmds := make([]*redis.MapStringStringCmd, len(checked))
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, name := range checked {
			cmds[i] = p.ConfigGet(ctx, name)
		}
		return nil
	})
	conf := make(map[string]string, len(checked))
	for i, cmd := range cmds {
		m, err := cmd.Result()
		if err != nil {
			if cannotAsk(err) { // not named: not judged
				continue
			}
			return nil, err
		}
		if v, ok := m[checked[i]]; ok {
			conf[checked[i]] = v
		}
	}
	return &configAnswer{refusal: serverRefusal(conf, of, mayForget)}, nil
}

// checkConfig returns why the store must refuse claims (nil if it need
// not), asking the servers first if no earlier call had their answer. An
// error from asking is the second result.
func (s *Store) checkConfig(ctx context.Context) (refusal, err error) {
	return checkConfig(ctx, s.c, &s.conf, storeForgets, s.cfg.mayForget)
}

// checkConfig returns why a store on c must refuse its writes (nil if it
// need not), from the answer kept in known, asking the servers first if no
// earlier call had their answer. An error from asking is the second result.
func checkConfig(ctx context.Context, c redis.UniversalClient, known *atomic.Pointer[configAnswer], of forgets, mayForget bool) (refusal, err error) {
	if a := known.Load(); a != nil {
		return a.refusal, nil
	}
	a, err := askConfig(ctx, c, of, mayForget)
	if err != nil {
		return nil, fmt.Errorf("asking the server's maxmemory-policy and persistence: %w", err)
	}
	known.CompareAndSwap(nil, a) // of concurrent askers, the first answer counts
	return known.Load().refusal, nil
}
