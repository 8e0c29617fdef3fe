package storetest_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/storetest"
)

// TestRun runs the suite on a reference store: the contract in a map, with
// the lease and retention the suite asks for. The stores of this module
// run it against real servers in their own packages.
func TestRun(t *testing.T) {
	backend := &refBackend{rows: map[string]refRow{}}
	storetest.Run(t, func(_ *testing.T, cfg storetest.Config) callback.FencedStore {
		return &refStore{backend, cfg}
	})
}

// TestCompletionFaults runs the fault suite with in-process faults, on the
// reference store and on a MemoryStore: writes that fail at once, and
// writes that hang for the store's time-out and then fail, until healed.
// The stores of this module run it with faults of real servers.
func TestCompletionFaults(t *testing.T) {
	sw := &faultSwitch{}
	faults := []storetest.Fault{
		{Name: "WritesFail", Inject: func(*testing.T) { sw.set(faultFail) }, Heal: func(*testing.T) { sw.set(faultNone) }},
		{Name: "WritesHang", Inject: func(*testing.T) { sw.set(faultHang) }, Heal: func(*testing.T) { sw.set(faultNone) }},
	}
	t.Run("Reference", func(t *testing.T) {
		backend := &refBackend{rows: map[string]refRow{}}
		storetest.TestCompletionFaults(t, func(_ *testing.T, cfg storetest.Config) callback.FencedStore {
			return &faultyStore{&refStore{backend, cfg}, sw, cfg.Timeout}
		}, faults...)
	})
	t.Run("MemoryStore", func(t *testing.T) {
		shared := callback.NewMemoryStore(0)
		storetest.TestCompletionFaults(t, func(_ *testing.T, cfg storetest.Config) callback.FencedStore {
			return &faultyStore{shared, sw, cfg.Timeout}
		}, faults...)
	})
}

// The kinds of in-process fault.
const (
	faultNone = iota
	faultFail // writes fail at once
	faultHang // writes hang for the store's time-out, then fail
)

// faultSwitch is the fault of the stores over it: one of the faults above.
type faultSwitch struct {
	mu    sync.Mutex
	fault int
	heal  chan struct{} // closed when a fault is healed; ends hung writes early
}

func (f *faultSwitch) set(fault int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fault != faultNone && fault == faultNone {
		close(f.heal)
	}
	if f.fault == faultNone && fault != faultNone {
		f.heal = make(chan struct{})
	}
	f.fault = fault
}

// errFault is the error of a write during a fault.
var errFault = errors.New("storetest_test: the store's server is failing")

// write fails, as the fault says, a write of a store whose time-out is
// timeout: at once, or when the time-out passes. A write that hangs fails
// even if the fault is healed meanwhile, as one sent to a paused server
// does once its time-out passes.
func (f *faultSwitch) write(ctx context.Context, timeout time.Duration) error {
	f.mu.Lock()
	fault := f.fault
	f.mu.Unlock()
	switch fault {
	case faultFail:
		return errFault
	case faultHang:
		if timeout <= 0 {
			timeout = time.Second
		}
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return errFault
	}
	return nil
}

// faultyStore is a store whose writes fail while its switch says so, as a
// store's do when its server fails over or is paused. Every call of a
// FencedStore writes (a claim too).
type faultyStore struct {
	callback.FencedStore
	sw      *faultSwitch
	timeout time.Duration
}

// Lease reports the lease of the store under the fault, if it says.
func (s *faultyStore) Lease() time.Duration {
	if l, ok := s.FencedStore.(interface{ Lease() time.Duration }); ok {
		return l.Lease()
	}
	return 0
}

func (s *faultyStore) Claim(ctx context.Context, key string) (callback.ClaimResult, error) {
	if err := s.sw.write(ctx, s.timeout); err != nil {
		return 0, err
	}
	return s.FencedStore.Claim(ctx, key)
}

func (s *faultyStore) Complete(ctx context.Context, key string) error {
	if err := s.sw.write(ctx, s.timeout); err != nil {
		return err
	}
	return s.FencedStore.Complete(ctx, key)
}

func (s *faultyStore) Release(ctx context.Context, key string) error {
	if err := s.sw.write(ctx, s.timeout); err != nil {
		return err
	}
	return s.FencedStore.Release(ctx, key)
}

