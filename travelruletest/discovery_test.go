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

// search sends a search with body, without Authorization unless header
// sets one, as the docs' curl does.
func search(t *testing.T, srv *travelruletest.Server, method, body string, header ...string) rawAnswer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+"/discovery/vasp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

type foundVASP struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Domain  string `json:"domain"`
	Country string `json:"country"`
}

func TestDiscovery(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/api/v3"))
	host := strings.TrimSuffix(strings.TrimPrefix(srv.URL, "http://"), "/api/v3")
	for _, tt := range []struct {
		name   string
		body   string
		header []string
		want   []string // names, in the directory's order
	}{
		{"the docs' example", `{"domain":"example.com"}`, nil, []string{"Example Exchange", "Example Custody"}},
		{"any case", `{"domain":"EXAMPLE.Com"}`, nil, []string{"Example Exchange", "Example Custody"}},
		{"contains", `{"name":"ampl"}`, nil, []string{"Example Exchange", "Example Custody", "Sample Wallet"}},
		{"criteria combine with AND", `{"domain":"example","country":"gb"}`, nil, []string{"Example Exchange"}},
		{"the sandbox's own VASP by its host", `{"domain":"` + host + `"}`, nil, []string{"travelruletest beneficiary VASP"}},
		{"by id", `{"id":"` + travelruletest.OwnVASPID + `"}`, nil, []string{"travelruletest beneficiary VASP"}},
		{"an empty criterion is none", `{"domain":"","name":"wallet","country":null}`, nil, []string{"Sample Wallet"}},
		{"no match", `{"domain":"example.com","country":"SG"}`, nil, nil},
		{"escapes are decoded", `{"name":"Exchange\u0020"}`, nil, nil},
		{"a bearer token is ignored", `{"domain":"example.org"}`, []string{"Authorization", "Bearer " + srv.ForgedToken()}, []string{"Sample Wallet"}},
		{"any Content-Type", `{"domain":"example.org"}`, []string{"Content-Type", "text/plain"}, []string{"Sample Wallet"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := search(t, srv, http.MethodGet, tt.body, tt.header...)
			require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
			var ans struct {
				Status bool `json:"status"`
				Data   struct {
					Count int         `json:"count"`
					VASPs []foundVASP `json:"vasps"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(a.Body, &ans))
			assert.True(t, ans.Status)
			require.NotNil(t, ans.Data.VASPs, "an array, even empty: %s", a.Body)
			var names []string
			for _, v := range ans.Data.VASPs {
				names = append(names, v.Name)
				assert.NotEmpty(t, v.ID)
				assert.NotEmpty(t, v.Domain)
				assert.Len(t, v.Country, 2)
			}
			assert.Equal(t, tt.want, names)
			assert.Equal(t, len(tt.want), ans.Data.Count)
		})
	}
}

func TestDiscoveryRefusals(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	for _, tt := range []struct {
		name, body string
		code       string
		fields     []string
	}{
		{"no body", ``, "VALIDATION_ERROR", nil},
		{"no criterion", `{}`, "VALIDATION_ERROR", nil},
		{"only empty criteria", `{"domain":"","name":null}`, "VALIDATION_ERROR", nil},
		{"an unknown criterion", `{"domain":"example.com","lei":"5493"}`, "VALIDATION_ERROR", []string{"lei"}},
		{"an unknown criterion with an odd name", `{"domain":"example.com","a b":"x"}`, "VALIDATION_ERROR", nil},
		{"a number", `{"domain":7}`, "VALIDATION_ERROR", []string{"domain"}},
		{"too long", `{"name":"` + strings.Repeat("n", 256) + `"}`, "VALIDATION_ERROR", []string{"name"}},
		{"not an object", `["example.com"]`, "INVALID_REQUEST", nil},
		{"not JSON", `{"domain":`, "INVALID_REQUEST", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := search(t, srv, http.MethodGet, tt.body)
			require.Equal(t, http.StatusBadRequest, a.Status, "body %s", a.Body)
			es := a.entries(t)
			var fields []string
			for _, e := range es {
				assert.Equal(t, tt.code, e.Code)
				if e.Field != "" {
					fields = append(fields, e.Field)
				}
			}
			assert.Equal(t, tt.fields, fields)
			assert.NotContains(t, string(a.Body), "a b", "an odd name is not repeated")
		})
	}
	a := search(t, srv, http.MethodPost, `{"domain":"example.com"}`)
	assert.Equal(t, http.StatusMethodNotAllowed, a.Status)
	assert.Equal(t, http.MethodGet, a.Header.Get("Allow"))
	a = search(t, srv, http.MethodGet, `{"name":"`+strings.Repeat("n", 1<<20)+`"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, a.Status)
}

// The SDK's SearchVASPs, which sends its bearer token, reads the answer.
func TestDiscoveryThroughTheClient(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	res, err := newClient(t, srv).SearchVASPs(context.Background(), &travelrule.VASPQuery{Domain: "example.com"})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Count)
	require.Len(t, res.VASPs, 2)
	assert.Equal(t, "exchange.example.com", res.VASPs[0].Domain)
	assert.NotEmpty(t, res.VASPs[0].ID)

	res, err = newClient(t, srv).SearchVASPs(context.Background(), &travelrule.VASPQuery{Criteria: map[string]string{"country": "CH"}})
	require.NoError(t, err)
	require.Len(t, res.VASPs, 1)
	assert.Equal(t, "Example Custody", res.VASPs[0].Name)
}
