package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiscoverCommand(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/discovery/vasp": {200, `{"status":true,"data":{"count":2,"vasps":[` +
		`{"id":"v-1","name":"Example VASP","domain":"example.com","country":"DE"},` +
		`{"publicId":"v-2","name":"Other VASP","domain":"pay.example.com"}]}}`}})
	code, out, errOut := runCLI(t, context.Background(), "", ls.env(), "discover", "--domain", "example.com", "--name", "vasp")
	require.Equal(t, exitOK, code, errOut)
	assert.JSONEq(t, `{"count":2,"vasps":[{"id":"v-1","name":"Example VASP","domain":"example.com"},`+
		`{"id":"v-2","name":"Other VASP","domain":"pay.example.com"}],"requestId":"","attempts":1}`, out)
	got := ls.received("/discovery/vasp")
	require.Len(t, got, 1)
	assert.Equal(t, "GET", got[0].method)
	assert.JSONEq(t, `{"domain":"example.com","name":"vasp"}`, got[0].body)
}

func TestDiscoverCommandNone(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/discovery/vasp": {200, `{"status":true,"data":{"count":0,"vasps":[]}}`}})
	code, out, errOut := runCLI(t, context.Background(), "", ls.env(), "discover", "--domain", "nowhere.example")
	require.Equal(t, exitOK, code, errOut)
	assert.JSONEq(t, `{"count":0,"vasps":[],"requestId":"","attempts":1}`, out)

	code, out, errOut = runCLI(t, context.Background(), "", ls.env(), "discover")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "--domain or --name is required")
	assert.Len(t, ls.received("/discovery/vasp"), 1, "nothing sent without a criterion")
}

func TestDiscoverCommandRefused(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/discovery/vasp": {400, `{"status":false,"errors":[{"code":"INVALID_REQUEST","message":"PLANTED bad domain"}]}`}})
	code, out, errOut := runCLI(t, context.Background(), "", ls.env(), "discover", "--domain", "x")
	assert.Equal(t, exitFailed, code)
	assertFailureOutput(t, "discover", code, out)
	assert.Contains(t, errOut, "discover: travelrule: SearchVASPs: 400 Bad Request: INVALID_REQUEST")
}
