package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// The vector of live-service.md, made by running the service's own
// published verifier code.
const (
	vectorSecret = "whsec-live-signing-secret-0123456789abcdef"
	vectorBody   = `{"transferId":"abc","status":"APPROVED","statusComment":"ok","callback":"https://x"}`
	vectorHeader = "77bfd3f7096582866b4468ddaea1abd8c28efc3eff10c1ce1634aec29543e68b830357121538d34dbeb7d04d3f5475f9b98a5b573d6a54cbaf50fc9215b90226"
)

// TestListenVerifiesDataIntegrity: with the live service's signing secret,
// from the environment or a file, listen accepts the service's own
// signature and refuses a wrong, missing or stale one, and never prints
// the secret.
func TestListenVerifiesDataIntegrity(t *testing.T) {
	file := writeFile(t, "signing-secret", vectorSecret+"\n")
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"TRAVELRULE_SIGNING_SECRET", map[string]string{"TRAVELRULE_SIGNING_SECRET": vectorSecret}, nil},
		{"TRAVELRULE_SIGNING_SECRET_FILE", map[string]string{"TRAVELRULE_SIGNING_SECRET_FILE": file}, nil},
		{"--signing-secret-file", nil, []string{"--signing-secret-file", file}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, out, errOut := startListen(t, tt.env, tt.args...)
			errOut.waitFor(t, regexp.MustCompile(`verifying x-data-integrity signatures`))
			signed := func(sig string) http.Header {
				h := http.Header{}
				if sig != "" {
					h.Set(callback.HeaderDataIntegrity, sig)
				}
				return h
			}
			assert.Equal(t, http.StatusNoContent, post(t, url, vectorBody, signed(vectorHeader)), "the service's own signature")
			line := out.waitFor(t, regexp.MustCompile(`(?m)^.*"transferId":"abc".*$`))[0]
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m))
			assert.Equal(t, "transfer_resolution", m["kind"])
			assert.Equal(t, "APPROVED", m["status"])
			assert.Equal(t, "[redacted]", m["statusComment"], "the other VASP's free text")

			altered := strings.Replace(vectorBody, `"ok"`, `"OK"`, 1)
			for name, r := range map[string]struct {
				body string
				h    http.Header
			}{
				"altered body": {altered, signed(vectorHeader)},
				"unsigned":     {altered, nil},
				"wrong secret": {altered, signed(callback.SignDataIntegrity([]byte("another-secret-0123456789"), []byte(altered)))},
				"webhook-*":    {altered, http.Header{callback.HeaderSignature: {"v1,x"}}},
			} {
				assert.Equal(t, http.StatusUnauthorized, post(t, url, r.body, r.h), name)
			}
			assert.Len(t, lines(t, out.String()), 1, "the refused ones are not printed")
			assertNoSecrets(t, out.String()+errOut.String(), vectorSecret)
		})
	}
}

// TestListenSigningSecretErrors: a signing secret that cannot be used is a
// usage error that names where it came from and never quotes it.
func TestListenSigningSecretErrors(t *testing.T) {
	const secret = "PLANTED-signing-secret-0123"
	file := writeFile(t, "secret", secret)
	empty := writeFile(t, "empty", "")
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"both variables", map[string]string{"TRAVELRULE_SIGNING_SECRET": secret, "TRAVELRULE_SIGNING_SECRET_FILE": file}, nil,
			"both TRAVELRULE_SIGNING_SECRET and TRAVELRULE_SIGNING_SECRET_FILE are set"},
		{"too short", map[string]string{"TRAVELRULE_SIGNING_SECRET": "PLANTED-short"}, nil, "TRAVELRULE_SIGNING_SECRET: the signing secret is shorter than 16 bytes"},
		{"two lines", map[string]string{"TRAVELRULE_SIGNING_SECRET": secret + "\nPLANTED"}, nil, "TRAVELRULE_SIGNING_SECRET: the signing secret has a newline (U+000A) at byte offset"},
		{"an empty file", nil, []string{"--signing-secret-file", empty}, "the signing secret file of --signing-secret-file holds no signing secret"},
		{"no such file", nil, []string{"--signing-secret-file", empty + "-missing"}, "the signing secret file of --signing-secret-file"},
		{"with a Standard Webhooks secret", map[string]string{"TRAVELRULE_SIGNING_SECRET": secret, "TRAVELRULE_WEBHOOK_SECRET": "PLANTED-webhook-secret-0123"}, nil,
			"a callback carries one signature; set one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", tt.env, append([]string{"listen", "--addr", "127.0.0.1:0"}, tt.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, errOut, tt.want)
			assertNoSecrets(t, out+errOut, secret, "PLANTED")
		})
	}
}

