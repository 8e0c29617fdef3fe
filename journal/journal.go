package journal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// Key prefixes and name prefixes in a store.
const (
	outboundPrefix = "o:" // + the ref, or the first call's id
	// An outbound transfer known only by its transfer id, so far: a
	// callback that came before its initiation's answer was recorded, or
	// a transfer not initiated through the journal. The initiation's
	// entry adopts its records once it learns the transfer id.
	unattachedPrefix = outboundPrefix + "tid."
	inboundPrefix    = "i:"   // + the transfer id
	refName          = "ref:" // + a callback reference
	transferName     = "tid:" // + a transfer id
)

// DefaultTimeout bounds each write and read of the store that the
// journal makes on its own (a call's outcome, a callback's record) unless
// [WithTimeout] sets another bound.
const DefaultTimeout = 5 * time.Second

// Journal is the write-ahead journal of a VASP's transfers. Make one with
// [New]; it is safe for concurrent use, and the journals of a fleet's
// replicas share one store. Give it to the client with
// travelrule.WithObserver and to the callback handler with
// callback.WithObserver.
type Journal struct {
	store   Store
	now     func() time.Time
	timeout time.Duration
	logger  *slog.Logger
	stats   *stats
}

type stats struct{ lost atomic.Uint64 }

// Option configures a [Journal].
type Option func(*Journal) error

// WithClock sets the journal's clock (default time.Now): the time of its
// records and of [Journal.Stuck]'s thresholds.
func WithClock(now func() time.Time) Option {
	return func(j *Journal) error {
		if now == nil {
			return errors.New("journal: WithClock: nil clock")
		}
		j.now = now
		return nil
	}
}

// WithTimeout bounds each call of the store the journal makes (default
// [DefaultTimeout]).
func WithTimeout(d time.Duration) Option {
	return func(j *Journal) error {
		if d <= 0 {
			return errors.New("journal: WithTimeout: the timeout must be positive")
		}
		j.timeout = d
		return nil
	}
}

// WithLogger sets the logger that reports records the journal could not
// write after a call ended (an outcome, an applied resolution). Nothing
// personal is logged.
func WithLogger(l *slog.Logger) Option {
	return func(j *Journal) error {
		j.logger = l
		return nil
	}
}

// New returns a journal on store.
func New(store Store, opts ...Option) (*Journal, error) {
	if store == nil {
		return nil, errors.New("journal: New: nil store")
	}
	j := &Journal{store: store, now: time.Now, timeout: DefaultTimeout, stats: &stats{}}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("journal: New: nil option")
		}
		if err := o(j); err != nil {
			return nil, err
		}
	}
	return j, nil
}

var (
	_ travelrule.Observer = (*Journal)(nil)
	_ callback.Observer   = (*Journal)(nil)
)

// callKey is the context key of the entry and call id StartCall chose.
type callKey struct{}

type callState struct {
	key, id string
	at      time.Time
}

// StartCall implements [travelrule.Observer]. Before an initiation is
// sent it records the intent (the reference, the request's digest, never
// its content), and fails the call, so that nothing is sent, when it
// cannot. Other calls are recorded when they end.
func (j *Journal) StartCall(ctx context.Context, info *travelrule.CallInfo) (context.Context, error) {
	id := newID()
	at := j.now()
	if info.Op != "InitiateTransfer" {
		return context.WithValue(ctx, callKey{}, callState{id: id, at: at}), nil
	}
	key := outboundPrefix + id
	var names []string
	if isID(info.CallbackRef) {
		key = outboundPrefix + info.CallbackRef
		names = []string{refName + info.CallbackRef}
	}
	r := record{Kind: kindSent, At: at, Call: id, Op: info.Op, Ref: idOrEmpty(info.CallbackRef),
		Digest: hex.EncodeToString(info.Digest[:]), IdempotencyKey: idOrEmpty(info.IdempotencyKey)}
	wctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	if err := j.append(wctx, key, "sent:"+id, &r, names...); err != nil {
		return ctx, fmt.Errorf("journal: recording the initiation before sending it: %w", err)
	}
	return context.WithValue(ctx, callKey{}, callState{key: key, id: id, at: at}), nil
}

