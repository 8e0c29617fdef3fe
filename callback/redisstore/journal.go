package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/journal"
)

// DefaultJournalPrefix is the prefix of a [JournalStore]'s Redis keys
// unless [WithPrefix] sets another.
const DefaultJournalPrefix = "travelrule:journal:"

// JournalStore is a [journal.Store] on Redis, so that the replicas of a
// service share one journal. Make it with [NewJournal]; it is safe for
// concurrent use. Its fmt form shows its configuration, never the client
// (whose options hold the password) or a key.
//
// Under its prefix P it keeps, for each entry, a hash P+"e:"+key whose
// fields are the entry's records ("r:" and the record's id), the names
// that point at it ("n:" and the name, with an empty value) and its index
// data ("at", "stage", "ref" and "count", its records when this release
// last wrote it); for each name, a string P+"n:"+name that holds the key
// of its entry; and the index: sorted sets of the entries' keys by their
// time (P+"updated", milliseconds of the journal's clock), of the open
// ones by the same time (P+"open"), and of all of them by the time they
// expire (P+"index", milliseconds of the server's clock), and a string,
// P+"migrated" (see below). Write, Records, Lookup and Close are one
// script or command each, and Entries one script per page. Every key
// expires a retention after the last Write to it, on the server's clock
// (the index after the last Write), and Writes drop from the index the
// entries that expired. A name that another Write moved to another entry
// is dropped from its former entry's hash at that entry's next Write.
//
// The layout is the previous release's (its hashes, names and P+"index")
// with index data added, so that a journal it wrote reads on, and its
// replicas may go on writing during a rolling deploy: Entries migrates
// the entries they wrote, or added a record to, since P+"migrated" (a
// watermark on P+"index"), to entries without a stage (every stage and
// reference filter selects them, and the journal decides), at the time
// of their last write as the server's clock saw it (which From and To
// compare), and open. A write of theirs that adds no record (a name
// only) changes nothing in the index.
//
// Memory: an entry of five records of 200 bytes, with the default prefix,
// a 38-byte key and one 40-byte name, takes about 2.6 KB of Redis memory
// (measured with Redis 7: the hash with its index data, the name's
// string, the members of the sorted sets and their expiries; 150 bytes
// more while it is open), of which 1 KB is the records themselves; each
// further name adds about 300 bytes. A journal of a million transfers in
// a retention so needs about 2.8 GB.
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
// after its last Write; default [journal.DefaultRetention], 30 days) and
// [WithTimeout] (the bound of each call, and of each of Entries' round
// trips; default [DefaultTimeout]) apply. [WithLease] has no meaning for a
// journal, which holds no claims: NewJournal refuses it, rather than
// ignore an option its caller thought applied.
//
// NewJournal never fails: invalid options, a nil client, or a cluster or
// ring client with a prefix without a hash tag make a store whose every
// call returns the reason, and a server whose maxmemory-policy evicts or
// that keeps no persistence (see [WithoutPersistence]) makes a store whose
// every Write does, which [JournalStore.Err] reports at start-up and
// [journal.New] refuses. NewJournal asks the servers for their settings,
// as [New] does, waiting at most the store's timeout; if they do not
// answer then, the store's first Write asks again (and so on until one
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
		_, _ = s.checkConfig(ctx) // without an answer, the first Write asks again
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
// Write does (a server whose maxmemory-policy evicts, or that keeps no
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

// Write implements [journal.Store]: one script. Until the servers
// answered about their settings, it asks first; on a server that evicts
// or keeps no persistence, it fails with the reason [JournalStore.Err]
// reports, writing nothing.
func (s *JournalStore) Write(ctx context.Context, st journal.Step) (journal.Written, error) {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return journal.Written{}, fmt.Errorf("redisstore: journal write: %w", err)
	}
	defer cancel()
	refusal, err := s.checkConfig(ctx)
	if err != nil {
		return journal.Written{}, fmt.Errorf("redisstore: journal write: %w", err)
	}
	if refusal != nil {
		return journal.Written{}, refusal
	}
	keys, args := s.writeArgs(st)
	reply, err := s.c.Eval(ctx, journalWriteLua, keys, args...).Slice()
	if err != nil {
		return journal.Written{}, fmt.Errorf("redisstore: journal write: %w", err)
	}
	w, ok := written(reply)
	if !ok {
		return journal.Written{}, errors.New("redisstore: journal write: the script's reply has another shape")
	}
	return w, nil
}

// writeArgs returns the keys and arguments of journalWriteLua for st:
// ARGV[1] the key, ARGV[2] the record's field, ARGV[3] the record,
// ARGV[4] the retention (ms), ARGV[5] the prefix, ARGV[6] the Step's time
// (ms), ARGV[7] its stage, ARGV[8] its reference, then "1" or "0" for
// Exclusive, Read and a peek.
func (s *JournalStore) writeArgs(st journal.Step) ([]string, []any) {
	keys := append(s.journalKeys(st.Key), s.entryKey(st.Peek))
	for _, n := range st.Names {
		keys = append(keys, s.nameKey(n))
	}
	return keys, []any{st.Key, "r:" + st.ID, st.Record, s.cfg.retention.Milliseconds(), s.cfg.prefix,
		st.At.UnixMilli(), int(st.Stage), st.Ref, flag(st.Exclusive), flag(st.Read), flag(st.Peek != "")}
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// written reads journalWriteLua's reply: {taken, records, peeked}.
func written(reply []any) (journal.Written, bool) {
	if len(reply) != 3 {
		return journal.Written{}, false
	}
	taken, ok1 := reply[0].(string)
	recs, ok2 := bytesOf(reply[1])
	peeked, ok3 := bytesOf(reply[2])
	return journal.Written{Taken: taken, Records: recs, Peeked: peeked}, ok1 && ok2 && ok3
}

// bytesOf reads a list of strings from a script's reply.
func bytesOf(v any) ([][]byte, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([][]byte, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, []byte(s))
	}
	return out, true
}

// Records implements [journal.Store]: one HGETALL.
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

// Lookup implements [journal.Store]: one script, which returns the key
// that name points at while that entry exists.
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

// Close implements [journal.Store]: one script, which counts the entry's
// records, whichever release wrote them.
func (s *JournalStore) Close(ctx context.Context, key string, n int) error {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("redisstore: journal close: %w", err)
	}
	defer cancel()
	if err := s.c.Eval(ctx, journalCloseLua, s.journalKeys(key), key, n).Err(); err != nil {
		return fmt.Errorf("redisstore: journal close: %w", err)
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

// journalKeys are the keys every script of the journal declares: the
// index's (see journal_scripts.go), then the hash of the entry key.
func (s *JournalStore) journalKeys(key string) []string {
	p := s.cfg.prefix
	return []string{p + "index", p + "updated", p + "open", p + "migrated", s.entryKey(key)}
}

func (s *JournalStore) entryKey(key string) string { return s.cfg.prefix + "e:" + key }
func (s *JournalStore) nameKey(name string) string { return s.cfg.prefix + "n:" + name }

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

// checkConfig returns why the store must refuse writes (nil if it need
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
