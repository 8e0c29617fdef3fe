// Package redisstore is a [callback.FencedStore] on Redis, so that the
// replicas of a service that receive callbacks share one record of the
// deliveries they processed: a callback delivered twice, to two replicas,
// calls the function once.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379", ContextTimeoutEnabled: true})
//	h := callback.NewHandler(fn, callback.WithVerifier(v), callback.WithStore(redisstore.New(rdb)))
//
// Each delivery is one Redis key, the prefix followed by the handler's
// 69-character digest of the delivery (never a callback's content). A
// claim sets it to the claim's token with the lease as its expiry, so that
// the claim of a replica that died lapses; completing it keeps it, marked
// processed, for the retention; releasing it deletes it. Every step is one
// Lua script on one key, one round trip, atomic on a single server and in
// a cluster, and acts only for its own token: a replica whose lease lapsed
// cannot complete or release the claim of the replica that took the
// delivery after it.
//
// Its scripts use only GET, SET with PX, and DEL, so any Redis with Lua
// scripting (2.6.12 and later) or a fork of it serves; the tests run
// against Redis 7. It sends each script whole, with EVAL, so that a
// command that reaches a server late, after the server emptied its script
// cache (a restart, a failover, SCRIPT FLUSH), still runs. It works
// through any [redis.UniversalClient]: a client, a cluster client, a ring
// or a failover client. Redis replicates asynchronously, so a failover may
// lose the claims and completions of its last moments, and a delivery
// redelivered then may call the function again: de-duplication is best
// effort, and the function should still be idempotent.
//
// Redis must never evict the store's keys: set maxmemory-policy to
// noeviction on every server the client sends to. Under maxmemory, every
// other policy forgets keys when memory runs short, the volatile ones
// included (each of the store's keys has an expiry), and a processed
// delivery forgotten calls the function again when it is redelivered.
// Nor may Redis forget them on a restart: set appendonly yes, or a save
// schedule (an empty save with appendonly no keeps nothing), unless
// [WithoutPersistence] accepts it. New asks the servers for these
// settings (CONFIG GET, one round trip per server), and a store on a
// server that evicts or keeps nothing refuses its claims and reports why
// through [Store.Err]. The check sees that persistence is on, not how
// often it writes: a save schedule loses the writes since its last
// snapshot. A server that refuses CONFIG GET (an ACL without it, or a
// managed service that disables it, as many do) cannot be checked, and
// the store works on it: set the policy and persistence in the service's
// own configuration (a parameter group, a server setting), whose default
// policy is often an evicting one (volatile-lru or allkeys-lru), and give
// Redis the memory for one retention of deliveries (see [WithRetention]).
//
// A store that cannot reach Redis makes Claim fail, and the handler
// answers 500, so that the sender delivers the callback again. A call that
// timed out may still take effect on the server (its answer is what was
// lost): a claim made so holds its delivery, answered 503, until its lease
// lapses.
//
// The package also holds a [journal.Store] on Redis, [JournalStore], made
// with [NewJournal], so that the replicas of a service share one journal
// of the transfers they start and receive. It keeps, under a prefix of its
// own ([DefaultJournalPrefix]), a hash per entry, a string per name and
// sorted sets that index the entries (by their latest time, the open
// ones, and by expiry), each key expiring a retention after the entry's
// last record; each Write, and each page of Entries, is one script. It
// needs what Store needs (noeviction and persistence, which it checks the
// same way, and a client with ContextTimeoutEnabled), and one thing more:
// its scripts read and write several keys at once, so in a Redis Cluster
// or a ring its prefix must hold a hash tag, which puts the whole journal
// on one node.
package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/callback"
)

// Store is a [callback.FencedStore] on Redis. Make it with [New]; it is
// safe for concurrent use. Its fmt form shows its configuration, never the
// client (whose options hold the password) or a key.
type Store struct {
	c     redis.UniversalClient
	cfg   config
	id    string // this store's part of its tokens
	claim atomic.Uint64
	// conf is the servers' answer about their eviction policy and
	// persistence, once one came.
	conf atomic.Pointer[configAnswer]
}

var _ callback.FencedStore = (*Store)(nil)

// New returns a store that keeps its deliveries in Redis through c. The
// stores of one service's replicas must share the Redis and the prefix.
//
// New never fails: invalid options or a nil client make a store whose
// every call returns the reason, and a server whose maxmemory-policy evicts
// or that keeps no persistence makes a store whose every claim does, which
// [Store.Err] reports at start-up. New asks the servers for their
// settings, waiting at most the store's timeout; if they do not answer
// then, the store's first claim asks again (and so on until one has the
// answer).
func New(c redis.UniversalClient, opts ...Option) *Store {
	s := &Store{c: c, cfg: config{
		prefix:    DefaultPrefix,
		lease:     callback.DefaultLease,
		retention: callback.DefaultRetention,
		timeout:   DefaultTimeout,
	}}
	for _, opt := range opts {
		if opt != nil {
			opt(&s.cfg)
		}
	}
	if c == nil {
		s.cfg.fail(errors.New("redisstore: New: nil client"))
	}
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	s.id = hex.EncodeToString(id[:]) + "-"
	if s.cfg.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
		defer cancel()
		_, _ = s.checkConfig(ctx) // without an answer, the first claim asks again
	}
	return s
}

