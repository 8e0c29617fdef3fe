//go:build unix

package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// faultRig is a Redis primary with a replica, and a proxy in front of the
// primary through which the stores under test reach it: the real faults
// that make a completion fail for a while, and heal, without losing a
// write.
type faultRig struct {
	pair  *pair
	proxy *proxy
	probe *redis.Client // writes through the proxy, as the stores do
	n     atomic.Int64  // the probe's keys
	// Hold is how long each fault lasts at least, from the start of its
	// Inject to the end of its Heal: longer than the stores' timeout.
	Hold     time.Duration
	injected time.Time
}

// newFaultRig starts the servers and the proxy, stopped when the test
// ends.
func newFaultRig(t testing.TB) *faultRig {
	t.Helper()
	r := &faultRig{pair: startPair(t)}
	r.proxy = startProxy(t, r.pair.servers[0].Addr)
	r.probe = redis.NewClient(&redis.Options{Addr: r.proxy.Addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = r.probe.Close() })
	return r
}

// Addr is where the stores reach Redis: the proxy.
func (r *faultRig) Addr() string { return r.proxy.Addr }

// write makes one write through the proxy, as a store does, bounded by a
// fraction of a second.
func (r *faultRig) write(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
	defer cancel()
	return r.probe.Set(ctx, fmt.Sprintf("probe:%d", r.n.Add(1)), "1", time.Minute).Err()
}

// waitWrites waits until a write through the proxy fails (fail) with an
// error that check accepts, or succeeds (!fail).
func (r *faultRig) waitWrites(t testing.TB, fail bool, what string, check func(error) bool) {
	t.Helper()
	waitFor(t, what, func(ctx context.Context) bool {
		err := r.write(ctx)
		if !fail {
			return err == nil
		}
		return err != nil && check(err)
	})
}

// rigFault is one fault of a faultRig: Inject returns once writes through
// the proxy fail, Heal once they succeed again.
type rigFault struct {
	Name         string
	Inject, Heal func(t *testing.T)
}

// faults returns the rig's faults, each of which a test may inject and
// heal in turn, any number of times: each lasts at least r.Hold.
func (r *faultRig) faults() []rigFault {
	fs := r.bareFaults()
	for i := range fs {
		inject, heal := fs[i].Inject, fs[i].Heal
		fs[i].Inject = func(t *testing.T) {
			r.injected = time.Now()
			inject(t)
		}
		fs[i].Heal = func(t *testing.T) {
			if wait := r.Hold - time.Since(r.injected); wait > 0 {
				<-time.After(wait) // the fault's length, not a wait for an event
			}
			heal(t)
		}
	}
	return fs
}

// bareFaults returns the faults, each as short as it can be.
func (r *faultRig) bareFaults() []rigFault {
	ctx := context.Background()
	anyErr := func(error) bool { return true }
	return []rigFault{{
		// A loss-free failover to the replica (Redis 7's FAILOVER, as an
		// operator or a managed service's maintenance does it): the old
		// primary, still at the address the stores use, is now a replica
		// and answers writes READONLY. Heal fails back over.
		Name: "failover",
		Inject: func(t *testing.T) {
			r.pair.Failover(t)
			r.waitWrites(t, true, "writes through the proxy answered READONLY", func(err error) bool {
				return strings.HasPrefix(err.Error(), "READONLY ")
			})
		},
		Heal: func(t *testing.T) {
			r.pair.Failover(t)
			r.waitWrites(t, false, "writes through the proxy to work again", nil)
		},
	}, {
		// CLIENT PAUSE … WRITE, as a manual failover or an upgrade does:
		// the primary holds every write until UNPAUSE.
		Name: "CLIENT PAUSE WRITE",
		Inject: func(t *testing.T) {
			require.NoError(t, r.pair.admins[0].Do(ctx, "CLIENT", "PAUSE", "60000", "WRITE").Err())
			r.waitWrites(t, true, "writes through the proxy to hang", func(err error) bool {
				return errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout")
			})
		},
		Heal: func(t *testing.T) {
			require.NoError(t, r.pair.admins[0].Do(ctx, "CLIENT", "UNPAUSE").Err())
			r.waitWrites(t, false, "writes through the proxy to work again", nil)
		},
	}, {
		// The proxy in front of Redis restarts: every connection through it
		// closed, new ones refused until it is back.
		Name: "proxy restart",
		Inject: func(t *testing.T) {
			r.proxy.Stop()
			r.waitWrites(t, true, "writes through the proxy to fail", anyErr)
		},
		Heal: func(t *testing.T) {
			require.NoError(t, r.proxy.Start())
			r.waitWrites(t, false, "writes through the proxy to work again", nil)
		},
	}}
}