// TestSandboxSigning: the sandbox command signs its callbacks the live way
// by default, under its published secret or the user's (from the
// environment or a file), or with Standard Webhooks headers; it says which
// on stderr, and prints the published secret with its other settings on
// stdout, as the variable a client reads it from, never the user's.
func TestSandboxSigning(t *testing.T) {
	const mine = "PLANTED-my-signing-secret-0123"
	file := writeFile(t, "secret", mine+"\n")
	dataIntegrity := func(secret string) callback.Verifier {
		v, err := callback.NewDataIntegrityVerifier(secret)
		require.NoError(t, err)
		return v
	}
	for _, tt := range []struct {
		name     string
		env      map[string]string
		args     []string
		verifier callback.Verifier
		says     string
		printed  string // the variable stdout sets to the published secret
	}{
		{"default", nil, nil, dataIntegrity(travelruletest.DefaultSigningSecret),
			"x-data-integrity (HMAC-SHA512 over the body's base64), under the sandbox's published default secret, " + travelruletest.DefaultSigningSecret,
			"TRAVELRULE_SIGNING_SECRET"},
		{"TRAVELRULE_SIGNING_SECRET", map[string]string{"TRAVELRULE_SIGNING_SECRET": mine}, nil, dataIntegrity(mine),
			"x-data-integrity (HMAC-SHA512 over the body's base64), under the signing secret you gave (TRAVELRULE_SIGNING_SECRET)", ""},
		{"--signing-secret-file", nil, []string{"--signing-secret-file", file}, dataIntegrity(mine),
			"under the signing secret you gave (--signing-secret-file)", ""},
		{"--standard-webhooks", nil, []string{"--standard-webhooks"},
			&callback.WebhookVerifier{Secrets: [][]byte{[]byte(travelruletest.DefaultSigningSecret)}},
			"Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) under the sandbox's published default secret",
			"TRAVELRULE_WEBHOOK_SECRET"},
		{"TRAVELRULE_WEBHOOK_SECRET", map[string]string{"TRAVELRULE_WEBHOOK_SECRET": mine}, nil,
			&callback.WebhookVerifier{Secrets: [][]byte{[]byte(mine)}},
			"Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) under the Standard Webhooks secret you gave", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			verified := make(chan error, 16)
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				err := tt.verifier.Verify(r, body)
				select {
				case verified <- err:
				default: // retries of a refused callback: the first two tell
				}
				if err != nil {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(rc.Close)
			sc := runSandboxCommandEnv(t, tt.env, append([]string{"--addr", "127.0.0.1:0", "--callback-time-scale", "1ms"}, tt.args...)...)
			assert.Contains(t, sc.errOut.String(), tt.says)
			for _, v := range []string{"TRAVELRULE_SIGNING_SECRET", "TRAVELRULE_WEBHOOK_SECRET"} {
				if v == tt.printed {
					assert.Equal(t, travelruletest.DefaultSigningSecret, sc.env[v], "stdout sets %s with the other settings", v)
				} else {
					assert.NotContains(t, sc.printed, v)
				}
			}
			transfer := strings.Replace(validTransfer, "https://vasp-a.example/cb", rc.URL+"/cb", 1)
			code, _, errOut := runCLI(t, context.Background(), transfer, sc.env, "initiate")
			require.Equal(t, exitOK, code, errOut)
			assert.NoError(t, recv(t, verified), "the INQUIRY_RESOLUTION verifies")
			assert.NoError(t, recv(t, verified), "the TRANSFER_RESOLUTION verifies")
			assertNoSecrets(t, sc.out.String()+sc.errOut.String(), mine)
		})
	}
}

