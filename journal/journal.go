package journal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
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
	unattachedPrefix = "u:"
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

// New returns a journal on store. A store that reports its own faults
// with an Err method, as callback/redisstore's does, is asked once, here:
// New refuses one that cannot keep entries (invalid options, a Redis that
// evicts or keeps no persistence), with its reason.
func New(store Store, opts ...Option) (*Journal, error) {
	if store == nil {
		return nil, errors.New("journal: New: nil store")
	}
	if e, ok := store.(interface{ Err() error }); ok {
		if err := e.Err(); err != nil {
			return nil, fmt.Errorf("journal: New: %w", err)
		}
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

type callState struct{ key, id string }

// ErrRefInUse is the error StartCall fails an initiation with (wrapped,
// and wrapped again by the client: errors.Is finds it) when its callback
// reference already names a transfer that the service stored or may have
// stored: sending it would be a second transfer under one reference, and
// perhaps the same transfer twice; and a resolution, when its reference
// names another transfer (a reference serves one transfer, in one
// direction). Nothing is sent. Send again under a new
// reference once a person decided to (see [RuleNoEvidence]).
var ErrRefInUse = errors.New("journal: the callback reference already names a transfer the service stored or may have stored")

// StartCall implements [travelrule.Observer]. Before an initiation is
// sent it records the intent (the reference, the request's digest, never
// its content), and fails the call, so that nothing is sent, when it
// cannot, or when the reference is in use ([ErrRefInUse]). Other calls
// are recorded when they end.
func (j *Journal) StartCall(ctx context.Context, info *travelrule.CallInfo) (context.Context, error) {
	id := newID()
	at := j.now()
	if info.Op != "InitiateTransfer" {
		return j.startOther(ctx, info, id)
	}
	wctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	key := outboundPrefix + id
	ref := idOrEmpty(info.CallbackRef)
	r := record{Kind: kindSent, At: at, Call: id, Op: info.Op, Ref: ref,
		Digest: hex.EncodeToString(info.Digest[:]), IdempotencyKey: idOrEmpty(info.IdempotencyKey)}
	st := Step{Key: key, ID: "sent:" + id}
	if ref != "" {
		// One Step takes the reference unless another transfer holds it (a
		// resolution's callback URL took it, and taking its name would file
		// that transfer's confirmation here) and reads the entry back.
		st.Key = outboundPrefix + ref
		st.Names, st.Exclusive, st.Read = []string{refName + ref}, true, true
	}
	w, err := j.write(wctx, st, &r)
	if err != nil {
		// The record may have been written and its answer lost: say that
		// this call was not sent, so that it does not stay "sent".
		j.notSent(ctx, st.Key, id, refusedFailed)
		return ctx, fmt.Errorf("journal: recording the initiation before sending it: %w", err)
	}
	// Written and read in one atomic Step: of two initiations under one
	// reference at once, the later sees the other's record (unless the
	// other was refused already), so at most one is sent.
	if w.Taken != "" || ref != "" && inUse(st.Key, id, w.Records) {
		if w.Taken == "" {
			j.notSent(ctx, st.Key, id, refusedRefInUse)
		}
		return ctx, fmt.Errorf("%w: %s", ErrRefInUse, ref)
	}
	return context.WithValue(ctx, callKey{}, callState{key: st.Key, id: id}), nil
}

// startOther starts a call other than an initiation. A resolution whose
// reference is free takes it before it is sent, so that its confirmation,
// or any callback to its URL, finds the inbound entry even before the call
// ends; one whose reference names another entry is refused.
func (j *Journal) startOther(ctx context.Context, info *travelrule.CallInfo, id string) (context.Context, error) {
	if info.Op == "ResolveInquiry" && isID(info.CallbackRef) && isID(info.TransferID) {
		wctx, cancel := context.WithTimeout(ctx, j.timeout)
		defer cancel()
		r := record{Kind: kindSent, At: j.now(), Call: id, Op: info.Op, Ref: info.CallbackRef, Digest: hex.EncodeToString(info.Digest[:])}
		st := Step{Key: inboundPrefix + info.TransferID, ID: "sent:" + id, Names: []string{refName + info.CallbackRef}, Exclusive: true}
		w, err := j.write(wctx, st, &r)
		switch {
		case err != nil:
			return ctx, fmt.Errorf("journal: recording the resolution's reference before sending it: %w", err)
		case w.Taken != "":
			return ctx, fmt.Errorf("%w: %s", ErrRefInUse, info.CallbackRef)
		}
	}
	return context.WithValue(ctx, callKey{}, callState{id: id}), nil
}

// inUse reports whether the records of the entry key, but those of the
// call id, show a transfer the service stored or may have stored.
func inUse(key, id string, raw [][]byte) bool {
	others := slices.DeleteFunc(decodeAll(raw), func(r record) bool { return r.Call == id })
	return len(others) > 0 && fold(key, others).Initiation != InitiationNotStored
}

// notSent records, best effort, that the journal did not let the call id
// be sent, and why (refusedRefInUse or refusedFailed).
func (j *Journal) notSent(ctx context.Context, key, id, why string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.timeout)
	defer cancel()
	r := record{Kind: kindNotStored, At: j.now(), Call: id, Op: "InitiateTransfer", Refused: why}
	if err := j.append(ctx, key, "end:"+id, &r); err != nil {
		j.stats.lost.Add(1)
		if j.logger != nil {
			j.logger.LogAttrs(ctx, slog.LevelError, "journal: could not record that an initiation was not sent",
				slog.String("entry", key), slog.String("error", err.Error()))
		}
	}
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
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.timeout)
	defer cancel()
	var key string
	if err := j.endCall(ctx, st, info, end, &key); err != nil {
		j.stats.lost.Add(1)
		if j.logger != nil {
			j.logger.LogAttrs(ctx, slog.LevelError, "journal: could not record a call's outcome",
				slog.String("op", info.Op), slog.String("entry", key), slog.String("outcome", end.Outcome.String()),
				slog.String("error", err.Error()))
		}
	}
}

