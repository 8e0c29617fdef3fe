package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// syncBuffer is a bytes.Buffer safe to write from a server goroutine while
// the test reads it, and that a test can wait on for some output.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // holds a value after a write the waiter has not seen
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	select {
	case s.signal() <- struct{}{}:
	default:
	}
	return n, err
}

// signal returns the write notification channel; s.mu must be held.
func (s *syncBuffer) signal() chan struct{} {
	if s.wrote == nil {
		s.wrote = make(chan struct{}, 1)
	}
	return s.wrote
}

// waitFor blocks until the output matches re and returns the submatches.
// It waits for writes, never polls; the 30-second bound only ends a test
// whose command never prints the line.
func (s *syncBuffer) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	bound := time.NewTimer(30 * time.Second)
	defer bound.Stop()
	for {
		s.mu.Lock()
		m := re.FindStringSubmatch(s.b.String())
		wrote := s.signal()
		s.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-wrote:
		case <-bound.C:
			t.Fatalf("no output matching %q; got:\n%s", re, s.String())
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runCLI runs the command in-process with the given environment.
func runCLI(t *testing.T, ctx context.Context, stdin string, envs map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIWith(t, ctx, strings.NewReader(stdin), envs, args...)
}

// runCLIWith is runCLI with any standard input, such as a file.
func runCLIWith(t *testing.T, ctx context.Context, stdin io.Reader, envs map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut syncBuffer
	c := &cli{stdin: stdin, stdout: &out, stderr: &errOut, getenv: func(k string) string { return envs[k] }}
	code = c.run(ctx, args)
	return code, out.String(), errOut.String()
}

const validTransfer = `{
  "asset": "BTC", "amount": "0.25", "callback": "https://vasp-a.example/cb",
  "originator": {"personType": "natural", "firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1815-12-10", "country": "GB",
    "accountNumber": "c-1815"},
  "beneficiary": {"personType": "natural", "firstName": "Alan", "lastName": "Turing", "dateOfBirth": "1912-06-23"}
}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestUsageAndExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"version"}, exitOK, "travelrule-go 0."},
		{[]string{"listen", "--help"}, exitOK, "(default \"" + defaultListenAddr + "\")"},
		{[]string{"sandbox", "--help"}, exitOK, "(default \"" + defaultSandboxAddr + "\")"},
		{[]string{"validate", "--help"}, exitOK, "--strict"},
		{[]string{"resolve", "--help"}, exitOK, "--approved"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", nil, tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, out, tt.want)
			assert.Empty(t, errOut)
		})
	}
	assert.NotEqual(t, defaultSandboxAddr, defaultListenAddr, "a sandbox and a listener run side by side")
}

// TestVersion: "travelrule version", and the --version and -version that
// people type by habit, print the SDK's version on stdout.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		t.Run(args[0], func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", nil, args...)
			assert.Equal(t, exitOK, code, errOut)
			assert.Equal(t, "travelrule-go "+travelrule.Version+"\n", out)
			assert.Empty(t, errOut)
		})
	}
	code, _, errOut := runCLI(t, context.Background(), "", nil, "--version", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "unexpected arguments")
}

// TestHelpOnStdout: help asked for goes to stdout with exit 0, for the
// program and every command.
func TestHelpOnStdout(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-h"}, "Commands:"},
		{[]string{"--help"}, "Commands:"},
		{[]string{"help"}, "Commands:"},
		{[]string{"help", "initiate"}, "Usage: travelrule initiate"},
	}
	for _, cmd := range commands() {
		for _, h := range []string{"-h", "--help"} {
			tests = append(tests, struct {
				args []string
				want string
			}{[]string{cmd.name, h}, "Usage: travelrule " + cmd.name})
		}
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", nil, tt.args...)
			assert.Equal(t, exitOK, code)
			assert.Contains(t, out, tt.want)
			assert.Empty(t, errOut)
		})
	}
}

// TestUsageErrorsOnStderr: usage errors go to stderr with exit 2, with the
// command's usage.
func TestUsageErrorsOnStderr(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "Commands:"},
		{[]string{"nope"}, "travelrule: unknown command \"nope\"\n"},
		{[]string{"help", "nope"}, "travelrule: unknown command \"nope\"\n"},
		{[]string{"initate"}, `travelrule: unknown command "initate": did you mean "initiate"?` + "\n"},
		{[]string{"help", "trasnfers"}, `unknown command "trasnfers": did you mean "transfers"?`},
		{[]string{"vers", "--help"}, `unknown command "vers": did you mean "version"?`},
		{[]string{"resolve", "--transfer", "t-1"}, "--approved is required"},
		{[]string{"resolve", "--approved", "true"}, "--transfer is required"},
		{[]string{"initiate", "--bogus"}, "travelrule initiate: flag provided but not defined: -bogus"},
		{[]string{"sandbox", "--addr"}, "flag needs an argument: -addr"},
		{[]string{"version", "extra"}, "unexpected arguments"},
		{[]string{"validate"}, "name at least one file"},
		{[]string{"resolve", "--transfer", "t-1", "--approved", "true"}, "no base URL"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", nil, tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, errOut, tt.want)
			assert.Contains(t, errOut, "Usage: travelrule")
			assert.Empty(t, out)
		})
	}
}

func TestValidateCommand(t *testing.T) {
	good := writeFile(t, "good.json", validTransfer)
	bad := writeFile(t, "bad.json", strings.Replace(strings.Replace(validTransfer, `"BTC"`, `""`, 1), `"GB"`, `"GBR"`, 1))
	typo := writeFile(t, "typo.json", strings.Replace(validTransfer, `"asset"`, `"assett"`, 1))
	number := writeFile(t, "number.json", strings.Replace(validTransfer, `"amount": "0.25"`, `"amount": 0.25`, 1))

	code, out, _ := runCLI(t, context.Background(), "", nil, "validate", good)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, good+": ok\n", out)

	code, out, _ = runCLI(t, context.Background(), "", nil, "validate", good, bad, typo, number)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, out, good+": ok")
	assert.Contains(t, out, bad+": asset: required")
	assert.Contains(t, out, bad+": originator.country: must be exactly 2 letters")
	assert.Contains(t, out, typo+": assett: unknown field (did you mean \"asset\"?)\n")
	assert.Contains(t, out, number+": amount: must be a string\n")
	assert.NotContains(t, out, "Lovelace", "faults never repeat personal data")

	// Strict checks ask for a way to reach the beneficiary: the service's
	// own travel address, in its unchecked form, is one.
	reachable := strings.Replace(validTransfer, `"asset"`, `"travelAddress": "`+uncheckedTA+`", "asset"`, 1)
	code, out, _ = runCLI(t, context.Background(), reachable, nil, "validate", "--strict", "-")
	assert.Equal(t, exitOK, code, out)
	code, out, _ = runCLI(t, context.Background(), validTransfer, nil, "validate", "--strict", "-")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, out, "-: travelAddress: a travelAddress, an email or a beneficiary.email is required to reach the beneficiary")
	code, out, _ = runCLI(t, context.Background(), strings.Replace(reachable, `"GB"`, `"XQ"`, 1), nil, "validate", "--strict", "-")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, out, "originator.country: must be an ISO 3166-1 alpha-2 country code")
}

var listeningRE = regexp.MustCompile(`listening for callbacks on (http://\S+)`)

// startListen runs "travelrule listen" until the test ends and returns its
// URL and output streams.
func startListen(t *testing.T, envs map[string]string, args ...string) (string, *syncBuffer, *syncBuffer) {
	t.Helper()
	var out, errOut syncBuffer
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return envs[k] }}
	return startListenCLI(t, c, &errOut, args...), &out, &errOut
}

