package storetest_test

import (
	"context"
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

// refBackend is what the reference stores of one test share, as replicas
// share a server.
type refBackend struct {
	mu   sync.Mutex
	rows map[string]refRow
	seq  int
}

type refRow struct {
	token   string
	done    bool
	expires time.Time
}

// refStore is one replica's store on a refBackend.
type refStore struct {
	b   *refBackend
	cfg storetest.Config
}

func (s *refStore) ClaimFenced(ctx context.Context, key string) (callback.ClaimResult, string, error) {
	if err := ctx.Err(); err != nil {
		return 0, "", err
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	now := time.Now()
	if row, ok := s.b.rows[key]; ok && now.Before(row.expires) {
		if row.done {
			return callback.ClaimDone, "", nil
		}
		return callback.ClaimBusy, "", nil
	}
	s.b.seq++
	token := strconv.Itoa(s.b.seq)
	s.b.rows[key] = refRow{token: token, expires: now.Add(s.cfg.Lease)}
	return callback.ClaimNew, token, nil
}

// end ends key's claim with token (any claim when token is nil): it marks
// key processed or forgets it, and reports whether the claim was token's.
func (s *refStore) end(key string, token *string, processed bool) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	row, ok := s.b.rows[key]
	if token != nil && (!ok || row.done || row.token != *token) {
		return callback.ErrClaimLost
	}
	switch {
	case processed:
		s.b.rows[key] = refRow{token: row.token, done: true, expires: time.Now().Add(s.cfg.Retention)}
	case !row.done:
		delete(s.b.rows, key)
	}
	return nil
}

func (s *refStore) Claim(ctx context.Context, key string) (callback.ClaimResult, error) {
	r, _, err := s.ClaimFenced(ctx, key)
	return r, err
}

func (s *refStore) Complete(_ context.Context, key string) error { return s.end(key, nil, true) }
func (s *refStore) Release(_ context.Context, key string) error  { return s.end(key, nil, false) }

func (s *refStore) CompleteFenced(_ context.Context, key, token string) error {
	return s.end(key, &token, true)
}

func (s *refStore) ReleaseFenced(_ context.Context, key, token string) error {
	return s.end(key, &token, false)
}
