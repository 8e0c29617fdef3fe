package oteltravelrule

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vaspkit/travelrule"
)

func TestOutcome(t *testing.T) {
	api := &travelrule.APIError{Op: "InitiateTransfer", StatusCode: 400, Code: "VALIDATION_ERROR"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, "success"},
		{"outcome unknown", &travelrule.OutcomeUnknownError{Op: "InitiateTransfer", Err: errors.New("dropped")}, "outcome_unknown"},
		{"outcome unknown wrapping an answer", &travelrule.OutcomeUnknownError{Op: "InitiateTransfer", Err: api}, "outcome_unknown"},
		{"outcome unknown, wrapped", fmt.Errorf("ctx: %w", &travelrule.OutcomeUnknownError{}), "outcome_unknown"},
		{"validation", &travelrule.ValidationError{Fields: []travelrule.FieldError{{Field: "asset", Reason: "required"}}}, "validation"},
		{"validation, wrapped", fmt.Errorf("x: %w", &travelrule.ValidationError{}), "validation"},
		{"refused", api, "refused"},
		{"refused, wrapped", fmt.Errorf("x: %w", api), "refused"},
		{"other", context.Canceled, "error"},
		{"sentinel only", travelrule.ErrOutcomeUnknown, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, outcome(tt.err))
		})
	}
}

func TestCallErrorType(t *testing.T) {
	tests := []struct {
		outcome     string
		status      int
		failureType string
		want        string
	}{
		{"success", 200, "", ""},
		{"success", 0, "timeout", ""},
		{"refused", 404, "", "404"},
		{"outcome_unknown", 500, "", "500"},
		{"outcome_unknown", 0, "connection_reset", "connection_reset"},
		{"refused", 200, "", "refused"}, // a 2xx whose status said false
		{"validation", 0, "", "validation"},
		{"error", 0, "", "error"},
		{"error", 0, "token_refused", "token_refused"},
		// A 503 retried, then a time-out: the call ended on the time-out
		// (CallEnd.ErrorType), the 503 being only its last answer.
		{"outcome_unknown", 503, "timeout", "timeout"},
		{"error", 429, "canceled", "canceled"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, callErrorType(tt.outcome, tt.status, tt.failureType), "%+v", tt)
	}
}

func TestAttemptErrorType(t *testing.T) {
	tests := []struct {
		status  int
		errType string
		want    string
	}{
		{200, "", ""},
		{302, "", ""},
		{399, "", ""},
		{400, "", "400"},
		{429, "", "429"},
		{503, "", "503"},
		{0, "timeout", "timeout"},
		{0, "", "_OTHER"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, attemptErrorType(tt.status, tt.errType), "%+v", tt)
	}
}

func TestCallStatus(t *testing.T) {
	tests := []struct{ outcome, want string }{
		{"success", ""},
		{"refused", "refused by the service"},
		{"validation", "invalid request, nothing sent"},
		{"outcome_unknown", "outcome unknown: the service may have acted"},
		{"error", "failed"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, callStatus(tt.outcome))
	}
}
