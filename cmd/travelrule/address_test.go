package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Planted beneficiary values: never printed.
const (
	plantedFirst  = "PLANTEDZebulon"
	plantedLast   = "PLANTEDQuarterfield"
	plantedWallet = "0xPLANTEDbeef"
)

func TestAddressGenerate(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/travel-address/generate": {200, liveGenerate}})
	file := writeFile(t, "b.json", `{"personType":"natural","firstName":"`+plantedFirst+`","lastName":"`+plantedLast+`","walletAddress":"`+plantedWallet+`","externalId":"from-file"}`)
	tests := []struct {
		name string
		args []string
		sent string
	}{
		{"flags", []string{"--first-name", plantedFirst, "--last-name", plantedLast, "--wallet", plantedWallet, "--external-id", "cust-1"},
			`{"personType":"natural","firstName":"` + plantedFirst + `","lastName":"` + plantedLast + `","walletAddress":"` + plantedWallet + `","externalId":"cust-1","isSelfHosted":false}`},
		{"a legal person, self-hosted", []string{"--person-type", "legal", "--legal-name", "PLANTED Holdings", "--self-hosted"},
			`{"personType":"legal","legalName":"PLANTED Holdings","isSelfHosted":true}`},
		{"a file", []string{"-f", file},
			`{"personType":"natural","firstName":"` + plantedFirst + `","lastName":"` + plantedLast + `","walletAddress":"` + plantedWallet + `","externalId":"from-file","isSelfHosted":false}`},
		{"a file and flags, which win", []string{"-f", file, "--external-id", "cust-2", "--self-hosted"},
			`{"personType":"natural","firstName":"` + plantedFirst + `","lastName":"` + plantedLast + `","walletAddress":"` + plantedWallet + `","externalId":"cust-2","isSelfHosted":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", ls.env(), append([]string{"address", "generate"}, tt.args...)...)
			require.Equal(t, exitOK, code, errOut)
			assert.JSONEq(t, `{"travelAddress":"`+uncheckedTA+`","form":"unchecked","requestId":"","attempts":1}`, out)
			got := ls.received("/travel-address/generate")
			require.NotEmpty(t, got)
			assert.JSONEq(t, tt.sent, got[len(got)-1].body)
			assertNoSecrets(t, out+errOut)
		})
	}
}

func TestAddressGenerateFailures(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/travel-address/generate": {http.StatusBadRequest,
		`{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"` + plantedLast + ` is not allowed"}]}`}})
	typo := writeFile(t, "typo.json", `{"personType":"natural","firstName":"`+plantedFirst+`","lastname":"`+plantedLast+`"}`)
	wrongType := writeFile(t, "type.json", `{"personType":"natural","firstName":7,"lastName":"`+plantedLast+`"}`)
	notObject := writeFile(t, "list.json", `["`+plantedFirst+`"]`)
	broken := writeFile(t, "broken.json", "{\n  \"firstName\": "+plantedFirst+"\n}")
	tests := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"no names", []string{"--wallet", plantedWallet}, exitUsage, []string{"travelrule address generate: --first-name: required; --last-name: required", "Usage: travelrule address generate"}},
		{"a legal person without its name", []string{"--person-type", "legal"}, exitUsage, []string{"--legal-name: required"}},
		{"a bad person type", []string{"--person-type", "robot", "--first-name", "a", "--last-name", "b"}, exitUsage, []string{`--person-type must be "natural" or "legal"`}},
		{"a wallet without hex", []string{"--first-name", "a", "--last-name", "b", "--wallet", "zzz"}, exitUsage, []string{"--wallet: must contain at least one hexadecimal digit"}},
		{"a file with a typo", []string{"-f", typo}, exitFailed, []string{typo + ": lastname: unknown field (did you mean \"lastName\"?)", "address generate: nothing sent"}},
		{"a file with a wrong type", []string{"-f", wrongType}, exitFailed, []string{wrongType + ": not a beneficiary: firstName: must be a string"}},
		{"a file of no object", []string{"-f", notObject}, exitFailed, []string{"not a beneficiary: the file holds no JSON object"}},
		{"a file of broken JSON", []string{"-f", broken}, exitFailed, []string{broken + ": not a beneficiary: line 2, column 16 (byte offset 17): invalid character (a letter) looking for beginning of value"}},
		{"a missing file", []string{"-f", "/nonexistent.json"}, exitFailed, []string{"/nonexistent.json: no such file or directory"}},
		{"the service refuses", []string{"--first-name", plantedFirst, "--last-name", plantedLast}, exitFailed, []string{
			"address generate: travelrule: GenerateTravelAddress: 400 Bad Request: VALIDATION_ERROR",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(ls.received("/travel-address/generate"))
			code, out, errOut := runCLI(t, context.Background(), "", ls.env(), append([]string{"address", "generate"}, tt.args...)...)
			assert.Equal(t, tt.code, code, errOut)
			assertFailureOutput(t, "address generate", code, out)
			for _, w := range tt.wants {
				assert.Contains(t, errOut, w)
			}
			if tt.name != "the service refuses" {
				assert.Len(t, ls.received("/travel-address/generate"), before, "nothing sent")
			}
			assertNoSecrets(t, errOut)
		})
	}
}

func TestAddressDecode(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   string
		err   string
	}{
		{"unchecked", "", []string{uncheckedTA}, exitOK, `{"form":"unchecked","uri":"` + uncheckedURI + `"}`, ""},
		{"checksummed", "", []string{"ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv"}, exitOK, `{"form":"checksummed","uri":"beneficiary.com/x/12345?t=i"}`, ""},
		{"opaque", "", []string{opaqueTA}, exitOK, `{"form":"opaque"}`, ""},
		{"the docs' placeholder", "", []string{placeholderTA}, exitOK, `{"form":"opaque"}`, ""},
		{"from standard input", uncheckedTA + "\n", []string{"-"}, exitOK, `{"form":"unchecked","uri":"` + uncheckedURI + `"}`, ""},
		{"no prefix", "", []string{"PLANTED-address"}, exitFailed, "", `address decode: travelrule: invalid travel address: does not start with "ta"`},
		{"a typo", "", []string{uncheckedTA[:len(uncheckedTA)-1] + "x"}, exitFailed, "", "address decode: travelrule: invalid travel address: checksum does not match and it does not end in t=i"},
		{"no address", "", nil, exitUsage, "", "name one travel address"},
		{"two addresses", "", []string{uncheckedTA, opaqueTA}, exitUsage, "", "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), tt.stdin, nil, append([]string{"address", "decode"}, tt.args...)...)
			assert.Equal(t, tt.code, code, errOut)
			if tt.out != "" {
				assert.JSONEq(t, tt.out, out)
			} else {
				assert.Empty(t, out)
			}
			assert.Contains(t, errOut, tt.err)
			if tt.code == exitFailed {
				assert.NotContains(t, errOut, tt.args[0], "an error never quotes the address")
			}
		})
	}
}

func TestAddressLookup(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/travel-address/decode": {200, `{"status":true,"data":{"personType":"natural",` +
		`"firstName":"` + plantedFirst + `","lastName":"` + plantedLast + `","walletAddress":"` + plantedWallet + `","externalId":"PLANTED-ext"}}`}})
	code, out, errOut := runCLI(t, context.Background(), "", ls.env(), "address", "lookup", uncheckedTA)
	require.Equal(t, exitOK, code, errOut)
	assert.JSONEq(t, `{"set":["personType","firstName","lastName","walletAddress","externalId"],"requestId":"","attempts":1}`, out)
	assertNoSecrets(t, out+errOut, "natural")
	got := ls.received("/travel-address/decode")
	require.Len(t, got, 1)
	assert.JSONEq(t, `{"travelAddress":"`+uncheckedTA+`"}`, got[0].body)

	// The flag after the address counts as well as before it.
	for _, args := range [][]string{{"--show-personal-data", uncheckedTA}, {uncheckedTA, "--show-personal-data"}} {
		code, out, errOut = runCLI(t, context.Background(), "", ls.env(), append([]string{"address", "lookup"}, args...)...)
		require.Equal(t, exitOK, code, errOut)
		var res map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		assert.Equal(t, map[string]any{"personType": "natural", "firstName": plantedFirst, "lastName": plantedLast,
			"walletAddress": plantedWallet, "externalId": "PLANTED-ext"}, res["beneficiary"])
	}
}

func TestAddressLookupFailures(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/travel-address/decode": {http.StatusBadRequest,
		`{"status":false,"errors":[{"code":"INVALID_TRAVEL_ADDRESS","message":"unknown address"}]}`}})
	code, out, errOut := runCLI(t, context.Background(), "", ls.env(), "address", "lookup", opaqueTA)
	assert.Equal(t, exitFailed, code)
	assertFailureOutput(t, "address lookup", code, out)
	assert.Contains(t, errOut, "address lookup: travelrule: LookupTravelAddress: 400 Bad Request: INVALID_TRAVEL_ADDRESS")
	assert.NotContains(t, errOut, opaqueTA)

	code, _, errOut = runCLI(t, context.Background(), "", ls.env(), "address", "lookup", uncheckedTA, "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "unexpected arguments")
	code, _, errOut = runCLI(t, context.Background(), "", map[string]string{"TRAVELRULE_BASE_URL": ls.URL}, "address", "lookup", uncheckedTA)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no credentials")
	assert.Len(t, ls.received("/travel-address/decode"), 1)
}

func TestAddressSubcommands(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string
		err  string
	}{
		{[]string{"address"}, exitUsage, "", "name a subcommand: generate, decode or lookup"},
		{[]string{"address", "nope"}, exitUsage, "", `unknown subcommand "nope"`},
		{[]string{"address", "--help"}, exitOK, "Subcommands:\n  generate", ""},
		{[]string{"help", "address"}, exitOK, "Usage: travelrule address <generate|decode|lookup>", ""},
		{[]string{"address", "generate", "--help"}, exitOK, "-first-name", ""},
		{[]string{"address", "decode", "-h"}, exitOK, "Usage: travelrule address decode TA", ""},
		{[]string{"address", "lookup", "--help"}, exitOK, "-show-personal-data", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", nil, tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, out, tt.out)
			assert.Contains(t, errOut, tt.err)
			if tt.code == exitOK {
				assert.Empty(t, errOut)
			} else {
				assert.Empty(t, out)
			}
		})
	}
}
