package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestResolveNotAppliedFails: a decision the service did not apply (the
// sandbox answers {"status":false} to the other decision after the first)
// exits 1 with {"outcome":"refused"}, never 0 with "status":false.
func TestResolveNotAppliedFails(t *testing.T) {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(receiver.Close)
	srv := travelruletest.NewServer()
	t.Cleanup(srv.Close)
	ctx := context.Background()
	id, err := srv.StartInquiry(ctx, receiver.URL, &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.25", Email: "ada@example.com",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: plantedFirst, LastName: plantedLast, WalletAddress: plantedWallet},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Bea", LastName: "Neficiary", WalletAddress: "0xbeef"},
	})
	require.NoError(t, err)
	env := map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_API_KEY": travelruletest.DefaultAPIKey}

	code, out, errOut := runCLI(t, ctx, "", env, "resolve", "--transfer", id, "--approved", "true")
	require.Equal(t, exitOK, code, errOut)
	var ok map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &ok), out)
	assert.Equal(t, true, ok["status"])

	code, out, errOut = runCLI(t, ctx, "", env, "resolve", "--transfer", id, "--approved", "false")
	assert.Equal(t, exitFailed, code, "a decision not applied is a failure")
	var failed map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &failed), out)
	assert.Equal(t, "refused", failed["outcome"])
	assert.NotContains(t, out, `"status":false`)
	assert.Contains(t, errOut, "not applied")
}

// TestResolveRefusesOtherDecisions: --approved takes "true" or "false"
// only; any other value is a usage error, and nothing is sent.
func TestResolveRefusesOtherDecisions(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":true}`))
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"TRAVELRULE_BASE_URL": srv.URL, "TRAVELRULE_TOKEN": "tok-0123456789"}
	for _, v := range []string{"yes", "maybe", "TRUE", "1"} {
		code, out, errOut := runCLI(t, context.Background(), "", env, "resolve", "--transfer", "t-1", "--approved", v)
		assert.Equal(t, exitUsage, code, v)
		assert.Empty(t, out, v)
		assert.Contains(t, errOut, `approved: must be "true" or "false"`, v)
	}
	assert.Zero(t, hits.Load(), "nothing was sent")

	code, _, errOut := runCLI(t, context.Background(), "", env, "resolve", "--transfer", "t-1", "--approved", "false")
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, int64(1), hits.Load())
}

// TestResolveAgainstTheLiveDouble: against a double of the live service
// (live-service.md: the API-key login, the envelope), a resolution the
// service answered with status false, bare (the excerpt) or with the live
// errors, exits 1 {"outcome":"refused"}; {"status":true} exits 0. Each is
// sent once.
func TestResolveAgainstTheLiveDouble(t *testing.T) {
	const transfer = "019ac452-8660-7061-9b93-8d72eaa11a89"
	for _, tt := range []struct {
		name   string
		answer liveAnswer
		code   int
	}{
		{"applied", liveAnswer{http.StatusOK, `{"status":true,"data":{}}`}, exitOK},
		{"the excerpt's false", liveAnswer{http.StatusOK, `{"status":false}`}, exitFailed},
		{"the live refusal", liveAnswer{http.StatusOK, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"already resolved"}]}`}, exitFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ls := newLiveService(t, map[string]liveAnswer{"/transfers/inquiryResolution": tt.answer})
			code, out, errOut := runCLI(t, context.Background(), "", ls.env(), "resolve", "--transfer", transfer, "--approved", "false")
			assert.Equal(t, tt.code, code, errOut)
			require.Len(t, ls.received("/transfers/inquiryResolution"), 1, "sent once")
			assert.Equal(t, "q="+transfer, ls.received("/transfers/inquiryResolution")[0].query)
			if tt.code == exitFailed {
				assert.Contains(t, out, `"outcome":"refused"`)
				assert.Contains(t, errOut, "status false, not applied")
			}
			assertNoSecrets(t, out+errOut)
		})
	}
}
