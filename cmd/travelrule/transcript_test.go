package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// callbackSink receives callbacks and passes each body on.
func callbackSink(t *testing.T) (url string, bodies <-chan map[string]any) {
	t.Helper()
	ch := make(chan map[string]any, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		ch <- m
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/callback", ch
}

// runScript runs script with sh -eu and returns its standard output.
func runScript(t *testing.T, script string) string {
	t.Helper()
	sh := lookTool(t, "sh", "dash")
	lookTool(t, "curl", "curl")
	lookTool(t, "sed", "sed")
	p := writeFile(t, "flow.sh", script)
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(context.Background(), sh, "-eu", p)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "script:\n%s\nstdout:\n%s\nstderr:\n%s", script, out.String(), errOut.String())
	return out.String()
}

var uuidRE = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`

// checkFlowOutput checks every answer of the transcript's run against srv
// and returns the ids of the transfer and of the inquiry.
func checkFlowOutput(t *testing.T, out string) (transfer, inquiry string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 6, "output:\n%s", out)
	ta := regexp.MustCompile(`^travel address (ta[1-9A-HJ-NP-Za-km-z]+)$`).FindStringSubmatch(lines[0])
	require.NotNil(t, ta, "line %q", lines[0])
	form, _ := travelrule.InspectTravelAddress(ta[1])
	assert.Equal(t, travelrule.TravelAddressUnchecked, form, "the live service's form")
	tr := regexp.MustCompile(`^transfer (` + uuidRE + `)$`).FindStringSubmatch(lines[1])
	require.NotNil(t, tr, "line %q", lines[1])
	m := regexp.MustCompile(`^inquiry (` + uuidRE + `)$`).FindStringSubmatch(lines[2])
	require.NotNil(t, m, "line %q", lines[2])
	assert.Equal(t, `{"status":true}`, lines[3])
	var state map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[4]), &state), lines[4])
	assert.Equal(t, m[1], state["transferId"])
	assert.Equal(t, "approved", state["state"])
	for _, pii := range []string{"Ada", "Lovelace", "1815-12-10"} {
		assert.NotContains(t, lines[4], pii)
	}
	assert.JSONEq(t, `{"status":true,"data":{"transferId":"`+tr[1]+`","txId":"`+txHash+`"}}`, lines[5])
	return tr[1], m[1]
}

// checkFlowRecords checks what the sandbox recorded of the transcript's
// run: the transfer went to the generated beneficiary, was confirmed by its
// txId, and the inquiry was approved.
func checkFlowRecords(t *testing.T, srv interface {
	Transfer(string) (travelruletest.Transfer, bool)
}, transfer, inquiry string) {
	t.Helper()
	tr, ok := srv.Transfer(transfer)
	require.True(t, ok)
	assert.NotEmpty(t, tr.BeneficiaryID, "the generated travel address's beneficiary")
	assert.Equal(t, travelruletest.FlowOpenVASP, tr.Flow)
	assert.Equal(t, txHash, tr.TxID)
	assert.True(t, tr.Confirmed)
	in, ok := srv.Transfer(inquiry)
	require.True(t, ok)
	assert.Equal(t, travelruletest.StateApproved, in.State)
}

// waitInquiry waits for the inquiry about id among the callbacks.
func waitInquiry(t *testing.T, bodies <-chan map[string]any, id string) {
	t.Helper()
	bound := time.NewTimer(30 * time.Second) // ends only a test whose inquiry never comes
	defer bound.Stop()
	for {
		select {
		case m := <-bodies:
			// The live INQUIRY: its transfer id is the q of its callback.
			cb, _ := m["callback"].(string)
			if u, err := url.Parse(cb); err == nil && u.Query().Get("q") == id && m["IVMS101"] != nil {
				return
			}
		case <-bound.C:
			t.Fatal("the inquiry never reached the callback URL")
		}
	}
}

func TestTranscriptRunsEndToEnd(t *testing.T) {
	cbURL, bodies := callbackSink(t)
	srv := travelruletest.NewServer(travelruletest.WithPathPrefix("/api/v3"))
	t.Cleanup(srv.Close)
	script := transcript(flow{baseURL: srv.URL, apiKey: travelruletest.DefaultAPIKey, callbackURL: cbURL})
	transfer, inquiry := checkFlowOutput(t, runScript(t, script))
	waitInquiry(t, bodies, inquiry)
	checkFlowRecords(t, srv, transfer, inquiry)
	assert.Len(t, srv.Transfers(), 2, "the initiation and the inquiry")
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Method+" "+strings.TrimPrefix(r.Path, "/api/v3"))
	}
	assert.Equal(t, []string{
		"POST /auth/token", "POST /travel-address/generate", "POST /transfers/initiate",
		"POST /sandbox/inquiries", "POST /transfers/inquiryResolution", "GET /sandbox/transfers/" + inquiry,
		"POST /transfers/txId",
	}, paths, "the five stages, in order")
}

func TestShellQuote(t *testing.T) {
	sh := lookTool(t, "sh", "dash")
	for _, s := range []string{"", "plain", "it's", `a"b`, "$HOME `x` \\n", "'"} {
		out, err := exec.Command(sh, "-c", "printf %s "+shellQuote(s)).Output()
		require.NoError(t, err)
		assert.Equal(t, s, string(out))
	}
}