func (s *faultyStore) ClaimFenced(ctx context.Context, key string) (callback.ClaimResult, string, error) {
	if err := s.sw.write(ctx, s.timeout); err != nil {
		return 0, "", err
	}
	return s.FencedStore.ClaimFenced(ctx, key)
}

func (s *faultyStore) CompleteFenced(ctx context.Context, key, token string) error {
	if err := s.sw.write(ctx, s.timeout); err != nil {
		return err
	}
	return s.FencedStore.CompleteFenced(ctx, key, token)
}

func (s *faultyStore) ReleaseFenced(ctx context.Context, key, token string) error {
	if err := s.sw.write(ctx, s.timeout); err != nil {
		return err
	}
	return s.FencedStore.ReleaseFenced(ctx, key, token)
}

// refBackend is what the reference stores of one test share, as replicas
// share a server.
type refBackend struct {
	mu   sync.Mutex
	rows map[string]refRow
	seq  int
}

// refRow is a claim (done false) or a processed delivery (done true), with
// the token of the claim that made it, until it expires.
type refRow struct {
	token   string
	done    bool
	expires time.Time
}

// refStore is one replica's store on a refBackend. Like a Redis key, a
// row that expired is gone.
type refStore struct {
	b   *refBackend
	cfg storetest.Config
}

// Lease reports the lease the store was opened with, as the shared stores
// do, so that the handler bounds its retries by it.
func (s *refStore) Lease() time.Duration { return s.cfg.Lease }

func (s *refStore) ClaimFenced(ctx context.Context, key string) (callback.ClaimResult, string, error) {
	if err := ctx.Err(); err != nil {
		return 0, "", err
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if row, ok := s.b.row(key); ok {
		if row.done {
			return callback.ClaimDone, "", nil
		}
		return callback.ClaimBusy, "", nil
	}
	s.b.seq++
	token := strconv.Itoa(s.b.seq)
	s.b.rows[key] = refRow{token: token, expires: time.Now().Add(s.cfg.Lease)}
	return callback.ClaimNew, token, nil
}

// row returns key's row unless it expired; the caller holds b.mu.
func (b *refBackend) row(key string) (refRow, bool) {
	row, ok := b.rows[key]
	if ok && !time.Now().Before(row.expires) {
		delete(b.rows, key)
		return refRow{}, false
	}
	return row, ok
}

func (s *refStore) Claim(ctx context.Context, key string) (callback.ClaimResult, error) {
	r, _, err := s.ClaimFenced(ctx, key)
	return r, err
}

func (s *refStore) Complete(_ context.Context, key string) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if row, ok := s.b.row(key); !ok || !row.done {
		s.b.rows[key] = refRow{token: row.token, done: true, expires: time.Now().Add(s.cfg.Retention)}
	}
	return nil
}

func (s *refStore) Release(_ context.Context, key string) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if row, ok := s.b.row(key); ok && !row.done {
		delete(s.b.rows, key)
	}
	return nil
}

// CompleteFenced is the contract of FencedStore.CompleteFenced: the
// token's claim, or no claim, records the delivery; a delivery processed
// under the token stays so; another token's claim or delivery is lost.
func (s *refStore) CompleteFenced(_ context.Context, key, token string) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	row, ok := s.b.row(key)
	switch {
	case ok && row.token != token:
		return callback.ErrClaimLost
	case ok && row.done:
		return nil
	}
	s.b.rows[key] = refRow{token: token, done: true, expires: time.Now().Add(s.cfg.Retention)}
	return nil
}

func (s *refStore) ReleaseFenced(_ context.Context, key, token string) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	row, ok := s.b.row(key)
	if !ok || row.done || row.token != token {
		return callback.ErrClaimLost
	}
	delete(s.b.rows, key)
	return nil
}

// TestRoundTrips runs the check of the calls per delivery on the
// reference store and on a MemoryStore, which make no round trips.
func TestRoundTrips(t *testing.T) {
	t.Run("Reference", func(t *testing.T) {
		backend := &refBackend{rows: map[string]refRow{}}
		storetest.TestRoundTrips(t, func(_ *testing.T, cfg storetest.Config) callback.FencedStore {
			return &refStore{backend, cfg}
		}, nil)
	})
	t.Run("MemoryStore", func(t *testing.T) {
		storetest.TestRoundTrips(t, func(*testing.T, storetest.Config) callback.FencedStore {
			return callback.NewMemoryStore(0)
		}, nil)
	})
}