// endCall writes EndCall's record, on the entry it names in *key.
func (j *Journal) endCall(ctx context.Context, st callState, info *travelrule.CallInfo, end *travelrule.CallEnd, key *string) error {
	r := record{At: j.now(), Call: st.id, Op: info.Op, Attempts: end.Attempts}
	switch info.Op {
	case "InitiateTransfer":
		*key = st.key
		return j.endInitiation(ctx, st, end, &r)
	case "ResolveInquiry":
		return j.endResolution(ctx, st, info, end, &r, key)
	case "SubmitTxID":
		if end.Outcome != travelrule.CallSucceeded || !isID(info.TransferID) {
			return nil
		}
		r.Kind, r.TransferID = kindTxID, info.TransferID
		k, err := j.store.Lookup(ctx, transferName+info.TransferID)
		if err != nil {
			return err
		}
		if k != "" {
			*key = k
			return j.append(ctx, *key, "end:"+st.id, &r)
		}
		*key = unattachedPrefix + info.TransferID // an initiation whose transfer id the journal does not know (yet)
		return j.appendUnattached(ctx, *key, "end:"+st.id, &r, info.TransferID)
	}
	return nil
}

// endInitiation records an initiation's outcome r in one Step, which
// also names the entry by the transfer id and peeks at the callbacks that
// came first, under the transfer id alone (see join).
func (j *Journal) endInitiation(ctx context.Context, st callState, end *travelrule.CallEnd, r *record) error {
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
	step := Step{Key: st.key, ID: "end:" + st.id}
	if r.TransferID != "" {
		step.Names, step.Peek = []string{transferName + r.TransferID}, unattachedPrefix+r.TransferID
	}
	w, err := j.write(ctx, step, r)
	if err != nil || len(w.Peeked) == 0 {
		return err
	}
	return j.join(ctx, st.key, step.Peek, w.Peeked)
}

