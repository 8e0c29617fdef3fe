package callback

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"
)

// defaultStoreSize is how many processed deliveries the default
// [MemoryStore] remembers.
const defaultStoreSize = 100_000

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

// defaultLease is how long a [MemoryStore] holds a claim that was neither
// completed nor released before it lets the delivery be claimed again.
const defaultLease = 10 * time.Minute

// MemoryStore is the default [Store]: it keeps, in this process, the last
// size processed deliveries (forgetting the oldest first) and the claims in
// progress. Its memory use is about 100 bytes per delivery. It is safe for
// concurrent use. Its fmt form shows its size and how many deliveries it
// holds, never their keys.
type MemoryStore struct {
	// The state is behind a pointer so that copies of a MemoryStore share
	// it, and so that fmt, which does not follow nested pointers, never
	// reads the maps without the lock.
	st *memoryState
}

type memoryState struct {
	mu   sync.Mutex
	size int
	done map[[32]byte]struct{}
	ring [][32]byte // processed keys in the order they were completed
	next int        // index in ring of the oldest key, once ring is full
	busy map[[32]byte]time.Time
	now  func() time.Time // for tests
}

// NewMemoryStore returns a store that remembers the last size processed
// deliveries; size <= 0 means 100,000.
func NewMemoryStore(size int) *MemoryStore {
	if size <= 0 {
		size = defaultStoreSize
	}
	return &MemoryStore{st: &memoryState{
		size: size,
		done: make(map[[32]byte]struct{}),
		busy: make(map[[32]byte]time.Time),
		now:  time.Now,
	}}
}

// Claim implements [Store].
func (s *MemoryStore) Claim(_ context.Context, key string) (ClaimResult, error) {
	st, k := s.lock(key)
	defer st.mu.Unlock()
	if _, ok := st.done[k]; ok {
		return ClaimDone, nil
	}
	now := st.now()
	if since, ok := st.busy[k]; ok && now.Sub(since) < defaultLease {
		return ClaimBusy, nil
	}
	st.busy[k] = now
	return ClaimNew, nil
}

// Complete implements [Store].
func (s *MemoryStore) Complete(_ context.Context, key string) error {
	s.endClaim(key, true)
	return nil
}

// Release implements [Store].
func (s *MemoryStore) Release(_ context.Context, key string) error {
	s.endClaim(key, false)
	return nil
}

// endClaim ends the claim of key; if processed, the store remembers key as
// processed, forgetting the oldest processed key once it is full.
func (s *MemoryStore) endClaim(key string, processed bool) {
	st, k := s.lock(key)
	defer st.mu.Unlock()
	delete(st.busy, k)
	if _, ok := st.done[k]; ok || !processed {
		return
	}
	if len(st.ring) < st.size {
		st.ring = append(st.ring, k)
	} else {
		delete(st.done, st.ring[st.next])
		st.ring[st.next] = k
		st.next = (st.next + 1) % st.size
	}
	st.done[k] = struct{}{}
}

// lock locks the store's state and returns it with the digest of key, the
// form in which the state holds keys; the caller unlocks it.
func (s *MemoryStore) lock(key string) (*memoryState, [32]byte) {
	k := sha256.Sum256([]byte(key))
	s.st.mu.Lock()
	return s.st, k
}

// Format implements fmt.Formatter: every verb prints the store's size and
// how many processed deliveries and claims in progress it holds, read under
// its lock, never the keys. It has a value receiver so that a copy of a
// store prints the same.
func (s MemoryStore) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "callback.MemoryStore")
	}
	if s.st == nil {
		fmt.Fprint(f, "{}")
		return
	}
	s.st.mu.Lock()
	size, done, busy := s.st.size, len(s.st.done), len(s.st.busy)
	s.st.mu.Unlock()
	fmt.Fprintf(f, "{Size:%d Done:%d Busy:%d}", size, done, busy)
}