// EndCall implements [travelrule.Observer]: it records what came of an
// initiation (stored, with its transfer id; not stored; outcome unknown),
// and an applied ResolveInquiry or SubmitTxID. A record it cannot write is
// logged and counted ([Journal.Lost]); an initiation whose outcome was not
// recorded stays "sent, outcome unknown", never "not stored".
func (j *Journal) EndCall(ctx context.Context, info *travelrule.CallInfo, end *travelrule.CallEnd) {
	st, ok := ctx.Value(callKey{}).(callState)
	if !ok {
		return
	}
	at := j.now()
	var key string
	var names []string
	r := record{At: at, Call: st.id, Op: info.Op, Attempts: end.Attempts}
	switch info.Op {
	case "InitiateTransfer":
		key = st.key
		r.TransferID = idOrEmpty(end.TransferID)
		switch end.Outcome {
		case travelrule.CallSucceeded:
			r.Kind = kindStored
		case travelrule.CallOutcomeUnknown:
			r.Kind = kindUnknown
		default:
			r.Kind = kindNotStored
			r.TransferID = "" // a refusal's id names no transfer of ours
		}
		if r.TransferID != "" {
			names = append(names, transferName+r.TransferID)
		}
	case "ResolveInquiry", "SubmitTxID":
		if end.Outcome != travelrule.CallSucceeded || !isID(info.TransferID) {
			return
		}
		r.Kind, r.TransferID = kindTxID, info.TransferID
		if info.Op == "ResolveInquiry" {
			if info.Decision == "" {
				return
			}
			r.Kind, r.Decision = kindResolution, info.Decision
			if isID(info.CallbackRef) {
				names = append(names, refName+info.CallbackRef)
			}
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.timeout)
		defer cancel()
		var err error
		if key, err = j.find(wctx, "", r.TransferID); err != nil {
			// Written elsewhere, the record would take the transfer id's
			// name from its entry.
			j.lose(wctx, info, key, end, err)
			return
		}
		if key == "" {
			key = inboundPrefix + r.TransferID // the inbound inquiry this VASP answered
			if info.Op == "SubmitTxID" {
				key = unattachedPrefix + r.TransferID // an initiation not recorded here
			}
			names = append(names, transferName+r.TransferID)
		}
	default:
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.timeout)
	defer cancel()
	var prev string
	var err error
	if r.TransferID != "" {
		// Callbacks that came first, under the transfer id alone, are
		// adopted once the outcome took the id's name.
		prev, err = j.find(wctx, "", r.TransferID)
	}
	if err == nil {
		err = j.append(wctx, key, "end:"+st.id, &r, names...)
	}
	if err == nil && prev != key && strings.HasPrefix(prev, unattachedPrefix) {
		err = j.adopt(wctx, key, prev)
	}
	if err != nil {
		j.lose(wctx, info, key, end, err)
	}
}

// lose counts and logs a record EndCall could not write.
func (j *Journal) lose(ctx context.Context, info *travelrule.CallInfo, key string, end *travelrule.CallEnd, err error) {
	j.stats.lost.Add(1)
	if j.logger != nil {
		j.logger.LogAttrs(ctx, slog.LevelError, "journal: could not record a call's outcome",
			slog.String("op", info.Op), slog.String("entry", key), slog.String("outcome", end.Outcome.String()),
			slog.String("error", err.Error()))
	}
}

// Delivered implements [callback.Observer]: it records a verified
// callback delivery on the entry of the transfer it names (by the
// capability URL's reference, the reference of the body's callback URL,
// or the transfer id), which moves the transfer on and turns an
// initiation whose outcome was unknown into one stored by the service. An
// inbound inquiry starts an inbound entry. A callback that names no
// transfer is not recorded. An error (the store failed) answers 500, so
// that the service delivers the callback again.
func (j *Journal) Delivered(ctx context.Context, d *callback.Delivery) error {
	cb := d.Callback
	if cb == nil {
		return nil
	}
	ref := idOrEmpty(cb.Ref)
	if ref == "" {
		ref = idOrEmpty(travelrule.CallbackRef(cb.CallbackURL))
	}
	tid := idOrEmpty(cb.TransferID)
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	key, err := j.find(ctx, ref, tid)
	if err != nil {
		return fmt.Errorf("journal: finding the transfer of a callback: %w", err)
	}
	switch {
	case key != "":
	case cb.Kind == travelrule.KindInquiry && tid != "":
		key = inboundPrefix + tid
	case ref != "":
		key = outboundPrefix + ref
	case tid != "":
		key = unattachedPrefix + tid
	default:
		return nil // names no transfer
	}
	status, decision := statusWord(cb.Status)
	r := record{Kind: kindCallback, At: j.now(), Callback: string(cb.Kind), Status: status, Decision: decision,
		TransferID: tid, Delivery: d.ID}
	var names []string
	if tid != "" {
		names = append(names, transferName+tid)
	}
	if ref != "" {
		names = append(names, refName+ref)
	}
	if err := j.append(ctx, key, "cb:"+d.ID, &r, names...); err != nil {
		return fmt.Errorf("journal: recording a callback: %w", err)
	}
	return nil
}

