package journal

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
)

// Direction says which side of a transfer this VASP is on.
type Direction string

// The directions of an entry.
const (
	// Outbound is a transfer this VASP initiated (the originator).
	Outbound Direction = "outbound"
	// Inbound is a transfer whose inquiry this VASP received (the
	// beneficiary).
	Inbound Direction = "inbound"
)

// Stage is how far a transfer got, as the service's five stages after
// the token go: an entry's stage is the furthest its evidence shows.
type Stage int

// The stages of a transfer.
const (
	// StageNone: an outbound initiation that the service is not known to
	// have stored (sent, refused, or its outcome unknown).
	StageNone Stage = iota
	// StageInitiated: the service stored the initiation (outbound), or
	// this VASP received its inquiry (inbound).
	StageInitiated
	// StageInquiryAnswered: the beneficiary's VASP answered the inquiry:
	// an INQUIRY_RESOLUTION reached this VASP (outbound), or this VASP's
	// ResolveInquiry was applied (inbound).
	StageInquiryAnswered
	// StageResolved: the service sent its TRANSFER_RESOLUTION.
	StageResolved
	// StageTxIDSubmitted: the originator submitted the transaction's
	// hash (this VASP's SubmitTxID was applied).
	StageTxIDSubmitted
	// StageConfirmed: a TRANSFER_CONFIRMATION reached this VASP.
	StageConfirmed
)

var stageNames = [...]string{"none", "initiated", "inquiry answered", "resolved", "txId submitted", "confirmed"}

// String returns the stage's name, such as "txId submitted".
func (s Stage) String() string {
	if s >= 0 && int(s) < len(stageNames) {
		return stageNames[s]
	}
	return "Stage(" + strconv.Itoa(int(s)) + ")"
}

// Initiation is what is known of an outbound entry's initiation.
type Initiation string

// The states of an initiation.
const (
	// InitiationSent: the initiation was recorded before it was sent,
	// and no outcome was recorded after: the process may have died
	// between the two. It counts as outcome unknown.
	InitiationSent Initiation = "sent, outcome unknown"
	// InitiationUnknown: the call ended with ErrOutcomeUnknown, and no
	// evidence has arrived yet.
	InitiationUnknown Initiation = "outcome unknown"
	// InitiationStored: the service answered that it stored it, or
	// evidence arrived (a callback naming the transfer).
	InitiationStored Initiation = "stored by the service"
	// InitiationNotStored: the service refused it, or it never reached
	// the service (the SDK's promise: nothing after which the service
	// may have acted ends so).
	InitiationNotStored Initiation = "not stored"
)

// Entry is one transfer, as the journal's records show it. It holds no
// personal data.
type Entry struct {
	// Key is the entry's key in the store.
	Key string
	// Direction says whether this VASP initiated the transfer or
	// received its inquiry.
	Direction Direction
	// Ref is the reference of the initiation's capability callback URL,
	// if it had one.
	Ref string
	// TransferID is the service's transfer id, once known.
	TransferID string
	// Initiation is what is known of an outbound initiation; "" for an
	// inbound entry.
	Initiation Initiation
	// Reconciled reports that the initiation's outcome was unknown when
	// the call ended (or was never recorded) and evidence arrived later
	// that the service stored it.
	Reconciled bool
	// Initiations is how many initiations were recorded under the entry
	// (more than one when a reference was used again).
	Initiations int
	// Stage is the furthest stage the evidence shows.
	Stage Stage
	// Decision is the beneficiary VASP's decision, [travelrule.Approved]
	// or [travelrule.Rejected], once known ("" before).
	Decision travelrule.Decision
	// Started is the time of the entry's first record; Updated of its
	// last.
	Started, Updated time.Time
	// Since holds when the entry first reached each stage (the zero time
	// for stages it did not reach).
	Since [StageConfirmed + 1]time.Time
	// Decided is when the decision arrived (the zero time without one).
	Decided time.Time
	// SentAt is when the first initiation whose outcome is still unknown
	// was recorded (zero when none is).
	SentAt time.Time
	// Settlement is an operator's settlement of initiations whose outcome
	// was unknown (see [Journal.Settle]); nil without one.
	Settlement *Settlement
	// Contradicted is when a callback that contradicts the settlement
	// arrived (zero when none did): see [RuleContradicted].
	Contradicted time.Time

	// Timeline lists the entry's records, oldest first.
	Timeline []Event
}