// endResolution records a ResolveInquiry that was applied, or whose
// outcome is unknown, on the inbound entry it names in *key.
func (j *Journal) endResolution(ctx context.Context, st callState, info *travelrule.CallInfo, end *travelrule.CallEnd, r *record, key *string) error {
	if end.Outcome == travelrule.CallOutcomeUnknown && isID(info.TransferID) && isID(info.CallbackRef) {
		// The service may have applied it: its confirmation would come
		// to the resolution's callback URL, naming no transfer, so the
		// reference must name the inbound entry all the same. The
		// decision is not recorded: it may not have been applied.
		*key = inboundPrefix + info.TransferID
		r.Kind, r.TransferID = kindUnknown, info.TransferID
		return j.append(ctx, *key, "end:"+st.id, r, refName+info.CallbackRef)
	}
	if end.Outcome != travelrule.CallSucceeded || !isID(info.TransferID) || info.Decision == "" {
		return nil
	}
	*key = inboundPrefix + info.TransferID
	r.Kind, r.TransferID, r.Decision = kindResolution, info.TransferID, string(info.Decision)
	var names []string
	if isID(info.CallbackRef) {
		// The confirmation comes to the resolution's callback URL.
		names = append(names, refName+info.CallbackRef)
	}
	return j.append(ctx, *key, "end:"+st.id, r, names...)
}

// Delivered implements [callback.Observer]: it records a callback
// delivery on the entry of the transfer it names, which moves the
// transfer on and turns an initiation whose outcome was unknown into one
// stored by the service. An inquiry (KindInquiry) is filed on the inbound
// entry of its transfer id; a confirmation (KindTransferConfirmation) on
// the entry its capability URL's reference names, or the inbound entry of
// its transfer id; any other callback on the entry of the verified
// reference of its capability URL (Callback.Ref), or of its transfer id.
// Only identifiers the handler verified or the callback's fmt form shows
// (Callback.SafeTransferID) are used.
//
// A callback acts only where it can truthfully arrive (an originator
// receives the resolutions, a beneficiary the inquiry and the
// confirmation) and only when it was authenticated; any other is
// recorded, on an entry that a name already points at, as a refused
// delivery that moves nothing. An error (the store failed) answers 500,
// so that the service delivers the callback again.
func (j *Journal) Delivered(ctx context.Context, d *callback.Delivery) error {
	cb := d.Callback
	if cb == nil {
		return nil
	}
	ref, tid := idOrEmpty(cb.Ref), idOrEmpty(cb.SafeTransferID())
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	r := record{Kind: kindCallback, At: j.now(), Callback: storedKind(cb.Kind, cb.Decision()), Decision: string(cb.Decision()),
		TransferID: tid, Delivery: d.ID}
	key, named, err := j.route(ctx, cb.Kind, ref, tid)
	switch {
	case err != nil:
	case key == "":
		return nil
	case !d.Authenticated || !belongs(cb.Kind, key):
		if !named {
			return nil // an entry of its own would hold nothing true
		}
		// Its claims (a transfer id, a decision) are not kept: nothing
		// may read them as the entry's.
		r = record{Kind: kindRefused, At: r.At, Callback: string(cb.Kind), Delivery: d.ID, Refused: refusedKind}
		if !d.Authenticated {
			r.Refused = refusedUnauthenticated
		}
		err = j.append(ctx, key, "refused:"+r.Refused+":"+r.Callback, &r) // one per reason and kind: a flood adds nothing
	default:
		err = j.file(ctx, key, named, ref, tid, "cb:"+d.ID, &r)
	}
	if err != nil {
		return fmt.Errorf("journal: recording a callback: %w", err)
	}
	return nil
}

// route returns the entry a callback of kind names (see Delivered), ""
// when it names none; named reports that a name pointed at it.
func (j *Journal) route(ctx context.Context, kind travelrule.CallbackKind, ref, tid string) (key string, named bool, err error) {
	switch {
	case kind == travelrule.KindInquiry:
		if tid == "" {
			return "", false, nil
		}
		return inboundPrefix + tid, false, nil
	case ref != "":
		if key, err = j.store.Lookup(ctx, refName+ref); err != nil || key != "" {
			return key, key != "", err
		}
		if kind != travelrule.KindTransferConfirmation {
			return outboundPrefix + ref, false, nil // a transfer not initiated through this journal
		}
	}
	if tid == "" {
		return "", false, nil
	}
	if kind == travelrule.KindTransferConfirmation {
		return inboundPrefix + tid, false, nil
	}
	if key, err = j.store.Lookup(ctx, transferName+tid); err != nil || key != "" {
		return key, key != "", err
	}
	return unattachedPrefix + tid, false, nil
}

