package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