// startListenCLI runs "travelrule listen" as c until the test ends and
// returns its URL; errOut is c's stderr.
func startListenCLI(t *testing.T, c *cli, errOut *syncBuffer, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- c.run(ctx, append([]string{"listen", "--addr", "127.0.0.1:0", "--path", "/cb"}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		assert.Equal(t, exitOK, <-done, "listen stops cleanly on cancellation")
	})
	return errOut.waitFor(t, listeningRE)[1]
}

func post(t *testing.T, url string, body string, header http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func lines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		out = append(out, m)
	}
	return out
}

func TestListenCommand(t *testing.T) {
	url, out, _ := startListen(t, nil)
	assert.Equal(t, http.StatusNoContent, post(t, url, `{"transferId":"t-1","status":"approved","timestamp":"2026-11-23T08:00:00Z"}`, nil))
	assert.Equal(t, http.StatusNoContent, post(t, url, `{"approved":{"address":"0xWALLETSECRET","callback":"https://b.example/cb"}}`, nil))
	assert.Equal(t, http.StatusBadRequest, post(t, url, `{not json`, nil))
	// listen prints a callback's line before it answers 204.
	got := lines(t, out.String())
	require.Len(t, got, 2)
	assert.Equal(t, "transfer_resolution", got[0]["kind"])
	assert.Equal(t, "t-1", got[0]["transferId"])
	assert.Equal(t, "approved", got[0]["status"])
	assert.Equal(t, "approved", got[0]["decision"])
	assert.Equal(t, "inquiry_resolution", got[1]["kind"])
	assert.Equal(t, "approved", got[1]["decision"])
	assert.Equal(t, "[redacted]", got[1]["address"])
	assert.NotContains(t, out.String(), "0xWALLETSECRET")
}