// Event is one record of an entry, for people: when, and what, in words
// that hold no personal data.
type Event struct {
	// At is the record's time.
	At time.Time
	// What says what happened, in words.
	What string
}

// fold makes the entry key from its records: a pure function of them,
// whatever their order. It sorts recs.
func fold(key string, recs []record) *Entry {
	slices.SortStableFunc(recs, func(a, b record) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Kind+a.Call+a.Delivery, b.Kind+b.Call+b.Delivery)
	})
	e := &Entry{Key: key, Direction: Outbound}
	if strings.HasPrefix(key, inboundPrefix) {
		e.Direction = Inbound
	}
	f := folding{calls: map[string]string{}, sentAt: map[string]time.Time{}, stored: map[string]bool{}}
	for _, r := range recs {
		if e.Started.IsZero() {
			e.Started = r.At
		}
		e.Updated = r.At
		e.Timeline = append(e.Timeline, Event{At: r.At, What: describe(r, key)})
		if r.Kind == kindRefused || r.Kind == kindCallback && !belongs(travelrule.CallbackKind(r.Callback), key) {
			continue // a delivery not acted on, or an older journal's record of what cannot be true
		}
		f.apply(e, r, key)
	}
	if e.Direction == Inbound {
		return e
	}
	if f.storedTID != "" {
		e.TransferID = f.storedTID // a late callback about another transfer does not rename it
	}
	e.Contradicted = contradiction(e.Settlement, f.seen, f.resent, f.stored)
	e.initiation(f.calls, f.sentAt, f.evidence)
	return e
}

// folding is what fold keeps between an entry's records.
type folding struct {
	calls     map[string]string    // call id -> its latest outcome kind
	sentAt    map[string]time.Time // call id -> when it was recorded first
	seen      []record             // the callbacks believed, for the settlement
	resent    time.Time            // the first initiation recorded after the latest settlement
	stored    map[string]bool      // the transfer ids the service answered with
	storedTID string               // the latest of them, or a settlement's
	evidence  time.Time            // when the first believed callback came
}

// apply folds the record r, one the entry acts on, into e.
func (f *folding) apply(e *Entry, r record, key string) {
	if r.Ref != "" && e.Ref == "" && r.Kind == kindSent {
		e.Ref = r.Ref
	}
	if r.TransferID != "" {
		e.TransferID = r.TransferID
	}
	if s := recordStage(r, key); s > StageNone && r.Kind != kindSettled {
		e.reach(StageInitiated, r.At)
		e.reach(s, r.At)
	}
	switch r.Kind {
	case kindSent:
		if _, ok := f.calls[r.Call]; !ok {
			f.calls[r.Call], f.sentAt[r.Call] = kindSent, r.At
		}
		if e.Settlement != nil && f.resent.IsZero() {
			f.resent = r.At
		}
	case kindStored, kindNotStored, kindUnknown:
		if _, ok := f.sentAt[r.Call]; !ok {
			f.sentAt[r.Call] = r.At
		}
		f.calls[r.Call] = r.Kind
		if r.Kind == kindStored && r.TransferID != "" {
			f.stored[r.TransferID], f.storedTID = true, r.TransferID
		}
	case kindResolution:
		e.decide(travelrule.Decision(r.Decision), r.At)
	case kindCallback:
		if f.evidence.IsZero() {
			f.evidence = r.At
		}
		f.seen = append(f.seen, r)
		e.callback(r)
	case kindSettled:
		f.settle(e, r)
	}
}

