package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/internal/livedocs"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestQuickstart runs the quickstart against the embedded sandbox, as
// "go run ./examples/quickstart" does, so that it cannot rot.
func TestQuickstart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, func(string) string { return "" }, &out))
	s := out.String()
	stages := []string{"1. Token", "2. Travel address", "3. Initiation", "4. Inquiry and resolution", "5. Transaction hash"}
	for i, stage := range stages {
		require.Contains(t, s, "\n"+stage)
		if i > 0 {
			assert.Less(t, strings.Index(s, stages[i-1]), strings.Index(s, stage), "the stages in order")
		}
	}
	for _, want := range []string{
		"against the embedded sandbox", "→ POST /auth/token (x-api-key)",
		"← a travel address, unchecked form", "matching: true",
		"to the travel address", "← transferId ", `(status "true")`,
		"← INQUIRY   transferId ", "IVMS101 (edition 101) originator: a natural person: name of type LEGL, HOME address in DE, national id of type IDCD, 1 account number(s)",
		"read into a Party: from natural person, country DE", "→ ResolveInquiry approved=true ← status true",
		"← INQUIRY_RESOLUTION approved, the beneficiary's wallet address present (redacted)", "← TRANSFER_RESOLUTION APPROVED",
		"→ SubmitTxID 0x5c50…2060 ← accepted", "← TRANSFER_CONFIRMATION txid 0x5c50…2060", "Done in",
	} {
		assert.Contains(t, s, want)
	}
	order := []string{"← INQUIRY ", "→ ResolveInquiry", "← INQUIRY_RESOLUTION", "the first decision: approved, acted on once", "→ SubmitTxID", "← TRANSFER_CONFIRMATION"}
	for i := 1; i < len(order); i++ {
		assert.Less(t, strings.Index(s, order[i-1]), strings.Index(s, order[i]), "callbacks in order: %s, then %s", order[i-1], order[i])
	}
	assert.Less(t, strings.Index(s, "→ SubmitTxID"), strings.Index(s, "← TRANSFER_RESOLUTION APPROVED"), "the approval's second message passed over")
	assert.Equal(t, 1, strings.Count(s, "acted on once"))
	assert.Equal(t, 1, strings.Count(s, "the transfer was decided already: nothing to do"))
	assert.NotContains(t, s, "sandbox-api-key", "no key")
	assert.Regexp(t, `against the embedded sandbox at http://127\.0\.0\.1:\d+\n`, s,
		"no path prefix, as `travelrule sandbox` and the curl lines of docs/sandbox.md have none")
	for _, pii := range []string{"Zoë", "Ødegård", "1984-02-29", "Straße", "123456789", "0x742d35", "美咲", "山田", "東京"} {
		assert.NotContains(t, s, pii, "no personal data in the transcript")
	}
}

func TestQuickstartNeedsCredentialsForARealService(t *testing.T) {
	env := map[string]string{"TRAVELRULE_BASE_URL": "https://travelrule.example/api", "TRAVELRULE_SIGNING_SECRET": travelruletest.DefaultSigningSecret,
		"TRAVELRULE_LISTEN_ADDR": "127.0.0.1:0", "TRAVELRULE_CALLBACK_URL": "https://vasp.example/travelrule/callback"}
	err := run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TRAVELRULE_API_KEY")
}

// TestQuickstartNeedsTheSigningSecretForARealService: against a real
// service callbacks are verified, so the signing secret is required.
func TestQuickstartNeedsTheSigningSecretForARealService(t *testing.T) {
	env := map[string]string{"TRAVELRULE_BASE_URL": "https://travelrule.example/api", "TRAVELRULE_API_KEY": "key"}
	err := run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TRAVELRULE_SIGNING_SECRET")

	file := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(file, []byte("short\n"), 0o600))
	env["TRAVELRULE_SIGNING_SECRET_FILE"] = file
	err = run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "16 bytes")
	assert.NotContains(t, err.Error(), "short")
}