// file appends a callback's record r, named id, to the entry key it
// belongs to (see route), with the names it verifies, and joins what
// waited under its transfer id.
func (j *Journal) file(ctx context.Context, key string, named bool, ref, tid, id string, r *record) error {
	if strings.HasPrefix(key, inboundPrefix) {
		return j.append(ctx, key, id, r)
	}
	if ref == "" {
		if !named {
			return j.appendUnattached(ctx, key, id, r, tid)
		}
		return j.append(ctx, key, id, r)
	}
	var names []string
	if tid != "" {
		names = append(names, transferName+tid) // verified: the capability URL named this entry
	}
	names = append(names, refName+ref)
	step := Step{Key: key, ID: id, Names: names}
	if tid != "" {
		step.Peek = unattachedPrefix + tid
	}
	w, err := j.write(ctx, step, r)
	if err != nil || len(w.Peeked) == 0 || step.Peek == key {
		return err
	}
	return j.join(ctx, key, step.Peek, w.Peeked)
}

// Unattached entries. A callback that names its transfer only by a
// transfer id the journal does not know yet (it came before the
// initiation's outcome was recorded, or the initiation was made without
// the journal) is kept in the entry unattachedPrefix+tid, which takes no
// name. Once the transfer id names an entry, that entry gets a record
// joining the unattached one: its records are read with the entry's own,
// and Entries and Stuck no longer list it. Each side writes, then looks
// for the other (an outcome its name, a callback the name's entry), so
// that of two that race one at least sees the other.

// appendUnattached appends r to the unattached entry key of the transfer
// id tid, then joins it to the entry tid names, if one does by then.
func (j *Journal) appendUnattached(ctx context.Context, key, id string, r *record, tid string) error {
	w, err := j.write(ctx, Step{Key: key, ID: id, Read: true}, r)
	if err != nil {
		return err
	}
	owner, err := j.store.Lookup(ctx, transferName+tid)
	if err != nil || owner == "" || owner == key {
		return err
	}
	return j.join(ctx, owner, key, w.Records)
}

// join records on entry key that the unattached entry from, whose records
// are recs, belongs to it: the record carries the highest stage they
// show, so that the index of entries shows key's stage as its records do.
func (j *Journal) join(ctx context.Context, key, from string, recs [][]byte) error {
	r := record{Kind: kindJoined, At: j.now(), Joined: from}
	stage := StageNone
	for _, u := range decodeAll(recs) {
		stage = max(stage, recordStage(u, key))
	}
	_, err := j.write(ctx, Step{Key: key, ID: "join:" + from, Stage: stage}, &r)
	return err
}

// joined returns the entry that joined key, when key is an unattached
// entry that another entry joined (see join): its transfer id names that
// entry, and that entry holds the record that joins it, so that it reads
// key's records ("" otherwise). An unattached entry whose join was not
// written (a store that failed in between) stays listed on its own:
// never hidden, never lost.
func (j *Journal) joined(ctx context.Context, key string) (string, error) {
	tid, ok := strings.CutPrefix(key, unattachedPrefix)
	if !ok {
		return "", nil
	}
	owner, err := j.store.Lookup(ctx, transferName+tid)
	if err != nil || owner == "" || owner == key {
		return "", err
	}
	recs, err := j.store.Records(ctx, owner)
	if err != nil || !slices.ContainsFunc(decodeAll(recs), func(r record) bool { return r.Kind == kindJoined && r.Joined == key }) {
		return "", err
	}
	return owner, nil
}

func (j *Journal) append(ctx context.Context, key, id string, r *record, names ...string) error {
	_, err := j.write(ctx, Step{Key: key, ID: id, Names: names}, r)
	return err
}

// write makes the Step st with the record r, and what the index keeps of
// it: its time, its stage and, for a record written before a call is
// sent, its reference.
func (j *Journal) write(ctx context.Context, st Step, r *record) (Written, error) {
	b, err := r.encode()
	if err != nil {
		return Written{}, err
	}
	st.Record, st.At = b, r.At
	now := *r
	if now.Kind == kindCallback {
		now.Callback, now.Decision = upgradeCallback(now.Callback, now.Decision)
	}
	st.Stage = max(st.Stage, recordStage(now, st.Key))
	if r.Kind == kindSent {
		st.Ref = r.Ref
	}
	return j.store.Write(ctx, st)
}

