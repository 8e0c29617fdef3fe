package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// wantOutcome is the "outcome" of a failure's JSON for each status, as the
// help texts document it.
var wantOutcome = map[int]string{exitFailed: "refused", exitUnknown: "unknown"}

// assertFailureOutput checks the stdout of a command that calls the
// service and failed: nothing after a usage error, else one JSON object
// naming its outcome and the command.
func assertFailureOutput(t *testing.T, cmd string, code int, out string) {
	t.Helper()
	if code == exitUsage {
		assert.Empty(t, out)
		return
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m), "stdout is one JSON object: %q", out)
	assert.Equal(t, wantOutcome[code], m["outcome"], out)
	assert.Equal(t, cmd, m["command"], out)
}

// TestExitStatus: only an error that says the service may have acted (or
// a result that the caller never saw) ends with exitUnknown; every other
// failure, which the SDK reports only when the service did not act, with
// exitFailed.
func TestExitStatus(t *testing.T) {
	unknown := &travelrule.OutcomeUnknownError{Op: "InitiateTransfer", Attempts: 1, Err: io.ErrUnexpectedEOF}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, exitOK},
		{"a 400", &travelrule.APIError{Op: "InitiateTransfer", StatusCode: http.StatusBadRequest}, exitFailed},
		{"a 503 the SDK reports as definite", &travelrule.APIError{Op: "InitiateTransfer", StatusCode: http.StatusServiceUnavailable, RetryAfter: time.Second}, exitFailed},
		{"the API key refused", fmt.Errorf("login: %w", travelrule.ErrAPIKeyRefused), exitFailed},
		{"a validation failure", &travelrule.ValidationError{Fields: []travelrule.FieldError{{Field: "asset", Reason: "required"}}}, exitFailed},
		{"nothing sent", errNotSent, exitFailed},
		{"no connection", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, exitFailed},
		{"cancelled before sending", context.Canceled, exitFailed},
		{"outcome unknown", unknown, exitUnknown},
		{"outcome unknown, wrapped", fmt.Errorf("initiate: %w", unknown), exitUnknown},
		{"outcome unknown after a 502", &travelrule.OutcomeUnknownError{Op: "SubmitTxID", Attempts: 2, Err: &travelrule.APIError{StatusCode: http.StatusBadGateway}}, exitUnknown},
		{"outcome unknown after a cancellation", &travelrule.OutcomeUnknownError{Op: "ResolveInquiry", Attempts: 1, Err: context.Canceled}, exitUnknown},
		{"the result lost", fmt.Errorf("%w (broken pipe)", errResultLost), exitUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, exitStatus(tt.err))
		})
	}
}

