package callback

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
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
// redelivery window. The packages callback/redisstore and callback/pgstore
// are such stores, for a fleet of servers that share Redis or PostgreSQL;
// a store of your own should also be a [FencedStore]. An error from Claim
// answers 500; errors from Complete and Release are logged. Complete and
// Release get a context that is not cancelled when the sender hangs up, so
// that no claim is left behind: a store that does I/O must bound their
// time itself (as the stores of this module do).
type Store interface {
	Claim(ctx context.Context, key string) (ClaimResult, error)
	Complete(ctx context.Context, key string) error
	Release(ctx context.Context, key string) error
}

// FencedStore is a [Store] whose claims carry a fencing token, so that a
// holder whose lease lapsed, and whose delivery was claimed again by
// another holder, cannot complete or release the new holder's claim. The
// [Handler] uses these methods when its store has them, and Store's
// otherwise. [MemoryStore] and the shared stores in the packages
// callback/redisstore and callback/pgstore are FencedStores.
//
// ClaimFenced is Claim that also returns, with ClaimNew, the claim's
// token. CompleteFenced and ReleaseFenced are Complete and Release of the
// claim with that token only, checked and done in one atomic step; when
// the claim is no longer the token's (its lease lapsed, and it was claimed
// again or, in some stores, forgotten), they change nothing and return
// [ErrClaimLost]. A wrapper around a FencedStore (to count or time its
// calls, say) must be a FencedStore too, or the handler ends claims
// without their tokens.
type FencedStore interface {
	Store
	ClaimFenced(ctx context.Context, key string) (ClaimResult, string, error)
	CompleteFenced(ctx context.Context, key, token string) error
	ReleaseFenced(ctx context.Context, key, token string) error
}

// ErrClaimLost is returned by [FencedStore.CompleteFenced] and
// [FencedStore.ReleaseFenced] when the claim is no longer the caller's: its
// lease lapsed before the function returned, so another delivery may have
// called the function too. A lease longer than any call of the function
// avoids it.
var ErrClaimLost = errors.New("callback: the claim's lease lapsed and the claim is no longer held")

// fenced returns s as a FencedStore: itself if it is one, else s with
// tokens that are ignored.
func fenced(s Store) FencedStore {
	if f, ok := s.(FencedStore); ok {
		return f
	}
	return unfenced{s}
}

// unfenced is a Store without tokens seen as a FencedStore.
type unfenced struct{ Store }

func (u unfenced) ClaimFenced(ctx context.Context, key string) (ClaimResult, string, error) {
	c, err := u.Claim(ctx, key)
	return c, "", err
}

func (u unfenced) CompleteFenced(ctx context.Context, key, _ string) error {
	return u.Complete(ctx, key)
}

func (u unfenced) ReleaseFenced(ctx context.Context, key, _ string) error {
	return u.Release(ctx, key)
}

// DefaultLease is how long a [MemoryStore], and by default the shared
// stores, hold a claim that was neither completed nor released before they
// let the delivery be claimed again: longer than any call of the function
// should take, short enough that a delivery whose holder died is processed
// on a redelivery within the sender's retry schedule.
const DefaultLease = 10 * time.Minute

// DefaultRetention is how long the shared stores remember, by default, a
// delivery that was processed: 7 days, longer than any sender's
// redelivery window (the service's is not documented; Svix's schedule, a
// common one for Standard Webhooks, ends about 28 hours after the first
// attempt), so that a redelivery at the end of the window, or after a
// weekend's outage of the sender, is still recognised.
const DefaultRetention = 7 * 24 * time.Hour

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
	busy map[[32]byte]memoryClaim
	seq  uint64           // the token of the last claim
	now  func() time.Time // for tests
}

// memoryClaim is a claim in progress: when it was made, and its token.
type memoryClaim struct {
	since time.Time
	token uint64
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
		busy: make(map[[32]byte]memoryClaim),
		now:  time.Now,
	}}
}

// Claim implements [Store].
func (s *MemoryStore) Claim(ctx context.Context, key string) (ClaimResult, error) {
	c, _, err := s.ClaimFenced(ctx, key)
	return c, err
}

// ClaimFenced implements [FencedStore].
func (s *MemoryStore) ClaimFenced(_ context.Context, key string) (ClaimResult, string, error) {
	st, k := s.lock(key)
	defer st.mu.Unlock()
	if _, ok := st.done[k]; ok {
		return ClaimDone, "", nil
	}
	now := st.now()
	if c, ok := st.busy[k]; ok && now.Sub(c.since) < DefaultLease {
		return ClaimBusy, "", nil
	}
	st.seq++
	st.busy[k] = memoryClaim{since: now, token: st.seq}
	return ClaimNew, strconv.FormatUint(st.seq, 10), nil
}

// Complete implements [Store]: it ends the claim of key in progress, if
// any, whoever holds it, and remembers key as processed.
func (s *MemoryStore) Complete(_ context.Context, key string) error {
	s.endClaim(key, nil, true)
	return nil
}

// Release implements [Store]: it ends the claim of key in progress, if
// any, whoever holds it.
func (s *MemoryStore) Release(_ context.Context, key string) error {
	s.endClaim(key, nil, false)
	return nil
}

// CompleteFenced implements [FencedStore].
func (s *MemoryStore) CompleteFenced(_ context.Context, key, token string) error {
	if !s.endClaim(key, &token, true) {
		return ErrClaimLost
	}
	return nil
}

// ReleaseFenced implements [FencedStore].
func (s *MemoryStore) ReleaseFenced(_ context.Context, key, token string) error {
	if !s.endClaim(key, &token, false) {
		return ErrClaimLost
	}
	return nil
}

// endClaim ends the claim of key, whoever holds it if token is nil, else
// only the claim with that token; if processed, the store remembers key as
// processed, forgetting the oldest processed key once it is full. It
// reports false, changing nothing, when the claim is not token's.
func (s *MemoryStore) endClaim(key string, token *string, processed bool) bool {
	st, k := s.lock(key)
	defer st.mu.Unlock()
	if token != nil {
		c, ok := st.busy[k]
		if !ok || strconv.FormatUint(c.token, 10) != *token {
			return false
		}
	}
	delete(st.busy, k)
	if _, ok := st.done[k]; ok || !processed {
		return true
	}
	if len(st.ring) < st.size {
		st.ring = append(st.ring, k)
	} else {
		delete(st.done, st.ring[st.next])
		st.ring[st.next] = k
		st.next = (st.next + 1) % st.size
	}
	st.done[k] = struct{}{}
	return true
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