// What "travelrule sandbox" prints at start runs as it is, and says how to
// get each answer.
func TestSandboxPrintsARunnableTranscript(t *testing.T) {
	cbURL, bodies := callbackSink(t)
	sc := runSandboxCommand(t, "--addr", "127.0.0.1:0", "--prefix", "/api/v3", "--callback-url", cbURL)
	assert.Equal(t, travelruletest.DefaultAPIKey, sc.env["TRAVELRULE_API_KEY"], "the demo key is printed")
	_, inquiry := checkFlowOutput(t, runScript(t, sc.out.String()))
	waitInquiry(t, bodies, inquiry)

	banner := sc.errOut.String()
	base := sc.env["TRAVELRULE_BASE_URL"]
	for _, want := range []string{
		travelruletest.DefaultAPIKey, travelruletest.InactiveAPIKey, travelruletest.ExpiredAPIKey, "POST " + base + "/auth/token",
		travelruletest.KnownTravelAddress, travelruletest.UnknownTravelAddress, travelruletest.PlaceholderTravelAddress,
		".invalid", "answers 404 INVALID_TRAVEL_ADDRESS", "answers 400 INVALID_TRAVEL_ADDRESS",
		"POST " + base + "/travel-address/generate", "GET  " + base + "/discovery/vasp",
		"POST " + base + "/sandbox/inquiries", "GET  " + base + "/sandbox/transfers/{id}",
	} {
		assert.Contains(t, banner, want)
	}
	assert.Equal(t, exitOK, sc.stop())
}

func TestSandboxHelpSaysHowToGetEachAnswer(t *testing.T) {
	code, out, _ := runCLI(t, context.Background(), "", nil, "sandbox", "--help")
	require.Equal(t, exitOK, code)
	for _, want := range []string{
		travelruletest.DefaultAPIKey, travelruletest.InactiveAPIKey, travelruletest.ExpiredAPIKey,
		travelruletest.KnownTravelAddress, travelruletest.UnknownTravelAddress, "answers 400", "--unknown-travel-address",
		"--travel-address-required", "--excerpt-answers", "{base}/sandbox/inquiries", "{base}/discovery/vasp",
	} {
		assert.Contains(t, out, want)
	}
}