// TestFailureJSON: the JSON of a failure names its outcome, and for an
// unknown one what a reconciliation needs; never the callback URL (its tag
// is a secret), the transfer or transaction ids, or the error's text.
func TestFailureJSON(t *testing.T) {
	const secretURL = "https://vasp-a.example/cb?tr_ref=pay-77&tr_tag=PLANTEDTAG"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nothing sent", errNotSent, `{"outcome":"refused","command":"initiate"}`},
		{"refused", &travelrule.APIError{StatusCode: 400, Code: "PLANTED_CODE", Body: []byte(`{"message":"PLANTED message"}`)},
			`{"outcome":"refused","command":"initiate","statusCode":400}`},
		{"refused, with a wait", &travelrule.APIError{StatusCode: 429, RetryAfter: 2 * time.Second},
			`{"outcome":"refused","command":"initiate","statusCode":429,"retryAfterSeconds":2}`},
		{"unknown after a lost connection", &travelrule.OutcomeUnknownError{Op: "InitiateTransfer", Attempts: 3, TxID: "0xPLANTEDTX",
			TransferID: "PLANTED-transfer", Callback: secretURL, CallbackRef: "pay-77", IdempotencyKey: "4b7c-key", Err: io.ErrUnexpectedEOF},
			`{"outcome":"unknown","command":"initiate","attempts":3,"idempotencyKey":"4b7c-key","callbackRef":"pay-77"}`},
		{"unknown after a 503", fmt.Errorf("x: %w", &travelrule.OutcomeUnknownError{Op: "InitiateTransfer", Attempts: 1,
			Err: &travelrule.APIError{StatusCode: 503, RetryAfter: 30 * time.Second}}),
			`{"outcome":"unknown","command":"initiate","attempts":1,"idempotencyKey":"","callbackRef":"","statusCode":503,"retryAfterSeconds":30}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(failure("initiate", tt.err))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
			assert.NotContains(t, string(b), "PLANTED")
		})
	}
}

// TestOutcomeUnknownExit: every command that changes something at the
// service, against a service that stores the request and then drops the
// connection, exits with exitUnknown and says so on stdout, with the
// attempts the service got (an initiation once; the SDK sends again the
// calls whose repetition is harmless) and, with --idempotency, the key.
func TestOutcomeUnknownExit(t *testing.T) {
	capURL, err := travelrule.NewCallbackURL("https://vasp-a.example/cb", "pay-77", []byte("capability-key-0123456789"))
	require.NoError(t, err)
	transfer := strings.Replace(validTransfer, `"https://vasp-a.example/cb"`, `"`+capURL+`"`, 1)
	tests := []struct {
		name  string
		path  string
		args  []string
		cmd   string
		sends int            // the requests the service got; 0: any
		want  map[string]any // fields of the JSON beside outcome, command and attempts
	}{
		{"initiate", "/transfers/initiate", []string{"initiate", "-f", "-"}, "initiate", 1, map[string]any{"callbackRef": "pay-77"}},
		{"resolve", "/transfers/inquiryResolution", []string{"resolve", "--transfer", "t-1", "--approved", "true"}, "resolve", 0, nil},
		{"txid", "/transfers/txId", []string{"txid", "--transfer", "t-1", "--txid", "0xfeed"}, "txid", 0, nil},
		{"address generate", "/travel-address/generate", []string{"address", "generate", "--first-name", "A", "--last-name", "B"}, "address generate", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := newLiveService(t, map[string]liveAnswer{tt.path: {liveDrop, ""}})
			code, out, errOut := runCLI(t, context.Background(), transfer, ls.env(), tt.args...)
			assert.Equal(t, exitUnknown, code, errOut)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &got), out)
			sent := len(ls.received(tt.path))
			if tt.sends > 0 {
				assert.Equal(t, tt.sends, sent)
			}
			want := map[string]any{"outcome": "unknown", "command": tt.cmd, "attempts": float64(sent), "idempotencyKey": "", "callbackRef": ""}
			for k, v := range tt.want {
				want[k] = v
			}
			assert.Equal(t, want, got)
			assert.Contains(t, errOut, "outcome unknown")
			assertNoSecrets(t, out+errOut, "PLANTEDTAG", "Lovelace", capURL)
		})
	}
	t.Run("initiate --idempotency", func(t *testing.T) {
		ls := newLiveService(t, map[string]liveAnswer{"/transfers/initiate": {liveDrop, ""}})
		code, out, errOut := runCLI(t, context.Background(), transfer, ls.env(), "initiate", "--idempotency", "-f", "-")
		assert.Equal(t, exitUnknown, code, errOut)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		sent := ls.received("/transfers/initiate")
		require.NotEmpty(t, sent)
		assert.Equal(t, float64(len(sent)), got["attempts"], "every attempt counted")
		assert.Equal(t, sent[0].header.Get("Idempotency-Key"), got["idempotencyKey"])
		assert.NotEmpty(t, got["idempotencyKey"])
	})
}

// failingWriter fails every write, as a stdout whose reader is gone.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestResultLostIsUnknown: a transfer the service stored whose result
// could not be written ends with exitUnknown, not exitFailed (which would
// have a retrying script send it again); the result goes to stderr.
func TestResultLostIsUnknown(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/transfers/initiate": {http.StatusOK, `{"status":true,"data":{"transferId":"tr-42"}}`}})
	var errOut syncBuffer
	c := &cli{stdin: strings.NewReader(validTransfer), stdout: failingWriter{}, stderr: &errOut, getenv: func(k string) string { return ls.env()[k] }}
	code := c.run(context.Background(), []string{"initiate"})
	assert.Equal(t, exitUnknown, code)
	assert.Contains(t, errOut.String(), "initiate: the service carried the operation out, but its result could not be written (no space left on device): reconcile before sending again")
	assert.Contains(t, errOut.String(), `"transferId":"tr-42"`)
	assert.Len(t, ls.received("/transfers/initiate"), 1)
}

// TestExitStatusesDocumented: the package documentation, the top-level
// help and every command's help document each exit status the command
// can end with, and the commands that call the service their JSON.
func TestExitStatusesDocumented(t *testing.T) {
	calls := []string{
		"  1  refused: nothing was done", "  2  usage error", "  3  outcome unknown: the service may have carried the operation out",
		"any other status (killed by a signal): treat it as 3", `{"outcome":"refused"} (1)`, `{"outcome":"unknown"} (3)`, `"attempts", "idempotencyKey" and "callbackRef"`,
	}
	others := []string{"  0  success", "  1  the operation failed", "  2  usage error"}
	for _, args := range [][]string{
		{"initiate"}, {"resolve"}, {"txid"}, {"discover"}, {"address"}, {"address", "generate"}, {"address", "lookup"},
		{"validate"}, {"address", "decode"}, {"doctor"}, {"listen"}, {"sandbox"}, {"version"},
	} {
		name := strings.Join(args, " ")
		t.Run(name, func(t *testing.T) {
			code, out, _ := runCLI(t, context.Background(), "", nil, append(args, "--help")...)
			require.Equal(t, exitOK, code)
			_, help, _ := strings.Cut(out, "\nExit status:\n")
			require.NotEmpty(t, help, "%s --help has an exit status section", name)
			assert.Contains(t, help, "  0  success")
			if callsService[name] {
				for _, w := range calls {
					assert.Contains(t, help, w)
				}
			} else {
				for _, w := range others {
					assert.Contains(t, help, w)
				}
				assert.NotContains(t, help, "  3  ")
			}
		})
	}
	_, usage, _ := runCLI(t, context.Background(), "", nil, "--help")
	for _, w := range calls {
		assert.Contains(t, usage, w)
	}
	assert.Contains(t, usage, "address generate, address lookup, discover, initiate, resolve, txid;\nthe others end with 0, 1 (the operation failed) or 2.")
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
	for _, w := range []string{"Exit status: 0 success; 1 failed, and nothing was done", "2 usage error", "3, from the commands that call the service, outcome unknown",
		"A script that retries must retry on 1 only", `{"outcome":"unknown"}`} {
		assert.Contains(t, doc, w)
	}
}

// retryingScript is what a team writes around the command: send, and
// send again only when the status says nothing was done.
const retryingScript = `#!/usr/bin/env bash
set -euo pipefail
for try in 1 2 3; do
  status=0
  out=$("$TRAVELRULE" initiate -f "$TRANSFER") || status=$?
  case "$status" in
    0) echo "sent: $out"; exit 0 ;;
    1) echo "refused, sending again" >&2 ;;
    *) echo "stopped with $status: $out"; exit "$status" ;;
  esac