// settle applies an operator's settlement record r.
func (f *folding) settle(e *Entry, r record) {
	if !e.settle(r, f.calls) {
		e.Timeline[len(e.Timeline)-1].What += " (not applied: no outcome was unknown by then)"
		return
	}
	f.resent = time.Time{}
	if r.TransferID != "" {
		f.storedTID = r.TransferID
	}
}

// recordStage is the stage a record acted on shows on the entry key: the
// furthest stage an entry's records show is its stage (fold), and the
// store's index keeps it (Step.Stage). A settlement shows one only where
// fold applies it.
func recordStage(r record, key string) Stage {
	switch r.Kind {
	case kindStored:
		return StageInitiated
	case kindResolution:
		return StageInquiryAnswered
	case kindTxID:
		return StageTxIDSubmitted
	case kindSettled:
		if r.Settled == kindStored {
			return StageInitiated
		}
	case kindCallback:
		return callbackStage(r, key)
	}
	return StageNone
}

// callbackStage is the stage a callback record shows on the entry key.
func callbackStage(r record, key string) Stage {
	kind := travelrule.CallbackKind(r.Callback)
	if !belongs(kind, key) {
		return StageNone
	}
	switch kind {
	case travelrule.KindInquiryResolution:
		return StageInquiryAnswered
	case travelrule.KindTransferResolution:
		if r.Decision != "" {
			return StageResolved
		}
	case travelrule.KindTransferConfirmation:
		return StageConfirmed
	}
	return StageInitiated
}

// initiation sets what is known of an outbound entry's initiation from
// the latest outcome of each call, when each was sent, and when the first
// believed callback came (zero if none did).
func (e *Entry) initiation(calls map[string]string, sentAt map[string]time.Time, evidence time.Time) {
	e.Initiations = len(calls)
	e.Initiation = InitiationNotStored
	unknown, stored := false, false
	for id, k := range calls {
		switch k {
		case kindStored:
			stored = true
		case kindSent, kindUnknown:
			unknown = true
			if e.SentAt.IsZero() || sentAt[id].Before(e.SentAt) {
				e.SentAt = sentAt[id]
			}
			if k == kindSent && e.Initiation != InitiationUnknown {
				e.Initiation = InitiationSent
			} else {
				e.Initiation = InitiationUnknown
			}
		}
	}
	switch {
	case stored:
		e.Initiation, e.SentAt = InitiationStored, time.Time{}
	case len(calls) == 0:
		e.Initiation = "" // only callbacks, of a transfer not initiated through this journal
	case !evidence.IsZero():
		// A callback named the transfer: the service stored it.
		e.Initiation, e.Reconciled, e.SentAt = InitiationStored, unknown, time.Time{}
		e.reach(StageInitiated, evidence)
	case !unknown:
		e.Initiation = InitiationNotStored
	}
}

// settle applies an operator's settlement: the calls whose outcome was
// unknown take its outcome. It reports false, changing nothing, when none
// was unknown.
func (e *Entry) settle(r record, calls map[string]string) bool {
	applied := false
	for id, k := range calls {
		if k == kindSent || k == kindUnknown {
			calls[id], applied = r.Settled, true
		}
	}
	if !applied {
		return false
	}
	e.Settlement = &Settlement{Stored: r.Settled == kindStored, TransferID: r.TransferID, Reason: r.Reason, At: r.At}
	if e.Settlement.Stored {
		e.reach(StageInitiated, r.At)
	}
	return true
}

// contradiction returns when the first believed callback that the latest
// settlement cannot explain arrived, or the zero time. A callback naming a
// transfer id the service answered with is explained. Otherwise, after
// "stored", one naming another transfer id contradicts; after "not
// stored", one that came before a later initiation under the reference,
// or one naming a transfer id when the later initiations' ids are known.
func contradiction(s *Settlement, seen []record, resent time.Time, stored map[string]bool) time.Time {
	if s == nil {
		return time.Time{}
	}
	for _, r := range seen {
		named := r.TransferID != ""
		switch {
		case named && stored[r.TransferID]:
		case s.Stored:
			if named && r.TransferID != s.TransferID {
				return r.At
			}
		case resent.IsZero() || r.At.Before(resent), named && len(stored) > 0:
			return r.At
		}
	}
	return time.Time{}
}