func TestListenShowPIIAndSecret(t *testing.T) {
	raw := []byte("test-secret-0123456789")
	secret := []byte(raw)
	url, out, _ := startListen(t, map[string]string{"TRAVELRULE_WEBHOOK_SECRET": "whsec_" + base64.StdEncoding.EncodeToString(raw)}, "--show-pii")
	body := `{"approved":{"address":"0xWALLET","callback":"https://b.example/cb"}}`
	assert.Equal(t, http.StatusUnauthorized, post(t, url, body, nil), "unsigned callbacks are refused when a secret is set")
	h := http.Header{}
	now := time.Now()
	h.Set(callback.HeaderID, "msg_1")
	h.Set(callback.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(callback.HeaderSignature, callback.Sign(secret, "msg_1", now, []byte(body)))
	assert.Equal(t, http.StatusNoContent, post(t, url, body, h))
	got := lines(t, out.String())
	require.Len(t, got, 1)
	assert.Equal(t, "0xWALLET", got[0]["address"])
}

func TestHelpNeverShowsSecrets(t *testing.T) {
	env := map[string]string{
		"TRAVELRULE_WEBHOOK_SECRET": "whsec-DO-NOT-PRINT", "TRAVELRULE_CALLBACK_KEY": "capkey-DO-NOT-PRINT",
		"TRAVELRULE_TOKEN": "token-DO-NOT-PRINT", "TRAVELRULE_CLIENT_SECRET": "client-DO-NOT-PRINT",
		"TRAVELRULE_API_KEY": "apikey-DO-NOT-PRINT",
	}
	for _, args := range [][]string{
		{"listen", "--help"}, {"listen", "extra"}, {"listen", "--path", "nope"}, {"sandbox", "--help"}, {"sandbox", "extra"},
		{"initiate", "--help"}, {"resolve", "--help"}, {"resolve"},
		{"address", "generate", "--help"}, {"address", "generate"}, {"address", "lookup", "--help"}, {"address", "lookup"},
		{"txid", "--help"}, {"txid"}, {"discover", "--help"}, {"discover"}, {"doctor", "--help"}, {"doctor"}, {"doctor", "extra"},
	} {
		_, out, errOut := runCLI(t, context.Background(), "", env, args...)
		assert.NotContains(t, out+errOut, "DO-NOT-PRINT", "%v", args)
	}
}
