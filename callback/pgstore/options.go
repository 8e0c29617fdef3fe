package pgstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/vaspkit/travelrule/callback"
)

// DefaultTable is the table a [Store] keeps its deliveries in unless set
// with [WithTable].
const DefaultTable = "travelrule_callback_deliveries"

// DefaultTimeout bounds each call of a [Store] unless set with
// [WithTimeout].
const DefaultTimeout = 5 * time.Second

// DefaultSweepInterval is how often, at most, a [Store] deletes expired
// rows on its own unless set with [WithSweepInterval].
const DefaultSweepInterval = time.Minute

// Option configures a [Store]; [New] reports an invalid one.
type Option func(*config)

// config is what the options set.
type config struct {
	table         string
	lease         time.Duration
	retention     time.Duration
	timeout       time.Duration
	sweepInterval time.Duration
	noCreate      bool // WithoutCreatingTables
}

// defaults is the configuration before any option.
func defaults() config {
	return config{
		table:         DefaultTable,
		lease:         callback.DefaultLease,
		retention:     callback.DefaultRetention,
		timeout:       DefaultTimeout,
		sweepInterval: DefaultSweepInterval,
	}
}

// WithTable sets the table that holds the deliveries (default
// "travelrule_callback_deliveries"), either a table name or
// "schema.table" for a schema that exists. Each part is quoted, so it is
// taken as written, case included, and may hold any character but a dot
// and NUL; [New] refuses an empty part or one over 63 bytes (PostgreSQL's
// limit on names). A name without a schema is looked up once, by [New],
// through the search_path of the session it runs on, and the store names
// that schema in every statement. Give every replica of a service the
// same table.
func WithTable(name string) Option {
	return func(c *config) { c.table = name }
}

// WithLease sets how long a claim holds before it lapses and the delivery
// can be claimed again (default [callback.DefaultLease], 10 minutes). It
// must be at least a millisecond, and should be longer than any call of
// the function: a holder that outlives its lease gets
// [callback.ErrClaimLost], and another delivery may call the function too.
func WithLease(d time.Duration) Option {
	return func(c *config) { c.lease = d }
}

// WithRetention sets how long a processed delivery is remembered (default
// [callback.DefaultRetention], 7 days), at least a millisecond. The default
// is longer than any sender's redelivery window (the common Standard
// Webhooks schedule ends about 28 hours after the first attempt), so that
// a redelivery at the end of the window, or after a weekend's outage of
// the sender, is still answered without calling the function again.
func WithRetention(d time.Duration) Option {
	return func(c *config) { c.retention = d }
}

// WithTimeout bounds every call of the store, including the time to get a
// connection from the pool (default 5 seconds); it must be positive. The
// handler calls Complete and Release with a context that is never
// cancelled, so that a sender hanging up leaves no claim behind: this
// timeout is what bounds them. [New] is bounded by it too, and
// [Store.Sweep] per batch.
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// WithSweepInterval sets how often, at most, the store deletes expired
// rows on its own (default 1 minute): a claim starts a sweep in the
// background, at most one at a time per Store, when the interval has
// passed since the last one. 0 turns the automatic sweep off, for those
// who prefer to call [Store.Sweep] from a scheduled job; a negative
// interval is an error. Expired rows are claimable whether or not they
// were swept: the sweep only keeps the table small.
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) { c.sweepInterval = d }
}

// check reports the first invalid setting of c.
// WithoutCreatingTables makes [New] and [NewJournal] fail when their
// tables are absent, instead of creating them: for a reader of a store
// that services write (the command travelrule transfers, say), where an
// absent table means a mistyped name, and for a deployment whose schema
// is made by its own migrations.
func WithoutCreatingTables() Option {
	return func(c *config) { c.noCreate = true }
}

// ErrTableAbsent is what [New] and [NewJournal] fail with (wrapped) when
// a table is absent and [WithoutCreatingTables] is set.
var ErrTableAbsent = errors.New("absent, and WithoutCreatingTables is set")

func (c config) check() error {
	switch {
	case c.lease < time.Millisecond:
		return fmt.Errorf("pgstore: WithLease: the lease must be at least 1ms, not %v", c.lease)
	case c.retention < time.Millisecond:
		return fmt.Errorf("pgstore: WithRetention: the retention must be at least 1ms, not %v", c.retention)
	case c.timeout <= 0:
		return fmt.Errorf("pgstore: WithTimeout: the timeout must be positive, not %v", c.timeout)
	case c.sweepInterval < 0:
		return fmt.Errorf("pgstore: WithSweepInterval: the interval must be 0 (no automatic sweep) or positive, not %v", c.sweepInterval)
	}
	return nil
}
