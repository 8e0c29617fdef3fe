package pgstore

import (
	"context"
	"fmt"
	"time"
)

// Sweep deletes the rows that expired (claims whose lease lapsed, and
// deliveries processed longer ago than the retention) in batches of 1000,
// each bounded by the timeout, until a batch deletes fewer or ctx ends,
// and returns how many rows it deleted. Expired rows are claimable whether
// or not they were swept; sweeping only keeps the table and its index
// small. A store sweeps on its own (see [WithSweepInterval]); with
// WithSweepInterval(0), call Sweep from a scheduled job instead. Sweeps of
// several replicas at once skip each other's rows.
func (s *Store) Sweep(ctx context.Context) (int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("pgstore: sweep: %w", err)
		}
		n, err := s.sweepOnce(ctx)
		total += n
		if err != nil {
			return total, fmt.Errorf("pgstore: sweep: %w", err)
		}
		if n < sweepBatch {
			return total, nil
		}
	}
}

// sweepOnce deletes one batch of expired rows, bounded by the timeout.
func (s *Store) sweepOnce(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.sql.sweep, sweepBatch)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// maybeSweep starts a sweep in the background when the automatic sweep is
// on, none runs, and the interval has passed since the last one began (or
// none has run yet). Its errors are dropped: the next sweep tries again,
// and expired rows are claimable meanwhile.
func (s *Store) maybeSweep() { s.st.maybeSweep(s.cfg.sweepInterval, s.Sweep) }

// maybeSweep runs sweep in the background when interval is positive, no
// sweep of this state runs, and interval has passed since the last one
// began (or none has run yet). Its errors are dropped: the next sweep
// tries again.
func (st *state) maybeSweep(interval time.Duration, sweep func(context.Context) (int64, error)) {
	if interval <= 0 {
		return
	}
	now := int64(time.Since(st.born))
	last := st.lastSweep.Load()
	if last != 0 && now-last < int64(interval) {
		return
	}
	if !st.sweeping.CompareAndSwap(false, true) {
		return
	}
	// A sweep may have begun and ended since the first look.
	if l := st.lastSweep.Load(); l != last {
		st.sweeping.Store(false)
		return
	}
	st.lastSweep.Store(max(now, 1))
	go func() {
		defer st.sweeping.Store(false)
		_, _ = sweep(context.Background())
	}()
}
