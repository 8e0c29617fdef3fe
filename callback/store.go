package callback

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// DefaultStoreSize is how many processed deliveries the default
// [MemoryStore] remembers.
const DefaultStoreSize = 100_000

// ClaimResult is the answer of [Store.Claim].
type ClaimResult int

// The answers of [Store.Claim]. The zero value is none of them: a store
// that returns it makes the handler answer 500.
const (
	// ClaimNew means the delivery was not seen before and the caller now
	// holds it: it must call Complete or Release.
	ClaimNew ClaimResult = iota + 1
	// ClaimDone means the delivery was processed before; the handler
	// answers 204 without calling the function.
	ClaimDone
	// ClaimBusy means another holder is processing the delivery now; the
	// handler answers 503 with Retry-After so that the sender comes back.
	ClaimBusy
)

// Store remembers which deliveries were processed, so that a callback
// delivered twice calls the function once. The handler calls Claim before
// calling the function, then Complete if the function succeeded or Release
// if it failed or panicked, so that a failed delivery is processed again
// when it is redelivered. Keys are short ASCII strings (69 characters). A
// Store must be safe for concurrent use; Claim must be atomic, so that of
// concurrent claims of one key exactly one gets ClaimNew.
//
// A claim whose holder dies never sees Complete or Release: a shared store
// should let claims lapse after a lease longer than any function call, and
// may forget processed keys after a retention longer than the sender's
// redelivery window. With Redis, for example: Claim is
// SET key "busy" NX PX <lease> (ClaimNew if it was set, else GET gives
// "done" → ClaimDone or "busy" → ClaimBusy); Complete is
// SET key "done" PX <retention>; Release deletes the key if it still holds
// "busy". An error from Claim answers 500; errors from Complete and Release
// are logged. Complete and Release get a context that is not cancelled when
// the sender hangs up, so that no claim is left behind: a store that does
// I/O must bound their time itself (as database and Redis clients do with
// their own time-outs).
type Store interface {
	Claim(ctx context.Context, key string) (ClaimResult, error)
	Complete(ctx context.Context, key string) error
	Release(ctx context.Context, key string) error
}

// DefaultLease is how long a [MemoryStore] holds a claim that was neither
// completed nor released before it lets the delivery be claimed again.
const DefaultLease = 10 * time.Minute

// MemoryStore is the default [Store]: it keeps, in this process, the last
// size processed deliveries (forgetting the oldest first) and the claims in
// progress. Its memory use is about 100 bytes per delivery. It is safe for
// concurrent use.
type MemoryStore struct {
	mu   sync.Mutex
	size int
	done map[[32]byte]struct{}
	ring [][32]byte // processed keys in the order they were completed
	next int        // index in ring of the oldest key, once ring is full
	busy map[[32]byte]time.Time
	now  func() time.Time // for tests
}

// NewMemoryStore returns a store that remembers the last size processed
// deliveries; size <= 0 means [DefaultStoreSize].
func NewMemoryStore(size int) *MemoryStore {
	if size <= 0 {
		size = DefaultStoreSize
	}
	return &MemoryStore{
		size: size,
		done: make(map[[32]byte]struct{}),
		busy: make(map[[32]byte]time.Time),
		now:  time.Now,
	}
}

// Claim implements [Store].
func (s *MemoryStore) Claim(_ context.Context, key string) (ClaimResult, error) {
	k := sha256.Sum256([]byte(key))
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.done[k]; ok {
		return ClaimDone, nil
	}
	now := s.now()
	if since, ok := s.busy[k]; ok && now.Sub(since) < DefaultLease {
		return ClaimBusy, nil
	}
	s.busy[k] = now
	return ClaimNew, nil
}

// Complete implements [Store].
func (s *MemoryStore) Complete(_ context.Context, key string) error {
	k := sha256.Sum256([]byte(key))
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.busy, k)
	if _, ok := s.done[k]; ok {
		return nil
	}
	if len(s.ring) < s.size {
		s.ring = append(s.ring, k)
	} else {
		delete(s.done, s.ring[s.next])
		s.ring[s.next] = k
		s.next = (s.next + 1) % s.size
	}
	s.done[k] = struct{}{}
	return nil
}

// Release implements [Store].
func (s *MemoryStore) Release(_ context.Context, key string) error {
	k := sha256.Sum256([]byte(key))
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.busy, k)
	return nil
}

// Len reports how many processed deliveries the store remembers.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.done)
}
