package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/journal"
)

// DefaultJournalPrefix is the prefix of a [JournalStore]'s Redis keys
// unless [WithPrefix] sets another.
const DefaultJournalPrefix = "travelrule:journal:"

// scanPage is how many entries Scan reads from Redis at once: it holds the
// records of at most one page (about 500 KB with entries of five 200-byte
// records) while it calls its function.
const scanPage = 500

// JournalStore is a [journal.Store] on Redis, so that the replicas of a
// service share one journal. Make it with [NewJournal]; it is safe for
// concurrent use. Its fmt form shows its configuration, never the client
// (whose options hold the password) or a key.
//
// Under its prefix P it keeps, for each entry, a hash P+"e:"+key whose
// fields are the entry's records ("r:" and the record's id) and the names
// that point at it ("n:" and the name, with an empty value); for each
// name, a string P+"n:"+name that holds the key of its entry; and one
// sorted set, P+"index", of the entries' keys, each scored by the time its
// entry expires (in milliseconds of the server's clock), that Scan walks.
// Each Append is one Lua script: it adds the record unless the hash holds
// its id, points the names at the entry, and sets the same expiry, the
// server's time plus the retention, on the entry, on every name that
// points at it, and on the entry's place in the index; it also drops from
// the index the entries that expired, and extends the index's own expiry,
// so that every key the store writes expires once the journal goes unused
// for a retention. A name that another Append moved to another entry is
// dropped from its former entry's hash at that entry's next Append.
//
// Memory: an entry of five records of 200 bytes, with the default prefix,
// a 38-byte key and one 40-byte name, takes about 2.3 KB of Redis memory
// (measured with Redis 7: the hash, the name's string, the index member
// and their expiries), of which 1 KB is the records themselves; each
// further name adds about 300 bytes. A journal of a million transfers in
// a retention so needs about 2.5 GB.
//
// Every key of an entry, its names and the index are read and written
// together by one script, so they must be on one server: a single Redis
// (or a primary with replicas, through a failover client) holds the
// journal as it is. In a Redis Cluster, or through a [redis.Ring], the
// prefix must hold a hash tag, as in WithPrefix("{travelrule:journal}:"),
// which puts all of the journal on the node that serves the tag's slot
// (the journal of one retention of transfers is small); with another
// prefix, NewJournal makes a store that refuses every call and says so
// through [JournalStore.Err].
//
// The stores of a service's replicas must share the Redis, the prefix and
// the retention, and the prefix must differ from that of the service's
// [Store] of callbacks (the defaults do). The store needs Redis 3.2 or
// later (its scripts read the server's clock, TIME, before they write),
// and, as [Store], a maxmemory-policy of noeviction and persistence
// (appendonly yes, or a save schedule): a Redis that evicts, or restarts
// empty, forgets entries, and a record forgotten so can be written again.
type JournalStore struct {
	c   redis.UniversalClient
	cfg config
	// conf is the servers' answer about their eviction policy and
	// persistence, once one came.
	conf atomic.Pointer[configAnswer]
}

var _ journal.Store = (*JournalStore)(nil)

// NewJournal returns a journal store that keeps its entries in Redis
// through c. Of the package's options, [WithPrefix] (default
// [DefaultJournalPrefix]), [WithRetention] (how long an entry is kept
// after its last Append; default [journal.DefaultRetention], 30 days) and
// [WithTimeout] (the bound of each call, and of each of Scan's round
// trips; default [DefaultTimeout]) apply. [WithLease] has no meaning for a
// journal, which holds no claims: NewJournal refuses it, rather than
// ignore an option its caller thought applied.
//
// NewJournal never fails: invalid options, a nil client, or a cluster or
// ring client with a prefix without a hash tag make a store whose every
// call returns the reason, and a server whose maxmemory-policy evicts or
// that keeps no persistence (see [WithoutPersistence]) makes a store whose
// every Append does, which [JournalStore.Err] reports at start-up and
// [journal.New] refuses. NewJournal asks the servers for their settings,
// as [New] does, waiting at most the store's timeout; if they do not
// answer then, the store's first Append asks again (and so on until one
// has the answer).
func NewJournal(c redis.UniversalClient, opts ...Option) *JournalStore {
	s := &JournalStore{c: c, cfg: config{
		prefix:    DefaultJournalPrefix,
		retention: journal.DefaultRetention,
		timeout:   DefaultTimeout,
	}}
	for _, opt := range opts {
		if opt != nil {
			opt(&s.cfg)
		}
	}
	if s.cfg.lease != 0 { // WithLease(0) made its own error
		s.cfg.fail(errors.New("redisstore: NewJournal: WithLease has no meaning for a journal store, which holds no claims"))
	}
	if c == nil {
		s.cfg.fail(errors.New("redisstore: NewJournal: nil client"))
	} else if _, sharded := c.(shards); sharded && !hasHashTag(s.cfg.prefix) {
		s.cfg.fail(errors.New(`redisstore: NewJournal: a journal in a Redis Cluster or Ring must be on one node: give WithPrefix a hash tag, as in "{travelrule:journal}:"`))
	}
	if s.cfg.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
		defer cancel()
		_, _ = s.checkConfig(ctx) // without an answer, the first Append asks again
	}
	return s
}

