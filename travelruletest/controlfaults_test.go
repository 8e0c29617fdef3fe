package travelruletest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestControlFaultsEndpoint: POST {URL}/sandbox/faults, as curl sends it,
// replaces the faults or refuses the body with the path of each field at
// fault, changing nothing; GET lists the faults with how many requests
// each hit.
func TestControlFaultsEndpoint(t *testing.T) {
	srv := newServer(t, travelruletest.WithPathPrefix("/api/v3"), travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	u := srv.URL + "/sandbox/faults"
	for _, tt := range []struct {
		name   string
		body   string
		fields []string // the fields refused; nil: 200
	}{
		{"not an object", `[]`, []string{""}},
		{"unknown kind", `{"faults":[{"kind":"teapot"}]}`, []string{"faults[0].kind"}},
		{"unknown field", `{"faults":[{"kind":"internal","retry_after":"2s"}]}`, []string{"retry_after"}},
		{"wrong type", `{"faults":[{"kind":"internal","times":"1"}]}`, []string{"faults.times"}},
		{"every field at fault", `{"faults":[{"kind":"internal"},{"kind":"latency","rate":2,"times":-1,"ops":["transfer"],"latency":"soon","retryAfter":"-1s"}]}`,
			[]string{"faults[1].rate", "faults[1].times", "faults[1].ops", "faults[1].retryAfter", "faults[1].latency"}},
		{"too many", `{"faults":[` + strings.Repeat(`{"kind":"internal"},`, 64) + `{"kind":"internal"}]}`, []string{"faults"}},
		// Above MaxFaultLatency: a 400, not a connection dropped by a panic.
		{"too long", `{"faults":[{"kind":"latency","latency":"25h"},{"kind":"rate-limit","retryAfter":"1000h"}]}`,
			[]string{"faults[0].latency", "faults[1].retryAfter"}},
		{"set", `{"faults":[{"kind":"rate-limit","times":1,"retryAfter":"2s","ops":["initiate","resolve"]}]}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := post(t, u, tok, tt.body)
			if tt.fields == nil {
				require.Equal(t, http.StatusOK, a.Status, "%s", a.Body)
				assert.JSONEq(t, `{"faults":[{"kind":"rate-limit","rate":1,"ops":["initiate","resolve"],"times":1,"retryAfter":"2s","fired":0}]}`, string(a.Body))
				return
			}
			require.Equal(t, http.StatusBadRequest, a.Status, "%s", a.Body)
			var got []string
			for _, e := range a.entries(t) {
				got = append(got, e.Field)
			}
			assert.Equal(t, tt.fields, got)
		})
	}

	// What was refused changed nothing: the fault set stands, and hits.
	sdk := newClient(t, srv, travelrule.WithRetryMax(0))
	_, err := sdk.InitiateTransfer(context.Background(), validRequest("https://originator.example/cb"))
	require.ErrorIs(t, err, travelrule.ErrRateLimited)
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var list struct {
		Faults []struct {
			Kind  string `json:"kind"`
			Fired int    `json:"fired"`
		} `json:"faults"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list.Faults, 1)
	assert.Equal(t, 1, list.Faults[0].Fired)

	// {"faults":[]} clears.
	require.Equal(t, http.StatusOK, post(t, u, tok, `{"faults":[]}`).Status)
	_, err = sdk.InitiateTransfer(context.Background(), validRequest("https://originator.example/cb"))
	require.NoError(t, err)

	// Like the rest of the control plane: a token, and POST or GET.
	assert.Equal(t, http.StatusUnauthorized, post(t, u, "", `{"faults":[]}`).Status)
	resp, err = http.Get(u) // the list, without a token
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the list needs a token too")
	req, err = http.NewRequest(http.MethodPut, u, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, POST", resp.Header.Get("Allow"))
}

// TestControlDecisionEndpoint: POST {URL}/sandbox/decision takes one of
// the decisions, and refuses a body without one.
func TestControlDecisionEndpoint(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	u := srv.URL + "/sandbox/decision"
	for _, tt := range []struct {
		body   string
		status int
		field  string
	}{
		{`{"decision":"none"}`, http.StatusOK, ""},
		{`{"decision":""}`, http.StatusOK, ""},
		{`{}`, http.StatusBadRequest, "decision"},
		{`{"decision":"maybe"}`, http.StatusBadRequest, "decision"},
		{`{"decision":"reject","why":"x"}`, http.StatusBadRequest, "why"},
		{`{"decision":true}`, http.StatusBadRequest, "decision"},
		{`{"decision":"reject"}`, http.StatusOK, ""},
	} {
		t.Run(tt.body, func(t *testing.T) {
			a := post(t, u, tok, tt.body)
			require.Equal(t, tt.status, a.Status, "%s", a.Body)
			if tt.status == http.StatusOK {
				assert.JSONEq(t, tt.body, string(a.Body))
				return
			}
			require.Len(t, a.entries(t), 1)
			assert.Equal(t, tt.field, a.entries(t)[0].Field)
		})
	}
	// The last one stands: reject, announced by one callback.
	res, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest("https://originator.example/cb"))
	require.NoError(t, err)
	waitCallbacks(t, srv, 1)
	tr, ok := srv.Transfer(res.TransferID)
	require.True(t, ok)
	assert.Equal(t, travelruletest.StateRejected, tr.State)
}
