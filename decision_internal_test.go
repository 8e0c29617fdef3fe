package travelrule

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDecisionOf checks CallInfo.Decision for each Approved: the wire's
// two values, exactly, and nothing else (which Validate refuses).
func TestDecisionOf(t *testing.T) {
	for in, want := range map[string]Decision{"true": Approved, "false": Rejected, "TRUE": "", "1": "", "0": "", "yes": "", "": ""} {
		assert.Equal(t, want, decisionOf(in), in)
	}
}

// TestStatusDecision: the status words of a TRANSFER_RESOLUTION that
// decide, in any case; any other decides nothing.
func TestStatusDecision(t *testing.T) {
	for in, want := range map[string]Decision{"APPROVED": Approved, "completed": Approved, "Confirmed": Approved, "accepted": Approved,
		"REJECTED": Rejected, "declined": Rejected, "canceled": Rejected, "cancelled": Rejected, "failed": Rejected,
		"pending": "", "inquiry": "", "": "", "approve": ""} {
		assert.Equal(t, want, statusDecision(in), in)
	}
}
