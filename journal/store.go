package journal

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// DefaultRetention is how long a store keeps an entry after its last
// record unless told otherwise: long enough for a person to look at a
// transfer that was stuck over a holiday, short enough that a store never
// grows without bound (one retention of transfers, at most).
const DefaultRetention = 30 * 24 * time.Hour

// Store keeps a journal's entries: for each entry, a set of records, and
// names (a callback reference, a transfer id) that point at entries. The
// journal writes records it made itself: short JSON documents of fixed
// vocabulary that hold no personal data (see the package doc). Keys, ids
// and names are ASCII strings of at most 200 bytes; a record is at most
// 1 KiB.
//
// A Store must be safe for concurrent use by many processes at once (the
// replicas of a service), and each call must be atomic. The packages
// callback/redisstore and callback/pgstore hold such stores; journal/storetest
// checks the contract below.
type Store interface {
	// Append adds the record rec, named id, to the entry key, unless the
	// entry already holds a record named id (then it changes nothing and
	// returns nil: a record is written at most once, however often it is
	// appended), and points each of names at key (a name that pointed
	// elsewhere points at key afterwards). The record and the names are
	// written together or not at all. The entry is kept for the store's
	// retention after its last Append, then forgotten, names included.
	Append(ctx context.Context, key, id string, rec []byte, names ...string) error
	// Records returns the records of the entry key, in no particular
	// order; none (and no error) for a key with no entry.
	Records(ctx context.Context, key string) ([][]byte, error)
	// Lookup returns the key that name points at, or "" when none does.
	Lookup(ctx context.Context, name string) (string, error)
	// Scan calls fn with the key and records of each entry the store
	// keeps, in no particular order, until fn returns an error (which
	// Scan returns). Entries appended to while Scan runs may be seen or
	// not.
	Scan(ctx context.Context, fn func(key string, recs [][]byte) error) error
}

// Limits of what a journal writes; a store may refuse more.
const (
	MaxKeyBytes    = 200
	MaxRecordBytes = 1 << 10
)

// ErrStoreFull is returned by [MemoryStore.Append] when a new entry would
// exceed the store's size.
var ErrStoreFull = errors.New("journal: store is full")

// MemoryStore is a [Store] in the memory of one process: for tests, and
// for a single process that accepts that a crash loses its journal. Make
// one with [NewMemoryStore].
type MemoryStore struct {
	mu        sync.Mutex
	entries   map[string]*memEntry
	names     map[string]string
	size      int
	retention time.Duration
	now       func() time.Time
	swept     time.Time // when expire last ran
}

type memEntry struct {
	ids  map[string]bool
	recs [][]byte
	last time.Time
}

// NewMemoryStore returns a store that keeps at most size entries (refusing
// new ones with [ErrStoreFull] beyond that, so that nothing kept is
// dropped), each for retention after its last record. size <= 0 means
// 100,000; retention <= 0 means [DefaultRetention].
func NewMemoryStore(size int, retention time.Duration) *MemoryStore {
	if size <= 0 {
		size = 100_000
	}
	if retention <= 0 {
		retention = DefaultRetention
	}
	return &MemoryStore{entries: map[string]*memEntry{}, names: map[string]string{}, size: size, retention: retention, now: time.Now}
}

// Append implements [Store].
func (s *MemoryStore) Append(ctx context.Context, key, id string, rec []byte, names ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	e := s.alive(key, now)
	if e == nil {
		delete(s.entries, key) // expired, not yet swept
		if len(s.entries) >= s.size {
			return ErrStoreFull
		}
		e = &memEntry{ids: map[string]bool{}}
		s.entries[key] = e
	}
	e.last = now
	if !e.ids[id] {
		e.ids[id] = true
		e.recs = append(e.recs, slices.Clone(rec))
	}
	for _, n := range names {
		s.names[n] = key
	}
	return nil
}

// expire forgets the entries whose retention ended, and the names that
// point at them; it looks at every entry at most once a minute (between
// sweeps, alive tells an expired entry from a kept one).
func (s *MemoryStore) expire(now time.Time) {
	if now.Sub(s.swept) < time.Minute {
		return
	}
	s.swept = now
	for k, e := range s.entries {
		if now.Sub(e.last) >= s.retention {
			delete(s.entries, k)
		}
	}
	for n, k := range s.names {
		if s.entries[k] == nil {
			delete(s.names, n)
		}
	}
}

// Records implements [Store].
func (s *MemoryStore) Records(ctx context.Context, key string) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.alive(key, s.now())
	if e == nil {
		return nil, nil
	}
	return cloneAll(e.recs), nil
}

// Lookup implements [Store].
func (s *MemoryStore) Lookup(ctx context.Context, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := s.names[name]
	if key == "" || s.alive(key, s.now()) == nil {
		return "", nil
	}
	return key, nil
}

// Scan implements [Store]. It copies the entries first, so that fn may
// call the store.
func (s *MemoryStore) Scan(ctx context.Context, fn func(key string, recs [][]byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	s.expire(s.now())
	type kv struct {
		key  string
		recs [][]byte
	}
	now := s.now()
	all := make([]kv, 0, len(s.entries))
	for k, e := range s.entries {
		if now.Sub(e.last) >= s.retention {
			continue
		}
		all = append(all, kv{k, cloneAll(e.recs)})
	}
	s.mu.Unlock()
	for _, e := range all {
		if err := fn(e.key, e.recs); err != nil {
			return err
		}
	}
	return nil
}

// alive returns the entry key unless its retention ended.
func (s *MemoryStore) alive(key string, now time.Time) *memEntry {
	e := s.entries[key]
	if e == nil || now.Sub(e.last) >= s.retention {
		return nil
	}
	return e
}

func cloneAll(recs [][]byte) [][]byte {
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = slices.Clone(r)
	}
	return out
}
