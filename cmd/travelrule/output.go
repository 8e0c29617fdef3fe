package main

import (
	"encoding/json"
	"errors"
	"fmt"

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
		// The service's text may echo personal data: each field as the
		// SDK prints it, its reason masked.
		for _, f := range apiErr.Fields {
			fmt.Fprintf(c.stderr, "  %v\n", f)
		}
	}
	if errors.Is(err, travelrule.ErrAPIKeyRefused) {
		fmt.Fprintln(c.stderr, "  the API key was refused: check it, and that it is active and not expired, in the service's dashboard")
	}
	var unknown *travelrule.OutcomeUnknownError
	if errors.As(err, &unknown) {
		// The error's text, above, says what to do: it depends on the
		// operation.
		fmt.Fprintf(c.stderr, "  the service may have acted (txId %q, callback ref %q, idempotency key %q)\n",
			unknown.TxID, unknown.CallbackRef, unknown.IdempotencyKey)
	}
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
