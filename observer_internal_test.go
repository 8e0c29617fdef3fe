package travelrule

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOutcomeOf checks the one decision of what came of a call.
func TestOutcomeOf(t *testing.T) {
	tests := []struct {
		err  error
		want CallOutcome
	}{
		{nil, CallSucceeded},
		{&OutcomeUnknownError{Op: "InitiateTransfer", Err: errors.New("reset")}, CallOutcomeUnknown},
		{fmt.Errorf("wrapped: %w", &OutcomeUnknownError{Err: errors.New("x")}), CallOutcomeUnknown},
		{&APIError{StatusCode: 400}, CallNotDone},
		{&ValidationError{}, CallNotDone},
		{errors.New("dial tcp: connection refused"), CallNotDone},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, outcomeOf(tt.err), "%v", tt.err)
	}
	assert.Equal(t, "outcome unknown", CallOutcomeUnknown.String())
	assert.Equal(t, "CallOutcome(0)", CallOutcome(0).String())
}
