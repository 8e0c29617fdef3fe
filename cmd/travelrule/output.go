package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vaspkit/travelrule"
)

// printError prints an SDK error with what the caller needs to act on it:
// every fault by field path, the service's message and fields, which the
// SDK has scrubbed of the request's personal values, and what to do about
// a refused API key.
func (c *cli) printError(op string, err error) {
	fmt.Fprintf(c.stderr, "%s: %v\n", op, err)
	var ve *travelrule.ValidationError
	if errors.As(err, &ve) {
		for _, f := range ve.Fields {
			fmt.Fprintf(c.stderr, "  %s: %s\n", f.Field, f.Reason)
		}
	}
	var apiErr *travelrule.APIError
	if errors.As(err, &apiErr) {
		if apiErr.Message != "" && !strings.Contains(err.Error(), apiErr.Message) && !isFieldReason(apiErr) {
			fmt.Fprintf(c.stderr, "  the service said: %q\n", apiErr.Message)
		}
		for _, f := range apiErr.Fields {
			// The live envelope's messages may start with the path
			// already ("asset: required"): it is said once.
			fmt.Fprintf(c.stderr, "  %s: %s\n", shownPath(f), strings.TrimPrefix(f.Reason, f.Field+": "))
		}
	}
	if errors.Is(err, travelrule.ErrAPIKeyRefused) {
		fmt.Fprintln(c.stderr, "  the API key was refused: check it, and that it is active and not expired, in the service's dashboard")
	}
	var unknown *travelrule.OutcomeUnknownError
	if errors.As(err, &unknown) {
		fmt.Fprintf(c.stderr, "  the service may have acted: reconcile before sending again (txId %q, callback ref %q, idempotency key %q)\n",
			unknown.TxID, unknown.CallbackRef, unknown.IdempotencyKey)
	}
}

// isFieldReason reports whether the error's message is the reason of one
// of its fields, which is printed with its path.
func isFieldReason(e *travelrule.APIError) bool {
	for _, f := range e.Fields {
		if f.Reason == e.Message {
			return true
		}
	}
	return false
}

// shownPath is the path of a field the service named as the SDK shows it: a
// path of the request as it is, anything else (which may be text the
// service made up) redacted. The SDK's FieldError.Error decides; it ends
// with ": " and the reason, redacted for a reason from the service (whose
// Reason the SDK has scrubbed of the request's personal values, so it is
// printed as it is).
func shownPath(f travelrule.FieldError) string {
	s := f.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[:i]
	}
	return s
}

// printJSON prints v as a line of JSON on stdout.
func (c *cli) printJSON(v any) int {
	if err := c.writeJSON(v); err != nil {
		fmt.Fprintf(c.stderr, "writing output: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// writeJSON writes v as a line of JSON on stdout.
func (c *cli) writeJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
