package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/travelruletest"
)

// sandboxEnv starts the sandbox in-process and returns the environment a
// shell would have after "travelrule sandbox".
func sandboxEnv(t *testing.T, opts ...travelruletest.Option) (map[string]string, *travelruletest.Server) {
	t.Helper()
	// The CLI is tested here, not callback delivery: the sandbox sends no
	// callbacks to the transfers' example hosts.
	srv := travelruletest.NewServer(append([]travelruletest.Option{travelruletest.WithoutCallbacks()}, opts...)...)
	t.Cleanup(srv.Close)
	tok, err := srv.TokenSource().Token()
	require.NoError(t, err)
	return map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_TOKEN": tok.AccessToken}, srv
}

func TestInitiateCommand(t *testing.T) {
	env, srv := sandboxEnv(t)
	file := writeFile(t, "t.json", validTransfer)
	code, out, errOut := runCLI(t, context.Background(), "", env, "initiate", "-f", file)
	require.Equal(t, exitOK, code, errOut)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "true", res["status"], "the live service's envelope")
	assert.NotEmpty(t, res["transferId"])
	require.Len(t, srv.Transfers(), 1)
	assert.Equal(t, "Lovelace", srv.Transfers()[0].Request.Originator.LastName)

	// From stdin, with client credentials instead of a token.
	cc := map[string]string{
		"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_TOKEN_URL": srv.TokenURL(),
		"TRAVELRULE_CLIENT_ID": travelruletest.DefaultClientID, "TRAVELRULE_CLIENT_SECRET": travelruletest.DefaultClientSecret,
	}
	code, _, errOut = runCLI(t, context.Background(), validTransfer, cc, "initiate")
	require.Equal(t, exitOK, code, errOut)
	assert.Len(t, srv.Transfers(), 2)

	// With the sandbox's API key, as with the live service's.
	key := map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_API_KEY": travelruletest.DefaultAPIKey}
	code, _, errOut = runCLI(t, context.Background(), validTransfer, key, "initiate")
	require.Equal(t, exitOK, code, errOut)
	assert.Len(t, srv.Transfers(), 3)
	assert.Equal(t, 1, countLogins(srv))
}

// countLogins counts the requests to the sandbox's login.
func countLogins(srv *travelruletest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/auth/token") {
			n++
		}
	}
	return n
}

func TestInitiateCommandFailures(t *testing.T) {
	env, srv := sandboxEnv(t)
	tests := []struct {
		name  string
		body  string
		env   map[string]string
		code  int
		wants []string
	}{
		{"invalid request never sent", strings.Replace(validTransfer, `"BTC"`, `""`, 1), env, exitFailed, []string{"asset: required"}},
		{"unknown travel address is 404", strings.Replace(validTransfer, `"asset"`, `"travelAddress": "`+travelruletest.UnknownTravelAddress+`", "asset"`, 1), env, exitFailed, []string{"404 Not Found"}},
		{"expired token is 403", validTransfer, map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_TOKEN": srv.ExpiredToken()}, exitFailed, []string{"403 Forbidden", "FORBIDDEN"}},
		{"forged token is 401", validTransfer, map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_TOKEN": srv.ForgedToken()}, exitFailed, []string{"401 Unauthorized"}},
		{"inactive API key is 403", validTransfer, map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_API_KEY": travelruletest.InactiveAPIKey}, exitFailed, []string{"403", "inactive"}},
		{"no credentials is a usage error", validTransfer, map[string]string{"TRAVELRULE_BASE_URL": srv.URL}, exitUsage, []string{"no credentials"}},
		{"not JSON", "{", env, exitFailed, []string{"not a transfer request"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Transfers())
			code, _, errOut := runCLI(t, context.Background(), tt.body, tt.env, "initiate")
			assert.Equal(t, tt.code, code)
			for _, w := range tt.wants {
				assert.Contains(t, errOut, w)
			}
			assert.NotContains(t, errOut, "Lovelace")
			assert.Len(t, srv.Transfers(), before, "nothing stored")
		})
	}
}

func TestResolveCommand(t *testing.T) {
	env, srv := sandboxEnv(t)
	url, _, _ := startListen(t, nil)
	req, faults, err := checkTransfer([]byte(validTransfer), false)
	require.NoError(t, err)
	require.Empty(t, faults)
	id, err := srv.StartInquiry(context.Background(), url, req)
	require.NoError(t, err)

	code, out, errOut := runCLI(t, context.Background(), "", env, "resolve", "--transfer", id, "--approved", "true")
	require.Equal(t, exitOK, code, errOut)
	assert.JSONEq(t, `{"status":true,"requestId":"`+requestID(out)+`","attempts":1}`, out)
	tr, ok := srv.Transfer(id)
	require.True(t, ok)
	assert.Equal(t, travelruletest.StateApproved, tr.State)

	code, _, errOut = runCLI(t, context.Background(), "", env, "resolve", "--transfer", "no-such-transfer", "--approved", "true")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut, "404 Not Found")
	code, _, errOut = runCLI(t, context.Background(), "", env, "resolve", "--transfer", id, "--approved", "maybe")
	assert.Equal(t, exitUsage, code, "refused before sending")
	assert.Contains(t, errOut, `"true" or "false"`)
}

func requestID(out string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(out), &m)
	s, _ := m["requestId"].(string)
	return s
}