// TestQuickstartAgainstADeployment runs the five stages against a sandbox
// reached over HTTP with an API key from TRAVELRULE_API_KEY_FILE, as a real
// deployment would be, and then with a refused key.
func TestQuickstartAgainstADeployment(t *testing.T) {
	deployment := travelruletest.NewServer(travelruletest.WithInactiveAPIKeys("retired-key-0001"))
	defer deployment.Close()
	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, []byte(travelruletest.DefaultAPIKey+"\n"), 0o600))
	// The deployment must reach the callback listener: a free port for both.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	env := map[string]string{
		"TRAVELRULE_BASE_URL": deployment.URL, "TRAVELRULE_API_KEY_FILE": keyFile,
		"TRAVELRULE_LISTEN_ADDR": addr, "TRAVELRULE_CALLBACK_URL": "http://" + addr + "/travelrule/callback",
		"TRAVELRULE_SIGNING_SECRET": travelruletest.DefaultSigningSecret,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, func(k string) string { return env[k] }, &out))
	s := out.String()
	for _, want := range []string{"1. Token", "2. Travel address", "matching: true", "3. Initiation",
		"4. Inquiry and resolution: the inquiry goes to the beneficiary's VASP", "← INQUIRY_RESOLUTION approved", "← TRANSFER_RESOLUTION APPROVED",
		"5. Transaction hash", "← accepted"} {
		assert.Contains(t, s, want)
	}
	transfers := deployment.Transfers()
	require.Len(t, transfers, 1)
	assert.NotEmpty(t, transfers[0].Request.TravelAddress)
	assert.NotContains(t, s, transfers[0].Request.TravelAddress, "a travel address is shown by its form only")
	assert.Equal(t, exampleTxHash, transfers[0].TxID, "stage 5 reached the service")

	env["TRAVELRULE_API_KEY"] = "retired-key-0001"
	out.Reset()
	err = run(ctx, func(k string) string { return env[k] }, &out)
	require.ErrorIs(t, err, travelrule.ErrAPIKeyRefused)
	assert.Contains(t, err.Error(), "inactive")
	assert.NotContains(t, err.Error(), "retired-key-0001")
	assert.NotContains(t, out.String(), "2. Travel address", "nothing after a refused login")
}

// TestQuickstartAgainstTheLiveDocs runs the quickstart against a server
// written from the live docs alone, which sends a rejection as an
// INQUIRY_RESOLUTION and nothing more: the quickstart acts on the first
// decision that arrives, whichever message carries it, and once.
func TestQuickstartAgainstTheLiveDocs(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "rejected"}[approve], func(t *testing.T) {
			live := livedocs.New(approve)
			defer live.Close()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			addr := ln.Addr().String()
			require.NoError(t, ln.Close())
			env := map[string]string{
				"TRAVELRULE_BASE_URL": live.URL, "TRAVELRULE_API_KEY": livedocs.APIKey, "TRAVELRULE_SIGNING_SECRET": livedocs.SigningSecret,
				"TRAVELRULE_LISTEN_ADDR": addr, "TRAVELRULE_CALLBACK_URL": "http://" + addr + "/travelrule/callback",
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out bytes.Buffer
			require.NoError(t, run(ctx, func(k string) string { return env[k] }, &out))
			s := out.String()
			assert.Equal(t, 1, strings.Count(s, "acted on once"), s)
			if approve {
				assert.Contains(t, s, "the first decision: approved")
				assert.Contains(t, s, "the transfer was decided already: nothing to do", "the approval's other message")
				assert.Equal(t, 1, live.Calls("/transfers/txId"), "the hash submitted once")
			} else {
				assert.Contains(t, s, "← INQUIRY_RESOLUTION rejected\n  the first decision: rejected, acted on once\n")
				assert.Contains(t, s, "nothing to broadcast: the beneficiary's VASP rejected the transfer")
				assert.Zero(t, live.Calls("/transfers/txId"), "no hash for a rejected transfer")
			}
			callbacks := live.Wait()
			assert.Len(t, callbacks, map[bool]int{true: 2, false: 1}[approve])
			for _, cb := range callbacks {
				assert.Equal(t, 204, cb.Status, "%s acknowledged", cb.Body)
			}
		})
	}
}

