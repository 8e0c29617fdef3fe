package oteltravelrule

import (
	"errors"
	"strconv"

	"github.com/vaspkit/travelrule"
)

// The values of travelrule.outcome.
const (
	outcomeSuccess    = "success"
	outcomeRefused    = "refused"
	outcomeValidation = "validation"
	outcomeUnknown    = "outcome_unknown"
	outcomeError      = "error"
)

// outcome is what came of a call that ended with err, as the value of
// travelrule.outcome: the one place that decides it. An
// *OutcomeUnknownError is asked first, since it may wrap the answer that
// left the outcome unknown (an *APIError).
func outcome(err error) string {
	var (
		unknown *travelrule.OutcomeUnknownError
		invalid *travelrule.ValidationError
		api     *travelrule.APIError
	)
	switch {
	case err == nil:
		return outcomeSuccess
	case errors.As(err, &unknown):
		return outcomeUnknown
	case errors.As(err, &invalid):
		return outcomeValidation
	case errors.As(err, &api):
		return outcomeRefused
	}
	return outcomeError
}

// callErrorType is the error.type of a call that ended with the outcome o,
// whose last answer had status (0 when none came) and whose failure was
// not the service's answer but failureType (CallEnd.ErrorType: a time-out,
// a refused login; "" when the service answered): that failure, else the
// status as a string for 400 and above, as the HTTP conventions say, else
// the outcome's own word. "" for a success.
func callErrorType(o string, status int, failureType string) string {
	switch {
	case o == outcomeSuccess:
		return ""
	case failureType != "":
		return failureType
	case status >= 400:
		return strconv.Itoa(status)
	}
	return o
}

// attemptErrorType is the error.type of an attempt answered with status
// (0 when no answer came) or failed below HTTP with errType: the status as
// a string for 400 and above, "" for another answer, else errType, or
// "_OTHER" (the conventions' word) when the client named no failure.
func attemptErrorType(status int, errType string) string {
	switch {
	case status >= 400:
		return strconv.Itoa(status)
	case status > 0:
		return ""
	case errType != "":
		return errType
	}
	return otherErrorType
}

// otherErrorType is the conventions' error.type of a failure with no
// better name.
const otherErrorType = "_OTHER"