// adopt copies the records of the unattached entry from into key, after
// key's record took the transfer id's name: callbacks that came before
// the initiation's outcome was recorded join their transfer.
func (j *Journal) adopt(ctx context.Context, key, from string) error {
	recs, err := j.store.Records(ctx, from)
	if err != nil {
		return err
	}
	for _, b := range recs {
		sum := sha256.Sum256(b)
		if err := j.store.Append(ctx, key, "copy:"+hex.EncodeToString(sum[:16]), b); err != nil {
			return err
		}
	}
	return nil
}

// adopted reports whether key is an unattached entry that an initiation's
// entry adopted: its transfer id names another entry now.
func (j *Journal) adopted(ctx context.Context, key string) (bool, error) {
	tid, ok := strings.CutPrefix(key, unattachedPrefix)
	if !ok {
		return false, nil
	}
	k, err := j.store.Lookup(ctx, transferName+tid)
	return k != "" && k != key, err
}

// find returns the key of the entry that ref or the transfer id tid
// names, or "".
func (j *Journal) find(ctx context.Context, ref, tid string) (string, error) {
	if ref != "" {
		if k, err := j.store.Lookup(ctx, refName+ref); err != nil || k != "" {
			return k, err
		}
	}
	if tid != "" {
		return j.store.Lookup(ctx, transferName+tid)
	}
	return "", nil
}

func (j *Journal) append(ctx context.Context, key, id string, r *record, names ...string) error {
	b, err := r.encode()
	if err != nil {
		return err
	}
	return j.store.Append(ctx, key, id, b, names...)
}

// Lost is how many records the journal could not write after a call
// ended (see [Journal.EndCall]). It should stay zero.
func (j *Journal) Lost() uint64 { return j.stats.lost.Load() }

// Entry returns the transfer that id names: a reference of a capability
// callback URL, a transfer id, or an entry's key; nil when none.
func (j *Journal) Entry(ctx context.Context, id string) (*Entry, error) {
	key := id
	if !strings.HasPrefix(id, outboundPrefix) && !strings.HasPrefix(id, inboundPrefix) {
		k, err := j.find(ctx, idOrEmpty(id), idOrEmpty(id))
		if err != nil {
			return nil, err
		}
		if k == "" {
			k = inboundPrefix + id
		}
		key = k
	}
	recs, err := j.store.Records(ctx, key)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return fold(key, recs), nil
}

// Entries returns every transfer the store keeps, most recently updated
// first.
func (j *Journal) Entries(ctx context.Context) ([]*Entry, error) {
	var out []*Entry
	err := j.store.Scan(ctx, func(key string, recs [][]byte) error {
		if gone, err := j.adopted(ctx, key); gone || err != nil {
			return err
		}
		if e := fold(key, recs); !e.Started.IsZero() {
			out = append(out, e)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b *Entry) int { return b.Updated.Compare(a.Updated) })
	return out, err
}

// Stuck returns the transfers that need a person, by the rules of [Rule]
// with the thresholds th, longest waiting first. It never sends anything:
// the SDK never sends a transfer again on its own.
func (j *Journal) Stuck(ctx context.Context, th Thresholds) ([]Finding, error) {
	now := j.now()
	var out []Finding
	err := j.store.Scan(ctx, func(key string, recs [][]byte) error {
		if gone, err := j.adopted(ctx, key); gone || err != nil {
			return err
		}
		e := fold(key, recs)
		if rule, since, ok := stuck(e, now, th); ok {
			out = append(out, Finding{Rule: rule, Since: since, Entry: e})
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Finding) int { return a.Since.Compare(b.Since) })
	return out, err
}

// newID returns a random call id: 16 hex digits.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