// TestQuickstartListenAddr: against a real service the callback listener
// listens on TRAVELRULE_LISTEN_ADDR, by default 127.0.0.1:8081, where it
// does not collide with "travelrule sandbox" on 127.0.0.1:8080.
func TestQuickstartListenAddr(t *testing.T) {
	sandbox := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	defer sandbox.Close()
	tok, err := sandbox.TokenSource().Token()
	require.NoError(t, err)
	tests := []struct {
		listenAddr string
		want       string
	}{
		{"", "127.0.0.1:8081"}, // named whether the listener started or found the port busy
		{"127.0.0.1:0", "serves /travelrule/callback on 127.0.0.1:"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			env := map[string]string{"TRAVELRULE_BASE_URL": sandbox.URL, "TRAVELRULE_TOKEN": tok.AccessToken, "TRAVELRULE_LISTEN_ADDR": tt.listenAddr,
				"TRAVELRULE_SIGNING_SECRET": travelruletest.DefaultSigningSecret}
			err := run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{})
			require.Error(t, err, "no TRAVELRULE_CALLBACK_URL")
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "127.0.0.1:8080")
		})
	}
}

// TestReadmeDescribesTheQuickstart: the README's environment table names
// every variable the quickstart reads, and its usage snippet handles
// NewCallbackURL's error.
func TestReadmeDescribesTheQuickstart(t *testing.T) {
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var table []string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `TRAVELRULE_") {
			table = append(table, line)
		}
	}
	rows := strings.Join(table, "\n")
	vars := regexp.MustCompile(`"(TRAVELRULE_[A-Z_]+)"`).FindAllStringSubmatch(string(src), -1)
	require.NotEmpty(t, vars)
	for _, m := range vars {
		assert.True(t, strings.Contains(rows, "`"+m[1]+"`"), "the README's environment table describes %s", m[1])
	}
	assert.True(t, strings.Contains(rows, "`TRAVELRULE_LISTEN_ADDR` | "), "TRAVELRULE_LISTEN_ADDR has a row of its own")
	assert.True(t, strings.Contains(rows, "(default `"+defaultListenAddr+"`"), "the README names the listener's default address")
	assert.False(t, strings.Contains(string(readme), "_ := travelrule.NewCallbackURL"), "the README handles NewCallbackURL's error")
}

// TestDescribeShowsCodesOnly: an inquiry's parties are the sender's text,
// so only values of the code lists are printed.
func TestDescribeShowsCodesOnly(t *testing.T) {
	tests := []struct {
		party travelrule.Party
		want  string
	}{
		{travelrule.Party{PersonType: "natural", Country: "DE"}, "natural person, country DE"},
		{travelrule.Party{PersonType: "Zebulon Quaxworth", Country: "\x1b[2J"}, "[redacted] person, country [redacted]"},
		{travelrule.Party{PersonType: "legal", Country: "ZZ"}, "legal person, country [redacted]"},
	}
	for _, tt := range tests {
		assert.True(t, strings.HasPrefix(describe(tt.party), tt.want), describe(tt.party))
	}
	assert.Equal(t, "[redacted]", shown("one BTC", isAmount("one BTC")))
	assert.Equal(t, "0.25", shown("0.25", isAmount("0.25")))
}

// TestExampleTransferIsValidIVMS101: the transfer the quickstart shows
// passes strict validation, and its parties map to the IVMS101 a
// beneficiary that validates it accepts.
func TestExampleTransferIsValidIVMS101(t *testing.T) {
	r := exampleTransfer("https://vasp.example/travelrule/callback")
	r.TravelAddress = travelruletest.KnownTravelAddress
	require.NoError(t, r.ValidateStrict())
	p, _ := r.IVMS101()
	require.NoError(t, p.Validate())
}
