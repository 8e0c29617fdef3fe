package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
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

// TestNewCommandsAgainstTheSandbox: with the sandbox's API key, address
// generate makes an address that address decode reads locally (it names
// the sandbox) and address lookup finds again; discover answers.
func TestNewCommandsAgainstTheSandbox(t *testing.T) {
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	env := map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_API_KEY": travelruletest.DefaultAPIKey}
	run := func(args ...string) map[string]any {
		t.Helper()
		code, out, errOut := runCLI(t, context.Background(), "", env, args...)
		require.Equal(t, exitOK, code, errOut)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m), out)
		assertNoSecrets(t, out+errOut, plantedFirst, plantedLast, plantedWallet)
		return m
	}

	gen := run("address", "generate", "--first-name", plantedFirst, "--last-name", plantedLast, "--wallet", plantedWallet, "--external-id", "cust-9")
	ta, _ := gen["travelAddress"].(string)
	require.True(t, strings.HasPrefix(ta, "ta"), gen)
	assert.Equal(t, "unchecked", gen["form"])

	dec := run("address", "decode", ta)
	assert.Equal(t, "unchecked", dec["form"])
	assert.Contains(t, dec["uri"], strings.TrimPrefix(srv.URL, "http://")+"/transfers/inquiry/")

	look := run("address", "lookup", ta)
	assert.Equal(t, []any{"personType", "firstName", "lastName", "walletAddress", "externalId"}, look["set"])

	again := run("address", "generate", "--first-name", "Other", "--last-name", "Name", "--wallet", "0x2", "--external-id", "cust-9")
	assert.Equal(t, ta, again["travelAddress"], "the same external id gets the same address")

	disc := run("discover", "--domain", "example.com", "--name", "exchange")
	assert.Equal(t, float64(1), disc["count"])
	assert.Equal(t, []any{map[string]any{"id": "6f1d3a4e-2b7c-4e58-9a10-5c3e7d2b8f02", "name": "Example Exchange", "domain": "exchange.example.com"}}, disc["vasps"])
}

// sandboxSDK is an SDK client of the sandbox sc runs, with its published
// API key, one attempt per call (a fault shows as it is), over hc if not
// nil.
func sandboxSDK(t *testing.T, sc *sandboxCommand, hc *http.Client) *travelrule.Client {
	t.Helper()
	opts := []travelrule.Option{travelrule.WithAPIKey(travelruletest.DefaultAPIKey), travelrule.WithRetryMax(0)}
	if hc != nil {
		opts = append(opts, travelrule.WithHTTPClient(hc))
	}
	c, err := travelrule.NewClient(sc.env["TRAVELRULE_BASE_URL"], opts...)
	require.NoError(t, err)
	return c
}

// sandboxTransfer is a transfer whose callbacks go to callbackURL.
func sandboxTransfer(t *testing.T, callbackURL string) *travelrule.TransferRequest {
	t.Helper()
	var req travelrule.TransferRequest
	require.NoError(t, json.Unmarshal([]byte(sampleTransfer(callbackURL)), &req))
	return &req
}

// TestSandboxFaults: a fault given by --fault, or set through the control
// plane of the running sandbox, hits the next initiation, as the SDK sees
// it: a 429 refused before acting, a 500 after the transfer was stored
// (outcome unknown), a dropped connection after acting.
func TestSandboxFaults(t *testing.T) {
	for _, tt := range []struct {
		name  string
		flag  string // --fault's value
		fault travelruletest.Fault
		want  error
	}{
		{"rate limit", "rate-limit:retry-after=2s,times=1", travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, RetryAfter: 2 * time.Second}, travelrule.ErrRateLimited},
		{"500 after storing", "internal:ops=initiate", travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 1, Ops: travelruletest.OpInitiate}, travelrule.ErrOutcomeUnknown},
		{"dropped after writing", "drop:times=1", travelruletest.Fault{Kind: travelruletest.FaultDrop, Rate: 1, Times: 1}, travelrule.ErrOutcomeUnknown},
		{"gateway's 503 after storing", "gateway-unavailable:times=1,retry-after=1s", travelruletest.Fault{Kind: travelruletest.FaultGatewayUnavailable, Rate: 1, Times: 1, RetryAfter: time.Second}, travelrule.ErrOutcomeUnknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			t.Run("--fault", func(t *testing.T) {
				sc := runSandboxCommand(t, "--addr", "127.0.0.1:0", "--fault", tt.flag)
				assert.Contains(t, sc.errOut.String(), "injecting faults (--fault): "+tt.flag)
				_, err := sandboxSDK(t, sc, nil).InitiateTransfer(ctx, sandboxTransfer(t, "http://127.0.0.1:9/cb"))
				require.ErrorIs(t, err, tt.want)
			})
			t.Run("control plane", func(t *testing.T) {
				sc := runSandboxCommand(t, "--addr", "127.0.0.1:0")
				sdk := sandboxSDK(t, sc, nil)
				_, err := sdk.InitiateTransfer(ctx, sandboxTransfer(t, "http://127.0.0.1:9/cb"))
				require.NoError(t, err, "no fault before")
				cc := travelruletest.NewControlClient(sc.env["TRAVELRULE_BASE_URL"])
				require.NoError(t, cc.SetFaults(ctx, tt.fault))
				_, err = sdk.InitiateTransfer(ctx, sandboxTransfer(t, "http://127.0.0.1:9/cb"))
				require.ErrorIs(t, err, tt.want)
				require.NoError(t, cc.SetFaults(ctx))
				_, err = sdk.InitiateTransfer(ctx, sandboxTransfer(t, "http://127.0.0.1:9/cb"))
				require.NoError(t, err, "cleared")
			})
		})
	}
}

