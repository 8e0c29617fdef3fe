package journal

import (
	"time"

	"github.com/vaspkit/travelrule"
)

// RedeliveryWindow is how long the live service keeps redelivering a
// callback that was not acknowledged: retries after 1 m, 5 m, 15 m, 30 m,
// 1 h, 3 h, 6 h, 12 h and 24 h, about 47 hours in all (live-service.md).
// Past it, an initiation whose outcome is unknown and about which no
// callback arrived is reported as [RuleNoEvidence].
const RedeliveryWindow = (1+5+15+30)*time.Minute + (1+3+6+12+24)*time.Hour

// Rule names a reason a transfer needs a person.
type Rule string

// The rules of [Journal.Stuck].
const (
	// RuleOutcomeUnknown: an initiation's outcome is unknown (the call
	// ended with ErrOutcomeUnknown, or the process died after recording
	// it) and no evidence has arrived for Thresholds.OutcomeUnknown.
	// Do not send it again: reconcile it (docs/journal.md).
	RuleOutcomeUnknown Rule = "outcome unknown, not reconciled"
	// RuleNoEvidence: the same, past the service's whole
	// [RedeliveryWindow]: no callback about the transfer arrived, which
	// is no proof that the service did not store it. A person decides.
	RuleNoEvidence Rule = "no evidence it was stored"
	// RuleNoResolution: the service stored the initiation, no decision
	// of the beneficiary's VASP arrived and no txId was submitted (which
	// only an approval leads to) for Thresholds.Resolution.
	RuleNoResolution Rule = "initiated, no resolution"
	// RuleNoTxID: the transfer was approved and no txId was submitted
	// for Thresholds.TxID.
	RuleNoTxID Rule = "approved, no txId submitted"
	// RuleInquiryUnanswered: an inbound inquiry was not answered (no
	// ResolveInquiry applied) for Thresholds.InquiryAnswer.
	RuleInquiryUnanswered Rule = "inbound inquiry not answered"
	// RuleContradicted: a callback arrived that contradicts an operator's
	// settlement (Entry.Contradicted): look at the transfer again.
	RuleContradicted Rule = "a callback contradicts the settlement"
)

// Thresholds say how long each stage may last before [Journal.Stuck]
// reports it. A zero field takes its default.
type Thresholds struct {
	// OutcomeUnknown is how long an initiation's outcome may stay
	// unknown (default 15 minutes: longer than a call with its retries
	// takes, so that a call still running is not reported).
	OutcomeUnknown time.Duration
	// Resolution is how long a stored initiation may wait for the
	// beneficiary's decision (default 24 hours).
	Resolution time.Duration
	// TxID is how long an approved transfer may wait for its txId
	// (default 24 hours).
	TxID time.Duration
	// InquiryAnswer is how long an inbound inquiry may wait for this
	// VASP's answer (default 24 hours).
	InquiryAnswer time.Duration
}

// The defaults of Thresholds.
const (
	DefaultOutcomeUnknown = 15 * time.Minute
	DefaultResolution     = 24 * time.Hour
	DefaultTxID           = 24 * time.Hour
	DefaultInquiryAnswer  = 24 * time.Hour
)

func (th Thresholds) withDefaults() Thresholds {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&th.OutcomeUnknown, DefaultOutcomeUnknown)
	def(&th.Resolution, DefaultResolution)
	def(&th.TxID, DefaultTxID)
	def(&th.InquiryAnswer, DefaultInquiryAnswer)
	return th
}

// Finding is a transfer that needs a person, and why.
type Finding struct {
	// Rule is why.
	Rule Rule
	// Since is when the stage the rule is about began: the wait is
	// measured from it.
	Since time.Time
	// Entry is the transfer.
	Entry *Entry
}

// stuck is the rule that entry e breaks at now, if any: the pure decision
// of Journal.Stuck. A rule fires once its threshold has passed since its
// stage began, not before.
func stuck(e *Entry, now time.Time, th Thresholds) (Rule, time.Time, bool) {
	th = th.withDefaults()
	past := func(since time.Time, d time.Duration) bool { return !since.IsZero() && now.Sub(since) >= d }
	if e.Direction == Inbound {
		if e.Stage == StageInitiated && e.Decision == "" && past(e.Since[StageInitiated], th.InquiryAnswer) {
			return RuleInquiryUnanswered, e.Since[StageInitiated], true
		}
		return "", time.Time{}, false
	}
	if !e.Contradicted.IsZero() {
		return RuleContradicted, e.Contradicted, true
	}
	switch e.Initiation {
	case InitiationSent, InitiationUnknown:
		if past(e.SentAt, RedeliveryWindow) {
			return RuleNoEvidence, e.SentAt, true
		}
		if past(e.SentAt, th.OutcomeUnknown) {
			return RuleOutcomeUnknown, e.SentAt, true
		}
		return "", time.Time{}, false
	case InitiationNotStored:
		return "", time.Time{}, false
	}
	switch {
	case e.Decision == "" && e.Stage < StageTxIDSubmitted && past(e.Since[StageInitiated], th.Resolution):
		return RuleNoResolution, e.Since[StageInitiated], true
	case e.Decision == travelrule.Approved && e.Stage < StageTxIDSubmitted && past(e.Decided, th.TxID):
		return RuleNoTxID, e.Decided, true
	}
	return "", time.Time{}, false
}

// open reports whether an entry may still need a person: whether, its
// records as they are, a rule of [Journal.Stuck] would fire at some time
// with some thresholds. An entry that is not open needs a new record to
// need a person again, and a store's index of open entries may drop it.
func open(e *Entry) bool {
	never := time.Unix(1<<40, 0)
	_, _, ok := stuck(e, never, Thresholds{OutcomeUnknown: 1, Resolution: 1, TxID: 1, InquiryAnswer: 1})
	return ok
}
