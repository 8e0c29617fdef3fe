package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vaspkit/travelrule"
)

// Exit statuses. A script that sends again on failure must do so only on
// exitFailed: exitUnknown means the service may have carried the operation
// out.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitUnknown = 3
)

// exitStatuses says what each exit status means, with the "outcome" the
// JSON of a command that calls the service names it by; --help prints it.
// For a command that does not call the service, other is the meaning of
// the status ("" for the same one), and a status whose other is "-" is
// not one of its statuses.
var exitStatuses = []struct {
	status  int
	outcome string
	meaning string
	other   string
}{
	{exitOK, "done", "success", ""},
	{exitFailed, "refused", `refused: nothing was done (the service refused the request, or it was
     never sent: a fault in the input, no connection); safe to send again
     once the cause is fixed`, "the operation failed"},
	{exitUsage, "", "usage error: bad flags or arguments; nothing was sent", "usage error: bad flags or arguments"},
	{exitUnknown, "unknown", `outcome unknown: the service may have carried the operation out (the
     connection was lost after the request went, an ambiguous answer);
     an initiation: reconcile before sending again, never send it again
     blindly; the other commands may be sent again, as their message says`, "-"},
}

// errResultLost is the failure of a command whose operation the service
// carried out but whose result could not be written: for the caller, who
// never saw it, the outcome is unknown.
var errResultLost = errors.New("the service carried the operation out, but its result could not be written")

// exitStatus is the exit status of a command that ended with err: the one
// place that tells "nothing was done" from "it may have been done".
func exitStatus(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, travelrule.ErrOutcomeUnknown), errors.Is(err, errResultLost):
		return exitUnknown
	}
	return exitFailed
}

// outcomeName is the "outcome" of the JSON a command prints when it ends
// with status.
func outcomeName(status int) string {
	for _, s := range exitStatuses {
		if s.status == status {
			return s.outcome
		}
	}
	return ""
}

// failure is the JSON a command that calls the service prints on stdout
// when it fails: what a script needs to decide, never personal data. For
// an unknown outcome, what a reconciliation needs: the attempts, the
// Idempotency-Key sent (or "") and the reference of a capability callback
// URL (or ""); never the callback URL (its tag is a secret), the transfer
// or transaction ids (text of the file or of the service), or the error's
// text (stderr has it).
func failure(cmd string, err error) map[string]any {
	out := map[string]any{"outcome": outcomeName(exitStatus(err)), "command": cmd}
	var unknown *travelrule.OutcomeUnknownError
	if errors.As(err, &unknown) {
		out["attempts"] = unknown.Attempts
		out["idempotencyKey"] = unknown.IdempotencyKey
		out["callbackRef"] = unknown.CallbackRef
	}
	var apiErr *travelrule.APIError
	if errors.As(err, &apiErr) {
		out["statusCode"] = apiErr.StatusCode
		if apiErr.RetryAfter > 0 {
			out["retryAfterSeconds"] = apiErr.RetryAfter.Seconds()
		}
	}
	return out
}

// fail ends a command that calls the service with err: the error on
// stderr, its JSON on stdout, and its exit status.
func (c *cli) fail(cmd string, err error) int {
	c.printError(cmd, err)
	_ = c.writeJSON(failure(cmd, err)) // stderr has said it already
	return exitStatus(err)
}

// errNotSent is the failure of a command that sent nothing.
var errNotSent = errors.New("nothing sent")

// notSent ends a command that found a fault before sending anything; the
// fault is on stderr already.
func (c *cli) notSent(cmd string) int {
	fmt.Fprintf(c.stderr, "%s: %v\n", cmd, errNotSent)
	_ = c.writeJSON(failure(cmd, errNotSent))
	return exitStatus(errNotSent)
}

// printResult prints the result of an operation the service carried out.
// Writing it failing is not "nothing was done": the caller never saw the
// result, so for it the outcome is unknown; the result goes to stderr.
func (c *cli) printResult(cmd string, v any) int {
	err := c.writeJSON(v)
	if err == nil {
		return exitOK
	}
	b, _ := json.Marshal(v)
	fmt.Fprintf(c.stderr, "%s: %v (%v): reconcile before sending again; the result was %s\n", cmd, errResultLost, err, b)
	return exitStatus(errResultLost)
}

// exitHelp is the exit status section of a help text: of a command that
// calls the service with calls.
func exitHelp(calls bool) string {
	var b strings.Builder
	b.WriteString("\nExit status:\n")
	for _, s := range exitStatuses {
		meaning := s.meaning
		if !calls && s.other != "" {
			meaning = s.other
		}
		if meaning != "-" {
			fmt.Fprintf(&b, "  %d  %s\n", s.status, meaning)
		}
	}
	if calls {
		b.WriteString(`  any other status (killed by a signal): treat it as 3
On failure, stdout holds one JSON object, {"outcome":"refused"} (1) or
{"outcome":"unknown"} (3), with "command", "statusCode" (and
"retryAfterSeconds") when the service answered, and for an unknown outcome
"attempts", "idempotencyKey" and "callbackRef".
`)
	}
	return b.String()
}
