package redisstore

import (
	"errors"
	"time"
)

// DefaultPrefix is the prefix of the store's Redis keys unless
// [WithPrefix] sets another.
const DefaultPrefix = "travelrule:callback:"

// DefaultTimeout bounds each call of the store unless [WithTimeout] sets
// another bound.
const DefaultTimeout = 5 * time.Second

// An Option configures a [Store] or a [JournalStore].
type Option func(*config)

type config struct {
	prefix    string
	lease     time.Duration
	retention time.Duration
	timeout   time.Duration
	mayForget bool // WithoutPersistence
	err       error
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// WithPrefix sets the prefix of the store's Redis keys (default
// [DefaultPrefix]), so that several services, or a test and production,
// share one Redis without sharing deliveries. The stores of one service's
// replicas must have the same prefix. In a cluster every key of a [Store]
// is a delivery's own: no hash tag is needed; a [JournalStore]'s keys must
// share one slot, so its prefix needs a hash tag (see [NewJournal]).
func WithPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithLease sets how long a claim holds before it lapses (default
// callback.DefaultLease), as the expiry of the claim's key: longer than
// any call of the handler's function should take, since a delivery whose
// claim lapsed may be processed again by a redelivery. Redis keeps time to
// the millisecond; a lease must be at least one.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		if d < time.Millisecond {
			c.fail(errors.New("redisstore: WithLease: the lease must be at least 1ms"))
		}
		c.lease = d
	}
}

// WithRetention sets how long a processed delivery is remembered (default
// callback.DefaultRetention, 7 days: longer than any sender's redelivery
// window), as the expiry of its key. Redis keeps the deliveries of one
// retention: about 240 bytes each with the default prefix (measured with
// Redis 7), so a million deliveries a week take about 240 MB.
func WithRetention(d time.Duration) Option {
	return func(c *config) {
		if d < time.Millisecond {
			c.fail(errors.New("redisstore: WithRetention: the retention must be at least 1ms"))
		}
		c.retention = d
	}
}

// WithTimeout bounds the time of each call of the store (default
// [DefaultTimeout]), including the client's own retries, on top of the
// caller's context: the handler completes and releases claims with a
// context that is never cancelled. Set the client's ContextTimeoutEnabled
// option: without it, go-redis ignores the context's deadline while it
// waits on the server, and a call on a Redis that stopped answering lasts
// until the client's own time-outs end it (DialTimeout and ReadTimeout:
// about 5 seconds with go-redis's defaults, measured), whatever the
// request's deadline or this timeout.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.fail(errors.New("redisstore: WithTimeout: the timeout must be positive"))
		}
		c.timeout = d
	}
}

// WithoutPersistence accepts a Redis that keeps neither an append-only
// file (appendonly no) nor snapshots (an empty save), which [New] and
// [NewJournal] otherwise refuse, as they refuse an evicting
// maxmemory-policy: for a deployment that knowingly accepts losing the
// store. Such a Redis forgets every key when it restarts: the processed
// deliveries, whose redeliveries then call the function again, or the
// journal's entries, whose references can then be sent again.
func WithoutPersistence() Option {
	return func(c *config) { c.mayForget = true }
}