// callback applies a callback record's decision to the entry (its stage
// is recordStage's).
func (e *Entry) callback(r record) {
	switch travelrule.CallbackKind(r.Callback) {
	case travelrule.KindInquiryResolution:
		e.decide(travelrule.Decision(r.Decision), r.At) // the beneficiary's VASP answered
	case travelrule.KindTransferResolution:
		e.decide(travelrule.Decision(r.Decision), r.At) // TRANSFER_RESOLUTION, or a status of the excerpt's form
	case travelrule.KindCanceled:
		e.decide(travelrule.Rejected, r.At)
	}
}

// reach records that the entry reached stage at t.
func (e *Entry) reach(s Stage, t time.Time) {
	if e.Stage < s {
		e.Stage = s
	}
	if e.Since[s].IsZero() {
		e.Since[s] = t
	}
}

// decide records a decision; a rejection stands once made.
func (e *Entry) decide(d travelrule.Decision, t time.Time) {
	if d == "" || e.Decision == travelrule.Rejected {
		return
	}
	if e.Decision != d {
		e.Decision, e.Decided = d, t
	}
}

// describe is a record of the entry key in words.
func describe(r record, key string) string {
	var b strings.Builder
	if r.Kind == kindCallback && !belongs(travelrule.CallbackKind(r.Callback), key) {
		r.Kind, r.Refused = kindRefused, refusedKind
	}
	b.WriteString(what(r, key))
	if r.Attempts > 0 {
		fmt.Fprintf(&b, " after %d attempt(s)", r.Attempts)
	}
	if r.TransferID != "" {
		fmt.Fprintf(&b, "; transfer %s", r.TransferID)
	}
	return b.String()
}

// what says what the record r of the entry key is.
func what(r record, key string) string {
	switch r.Kind {
	case kindSent:
		return fmt.Sprintf("%s recorded before sending (request digest %.16s)", r.Op, r.Digest)
	case kindStored:
		return "stored by the service"
	case kindNotStored:
		switch r.Refused {
		case refusedRefInUse:
			return "not sent: the journal refused it (ErrRefInUse: the reference names a transfer the service stored or may have stored)"
		case refusedFailed:
			return "not sent: the journal could not record or check it first"
		}
		return "not stored: the service refused it, or it never reached the service"
	case kindSettled:
		if r.Settled == kindStored {
			return fmt.Sprintf("settled by an operator: stored by the service (reason: %s)", r.Reason)
		}
		return fmt.Sprintf("settled by an operator: not stored, the reference may be used again (reason: %s)", r.Reason)
	case kindUnknown:
		if r.Op == "ResolveInquiry" {
			return "ResolveInquiry's outcome unknown (ErrOutcomeUnknown): the service may have applied it"
		}
		return "outcome unknown (ErrOutcomeUnknown): the service may have stored it"
	case kindResolution:
		return "ResolveInquiry applied: " + r.Decision
	case kindTxID:
		return "SubmitTxID applied"
	case kindJoined:
		return "callbacks that came before the transfer id was known joined this entry"
	case kindRefused:
		return refusal(r, key)
	case kindCallback:
		if r.Decision != "" {
			return fmt.Sprintf("callback received: %s (%s)", r.Callback, r.Decision)
		}
		return "callback received: " + r.Callback
	}
	return r.Kind
}

// refusal says why a callback delivery was not acted on.
func refusal(r record, key string) string {
	if r.Refused == refusedUnauthenticated {
		return fmt.Sprintf("callback not acted on: %s, not authenticated", r.Callback)
	}
	side := "originator"
	if strings.HasPrefix(key, inboundPrefix) {
		side = "beneficiary"
	}
	return fmt.Sprintf("callback refused: a %s cannot arrive at the %s", r.Callback, side)
}
