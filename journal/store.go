package journal

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
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
// replicas of a service). Each method is one round trip to the store's
// backend, and each Write is atomic: the journal makes two per
// initiation (a third joins callbacks that named its transfer id before
// its outcome was recorded). The packages callback/redisstore and callback/pgstore hold
// such stores; journal/storetest checks the contract below.
type Store interface {
	// Write makes the step s on the entry s.Key, atomically (see Step).
	// The entry is kept for the store's retention after its last Write,
	// then forgotten, names included.
	Write(ctx context.Context, s Step) (Written, error)
	// Records returns the records of the entry key, in no particular
	// order; none (and no error) for a key with no entry.
	Records(ctx context.Context, key string) ([][]byte, error)
	// Lookup returns the key that name points at, or "" when none does.
	Lookup(ctx context.Context, name string) (string, error)
	// Entries yields the entries that q selects, with their records,
	// most recently written first, reading them a page at a time so that
	// memory holds one page whatever the store holds. It may also yield
	// entries written by an earlier release, whose index it lacks; the
	// journal checks every entry against its own query. Entries written
	// while it runs may be yielded or not. After an error it stops.
	Entries(ctx context.Context, q Query) iter.Seq2[Stored, error]
	// Close takes the entry key out of the index of open entries if it
	// still holds n records (so that a Write since its records were read
	// keeps it open).
	Close(ctx context.Context, key string, n int) error
}

// Step is one atomic write of the journal on an entry: a record, the
// names it points at the entry, what the index of entries keeps of it, and
// what the journal needs to read back.
type Step struct {
	// Key is the entry's key.
	Key string
	// ID names the record: an entry holds at most one record of an id,
	// the first written (a Step with an id the entry holds writes no
	// record, and does the rest).
	ID string
	// Record is the record.
	Record []byte
	// Names are pointed at the entry (a name that pointed elsewhere
	// points at Key afterwards), unless Exclusive.
	Names []string
	// Exclusive makes the Step write nothing when one of Names points at
	// an entry other than Key: Written.Taken then holds that entry's key.
	Exclusive bool
	// At is the record's time, on the journal's clock: an entry's time in
	// the index is the latest At of the Steps that wrote a record.
	At time.Time
	// Stage is the stage the record shows: an entry's stage in the index
	// is the highest Stage of its Steps.
	Stage Stage
	// Ref is the entry's callback reference, if the record names one:
	// the index keeps the first one written.
	Ref string
	// Read asks for the entry's records after the Step, in
	// Written.Records.
	Read bool
	// Peek names another entry whose records, after the Step, are
	// returned in Written.Peeked ("" for none).
	Peek string
}

// Written is what a [Step] read back.
type Written struct {
	// Taken is the entry that one of an Exclusive Step's names pointed
	// at, when it was not the Step's: nothing was written. "" otherwise.
	Taken string
	// Records are the entry's records after the Step, if it asked (Read).
	Records [][]byte
	// Peeked are the records of the entry the Step peeked at.
	Peeked [][]byte
}

// Query selects entries from a store's index. Its zero value selects
// every entry.
type Query struct {
	// Open selects only the open entries: every entry written since it
	// was last closed ([Store.Close]).
	Open bool
	// Stages, if any, selects entries whose stage is one of them.
	Stages []Stage
	// From and To, when not zero, select entries last written at or
	// after From, and before To.
	From, To time.Time
	// RefPrefix, if not "", selects entries whose reference starts with
	// it.
	RefPrefix string
}

// Stored is an entry as a store yields it.
type Stored struct {
	// Key is the entry's key.
	Key string
	// Records are its records, in no particular order.
	Records [][]byte
}

// Selects reports whether q selects an entry of the stage, time and
// reference given: the decision a store's index makes, for stores to
// share.
func (q Query) Selects(stage Stage, at time.Time, ref string) bool {
	switch {
	case len(q.Stages) > 0 && !slices.Contains(q.Stages, stage):
		return false
	case !q.From.IsZero() && at.Before(q.From), !q.To.IsZero() && !at.Before(q.To):
		return false
	}
	return strings.HasPrefix(ref, q.RefPrefix)
}