// Err reports why every call of the store fails (invalid options or a nil
// client), or why every claim does (a server whose maxmemory-policy
// evicts, or that keeps no persistence), or nil. A program checks it at
// start-up and does not start with a store that has one.
func (s *Store) Err() error {
	if s.cfg.err != nil {
		return s.cfg.err
	}
	if a := s.conf.Load(); a != nil {
		return a.refusal
	}
	return nil
}

// Lease returns how long a claim holds before it lapses: the handler keeps
// trying a completion that fails no longer than that.
func (s *Store) Lease() time.Duration { return s.cfg.lease }

// Claim implements [callback.Store]; each claim has a token of its own,
// as with ClaimFenced.
func (s *Store) Claim(ctx context.Context, key string) (callback.ClaimResult, error) {
	r, _, err := s.ClaimFenced(ctx, key)
	return r, err
}

// ClaimFenced implements [callback.FencedStore]. Until the servers
// answered about their settings, it asks first; on a server that evicts or
// keeps no persistence, it fails with the reason [Store.Err] reports.
func (s *Store) ClaimFenced(ctx context.Context, key string) (callback.ClaimResult, string, error) {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("redisstore: claim: %w", err)
	}
	defer cancel()
	refusal, err := s.checkConfig(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("redisstore: claim: %w", err)
	}
	if refusal != nil {
		return 0, "", refusal
	}
	token := s.id + strconv.FormatUint(s.claim.Add(1), 10)
	n, err := s.eval(ctx, "claim", claimLua, key, token, s.cfg.lease.Milliseconds())
	if err != nil {
		return 0, "", err
	}
	switch r := callback.ClaimResult(n); r {
	case callback.ClaimNew:
		return r, token, nil
	case callback.ClaimDone, callback.ClaimBusy:
		return r, "", nil
	default:
		return 0, "", fmt.Errorf("redisstore: claim: unexpected answer %d from the script", n)
	}
}

// Complete implements [callback.Store]: it marks key processed, for the
// retention, whoever holds its claim.
func (s *Store) Complete(ctx context.Context, key string) error {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("redisstore: complete: %w", err)
	}
	defer cancel()
	if err := s.c.Set(ctx, s.cfg.prefix+key, "d:", s.cfg.retention).Err(); err != nil {
		return fmt.Errorf("redisstore: complete: %w", err)
	}
	return nil
}

// Release implements [callback.Store]: it ends the claim of key in
// progress, whoever holds it; a processed delivery stays processed.
func (s *Store) Release(ctx context.Context, key string) error {
	_, err := s.run(ctx, "release", releaseLua, key, "")
	return err
}

// CompleteFenced implements [callback.FencedStore]: it marks key processed
// by the claim with token, for the retention, if that claim still holds
// key, lapsed or not, or if nothing does (the lease lapsed and nobody
// claimed the delivery since: the function ran once, and a redelivery must
// not run it again). A completion of the same token done already succeeds
// again, changing nothing more, so that a completion whose reply was lost
// can be sent again. It fails with [callback.ErrClaimLost], changing
// nothing, when another token's claim holds key or another token completed
// it.
func (s *Store) CompleteFenced(ctx context.Context, key, token string) error {
	return s.end(ctx, "complete", completeLua, key, token, s.cfg.retention.Milliseconds())
}

// ReleaseFenced implements [callback.FencedStore]: it ends the claim with
// token, so that key can be claimed again, if that claim still holds key
// (lapsed or not, while its Redis key has not expired); otherwise (another
// token's claim, a processed delivery, or nothing holds key) it changes
// nothing and fails with [callback.ErrClaimLost].
func (s *Store) ReleaseFenced(ctx context.Context, key, token string) error {
	return s.end(ctx, "release", releaseLua, key, token)
}

// end runs the script that ends the claim of key with token: an answer of
// 0 means the claim is no longer the token's.
func (s *Store) end(ctx context.Context, op, script, key, token string, args ...any) error {
	if token == "" {
		return fmt.Errorf("redisstore: %s: %w", op, callback.ErrClaimLost)
	}
	n, err := s.run(ctx, op, script, key, append([]any{token}, args...)...)
	if err == nil && n == 0 {
		err = fmt.Errorf("redisstore: %s: %w", op, callback.ErrClaimLost)
	}
	return err
}

// run runs script on the key of the delivery key, bounded by the store's
// timeout, and returns its integer answer.
func (s *Store) run(ctx context.Context, op, script, key string, args ...any) (int64, error) {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	defer cancel()
	return s.eval(ctx, op, script, key, args...)
}

// eval sends script whole (see scripts.go) to run on the key of the
// delivery key, and returns its integer answer.
func (s *Store) eval(ctx context.Context, op, script, key string, args ...any) (int64, error) {
	n, err := s.c.Eval(ctx, script, []string{s.cfg.prefix + key}, args...).Int64()
	if err != nil {
		return 0, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	return n, nil
}

// begin checks that the store is configured and ctx has not ended, and
// returns ctx bounded by the store's timeout.
func (s *Store) begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if s.cfg.err != nil {
		return nil, nil, s.cfg.err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	return ctx, cancel, nil
}

// Format implements fmt.Formatter: every verb prints the store's prefix,
// lease, retention and timeout, never its client.
func (s *Store) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "redisstore.Store")
	}
	fmt.Fprintf(f, "{Prefix:%q Lease:%v Retention:%v Timeout:%v}", s.cfg.prefix, s.cfg.lease, s.cfg.retention, s.cfg.timeout)
}