// envLineRE matches the banner's settings; a "# " before one marks a
// credential of another kind, printed to use instead of the API key.
var envLineRE = regexp.MustCompile(`(?m)^(# )?(TRAVELRULE_\w+)=(\S+)$`)

// sandboxCommand runs "travelrule sandbox args..." in-process until stop is
// called (or the test ends), and returns its environment lines once it is
// listening.
type sandboxCommand struct {
	env         map[string]string // what a shell that ran the banner has
	printed     map[string]string // env and the settings printed commented out
	out, errOut *syncBuffer
	stop        func() int // ends the command and returns its exit status
}

func runSandboxCommand(t *testing.T, args ...string) *sandboxCommand {
	t.Helper()
	return runSandboxCommandEnv(t, nil, args...)
}

// runSandboxCommandEnv is runSandboxCommand with the environment envs.
func runSandboxCommandEnv(t *testing.T, envs map[string]string, args ...string) *sandboxCommand {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sc := &sandboxCommand{env: map[string]string{}, printed: map[string]string{}, out: &syncBuffer{}, errOut: &syncBuffer{}}
	c := &cli{stdin: strings.NewReader(""), stdout: sc.out, stderr: sc.errOut, getenv: func(k string) string { return envs[k] }}
	done := make(chan int, 1)
	go func() { done <- c.run(ctx, append([]string{"sandbox"}, args...)) }()
	var once sync.Once
	code := 0
	sc.stop = func() int {
		once.Do(func() { cancel(); code = <-done })
		return code
	}
	t.Cleanup(func() { sc.stop() })
	// The sandbox prints its environment and transcript, then says it is
	// listening.
	listening := sc.errOut.waitFor(t, regexp.MustCompile(`sandbox listening on (\S+)`))
	for _, m := range envLineRE.FindAllStringSubmatch(sc.out.String(), -1) {
		sc.printed[m[2]] = m[3]
		if m[1] == "" {
			sc.env[m[2]] = m[3]
		}
	}
	require.Equal(t, listening[1], sc.env["TRAVELRULE_BASE_URL"])
	return sc
}