// TestSandboxDecision: with --decision reject (or the control plane's
// decision), the originator's callback URL gets a rejection: an
// INQUIRY_RESOLUTION {"approved":false} alone, as the live docs promise no
// TRANSFER_RESOLUTION for one, and with --rejection-resolution a
// TRANSFER_RESOLUTION "REJECTED" after it; an approval gets both.
func TestSandboxDecision(t *testing.T) {
	bodies := make(chan []byte, 16)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	ctx := context.Background()
	// next waits for the next callback and returns its approved member
	// (an INQUIRY_RESOLUTION's) or its status (a TRANSFER_RESOLUTION's).
	next := func(t *testing.T) string {
		t.Helper()
		var cb struct {
			Approved json.RawMessage `json:"approved"`
			Status   string          `json:"status"`
		}
		select {
		case b := <-bodies:
			require.NoError(t, json.Unmarshal(b, &cb))
		case <-time.After(30 * time.Second): // only ends a test whose callbacks never come
			t.Fatal("no callback")
		}
		if cb.Approved != nil {
			return "approved:" + string(cb.Approved)
		}
		return cb.Status
	}

	sc := runSandboxCommand(t, "--addr", "127.0.0.1:0", "--decision", "reject")
	assert.Contains(t, sc.errOut.String(), "deciding reject on the transfers initiated (--decision)")
	sdk := sandboxSDK(t, sc, nil)
	_, err := sdk.InitiateTransfer(ctx, sandboxTransfer(t, rcv.URL+"/cb"))
	require.NoError(t, err)
	assert.Equal(t, "approved:false", next(t))

	// The control plane turns it to approval: the next callbacks are the
	// approval's two, no TRANSFER_RESOLUTION of the rejection before them.
	cc := travelruletest.NewControlClient(sc.env["TRAVELRULE_BASE_URL"])
	require.NoError(t, cc.SetDecision(ctx, travelruletest.DecisionApprove))
	_, err = sdk.InitiateTransfer(ctx, sandboxTransfer(t, rcv.URL+"/cb"))
	require.NoError(t, err)
	approved := next(t)
	assert.True(t, strings.HasPrefix(approved, "approved:{"), approved)
	assert.Equal(t, "APPROVED", next(t))

	require.NoError(t, cc.SetDecision(ctx, travelruletest.DecisionNone))
	res, err := sdk.InitiateTransfer(ctx, sandboxTransfer(t, rcv.URL+"/cb"))
	require.NoError(t, err)
	tr, ds, err := cc.Transfer(ctx, res.TransferID)
	require.NoError(t, err)
	assert.Equal(t, travelruletest.StateReceived, tr.State)
	assert.Empty(t, ds)
	require.Equal(t, exitOK, sc.stop())

	sc = runSandboxCommand(t, "--addr", "127.0.0.1:0", "--decision", "reject", "--rejection-resolution")
	_, err = sandboxSDK(t, sc, nil).InitiateTransfer(ctx, sandboxTransfer(t, rcv.URL+"/cb"))
	require.NoError(t, err)
	assert.Equal(t, "approved:false", next(t))
	assert.Equal(t, "REJECTED", next(t), "--rejection-resolution")
}

// TestSandboxTLS: --tls serves HTTPS under a certificate it writes to a
// file and names; an SDK client that trusts that file alone reaches it,
// and the control plane too; the temporary file is removed at exit, a
// --tls-ca-file stays.
func TestSandboxTLS(t *testing.T) {
	ctx := context.Background()
	named := filepath.Join(t.TempDir(), "sandbox-ca.pem")
	for _, tt := range []struct {
		name  string
		flags []string
		keep  bool
	}{
		{"temporary file", nil, false},
		{"--tls-ca-file", []string{"--tls-ca-file", named}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := runSandboxCommand(t, append([]string{"--addr", "127.0.0.1:0", "--tls"}, tt.flags...)...)
			base := sc.env["TRAVELRULE_BASE_URL"]
			require.True(t, strings.HasPrefix(base, "https://127.0.0.1:"), base)
			m := regexp.MustCompile(`(?m)^export CURL_CA_BUNDLE=(\S+)$`).FindStringSubmatch(sc.out.String())
			require.NotNil(t, m, "the script trusts the certificate")
			caFile := m[1]
			assert.Contains(t, sc.errOut.String(), "curl --cacert "+caFile)
			if tt.keep {
				assert.Equal(t, named, caFile)
			}

			// Untrusted: refused.
			_, err := sandboxSDK(t, sc, nil).GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "A", LastName: "B"})
			require.Error(t, err)

			pem, err := os.ReadFile(caFile)
			require.NoError(t, err)
			pool := x509.NewCertPool()
			require.True(t, pool.AppendCertsFromPEM(pem))
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
			t.Cleanup(hc.CloseIdleConnections)
			res, err := sandboxSDK(t, sc, hc).InitiateTransfer(ctx, sandboxTransfer(t, "http://127.0.0.1:9/cb"))
			require.NoError(t, err)
			_, _, err = travelruletest.NewControlClient(base, travelruletest.WithControlHTTPClient(hc)).Transfer(ctx, res.TransferID)
			require.NoError(t, err)

			require.Equal(t, exitOK, sc.stop())
			_, err = os.Stat(caFile)
			if tt.keep {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, fs.ErrNotExist, "removed at exit")
			}
		})
	}
}