// hasHashTag reports whether every key that starts with prefix has the
// same hash tag, so that Redis Cluster puts them in one slot: prefix holds
// a "{", and after it a "}" with something between them.
func hasHashTag(prefix string) bool {
	i := strings.IndexByte(prefix, '{')
	return i >= 0 && strings.IndexByte(prefix[i+1:], '}') > 0
}

// Err reports why every call of the store fails (invalid options, a nil
// client, or a cluster without a hash tag in the prefix), or why every
// Append does (a server whose maxmemory-policy evicts, or that keeps no
// persistence), or nil. A program checks it at start-up and does not
// start with a store that has one.
func (s *JournalStore) Err() error {
	if s.cfg.err != nil {
		return s.cfg.err
	}
	if a := s.conf.Load(); a != nil {
		return a.refusal
	}
	return nil
}

// Append implements [journal.Store]. Until the servers answered about
// their settings, it asks first; on a server that evicts or keeps no
// persistence, it fails with the reason [JournalStore.Err] reports,
// writing nothing.
func (s *JournalStore) Append(ctx context.Context, key, id string, rec []byte, names ...string) error {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("redisstore: journal append: %w", err)
	}
	defer cancel()
	refusal, err := s.checkConfig(ctx)
	if err != nil {
		return fmt.Errorf("redisstore: journal append: %w", err)
	}
	if refusal != nil {
		return refusal
	}
	keys := make([]string, 2, 2+len(names))
	keys[0], keys[1] = s.entryKey(key), s.indexKey()
	for _, n := range names {
		keys = append(keys, s.nameKey(n))
	}
	err = s.c.Eval(ctx, journalAppendLua, keys, key, "r:"+id, rec, s.cfg.retention.Milliseconds(), s.cfg.prefix).Err()
	if err != nil {
		return fmt.Errorf("redisstore: journal append: %w", err)
	}
	return nil
}

// Records implements [journal.Store].
func (s *JournalStore) Records(ctx context.Context, key string) ([][]byte, error) {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("redisstore: journal records: %w", err)
	}
	defer cancel()
	fields, err := s.c.HGetAll(ctx, s.entryKey(key)).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: journal records: %w", err)
	}
	return records(fields), nil
}

// Lookup implements [journal.Store]: it returns the key that name points
// at while that entry exists.
func (s *JournalStore) Lookup(ctx context.Context, name string) (string, error) {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return "", fmt.Errorf("redisstore: journal lookup: %w", err)
	}
	defer cancel()
	key, err := s.c.Eval(ctx, journalLookupLua, []string{s.nameKey(name)}, s.cfg.prefix).Text()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("redisstore: journal lookup: %w", err)
	}
	return key, nil
}

