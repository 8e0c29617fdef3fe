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
// A delivery costs the store one call to claim it and, if the claim is
// new, one to complete or release it (a failed completion is tried again);
// the handler calls nothing else. A store on a server should make each
// call one round trip, and nothing more on the path: no lookup before the
// write, no separate renewal of the lease, no ping. The shared stores of
// this module do, once their connections are open; callback/storetest's
// TestRoundTrips checks a store for both.
//
// A claim whose holder dies never sees Complete or Release: a shared store
// should let claims lapse after a lease longer than any function call, and
// may forget processed keys after a retention longer than the sender's
// redelivery window. The packages callback/redisstore and callback/pgstore
// are such stores, for a fleet of servers that share Redis or PostgreSQL;
// a store of your own should also be a [FencedStore]. A store whose lease
// is not [DefaultLease] should say so with a method
//
//	Lease() time.Duration
//
// which the handler reads once, in [NewHandler], to bound how long it
// retries a completion (see [Handler]); a wrapper around a store should
// pass it on.
//
// An error from Claim answers 500. A failed Complete is tried again, with
// a growing pause between attempts, until it succeeds or the handler gives
// up one lease after the function returned; so Complete must succeed when
// repeated (a completion that was done but whose answer was lost is done).
// An error from Release is logged. Complete and Release get a context that
// is not cancelled when the sender hangs up, so that no claim is left
// behind, but that ends one lease after the function returned (Complete's
// when the handler gives up, its first attempt's too). A store that does I/O
// must still bound the time of each call itself (as the stores of this
// module do), so that a hung server costs an attempt, not the handler's
// whole retry.
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
// callback/redisstore and callback/pgstore are FencedStores, and
// callback/storetest checks the contract below.
//
// ClaimFenced is Claim that also returns, with ClaimNew, the claim's
// token. CompleteFenced and ReleaseFenced end the claim with that token
// only, checked and done in one atomic step.
//
// CompleteFenced records key as processed, under token (a store must keep
// the token with the processed mark), and returns nil when
//   - the claim with token still holds key, its lease lapsed or not;
//   - no claim holds key and key is not processed: token's lease lapsed
//     and the store forgot the claim (an expired Redis key, a swept row),
//     or a later claim was released; the function ran, so the delivery is
//     processed;
//   - key is already processed under token: a repeated completion of
//     one's own claim (one that was done but whose answer was lost, say)
//     is a success.
//
// It changes nothing and returns [ErrClaimLost] when another token's claim
// holds key, or key was processed under another token. So a completion
// never ends or overwrites another holder's claim, and a holder may repeat
// its completion until it gets an answer. (A completion after the same
// token's ReleaseFenced, with nobody holding key, may record key: the
// handler never completes a claim it released.)
//
// ReleaseFenced forgets the claim with token, so that key can be claimed
// again, and returns nil when that claim still holds key (its lease lapsed
// or not, while the store still has it); otherwise (another token's claim
// holds key, no claim does, or key is processed) it changes nothing and
// returns ErrClaimLost.
//
// A wrapper around a FencedStore (to count or time its calls, say) must be
// a FencedStore too, or the handler ends claims without their tokens.
type FencedStore interface {
	Store
	ClaimFenced(ctx context.Context, key string) (ClaimResult, string, error)
	CompleteFenced(ctx context.Context, key, token string) error
	ReleaseFenced(ctx context.Context, key, token string) error
}

// ErrClaimLost is returned by [FencedStore.CompleteFenced] and
// [FencedStore.ReleaseFenced] when the claim is no longer the caller's: its
// lease lapsed before it was ended, and another holder claimed the
// delivery (or processed it), so another delivery may have called the
// function too. A lease longer than any call of the function, and than any
// outage of the store while a completion waits, avoids it.
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
// holds, never their keys. Its lease is [DefaultLease].
type MemoryStore struct {
	// The state is behind a pointer so that copies of a MemoryStore share
	// it, and so that fmt, which does not follow nested pointers, never
	// reads the maps without the lock.
	st *memoryState
}

type memoryState struct {
	mu   sync.Mutex
	size int
	done map[[32]byte]uint64 // processed keys, with the token of the claim that completed them (0: none)
	ring [][32]byte          // processed keys in the order they were completed
	next int                 // index in ring of the oldest key, once ring is full
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
		done: make(map[[32]byte]uint64),
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
	st, k := s.lock(key)
	defer st.mu.Unlock()
	c := st.busy[k] // the zero claim, of token 0, when there is none
	delete(st.busy, k)
	if _, ok := st.done[k]; !ok {
		st.remember(k, c.token)
	}
	return nil
}

// Release implements [Store]: it ends the claim of key in progress, if
// any, whoever holds it.
func (s *MemoryStore) Release(_ context.Context, key string) error {
	st, k := s.lock(key)
	defer st.mu.Unlock()
	delete(st.busy, k)
	return nil
}

// CompleteFenced implements [FencedStore]. A claim the store still holds
// keeps key, once its lease lapsed, until the delivery is claimed again:
// until then the lapsed claim's token completes it.
func (s *MemoryStore) CompleteFenced(_ context.Context, key, token string) error {
	st, k := s.lock(key)
	defer st.mu.Unlock()
	tok, ok := st.token(token)
	if !ok {
		return ErrClaimLost
	}
	if by, ok := st.done[k]; ok {
		if by != tok {
			return ErrClaimLost
		}
		return nil
	}
	if c, ok := st.busy[k]; ok {
		if c.token != tok {
			return ErrClaimLost
		}
		delete(st.busy, k)
	}
	st.remember(k, tok)
	return nil
}

// ReleaseFenced implements [FencedStore].
func (s *MemoryStore) ReleaseFenced(_ context.Context, key, token string) error {
	st, k := s.lock(key)
	defer st.mu.Unlock()
	tok, ok := st.token(token)
	if c, held := st.busy[k]; !ok || !held || c.token != tok {
		return ErrClaimLost
	}
	delete(st.busy, k)
	return nil
}

// token parses a token of this store: ok is false for a string that is not
// one the store gave, which holds no claim.
func (st *memoryState) token(s string) (tok uint64, ok bool) {
	tok, err := strconv.ParseUint(s, 10, 64)
	return tok, err == nil && tok > 0 && tok <= st.seq
}

// remember records k as processed under token, forgetting the oldest
// processed key once the store is full. k must not be processed already.
func (st *memoryState) remember(k [32]byte, token uint64) {
	if len(st.ring) < st.size {
		st.ring = append(st.ring, k)
	} else {
		delete(st.done, st.ring[st.next])
		st.ring[st.next] = k
		st.next = (st.next + 1) % st.size
	}
	st.done[k] = token
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
