package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/travelruletest"
)

// TestTelemetry runs the example, as "go run ./examples/telemetry" does,
// so that it cannot rot: its output names the spans and metrics and holds
// no personal value, credential or capability.
func TestTelemetry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	s := out.String()
	for _, want := range []string{
		"== Spans (stdouttrace), as they end ==",
		`"Name": "POST /transfers/initiate"`, `"Name": "travelrule.InitiateTransfer"`, `"Name": "travelrule.callback"`,
		`"Key": "http.request.resend_count"`, `"Value": "inquiry_resolution"`, `"Value": "processed"`,
		"== Metrics (stdoutmetric) ==",
		`"Name": "travelrule.client.call.duration"`, `"Name": "travelrule.client.attempts"`,
		`"Name": "http.client.request.duration"`, `"Name": "travelrule.callback.deliveries"`, `"Name": "travelrule.client.token.fetches"`,
		`"Value": "telemetry-example"`,
	} {
		assert.Contains(t, s, want)
	}
	assert.Equal(t, 2, strings.Count(s, `"Name": "POST /transfers/initiate"`), "two attempts: a 429, then the transfer")
	assert.Less(t, strings.Index(s, "== Spans"), strings.Index(s, "== Metrics"))
	personal := exampleTransfer("")
	for _, v := range []string{
		personal.Originator.FirstName, personal.Originator.LastName, personal.Originator.DateOfBirth, personal.Originator.StreetName,
		personal.Originator.NationalID, personal.Originator.WalletAddress, personal.Beneficiary.FirstName, personal.Beneficiary.LastName,
		personal.Beneficiary.DateOfBirth, personal.Beneficiary.TownName, personal.Beneficiary.WalletAddress,
		travelruletest.DefaultAPIKey, "Bearer", "tr_tag", "tr_ref", "q=", "/travelrule/callback",
	} {
		assert.NotContains(t, s, v)
	}
}
