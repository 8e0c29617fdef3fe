package travelruletest

import (
	"errors"

	"github.com/vaspkit/travelrule"
)

// Decision is what the beneficiary's VASP, played by the sandbox, decides on
// the transfers the integrator initiates (those the sandbox decides: all of
// them, unless [WithInquiryURL] sends some to the integrator). See
// [Server.SetDecision].
type Decision string

// The decisions.
const (
	// DecisionApprove approves each transfer: received → approved →
	// completed, announced by an INQUIRY_RESOLUTION and a
	// TRANSFER_RESOLUTION.
	DecisionApprove Decision = "approve"
	// DecisionReject rejects each transfer: received → rejected, announced
	// by an INQUIRY_RESOLUTION {"approved":false} alone (and a
	// TRANSFER_RESOLUTION "REJECTED" under [WithRejectionResolution]).
	DecisionReject Decision = "reject"
	// DecisionNone never decides: the transfer stays received and no
	// callback is sent for it, as with a counterparty that never answers.
	DecisionNone Decision = "none"
)

// SetDecision sets the decision on the transfers initiated from now on,
// over what [WithApproval] decides; the zero Decision ("") gives the
// decision back to WithApproval's function (by default, approval). It is
// safe to call while requests are served, and panics on an unknown
// decision. POST {URL}/sandbox/decision does the same over HTTP.
func (s *Server) SetDecision(d Decision) {
	if err := d.check(); err != nil {
		panic(err)
	}
	if d == "" {
		s.decision.Store(nil)
	} else {
		s.decision.Store(&d)
	}
	s.records.changedNow()
}

// check reports an unknown decision.
func (d Decision) check() error {
	switch d {
	case "", DecisionApprove, DecisionReject, DecisionNone:
		return nil
	}
	return errors.New(`travelruletest: unknown decision: want "approve", "reject", "none" or ""`)
}

// decisionOn is the decision on the new transfer req: the one
// SetDecision set, else WithApproval's, else approval.
func (s *Server) decisionOn(req travelrule.TransferRequest) Decision {
	if d := s.decision.Load(); d != nil {
		return *d
	}
	if s.cfg.approve != nil && !s.cfg.approve(req) {
		return DecisionReject
	}
	return DecisionApprove
}

// decide records the decision of the sandbox, the beneficiary's VASP, on the
// new transfer t and returns the callbacks that announce it; none when it
// does not decide (DecisionNone), leaving t received.
func (s *Server) decide(t *transferRec) []*event {
	switch s.decisionOn(t.Request) {
	case DecisionNone:
		return nil
	case DecisionReject:
		t.decision, t.decidedBy, t.decided = StateRejected, decidedBySandbox, t.Created
		return s.resolutionEvents(t, false)
	}
	t.decision, t.decidedBy, t.decided = StateApproved, decidedBySandbox, t.Created
	return s.resolutionEvents(t, true)
}
