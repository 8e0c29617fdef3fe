package travelruletest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vaspkit/travelrule"
)

// TestDecide is the table of the sandbox's decision on a new transfer: the
// one SetDecision set wins over WithApproval's; none leaves the transfer
// undecided, with no callback. An approval is announced by an
// INQUIRY_RESOLUTION and a TRANSFER_RESOLUTION, a rejection by the
// INQUIRY_RESOLUTION alone (as the live docs promise), or by both under
// WithRejectionResolution.
func TestDecide(t *testing.T) {
	rejectAll := func(travelrule.TransferRequest) bool { return false }
	both := []CallbackKind{KindInquiryResolution, KindTransferResolution}
	for _, tt := range []struct {
		name                string
		approve             func(travelrule.TransferRequest) bool
		rejectionResolution bool
		set                 Decision
		decision            State // recorded on the transfer; "": undecided
		kinds               []CallbackKind
	}{
		{"default", nil, false, "", StateApproved, both},
		{"WithApproval", rejectAll, false, "", StateRejected, []CallbackKind{KindInquiryResolution}},
		{"approve over WithApproval", rejectAll, false, DecisionApprove, StateApproved, both},
		{"reject", nil, false, DecisionReject, StateRejected, []CallbackKind{KindInquiryResolution}},
		{"reject, WithRejectionResolution", nil, true, DecisionReject, StateRejected, both},
		{"approve, WithRejectionResolution", nil, true, DecisionApprove, StateApproved, both},
		{"none", nil, false, DecisionNone, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{cfg: config{approve: tt.approve, rejectionResolution: tt.rejectionResolution}}
			s.SetDecision(tt.set)
			tr := &transferRec{Transfer: Transfer{ID: "t1", State: StateReceived, Request: travelrule.TransferRequest{Callback: "https://o.example/cb"}}}
			var kinds []CallbackKind
			for _, ev := range s.decide(tr) {
				kinds = append(kinds, ev.kind)
			}
			assert.Equal(t, tt.kinds, kinds)
			assert.Equal(t, tt.decision, tr.decision)
			assert.Equal(t, StateReceived, tr.State, "the state follows as the callbacks go")
		})
	}
}