// Scan implements [journal.Store]. It walks the index in the order its
// entries expire, a page of 500 entries at a time (each page one round
// trip for the index and one pipelined round trip for the entries'
// records, each bounded by the store's timeout), and calls fn between
// round trips, so that fn may call the store. It visits the entries that
// expire no later than the last one appended before Scan began: an entry
// appended to while Scan runs moves past that bound and is not visited
// again, unless it was appended to with a shorter retention (a store on
// the same prefix with another retention), or in the millisecond Scan
// began.
func (s *JournalStore) Scan(ctx context.Context, fn func(key string, recs [][]byte) error) error {
	if err := s.cfg.err; err != nil {
		return fmt.Errorf("redisstore: journal scan: %w", err)
	}
	var top string
	err := s.call(ctx, func(ctx context.Context) (err error) {
		top, err = s.c.Eval(ctx, journalScanLua, []string{s.indexKey()}).Text()
		return err
	})
	if errors.Is(err, redis.Nil) { // no entries
		return nil
	}
	if err != nil {
		return fmt.Errorf("redisstore: journal scan: %w", err)
	}
	// Each page starts at min: the entries with a score below it were
	// visited. A page's last score may continue into the next page, so a
	// page's entries of that score are left to the next page, unless the
	// whole page has one score: then all the entries of that score are
	// read at once (as many as were appended in one millisecond).
	min := "-inf"
	for {
		var page []redis.Z
		err := s.call(ctx, func(ctx context.Context) (err error) {
			page, err = s.c.ZRangeByScoreWithScores(ctx, s.indexKey(), &redis.ZRangeBy{Min: min, Max: top, Count: scanPage}).Result()
			return err
		})
		if err != nil {
			return fmt.Errorf("redisstore: journal scan: %w", err)
		}
		last := len(page) < scanPage
		if !last {
			end := page[len(page)-1].Score
			score := strconv.FormatFloat(end, 'f', -1, 64)
			if page[0].Score == end {
				err := s.call(ctx, func(ctx context.Context) (err error) {
					page, err = s.c.ZRangeByScoreWithScores(ctx, s.indexKey(), &redis.ZRangeBy{Min: score, Max: score}).Result()
					return err
				})
				if err != nil {
					return fmt.Errorf("redisstore: journal scan: %w", err)
				}
				min = "(" + score
			} else {
				for page[len(page)-1].Score == end {
					page = page[:len(page)-1]
				}
				min = score
			}
		}
		if err := s.visit(ctx, page, fn); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}

// visit reads the records of the entries of page in one pipelined round
// trip, and calls fn with those of each entry that still exists.
func (s *JournalStore) visit(ctx context.Context, page []redis.Z, fn func(key string, recs [][]byte) error) error {
	if len(page) == 0 {
		return nil
	}
	keys := make([]string, len(page))
	cmds := make([]*redis.MapStringStringCmd, len(page))
	err := s.call(ctx, func(ctx context.Context) error {
		pipe := s.c.Pipeline()
		for i, z := range page {
			keys[i], _ = z.Member.(string)
			cmds[i] = pipe.HGetAll(ctx, s.entryKey(keys[i]))
		}
		_, err := pipe.Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("redisstore: journal scan: %w", err)
	}
	for i, cmd := range cmds {
		recs := records(cmd.Val())
		if len(recs) == 0 { // expired since the page was read
			continue
		}
		if err := fn(keys[i], recs); err != nil {
			return err
		}
	}
	return nil
}

// records returns the records among the fields of an entry's hash.
func records(fields map[string]string) [][]byte {
	var recs [][]byte
	for f, v := range fields {
		if strings.HasPrefix(f, "r:") {
			recs = append(recs, []byte(v))
		}
	}
	return recs
}

func (s *JournalStore) entryKey(key string) string { return s.cfg.prefix + "e:" + key }
func (s *JournalStore) nameKey(name string) string { return s.cfg.prefix + "n:" + name }
func (s *JournalStore) indexKey() string           { return s.cfg.prefix + "index" }

// begin checks that the store is configured and ctx has not ended, and
// returns ctx bounded by the store's timeout.
func (s *JournalStore) begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if s.cfg.err != nil {
		return nil, nil, s.cfg.err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	return ctx, cancel, nil
}

// call runs one round trip of Scan, bounded by the store's timeout.
func (s *JournalStore) call(ctx context.Context, do func(ctx context.Context) error) error {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	return do(ctx)
}

// checkConfig returns why the store must refuse appends (nil if it need
// not), asking the servers first if no earlier call had their answer. An
// error from asking is the second result.
func (s *JournalStore) checkConfig(ctx context.Context) (refusal, err error) {
	return checkConfig(ctx, s.c, &s.conf, journalForgets, s.cfg.mayForget)
}

// Format implements fmt.Formatter: every verb prints the store's prefix,
// retention and timeout, never its client.
func (s *JournalStore) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "redisstore.JournalStore")
	}
	fmt.Fprintf(f, "{Prefix:%q Retention:%v Timeout:%v}", s.cfg.prefix, s.cfg.retention, s.cfg.timeout)
}

// The journal's scripts. As the callback store's (see scripts.go), they
// are sent whole, with EVAL, every time. They read the server's clock, so
// that the replicas of a service agree on when an entry expires whatever
// their own clocks say; redis.replicate_commands lets Redis 3.2 and 4
// replicate a script that does so by its writes (later versions always
// do, and ignore the call). A script accesses the keys of the names an
// entry holds, which its caller cannot name: with the hash tag the
// prefix must have in a cluster, they are in the slot of the keys it
// declares.

// journalAppendLua adds the record ARGV[3], as the field ARGV[2], to the
// entry KEYS[1] (whose key is ARGV[1]) unless the entry holds that field,
// points the names KEYS[3...] at it, and sets the expiry of the entry, of
// every name that still points at it, and of its place in the index
// KEYS[2] to the server's time plus the retention ARGV[4]
// (milliseconds). ARGV[5] is the store's prefix. It also drops from the
// index the entries that expired, and keeps the index at least one
// retention.
const journalAppendLua = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = string.format('%.0f', now + tonumber(ARGV[4]))
redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3])
for i = 3, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1])
  redis.call('HSET', KEYS[1], string.sub(KEYS[i], #ARGV[5] + 1), '')
end
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 2) == 'n:' then
    local name = ARGV[5] .. f
    if redis.call('GET', name) == ARGV[1] then
      redis.call('PEXPIREAT', name, exp)
    else
      redis.call('HDEL', KEYS[1], f)
    end
  end
end
redis.call('PEXPIREAT', KEYS[1], exp)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. string.format('%.0f', now))
redis.call('ZADD', KEYS[2], exp, ARGV[1])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[4]) then
  redis.call('PEXPIREAT', KEYS[2], exp)
end
return 1
`

// journalLookupLua returns the key that the name KEYS[1] points at, if
// that entry exists (ARGV[1] is the store's prefix), or nil.
const journalLookupLua = `
local key = redis.call('GET', KEYS[1])
if key and redis.call('EXISTS', ARGV[1] .. 'e:' .. key) == 1 then return key end
return false
`

// journalScanLua drops from the index KEYS[1] the entries that expired,
// and returns the highest score left (the expiry of the entry appended
// last), or nil when the index is empty.
const journalScanLua = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%.0f', now))
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if #top == 0 then return false end
return top[2]
`