func TestSandboxCommand(t *testing.T) {
	sc := runSandboxCommand(t, "--addr", "127.0.0.1:0", "--prefix", "/api/v3")
	env := sc.env
	assert.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*/api/v3$`, env["TRAVELRULE_BASE_URL"], "the port the system chose")
	code, _, errOut2 := runCLI(t, context.Background(), validTransfer, map[string]string{
		"TRAVELRULE_BASE_URL": env["TRAVELRULE_BASE_URL"], "TRAVELRULE_TOKEN": sc.printed["TRAVELRULE_TOKEN"]}, "initiate")
	assert.Equal(t, exitOK, code, errOut2)
	// The whole environment, API key included, as a shell that ran the
	// banner would have it.
	code, _, errOut2 = runCLI(t, context.Background(), validTransfer, env, "initiate")
	assert.Equal(t, exitOK, code, errOut2)
	assert.Equal(t, travelruletest.DefaultAPIKey, env["TRAVELRULE_API_KEY"])

	assert.Equal(t, exitOK, sc.stop())
	assert.Contains(t, sc.errOut.String(), "stopped")

	// A busy address fails cleanly.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	code, _, errOut3 := runCLI(t, context.Background(), "", nil, "sandbox", "--addr", busy.Addr().String())
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut3, "sandbox:")
}

// The flags that choose the sandbox's answers: the excerpt's initiation
// answer, and a travelAddress (or an email) required.
func TestSandboxAnswerFlags(t *testing.T) {
	for _, tt := range []struct {
		name   string
		flags  []string
		code   int
		status string // of the initiation, when it succeeds
		withID bool
		want   string // in stderr, when it fails
	}{
		{"live answers", nil, exitOK, "true", true, ""},
		{"--excerpt-answers", []string{"--excerpt-answers"}, exitOK, "succes", true, ""},
		{"--documented-answer", []string{"--documented-answer"}, exitOK, "succes", false, ""},
		{"--travel-address-required", []string{"--travel-address-required"}, exitFailed, "", false, "travelAddress"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := runSandboxCommand(t, append([]string{"--addr", "127.0.0.1:0"}, tt.flags...)...)
			code, out, errOut := runCLI(t, context.Background(), validTransfer, sc.env, "initiate")
			require.Equal(t, tt.code, code, errOut)
			if tt.code != exitOK {
				assert.Contains(t, errOut, tt.want)
				return
			}
			var res map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &res))
			assert.Equal(t, tt.status, res["status"])
			if tt.withID {
				assert.NotEmpty(t, res["transferId"])
			} else {
				assert.Empty(t, res["transferId"])
			}
		})
	}
}

// TestExposureError: on a loopback address the sandbox starts with its
// published credentials; off loopback only when each is replaced, and the
// refusal names what to set for each one still published.
func TestExposureError(t *testing.T) {
	all := publishedCreds{apiKey: true, clientSecret: true, signingSecret: true}
	apiKeyVars := "the API key (TRAVELRULE_API_KEY, TRAVELRULE_API_KEY_FILE or --api-key-file)"
	clientVars := "the client secret (TRAVELRULE_CLIENT_SECRET, and TRAVELRULE_CLIENT_ID)"
	signingVars := "the signing secret (TRAVELRULE_SIGNING_SECRET, TRAVELRULE_SIGNING_SECRET_FILE or --signing-secret-file; or a Standard Webhooks secret, TRAVELRULE_WEBHOOK_SECRET or TRAVELRULE_WEBHOOK_SECRET_FILE)"
	tests := []struct {
		addr      string
		published publishedCreds
		want      []string // what the refusal names; nil: no refusal
	}{
		{"127.0.0.1:8080", all, nil},
		{"127.0.0.1:0", all, nil},
		{"127.42.0.9:8080", all, nil},
		{"[::1]:8080", all, nil},
		{"[::ffff:127.0.0.1]:8080", all, nil},
		{"localhost:8080", all, nil},
		{"LocalHost:8080", all, nil},
		{":8080", all, []string{apiKeyVars, clientVars, signingVars}},
		{"0.0.0.0:8080", all, []string{"refusing to listen on 0.0.0.0:8080, which is not a loopback address", apiKeyVars, clientVars, signingVars}},
		{"[::]:8080", all, []string{apiKeyVars}},
		{"192.168.1.5:8080", all, []string{apiKeyVars}},
		{"128.0.0.1:8080", all, []string{apiKeyVars}},
		{"sandbox.example:8080", all, []string{apiKeyVars}},
		{"localhost.example:8080", all, []string{apiKeyVars}},
		{"0.0.0.0:8080", publishedCreds{}, nil},
		{"0.0.0.0:8080", publishedCreds{apiKey: true}, []string{apiKeyVars}},
		{"0.0.0.0:8080", publishedCreds{clientSecret: true}, []string{clientVars}},
		{"0.0.0.0:8080", publishedCreds{signingSecret: true}, []string{signingVars}},
		{"no port", all, nil}, // listening fails on it
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %+v", tt.addr, tt.published), func(t *testing.T) {
			err := exposureError(tt.addr, tt.published)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			for flag, vars := range map[bool]string{!tt.published.apiKey: apiKeyVars, !tt.published.clientSecret: clientVars, !tt.published.signingSecret: signingVars} {
				if flag {
					assert.NotContains(t, err.Error(), vars, "a credential of the user's is not asked for")
				}
			}
		})
	}
}

// TestSandboxOffLoopback: the sandbox refuses to listen off loopback with
// its published credentials, naming what to set; with credentials of the
// user's it starts there, refuses the published ones, takes the user's and
// prints none of them.
func TestSandboxOffLoopback(t *testing.T) {
	const (
		key     = "team-sandbox-key-PRIVATE-0123"
		secret  = "team-client-secret-PRIVATE-0123"
		signing = "team-signing-secret-PRIVATE-0123"
	)
	own := map[string]string{"TRAVELRULE_API_KEY": key, "TRAVELRULE_CLIENT_ID": "team-client",
		"TRAVELRULE_CLIENT_SECRET": secret, "TRAVELRULE_SIGNING_SECRET": signing}
	// Already ended: a sandbox that starts when it must not stops at once,
	// and the test fails on its exit status instead of hanging.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"published credentials", nil, []string{"TRAVELRULE_API_KEY", "TRAVELRULE_CLIENT_SECRET", "TRAVELRULE_SIGNING_SECRET", "--api-key-file"}},
		{"the published API key set", map[string]string{"TRAVELRULE_API_KEY": travelruletest.DefaultAPIKey, "TRAVELRULE_CLIENT_SECRET": secret, "TRAVELRULE_SIGNING_SECRET": signing}, []string{"the API key (TRAVELRULE_API_KEY"}},
		{"the published signing secret set", map[string]string{"TRAVELRULE_API_KEY": key, "TRAVELRULE_CLIENT_SECRET": secret, "TRAVELRULE_SIGNING_SECRET": travelruletest.DefaultSigningSecret}, []string{"the signing secret (TRAVELRULE_SIGNING_SECRET"}},
		{"no client secret", map[string]string{"TRAVELRULE_API_KEY": key, "TRAVELRULE_WEBHOOK_SECRET": signing}, []string{"the client secret (TRAVELRULE_CLIENT_SECRET"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, ended, "", tt.env, "sandbox", "--addr", "0.0.0.0:0")
			assert.Equal(t, exitUsage, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, "sandbox: refusing to listen on 0.0.0.0:0, which is not a loopback address")
			for _, w := range tt.want {
				assert.Contains(t, errOut, w)
			}
			assert.NotContains(t, errOut, "sandbox listening")
			assertNoSecrets(t, errOut, key, secret, signing)
		})
	}

	t.Run("credentials of the user's", func(t *testing.T) {
		sc := runSandboxCommandEnv(t, own, "--addr", "0.0.0.0:0")
		base := sc.env["TRAVELRULE_BASE_URL"]
		require.NotEmpty(t, base)
		assert.NotContains(t, sc.printed, "TRAVELRULE_API_KEY", "the user's key is not printed")
		assert.NotContains(t, sc.printed, "TRAVELRULE_CLIENT_SECRET")
		assert.NotContains(t, sc.printed, "TRAVELRULE_TOKEN", "a token would let whoever reads the output in, without a credential")
		assert.Equal(t, "team-client", sc.printed["TRAVELRULE_CLIENT_ID"])
		for _, k := range []string{"TRAVELRULE_TOKEN_URL", "TRAVELRULE_CLIENT_ID"} {
			assert.NotContains(t, sc.env, k, "printed commented out: a shell that runs the banner has credentials of one kind")
		}
		assert.Contains(t, sc.out.String(), `"x-api-key: $TRAVELRULE_API_KEY"`, "the transcript reads the key from the environment")
		assertNoSecrets(t, sc.out.String()+sc.errOut.String(), key, secret, signing)

		for _, tt := range []struct {
			name string
			env  map[string]string
			code int
		}{
			{"the published API key", map[string]string{"TRAVELRULE_API_KEY": travelruletest.DefaultAPIKey}, exitFailed},
			{"the published client credentials", map[string]string{"TRAVELRULE_TOKEN_URL": sc.printed["TRAVELRULE_TOKEN_URL"],
				"TRAVELRULE_CLIENT_ID": travelruletest.DefaultClientID, "TRAVELRULE_CLIENT_SECRET": travelruletest.DefaultClientSecret}, exitFailed},
			{"the user's API key", map[string]string{"TRAVELRULE_API_KEY": key}, exitOK},
			{"the user's client credentials", map[string]string{"TRAVELRULE_TOKEN_URL": sc.printed["TRAVELRULE_TOKEN_URL"],
				"TRAVELRULE_CLIENT_ID": "team-client", "TRAVELRULE_CLIENT_SECRET": secret}, exitOK},
		} {
			t.Run(tt.name, func(t *testing.T) {
				tt.env["TRAVELRULE_BASE_URL"] = base
				code, _, errOut := runCLI(t, context.Background(), "", tt.env, "address", "generate", "--first-name", "A", "--last-name", "B")
				assert.Equal(t, tt.code, code, errOut)
			})
		}
	})

	t.Run("credentials of the user's, from files", func(t *testing.T) {
		dir := t.TempDir()
		file := func(name, v string) string {
			p := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(p, []byte(v+"\n"), 0o600))
			return p
		}
		sc := runSandboxCommandEnv(t, map[string]string{"TRAVELRULE_API_KEY_FILE": file("key", key), "TRAVELRULE_CLIENT_ID": "team-client",
			"TRAVELRULE_CLIENT_SECRET_FILE": file("secret", secret), "TRAVELRULE_SIGNING_SECRET_FILE": file("signing", signing)}, "--addr", "0.0.0.0:0")
		base := sc.env["TRAVELRULE_BASE_URL"]
		require.NotEmpty(t, base, "it starts off loopback: every published credential is replaced")
		assertNoSecrets(t, sc.out.String()+sc.errOut.String(), key, secret, signing)
		for secretUsed, want := range map[string]int{secret: exitOK, travelruletest.DefaultClientSecret: exitFailed} {
			code, _, errOut := runCLI(t, context.Background(), "", map[string]string{"TRAVELRULE_BASE_URL": base,
				"TRAVELRULE_TOKEN_URL": sc.printed["TRAVELRULE_TOKEN_URL"], "TRAVELRULE_CLIENT_ID": "team-client", "TRAVELRULE_CLIENT_SECRET": secretUsed},
				"address", "generate", "--first-name", "A", "--last-name", "B")
			assert.Equal(t, want, code, errOut)
		}
	})

	t.Run("loopback with the published credentials", func(t *testing.T) {
		for _, addr := range []string{"localhost:0", "127.0.0.1:0"} {
			sc := runSandboxCommand(t, "--addr", addr)
			assert.Equal(t, travelruletest.DefaultAPIKey, sc.env["TRAVELRULE_API_KEY"])
			code, _, errOut := runCLI(t, context.Background(), validTransfer, sc.env, "initiate")
			assert.Equal(t, exitOK, code, errOut)
			assert.Equal(t, exitOK, sc.stop())
		}
	})
}

// TestSandboxCallbackSecret: a Standard Webhooks secret is never taken from
// the command line (a usage error that names the variables to set instead,
// without the value); from TRAVELRULE_WEBHOOK_SECRET or the file
// TRAVELRULE_WEBHOOK_SECRET_FILE names, the sandbox says which it used,
// never the secret.
func TestSandboxCallbackSecret(t *testing.T) {
	const secret = "PLANTED-webhook-secret-0123456789"
	// Already ended: a sandbox that starts when it must not stops at once.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	code, out, errOut := runCLI(t, ended, "", nil, "sandbox", "--addr", "127.0.0.1:0", "--callback-secret", secret)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "--callback-secret is refused")
	assert.Contains(t, errOut, "TRAVELRULE_WEBHOOK_SECRET_FILE")
	assertNoSecrets(t, errOut, secret)

	file := filepath.Join(t.TempDir(), "webhook-secret")
	require.NoError(t, os.WriteFile(file, []byte(secret+"\n"), 0o600))
	for _, tt := range []struct {
		env    map[string]string
		source string
	}{
		{map[string]string{"TRAVELRULE_WEBHOOK_SECRET": secret}, "(TRAVELRULE_WEBHOOK_SECRET)"},
		{map[string]string{"TRAVELRULE_WEBHOOK_SECRET_FILE": file}, "(TRAVELRULE_WEBHOOK_SECRET_FILE)"},
	} {
		t.Run(tt.source, func(t *testing.T) {
			sc := runSandboxCommandEnv(t, tt.env, "--addr", "127.0.0.1:0")
			assert.Contains(t, sc.errOut.String(), "callbacks are signed with Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) under the Standard Webhooks secret you gave "+tt.source)
			assertNoSecrets(t, sc.out.String()+sc.errOut.String(), secret)
		})
	}
	code, _, errOut = runCLI(t, ended, "", map[string]string{"TRAVELRULE_WEBHOOK_SECRET": secret, "TRAVELRULE_WEBHOOK_SECRET_FILE": file}, "sandbox", "--addr", "127.0.0.1:0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "set one")
	assertNoSecrets(t, errOut, secret)
}

// TestSandboxMisbehaviourFlagErrors: a --fault, --decision or --tls-ca-file the sandbox
// cannot take is a usage error that says why, before anything listens.
func TestSandboxMisbehaviourFlagErrors(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background()) // a sandbox that starts stops at once
	cancel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--fault", "teapot"}, `--fault: unknown fault kind "teapot" (one of latency, rate-limit,`},
		{[]string{"--fault", "internal:rate=2"}, "--fault: internal: rate=2: want a number above 0 and at most 1"},
		{[]string{"--fault", "rate-limit:retry-after=2"}, "--fault: rate-limit: retry-after=2: want a duration such as 2s or 300ms"},
		{[]string{"--decision", "maybe"}, "--decision must be approve, reject or none"},
		{[]string{"--tls-ca-file", "ca.pem"}, "--tls-ca-file needs --tls"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, ended, "", nil, append([]string{"sandbox", "--addr", "127.0.0.1:0"}, tt.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, "sandbox: "+tt.want)
			assert.NotContains(t, errOut, "sandbox listening")
		})
	}
}

// TestSandboxDefaultBaseURL: the sandbox's default base URL, path prefix
// included, is the one the curl lines of its page (docs/sandbox.md) use.
func TestSandboxDefaultBaseURL(t *testing.T) {
	page, err := os.ReadFile("../../docs/sandbox.md")
	require.NoError(t, err)
	base := "http://" + defaultSandboxAddr
	require.Contains(t, string(page), base+"/auth/token", "the page's login line")
	require.Contains(t, string(page), base+"/sandbox/inquiries")

	sc := runSandboxCommand(t, "--addr", "127.0.0.1:0")
	u, err := url.Parse(sc.env["TRAVELRULE_BASE_URL"])
	require.NoError(t, err)
	assert.Empty(t, u.Path, "no path prefix by default, as the page's curl lines have none")
}

// TestSandboxAddrIsHostAndPort: --addr 8080 or :8080 is a usage error that
// shows the form wanted, not a raw net error.
func TestSandboxAddrIsHostAndPort(t *testing.T) {
	for addr, want := range map[string]string{
		"8080":  "--addr 8080: want HOST:PORT, e.g. 127.0.0.1:8080 (this machine only)",
		":8080": "--addr :8080: name the host: 127.0.0.1:8080 for this machine only, 0.0.0.0:8080 for every interface",
	} {
		code, _, errOut := runCLI(t, context.Background(), "", nil, "sandbox", "--addr", addr)
		assert.Equal(t, exitUsage, code, addr)
		assert.Contains(t, errOut, want)
	}
}

// TestSigningSecretVar: the banner names the published signing secret by
// the variable of its kind, and a secret of the user's not at all.
func TestSigningSecretVar(t *testing.T) {
	for _, tt := range []struct {
		published, webhooks bool
		want                string
	}{
		{true, false, "TRAVELRULE_SIGNING_SECRET"},
		{true, true, "TRAVELRULE_WEBHOOK_SECRET"},
		{false, false, ""},
		{false, true, ""},
	} {
		assert.Equal(t, tt.want, signingSecretVar(tt.published, tt.webhooks), "published %v, webhooks %v", tt.published, tt.webhooks)
	}
}
