package travelruletest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vaspkit/travelrule"
)

// TestDecide is the table of the sandbox's decision on a new transfer: the
// one SetDecision set wins over WithApproval's; none leaves the transfer
// undecided, with no callback.
func TestDecide(t *testing.T) {
	rejectAll := func(travelrule.TransferRequest) bool { return false }
	for _, tt := range []struct {
		name     string
		approve  func(travelrule.TransferRequest) bool
		set      Decision
		decision State // recorded on the transfer; "": undecided
		events   int
	}{
		{"default", nil, "", StateApproved, 2},
		{"WithApproval", rejectAll, "", StateRejected, 2},
		{"approve over WithApproval", rejectAll, DecisionApprove, StateApproved, 2},
		{"reject", nil, DecisionReject, StateRejected, 2},
		{"none", nil, DecisionNone, "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{cfg: config{approve: tt.approve}}
			s.SetDecision(tt.set)
			tr := &transferRec{Transfer: Transfer{ID: "t1", State: StateReceived, Request: travelrule.TransferRequest{Callback: "https://o.example/cb"}}}
			evs := s.decide(tr)
			assert.Len(t, evs, tt.events)
			assert.Equal(t, tt.decision, tr.decision)
			assert.Equal(t, StateReceived, tr.State, "the state follows as the callbacks go")
		})
	}
}
