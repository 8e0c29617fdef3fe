package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTxIDCommand(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/transfers/txId": {200, `{"status":true}`}})
	code, out, errOut := runCLI(t, context.Background(), "", ls.env(), "txid", "--transfer", "019ac452-8660", "--txid", "0xfeed")
	require.Equal(t, exitOK, code, errOut)
	assert.JSONEq(t, `{"status":"true","requestId":"","attempts":1}`, out)
	got := ls.received("/transfers/txId")
	require.Len(t, got, 1)
	assert.Equal(t, "q=019ac452-8660", got[0].query)
	assert.JSONEq(t, `{"txId":"0xfeed"}`, got[0].body)
	assertNoSecrets(t, out+errOut)
}

func TestTxIDCommandFailures(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/transfers/txId": {http.StatusNotFound,
		`{"status":false,"errors":[{"code":"TRANSFER_NOT_FOUND","message":"no such transfer"}]}`}})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no transfer", []string{"--txid", "0x1"}, exitUsage, "--transfer is required"},
		{"no txid", []string{"--transfer", "t-1"}, exitUsage, "--txid is required"},
		{"an argument", []string{"--transfer", "t-1", "--txid", "0x1", "extra"}, exitUsage, "unexpected arguments"},
		{"an unknown transfer", []string{"--transfer", "t-1", "--txid", "0x1"}, exitFailed, "txid: travelrule: SubmitTxID: 404 Not Found: TRANSFER_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", ls.env(), append([]string{"txid"}, tt.args...)...)
			assert.Equal(t, tt.code, code)
			assertFailureOutput(t, "txid", code, out)
			assert.Contains(t, errOut, tt.want)
			assert.Equal(t, tt.code == exitUsage, strings.Contains(errOut, "Usage: travelrule txid"))
			assertNoSecrets(t, errOut)
		})
	}
}
