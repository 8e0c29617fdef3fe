package travelrule_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

func TestSearchVASPs(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	res, err := c.SearchVASPs(context.Background(), &travelrule.VASPQuery{Domain: "example.com", Criteria: map[string]string{"country": "DE"}})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Count)
	require.Len(t, res.VASPs, 1)
	assert.Equal(t, travelrule.VASP{ID: "vasp-1", Name: "Example VASP", Domain: "example.com", Raw: res.VASPs[0].Raw}, res.VASPs[0])
	assert.JSONEq(t, `{"id":"vasp-1","name":"Example VASP","domain":"example.com","country":"DE"}`, string(res.VASPs[0].Raw))
	reqs := live.requests("/discovery/vasp")
	require.Len(t, reqs, 1)
	assert.Equal(t, http.MethodGet, reqs[0].Method, "a GET with its criteria in a JSON body")
	var sent map[string]string
	require.NoError(t, json.Unmarshal(reqs[0].Body, &sent))
	assert.Equal(t, map[string]string{"domain": "example.com", "country": "DE"}, sent)
}

func TestSearchVASPsAnswers(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		count, n   int
	}{
		{"unwrapped", `{"vasps":[{"publicId":"p-1","name":"A"},{"name":"B"}]}`, 2, 2},
		{"count as text, extra fields", `{"status":"success","data":{"count":"7","vasps":[{"name":"A","x":[1]}],"next":null}}`, 7, 1},
		{"no matches", `{"status":true,"data":{"count":0,"vasps":[]}}`, 0, 0},
		{"a VASP that is not an object", `{"status":true,"data":{"vasps":["odd"]}}`, 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			live.handle("/discovery/vasp", answer(200, tt.body))
			c := live.client(t, liveKey)
			res, err := c.SearchVASPs(context.Background(), &travelrule.VASPQuery{Name: "a"})
			require.NoError(t, err)
			assert.Equal(t, tt.count, res.Count)
			assert.Len(t, res.VASPs, tt.n)
		})
	}
}

func TestSearchVASPsNeedsACriterion(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	for _, q := range []*travelrule.VASPQuery{nil, {}, {Criteria: map[string]string{"country": ""}}, {Criteria: map[string]string{"bad key": "x"}}} {
		_, err := c.SearchVASPs(context.Background(), q)
		require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	}
	assert.Empty(t, live.requests(""))
}
