package travelruletest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// Every error answer is the live service's envelope, with the code its
// status calls for.
func TestEveryErrorIsTheEnvelope(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	valid := validRequest("http://127.0.0.1:1/cb")
	fault := func(k travelruletest.FaultKind) func() {
		return func() { srv.SetFaults(travelruletest.Fault{Kind: k, Rate: 1, Times: 1}) }
	}
	for _, tt := range []struct {
		name, method, path, token string
		body                      any
		header                    []string
		before                    func()
		status                    int
		code                      string
	}{
		{"body not an object", http.MethodPost, "/transfers/initiate", tok, `[]`, nil, nil, http.StatusBadRequest, "INVALID_REQUEST"},
		{"a field fault", http.MethodPost, "/transfers/initiate", tok, `{"asset":"BTC"}`, nil, nil, http.StatusBadRequest, "VALIDATION_ERROR"},
		{"an empty asset, the live docs' example", http.MethodPost, "/transfers/initiate", tok, `{}`, nil, nil, http.StatusBadRequest, "INVALID_REQUEST"},
		{"Idempotency-Key too long", http.MethodPost, "/transfers/initiate", tok, valid, []string{"Idempotency-Key", strings.Repeat("k", 256)}, nil, http.StatusBadRequest, "INVALID_REQUEST"},
		{"no token", http.MethodPost, "/transfers/initiate", "", valid, nil, nil, http.StatusUnauthorized, "UNAUTHORIZED"},
		{"expired token", http.MethodPost, "/transfers/initiate", srv.ExpiredToken(), valid, nil, nil, http.StatusForbidden, "FORBIDDEN"},
		{"no such endpoint", http.MethodPost, "/transfers/cancel", tok, valid, nil, nil, http.StatusNotFound, "NOT_FOUND"},
		{"unknown transfer", http.MethodPost, "/transfers/inquiryResolution?q=x", tok, `{"approved":"true"}`, nil, nil, http.StatusNotFound, "TRANSFER_NOT_FOUND"},
		{"unknown travel address", http.MethodPost, "/travel-address/decode", tok, `{"travelAddress":"` + travelruletest.KnownTravelAddress + `"}`, nil, nil, http.StatusNotFound, "INVALID_TRAVEL_ADDRESS"},
		{"GET an operation", http.MethodGet, "/transfers/txId", tok, nil, nil, nil, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{"too large", http.MethodPost, "/travel-address/generate", tok, `{"x":"` + strings.Repeat("x", 1<<20) + `"}`, nil, nil, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE"},
		{"not JSON", http.MethodPost, "/travel-address/decode", tok, `{}`, []string{"Content-Type", "text/plain"}, nil, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
		{"rate limited", http.MethodPost, "/transfers/initiate", tok, valid, nil, fault(travelruletest.FaultRateLimit), http.StatusTooManyRequests, "RATE_LIMITED"},
		{"unavailable", http.MethodPost, "/travel-address/decode", tok, `{"travelAddress":"ta1"}`, nil, fault(travelruletest.FaultUnavailable), http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE"},
		{"internal", http.MethodPost, "/transfers/initiate", tok, valid, nil, fault(travelruletest.FaultInternal), http.StatusInternalServerError, "INTERNAL_ERROR"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			var a rawAnswer
			if tt.method == http.MethodPost {
				a = post(t, srv.URL+tt.path, tt.token, tt.body, tt.header...)
			} else {
				a = login(t, tt.method, srv.URL+tt.path, "Authorization", "Bearer "+tt.token)
			}
			require.Equal(t, tt.status, a.Status, "body %s", a.Body)
			assert.Equal(t, "application/json", a.Header.Get("Content-Type"))
			assert.NotEmpty(t, a.Header.Get("X-Request-Id"))
			code, _, _ := a.errorBody(t)
			assert.Equal(t, tt.code, code)
			noPersonalData(t, a.Body)
		})
	}
}

// The SDK's APIError reads every entry: its codes, and its fields with
// their messages; the live docs' entry for an empty asset names no field.
func TestEnvelopeThroughTheClient(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	hc := &http.Client{Transport: rewrite{strings.NewReplacer(`"asset":"BTC"`, `"asset":""`, `"travelAddress":"x"`, `"travelAddress":"ta+"`)}}
	req := validRequest("http://127.0.0.1:1/cb")
	req.TravelAddress = "x"
	_, err := newClient(t, srv, travelrule.WithHTTPClient(hc)).InitiateTransfer(context.Background(), req)
	var ae *travelrule.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusBadRequest, ae.StatusCode)
	assert.ElementsMatch(t, []string{"INVALID_REQUEST", "INVALID_TRAVEL_ADDRESS"}, ae.Codes)
	assert.ErrorIs(t, err, travelrule.ErrBadRequest)
	assert.ErrorIs(t, err, travelrule.CodeInvalidRequest)
	assert.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress)
	var paths []string
	for _, f := range ae.Fields {
		paths = append(paths, f.Field)
		assert.True(t, strings.HasPrefix(f.Reason, f.Field+": "), "the message names its field: %q", f.Reason)
	}
	assert.ElementsMatch(t, []string{"travelAddress"}, paths)
}

// liveAssetExample is the live docs' one example of an error answer
// (live-service.md, Conventions), as written there: the answer to an
// initiation with an empty asset, status 400.
const liveAssetExample = `{"status": false, "errors": [{"code": "INVALID_REQUEST", "message": "Asset is required"}]}`

// TestDocumentedErrorAnswer: an empty asset, whether the member is
// missing, "" or null, is answered as the live docs show it, 400 and
// exactly their body; the client reads that answer the same from the
// sandbox and from a server written from the docs' example alone: a
// refusal (nothing was stored) matching ErrBadRequest and INVALID_REQUEST.
func TestDocumentedErrorAnswer(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	example := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		if a, _ := m["asset"].(string); a == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, liveAssetExample)
			return
		}
		_, _ = io.WriteString(w, `{"status":true,"data":{"transferId":"t-1"}}`)
	}))
	t.Cleanup(example.Close)

	for _, tt := range []struct {
		name string
		edit func(map[string]any)
		wire *strings.Replacer // the same edit, on the client's request body
	}{
		{"no asset member", func(m map[string]any) { delete(m, "asset") }, strings.NewReplacer(`"asset":"BTC",`, ``)},
		{`"asset":""`, func(m map[string]any) { m["asset"] = "" }, strings.NewReplacer(`"asset":"BTC"`, `"asset":""`)},
		{`"asset":null`, func(m map[string]any) { m["asset"] = nil }, strings.NewReplacer(`"asset":"BTC"`, `"asset":null`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := wire(t, validRequest("http://127.0.0.1:1/cb"))
			tt.edit(m)
			a := post(t, srv.URL+"/transfers/initiate", tok, m)
			assert.Equal(t, http.StatusBadRequest, a.Status)
			assert.JSONEq(t, liveAssetExample, string(a.Body), "the sandbox answers as the docs show")

			for name, base := range map[string]string{"sandbox": srv.URL, "the docs' example": example.URL} {
				hc := &http.Client{Transport: rewrite{tt.wire}}
				c, err := travelrule.NewClient(base, travelrule.WithTokenSource(srv.TokenSource()), travelrule.WithHTTPClient(hc))
				require.NoError(t, err)
				_, err = c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
				var ae *travelrule.APIError
				require.ErrorAs(t, err, &ae, name)
				assert.Equal(t, http.StatusBadRequest, ae.StatusCode, name)
				assert.Equal(t, "INVALID_REQUEST", ae.Code, name)
				assert.Equal(t, []string{"INVALID_REQUEST"}, ae.Codes, name)
				assert.Empty(t, ae.Fields, "%s: the docs' entry names no field", name)
				assert.Equal(t, "Asset is required", ae.ServerMessage(), name)
				assert.ErrorIs(t, err, travelrule.ErrBadRequest, name)
				assert.ErrorIs(t, err, travelrule.CodeInvalidRequest, name)
				assert.NotErrorIs(t, err, travelrule.CodeValidationError, name)
				assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "%s: a refusal, nothing stored", name)
				assert.Contains(t, err.Error(), "400 Bad Request: INVALID_REQUEST", name)
			}
			assert.Empty(t, srv.Transfers(), "nothing stored")
		})
	}
}