func TestSandboxTravelAddressFlags(t *testing.T) {
	sc := runSandboxCommand(t, "--addr", "127.0.0.1:0",
		"--travel-address", travelruletest.UnknownTravelAddress, "--unknown-travel-address", travelruletest.KnownTravelAddress)
	env := map[string]string{"TRAVELRULE_BASE_URL": sc.env["TRAVELRULE_BASE_URL"], "TRAVELRULE_TOKEN": sc.printed["TRAVELRULE_TOKEN"]}
	for _, tt := range []struct {
		address string
		code    int
		want    string
	}{
		{travelruletest.UnknownTravelAddress, exitOK, ""},
		{travelruletest.KnownTravelAddress, exitFailed, "404 Not Found: INVALID_TRAVEL_ADDRESS"},
	} {
		t.Run(tt.address, func(t *testing.T) {
			body := strings.Replace(validTransfer, `"asset"`, `"travelAddress": "`+tt.address+`", "asset"`, 1)
			code, _, errOut := runCLI(t, context.Background(), body, env, "initiate", "-f", "-")
			assert.Equal(t, tt.code, code, errOut)
			assert.Contains(t, errOut, tt.want)
		})
	}
}

// runHostile runs script with sh in a fresh directory and reports whether
// the file PWNED, which a hostile value tries to create, appeared there.
func runHostile(t *testing.T, script string) bool {
	t.Helper()
	sh := lookTool(t, "sh", "dash")
	dir := t.TempDir()
	p := writeFile(t, "flow.sh", script)
	cmd := exec.Command(sh, p)
	cmd.Dir = dir
	_ = cmd.Run() // its curl commands fail: only the marker matters
	_, err := os.Stat(filepath.Join(dir, "PWNED"))
	return err == nil
}

// Values the sandbox prints come from flags: none of them can run a
// command in the script that its stdout is.
func TestSandboxOutputCannotInject(t *testing.T) {
	script := transcript(flow{
		baseURL: "http://127.0.0.1:1/a';:>PWNED;'", apiKey: "k';:>PWNED;'",
		callbackURL: "http://127.0.0.1:1/\n:>PWNED #",
	})
	assert.False(t, runHostile(t, script), "the transcript ran a command:\n%s", script)

	srv := travelruletest.NewServer(travelruletest.WithPathPrefix("/api;:>PWNED;:"))
	t.Cleanup(srv.Close)
	var out, errOut syncBuffer
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	require.NoError(t, c.sandboxBanner(srv, time.Hour, "http://127.0.0.1:1/", sandboxSetup{signing: "signing", clientID: "c;:>PWNED;", published: publishedCreds{apiKey: true, clientSecret: true}}))
	assert.False(t, runHostile(t, out.String()), "the sandbox's stdout ran a command from --prefix:\n%s", out.String())
}

func TestShellWord(t *testing.T) {
	sh := lookTool(t, "sh", "dash")
	for _, tt := range []struct{ in, want string }{
		{"http://127.0.0.1:8080/api/v3", "http://127.0.0.1:8080/api/v3"},
		{"eyJhbGciOi.eyJpc3Mi.sig-_", "eyJhbGciOi.eyJpc3Mi.sig-_"},
		{"", "''"},
		{"/a;b", "'/a;b'"},
		{"$(x)", "'$(x)'"},
		{"it's", `'it'\''s'`},
		{"é", "'é'"},
	} {
		assert.Equal(t, tt.want, shellWord(tt.in))
		out, err := exec.Command(sh, "-c", "printf %s "+shellWord(tt.in)).Output()
		require.NoError(t, err)
		assert.Equal(t, tt.in, string(out))
	}
}

func TestSandboxRefusesABadCallbackURL(t *testing.T) {
	// Already ended: a sandbox that starts despite a bad URL stops at once,
	// and the test fails on its exit status instead of hanging.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, u := range []string{"127.0.0.1:8081", "ftp://h/", "http://h/a b", "http://h/\n:>x", "http:///x"} {
		code, _, errOut := runCLI(t, ctx, "", nil, "sandbox", "--addr", "127.0.0.1:0", "--callback-url", u)
		assert.Equal(t, exitUsage, code, u)
		assert.Contains(t, errOut, "--callback-url must be", u)
	}
}