// entry folds the entry key from its records and those of the unattached
// entries it joined.
func (j *Journal) entry(ctx context.Context, key string, raw [][]byte) (*Entry, error) {
	recs := decodeAll(raw)
	for _, r := range recs {
		if r.Kind == kindJoined && strings.HasPrefix(r.Joined, unattachedPrefix) {
			more, err := j.store.Records(ctx, r.Joined)
			if err != nil {
				return nil, err
			}
			recs = append(recs, decodeAll(more)...)
		}
	}
	return fold(key, recs), nil
}

// Lost is how many records the journal could not write after a call
// ended (see [Journal.EndCall]). It should stay zero.
func (j *Journal) Lost() uint64 { return j.stats.lost.Load() }

// Entry returns the transfer that id names: a reference of a capability
// callback URL, a transfer id (of an outbound transfer first, else of an
// inbound one), or an entry's key; nil when none.
func (j *Journal) Entry(ctx context.Context, id string) (*Entry, error) {
	keys := []string{id}
	if !strings.HasPrefix(id, outboundPrefix) && !strings.HasPrefix(id, inboundPrefix) && !strings.HasPrefix(id, unattachedPrefix) && isID(id) {
		keys = keys[:0]
		for _, name := range []string{refName, transferName} {
			k, err := j.store.Lookup(ctx, name+id)
			if err != nil {
				return nil, err
			}
			if k != "" {
				keys = append(keys, k)
			}
		}
		keys = append(keys, unattachedPrefix+id, inboundPrefix+id)
	}
	for _, key := range keys {
		recs, err := j.store.Records(ctx, key)
		if err != nil {
			return nil, err
		}
		if len(recs) > 0 {
			return j.entry(ctx, key, recs)
		}
	}
	return nil, nil
}

// Entries yields the transfers q selects (by its stage, the time of its
// latest record, the prefix of its reference, or only the open ones: those
// that may still need a person), most recently updated first. The store
// selects them from its index and streams them, so that memory holds one
// page of entries whatever the journal holds. After an error it stops.
func (j *Journal) Entries(ctx context.Context, q Query) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for st, err := range j.store.Entries(ctx, q) {
			if err != nil {
				yield(Entry{}, err)
				return
			}
			e, err := j.stored(ctx, st)
			if err == nil && (e == nil || !q.Selects(e.Stage, e.Updated, e.Ref) || q.Open && !open(e)) {
				continue // joined, or listed by a store's index from an earlier release
			}
			if err != nil {
				yield(Entry{}, err)
				return
			}
			if !yield(*e, nil) {
				return
			}
		}
	}
}

// Stuck returns the transfers that need a person, by the rules of [Rule]
// with the thresholds th, longest waiting first. It reads only the open
// entries of the store's index, and closes those that can need a person
// no more (see open), so that its cost follows the transfers under way,
// not the journal's size. It never sends anything: the SDK never sends a
// transfer again on its own.
func (j *Journal) Stuck(ctx context.Context, th Thresholds) ([]Finding, error) {
	now := j.now()
	var out []Finding
	for st, err := range j.store.Entries(ctx, Query{Open: true}) {
		if err != nil {
			return out, err
		}
		e, err := j.stored(ctx, st)
		if err != nil {
			return out, err
		}
		if e == nil || !open(e) {
			if err := j.store.Close(ctx, st.Key, len(st.Records)); err != nil {
				return out, err
			}
			continue
		}
		if rule, since, ok := stuck(e, now, th); ok {
			out = append(out, Finding{Rule: rule, Since: since, Entry: e})
		}
	}
	slices.SortFunc(out, func(a, b Finding) int { return a.Since.Compare(b.Since) })
	return out, nil
}

// stored folds an entry a store yielded; nil for an unattached entry that
// another entry joined, and for one with no record that reads.
func (j *Journal) stored(ctx context.Context, st Stored) (*Entry, error) {
	if owner, err := j.joined(ctx, st.Key); owner != "" || err != nil {
		return nil, err
	}
	e, err := j.entry(ctx, st.Key, st.Records)
	if err != nil || e.Started.IsZero() {
		return nil, err
	}
	return e, nil
}

// newID returns a random call id: 16 hex digits.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