// Limits of what a journal writes; a store may refuse more.
const (
	MaxKeyBytes    = 200
	MaxRecordBytes = 1 << 10
)

// ErrStoreFull is returned by [MemoryStore.Write] when a new entry would
// exceed the store's size.
var ErrStoreFull = errors.New("journal: store is full")

// MemoryStore is a [Store] in the memory of one process: for tests, and
// for a single process that accepts that a crash loses its journal. Make
// one with [NewMemoryStore].
type MemoryStore struct {
	mu        sync.Mutex
	entries   map[string]*memEntry
	names     map[string]string
	open      map[string]bool
	size      int
	retention time.Duration
	now       func() time.Time
	swept     time.Time // when expire last ran
}

type memEntry struct {
	ids     map[string]bool
	recs    [][]byte
	last    time.Time // on the store's clock, for the retention
	updated time.Time // the latest Step.At
	stage   Stage
	ref     string
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
	return &MemoryStore{entries: map[string]*memEntry{}, names: map[string]string{}, open: map[string]bool{},
		size: size, retention: retention, now: time.Now}
}

// Write implements [Store].
func (s *MemoryStore) Write(ctx context.Context, st Step) (Written, error) {
	if err := ctx.Err(); err != nil {
		return Written{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	if st.Exclusive {
		for _, n := range st.Names {
			if k := s.lookup(n, now); k != "" && k != st.Key {
				return Written{Taken: k}, nil
			}
		}
	}
	e := s.alive(st.Key, now)
	if e == nil {
		delete(s.entries, st.Key) // expired, not yet swept
		if len(s.entries) >= s.size {
			return Written{}, ErrStoreFull
		}
		e = &memEntry{ids: map[string]bool{}}
		s.entries[st.Key] = e
	}
	e.write(st, now)
	for _, n := range st.Names {
		s.names[n] = st.Key
	}
	s.open[st.Key] = true
	var w Written
	if st.Read {
		w.Records = cloneAll(e.recs)
	}
	if p := s.alive(st.Peek, now); st.Peek != "" && p != nil {
		w.Peeked = cloneAll(p.recs)
	}
	return w, nil
}

// write adds the Step's record, unless e holds its id, and its index data.
func (e *memEntry) write(st Step, now time.Time) {
	e.last = now
	if !e.ids[st.ID] {
		e.ids[st.ID] = true
		e.recs = append(e.recs, slices.Clone(st.Record))
		if st.At.After(e.updated) {
			e.updated = st.At
		}
	}
	e.stage = max(e.stage, st.Stage)
	if e.ref == "" {
		e.ref = st.Ref
	}
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
			delete(s.open, k)
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
	return s.lookup(name, s.now()), nil
}

func (s *MemoryStore) lookup(name string, now time.Time) string {
	key := s.names[name]
	if key == "" || s.alive(key, now) == nil {
		return ""
	}
	return key
}

// Entries implements [Store]. It copies the selected entries first, so
// that the loop's body may call the store.
func (s *MemoryStore) Entries(ctx context.Context, q Query) iter.Seq2[Stored, error] {
	return func(yield func(Stored, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(Stored{}, err)
			return
		}
		for _, e := range s.selected(q) {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// selected returns copies of the entries q selects, most recently written
// first.
func (s *MemoryStore) selected(q Query) []Stored {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	type kv struct {
		updated time.Time
		Stored
	}
	var all []kv
	consider := func(k string, e *memEntry) {
		if e != nil && now.Sub(e.last) < s.retention && q.Selects(e.stage, e.updated, e.ref) {
			all = append(all, kv{e.updated, Stored{Key: k, Records: cloneAll(e.recs)}})
		}
	}
	if q.Open {
		for k := range s.open {
			consider(k, s.entries[k])
		}
	} else {
		for k, e := range s.entries {
			consider(k, e)
		}
	}
	slices.SortFunc(all, func(a, b kv) int {
		if c := b.updated.Compare(a.updated); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	out := make([]Stored, len(all))
	for i, e := range all {
		out[i] = e.Stored
	}
	return out
}

// Close implements [Store].
func (s *MemoryStore) Close(ctx context.Context, key string, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[key]; e == nil || len(e.recs) == n {
		delete(s.open, key)
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