// TestSandboxFlagErrors: flags the sandbox cannot use are usage errors.
func TestSandboxFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"--inquiry-url relative", nil, []string{"--inquiry-url", "/vasp"}, "--inquiry-url: need an absolute http or https URL"},
		{"--inquiry-url with a query", nil, []string{"--inquiry-url", "https://vasp.example/?a=1"}, "--inquiry-url: need"},
		{"--inquiry-url with an empty query", nil, []string{"--inquiry-url", "https://vasp.example/?"}, "--inquiry-url: need"},
		{"--prefix with a query", nil, []string{"--prefix", "/api?x"}, "--prefix: prefix must be a plain path"},
		{"--callback-time-scale negative", nil, []string{"--callback-time-scale", "-1s"}, "--callback-time-scale must not be negative"},
		{"two secrets", map[string]string{"TRAVELRULE_SIGNING_SECRET": "PLANTED-signing-secret-0123", "TRAVELRULE_WEBHOOK_SECRET": "PLANTED-webhook-secret-0123"}, nil, "set one"},
		{"a short signing secret", map[string]string{"TRAVELRULE_SIGNING_SECRET": "PLANTED"}, nil, "shorter than 16 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", tt.env, append([]string{"sandbox", "--addr", "127.0.0.1:0"}, tt.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, errOut, tt.want)
			assert.Empty(t, out)
			assertNoSecrets(t, errOut, "PLANTED")
		})
	}
}

// TestSandboxInquiryToListen: "travelrule sandbox --inquiry-url" and
// "travelrule listen --path /transfers/inquiry/" side by side, as a
// beneficiary integrates: a transfer to a travel address the sandbox
// generated reaches the listener as an INQUIRY, verified with the
// sandbox's signing secret; "travelrule resolve" approves it, the
// originator gets its two callbacks, and "travelrule txid" sends the
// listener the TRANSFER_CONFIRMATION.
func TestSandboxInquiryToListen(t *testing.T) {
	url, out, errOut := startListen(t, map[string]string{"TRAVELRULE_SIGNING_SECRET": travelruletest.DefaultSigningSecret}, "--path", "/transfers/inquiry/")
	require.True(t, strings.HasSuffix(url, "/transfers/inquiry/"), url)
	base := strings.TrimSuffix(url, "/transfers/inquiry/")
	sinkURL, bodies := callbackSink(t)
	sc := runSandboxCommand(t, "--addr", "127.0.0.1:0", "--inquiry-url", base, "--callback-time-scale", "1ms")
	run := func(stdin string, args ...string) map[string]any {
		t.Helper()
		code, stdout, stderr := runCLI(t, context.Background(), stdin, sc.env, args...)
		require.Equal(t, exitOK, code, stderr)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &m), stdout)
		return m
	}

	gen := run("", "address", "generate", "--first-name", "Alan", "--last-name", "Turing", "--wallet", "0x0123456789abcdef0123456789abcdef01234567")
	ta, _ := gen["travelAddress"].(string)
	transfer := strings.Replace(strings.Replace(validTransfer, "https://vasp-a.example/cb", sinkURL, 1),
		`"asset"`, `"travelAddress": "`+ta+`", "asset"`, 1)
	res := run(transfer, "initiate")
	id, _ := res["transferId"].(string)
	require.NotEmpty(t, id)

	// The INQUIRY, verified and printed by listen, redacted.
	line := out.waitFor(t, regexp.MustCompile(`(?m)^.*"kind":"inquiry".*$`))[0]
	var inquiry map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &inquiry))
	// From the q of the INQUIRY's callback; a random id that happens to
	// hold a party's value (the hex of a UUID can hold "ada") is redacted.
	wantID := id
	if strings.Contains(strings.ToLower(id), "ada") {
		wantID = "[redacted]"
	}
	assert.Equal(t, wantID, inquiry["transferId"])
	assert.Equal(t, "BTC", inquiry["asset"])
	assert.Equal(t, "[redacted]", inquiry["inquiry"])
	assert.Equal(t, "[redacted]", inquiry["ivms101"])
	assert.NotContains(t, errOut.String(), "refused")

	run("", "resolve", "--transfer", id, "--approved", "true", "--callback", base+"/transfers/inquiry/confirm")
	first, second := recv(t, bodies), recv(t, bodies)
	assert.Equal(t, "0x0123456789abcdef0123456789abcdef01234567", first["approved"].(map[string]any)["address"])
	assert.Equal(t, id, second["transferId"])
	assert.Equal(t, "APPROVED", second["status"])

	run("", "txid", "--transfer", id, "--txid", txHash)
	line = out.waitFor(t, regexp.MustCompile(`(?m)^.*"kind":"transfer_confirmation".*$`))[0]
	assert.Contains(t, line, txHash)
	assertNoSecrets(t, out.String()+errOut.String(), "Lovelace", "Turing")
}

// recv returns the next value of ch, failing the test if none comes within
// 30 seconds (the event normally comes in milliseconds).
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("no value within 30s")
		var zero T
		return zero
	}
}