done
echo "refused $try times"
exit 1
`

// TestRetryingScriptSendsOnce: the built command, driven by a bash script
// that sends again on the refused status only, sends a transfer once to a
// service that stores it and then drops the connection, and stops with
// the unknown status; a refusal is sent again, as the script says.
func TestRetryingScriptSendsOnce(t *testing.T) {
	bash := lookTool(t, "bash", "bash")
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "go test puts the go command on PATH")
	dir := t.TempDir()
	bin := filepath.Join(dir, "travelrule")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	script := writeFile(t, "send.sh", retryingScript)
	transfer := writeFile(t, "transfer.json", validTransfer)

	tests := []struct {
		name   string
		answer liveAnswer
		code   int
		sent   int
		want   string
	}{
		{"stored, then the connection dropped", liveAnswer{liveDrop, ""}, exitUnknown, 1, `stopped with 3: {"attempts":1,"callbackRef":"","command":"initiate","idempotencyKey":"","outcome":"unknown"}`},
		{"refused", liveAnswer{http.StatusBadRequest, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"no"}]}`}, exitFailed, 3, "refused 3 times"},
		{"accepted", liveAnswer{http.StatusOK, `{"status":true,"data":{"transferId":"tr-1"}}`}, exitOK, 1, `sent: {"attempts":1,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := newLiveService(t, map[string]liveAnswer{"/transfers/initiate": tt.answer})
			cmd := exec.Command(bash, script)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TRAVELRULE=" + bin, "TRANSFER=" + transfer,
				"TRAVELRULE_BASE_URL=" + ls.URL, "TRAVELRULE_API_KEY=" + liveAPIKey}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			assert.Contains(t, stdout.String(), tt.want)
			assert.Equal(t, tt.sent, len(ls.received("/transfers/initiate")), "transfers the service stored")
			assertNoSecrets(t, stdout.String()+stderr.String(), "Lovelace")
		})
	}
}
