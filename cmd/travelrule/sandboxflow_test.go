package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
