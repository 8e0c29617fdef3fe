package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// plantedTransfer is validTransfer with a name that must never be printed.
var plantedTransfer = strings.Replace(validTransfer, `"Ada"`, `"Zebulon"`, 1)

// rewritingProxy forwards to target with the request bodies rewritten by r:
// it makes the sandbox see a request that the client's own checks would
// have refused.
func rewritingProxy(t *testing.T, target string, r *strings.Replacer) string {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		body, _ := io.ReadAll(pr.In.Body)
		body = []byte(r.Replace(string(body)))
		pr.Out.Body, pr.Out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

// echoingServer answers 400 with a message and a field reason that repeat
// the request's planted name.
func echoingServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"bad_request","message":"Zebulon is not welcome here","fields":[{"field":"originator.firstName","reason":"Zebulon is on a list"},{"field":"sanctions.list7","reason":"hit"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestServiceErrorsPrinted: initiate and resolve print the error and every
// field the service named, its reason masked: the service's text may echo
// the request's personal data.
func TestServiceErrorsPrinted(t *testing.T) {
	env, _ := sandboxEnv(t)
	withBase := func(base string) map[string]string {
		return map[string]string{"TRAVELRULE_BASE_URL": base, "TRAVELRULE_TOKEN": env["TRAVELRULE_TOKEN"]}
	}
	rewritten := rewritingProxy(t, env["TRAVELRULE_BASE_URL"], strings.NewReplacer(`"asset":"BTC"`, `"asset":7`, `"country":"GB"`, `"country":"GBR"`))
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		wants []string
	}{
		{"resolve an unknown transfer", env, []string{"resolve", "--transfer", "no-such-transfer", "--approved", "true"}, []string{
			"404 Not Found: TRANSFER_NOT_FOUND",
		}},
		// The live envelope: one entry per field, whose message is the
		// field's reason, printed once with its path.
		{"initiate refused by the sandbox", withBase(rewritten), []string{"initiate", "-f", "-"}, []string{
			"400 Bad Request: VALIDATION_ERROR (fields: asset, originator.country)",
			"\n  asset: [redacted]\n", "\n  originator.country: [redacted]\n",
		}},
		{"initiate refused by a service that repeats the request", withBase(echoingServer(t)), []string{"initiate", "-f", "-"}, []string{
			"400 Bad Request", "  originator.firstName: [redacted]\n",
			"  [redacted]: [redacted]\n", // a path that is none of the request's
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), plantedTransfer, tt.env, tt.args...)
			assert.Equal(t, exitFailed, code)
			assertFailureOutput(t, tt.args[0], code, out)
			assert.NotContains(t, out, "Zebulon")
			for _, w := range tt.wants {
				assert.Contains(t, errOut, w)
			}
			assert.NotContains(t, errOut, "Zebulon")
			for _, text := range []string{"the service said", "no inquiry with this transfer id", "must be a string", "is on a list"} {
				assert.NotContains(t, errOut, text, "no text of the service's")
			}
			for _, path := range []string{"approved", "asset", "originator.country"} {
				assert.NotContains(t, errOut, path+": "+path+":", "no path said twice")
			}
		})
	}
}

// A service that repeats a name as its systems write it ("MUELLER" for
// "Müller") gets it printed nowhere: no text of the service's is printed.
func TestServiceErrorsHideReshapedPersonalData(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"bad_request","message":"MUELLER is not welcome here",`+
			`"fields":[{"field":"beneficiary.lastName","reason":"MUELLER is on a list"},{"field":"sanctions.MUELLER","reason":"hit"}]}`)
	}))
	t.Cleanup(srv.Close)
	body := strings.Replace(validTransfer, `"Turing"`, `"Müller"`, 1)
	code, _, errOut := runCLI(t, context.Background(), body,
		map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_TOKEN": "x.y.z"}, "initiate", "-f", "-")
	assert.Equal(t, exitFailed, code)
	assert.NotContains(t, errOut, "MUELLER")
	assert.Contains(t, errOut, "beneficiary.lastName: [redacted]")
}

// TestOutcomeUnknownAdvicePrinted: an unknown outcome is printed with the
// SDK's advice for its operation, and nothing that contradicts it: a
// resolution may be sent again, an initiation is to be reconciled first.
func TestOutcomeUnknownAdvicePrinted(t *testing.T) {
	for op, want := range map[string]string{
		"InitiateTransfer": "reconcile before sending again",
		"ResolveInquiry":   "the same decision may be sent again",
		"SubmitTxID":       "the same txId may be submitted again",
	} {
		t.Run(op, func(t *testing.T) {
			var errOut bytes.Buffer
			c := &cli{stderr: &errOut}
			c.printError("cmd", &travelrule.OutcomeUnknownError{Op: op, Attempts: 4, Err: context.DeadlineExceeded})
			assert.Contains(t, errOut.String(), want)
			assert.Contains(t, errOut.String(), "the service may have acted")
			if op != "InitiateTransfer" {
				assert.NotContains(t, errOut.String(), "reconcile")
			}
		})
	}
}
