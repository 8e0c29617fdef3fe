package travelrule_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// basePath is where the test server mounts the service, so that a client
// that drops the base URL's path fails every test.
const basePath = "/api/v3"

const testToken = "test-token-not-a-secret"

// recorded is one request as the test server saw it.
type recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// testServer is an httptest server mounted under basePath that records
// every request and answers with handler.
type testServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
	hits atomic.Int64
}

func (s *testServer) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// setup starts a server whose mux serves handler under basePath and returns
// it with a client for it. Each test is three lines.
func setup(t *testing.T, handler http.HandlerFunc, opts ...travelrule.Option) (*travelrule.Client, *testServer) {
	t.Helper()
	ts := &testServer{}
	mux := http.NewServeMux()
	mux.HandleFunc(basePath+"/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts.mu.Lock()
		ts.reqs = append(ts.reqs, recorded{r.Method, strings.TrimPrefix(r.URL.Path, basePath), r.URL.RawQuery, r.Header.Clone(), body})
		ts.mu.Unlock()
		ts.hits.Add(1)
		handler(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the base path: %s %s", r.Method, r.URL.Path)
		http.Error(w, "outside base path", http.StatusTeapot)
	})
	ts.Server = httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	all := append([]travelrule.Option{
		travelrule.WithTokenSource(travelrule.StaticToken(testToken)),
		travelrule.WithRetryWait(time.Millisecond, 5*time.Millisecond),
	}, opts...)
	c, err := travelrule.NewClient(ts.URL+basePath, all...)
	require.NoError(t, err)
	return c, ts
}

// answer returns a handler that answers status with body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// golden compares got with testdata/name byte for byte, or rewrites the file
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(p, got, 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "golden file %s (run go test -update to rewrite)", p)
}

// fullRequest is a valid request with every field set and non-ASCII names.
func fullRequest() *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		TravelAddress: "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv",
		Email:         "compliance@vasp-a.example",
		TxID:          "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
		Asset:         "ETH",
		Amount:        "1.25",
		Callback:      "https://vasp-a.example/travelrule/callback?tenant=7&env=prod",
		Originator: travelrule.Party{
			PersonType:     "natural",
			FirstName:      "Zoë",
			LastName:       "Ødegård-Müller",
			DateOfBirth:    "1984-02-29",
			AddressType:    "HOME",
			StreetName:     "Straße des 17. Juni",
			BuildingNumber: "135",
			PostCode:       "10623",
			TownName:       "Berlin",
			Country:        "DE",
			NationalID:     "123456789",
			NationalIDType: "IDCD",
			AccountNumber:  "ACC-0001",
			WalletAddress:  "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
		},
		Beneficiary: travelrule.Party{
			PersonType:     "natural",
			FirstName:      "美咲",
			LastName:       "山田",
			DateOfBirth:    "1990-07-01",
			AddressType:    "HOME",
			StreetName:     "千代田",
			BuildingNumber: "1",
			PostCode:       "100-0001",
			TownName:       "東京",
			Country:        "JP",
			AccountNumber:  "ACC-0002",
			WalletAddress:  "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
		},
	}
}

// minimalRequest has only the required fields.
func minimalRequest() *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Asset:       "BTC",
		Amount:      "0.5",
		Callback:    "https://vasp-a.example/cb",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
}

func TestInitiateTransferWireFormat(t *testing.T) {
	c, ts := setup(t, answer(200, `{"status":"succes"}`))
	_, err := c.InitiateTransfer(context.Background(), fullRequest())
	require.NoError(t, err)

	reqs := ts.requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/transfers/initiate", r.Path)
	assert.Empty(t, r.Query)
	golden(t, "transfer_request.json", r.Body)

	// Every value is a JSON string, and only the description's fields are sent.
	var generic map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &generic))
	wantTop := []string{"travelAddress", "email", "txId", "asset", "amount", "callback", "originator", "beneficiary"}
	assert.ElementsMatch(t, wantTop, keys(generic))
	partyFields := []string{"personType", "firstName", "lastName", "dateOfBirth", "addressType", "streetName", "buildingNumber",
		"postCode", "townName", "country", "nationalId", "nationalIdType", "accountNumber", "walletAddress"}
	orig := generic["originator"].(map[string]any)
	assert.ElementsMatch(t, partyFields, keys(orig))
	for k, v := range orig {
		assert.IsType(t, "", v, "originator.%s must be a JSON string", k)
	}
}

func TestInitiateTransferOmitsUnsetOptionalFields(t *testing.T) {
	c, ts := setup(t, answer(200, `{"status":"succes"}`))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	body := ts.requests()[0].Body
	assert.NotContains(t, string(body), "null")
	var generic map[string]any
	require.NoError(t, json.Unmarshal(body, &generic))
	assert.ElementsMatch(t, []string{"asset", "amount", "callback", "originator", "beneficiary"}, keys(generic))
	assert.ElementsMatch(t, []string{"personType", "firstName", "lastName", "dateOfBirth"}, keys(generic["originator"].(map[string]any)))
	golden(t, "transfer_request_minimal.json", body)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRequestHeaders(t *testing.T) {
	tests := []struct {
		name    string
		opts    []travelrule.Option
		wantUA  string
		inquiry bool
	}{
		{name: "initiate default UA", wantUA: "travelrule-go/" + travelrule.Version},
		{name: "initiate product UA", opts: []travelrule.Option{travelrule.WithUserAgent("acme-exchange/2.1")}, wantUA: "acme-exchange/2.1 travelrule-go/" + travelrule.Version},
		{name: "inquiry default UA", wantUA: "travelrule-go/" + travelrule.Version, inquiry: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"status":"succes"}`
			if tt.inquiry {
				body = `{"status":true}`
			}
			c, ts := setup(t, answer(200, body), tt.opts...)
			var err error
			if tt.inquiry {
				_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
			} else {
				_, err = c.InitiateTransfer(context.Background(), minimalRequest())
			}
			require.NoError(t, err)
			h := ts.requests()[0].Header
			assert.Equal(t, "Bearer "+testToken, h.Get("Authorization"))
			assert.Equal(t, "application/json", h.Get("Content-Type"))
			assert.Equal(t, tt.wantUA, h.Get("User-Agent"))
			assert.Empty(t, h.Get("Idempotency-Key"), "no idempotency key unless WithIdempotency")
		})
	}
}

func TestInitiateTransferAnswers(t *testing.T) {
	withID, err := os.ReadFile("testdata/initiate_response_transfer_id.json")
	require.NoError(t, err)
	documented, err := os.ReadFile("testdata/initiate_response.json")
	require.NoError(t, err)
	tests := []struct {
		name   string
		body   string
		status string
		id     string
	}{
		{"documented misspelling", string(documented), "succes", ""},
		{"correct spelling", `{"status":"success"}`, "success", ""},
		{"transferId and unknown fields", string(withID), "succes", "6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11"},
		{"numeric transferId", `{"status":"succes","transferId":12345}`, "succes", "12345"},
		{"null transferId", `{"status":"succes","transferId":null}`, "succes", ""},
		{"nested unknown", `{"status":"succes","extra":{"a":[1,2,{"b":null}]}}`, "succes", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Request-Id", "req-42")
				answer(200, tt.body)(w, r)
			})
			res, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err)
			assert.Equal(t, tt.status, res.Status)
			assert.Equal(t, tt.id, res.TransferID)
			assert.Equal(t, "req-42", res.RequestID)
			assert.Equal(t, 1, res.Attempts)
			assert.JSONEq(t, tt.body, string(res.Raw))
		})
	}
}

func TestInitiateTransferUnexpectedSuccessBody(t *testing.T) {
	for _, body := range []string{`{"status":"failed"}`, `not json`, ``, `{"status":1}`, `[]`} {
		t.Run(body, func(t *testing.T) {
			c, ts := setup(t, answer(200, body))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.Error(t, err)
			// A 2xx means the service may have stored the transfer: the
			// caller must reconcile, and the request is not sent again.
			assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			assert.ErrorIs(t, err, travelrule.ErrUnexpectedResponse)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 200, apiErr.StatusCode)
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

func TestBasePathAndInquiryQuery(t *testing.T) {
	tests := []struct {
		id        string
		wantQuery string
	}{
		{"6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11", "q=6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11"},
		{"a b&c=d/e?f#g", "q=a+b%26c%3Dd%2Fe%3Ff%23g"},
		{"ünï", "q=%C3%BCn%C3%AF"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c, ts := setup(t, answer(200, `{"status":true}`))
			res, err := c.ResolveInquiry(context.Background(), tt.id, &travelrule.InquiryResolution{Approved: "true", Callback: "https://vasp-b.example/cb"})
			require.NoError(t, err)
			assert.True(t, res.Status)
			r := ts.requests()[0]
			assert.Equal(t, "/transfers/inquiryResolution", r.Path)
			assert.Equal(t, tt.wantQuery, r.Query)
			golden(t, "inquiry_request.json", r.Body)
		})
	}
}

func TestBaseURLTrailingSlash(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v3/transfers/initiate", r.URL.Path)
		answer(200, `{"status":"succes"}`)(w, r)
	}))
	defer ts.Close()
	c, err := travelrule.NewClient(ts.URL+"/api/v3/", travelrule.WithTokenSource(travelrule.StaticToken("t")))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
}

func TestResolveInquiryAnswers(t *testing.T) {
	tests := []struct {
		body    string
		want    bool
		wantErr bool
	}{
		{`{"status":true}`, true, false},
		{`{"status":false}`, false, false},
		{`{"status":"true","more":1}`, true, false},
		{`{"status":"maybe"}`, false, true},
		{`{}`, false, true},
		{`nope`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			c, _ := setup(t, answer(200, tt.body))
			res, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "false"})
			if tt.wantErr {
				assert.ErrorIs(t, err, travelrule.ErrUnexpectedResponse)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Status)
			assert.JSONEq(t, tt.body, string(res.Raw))
		})
	}
}

func TestResolveInquiryValidation(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		r      *travelrule.InquiryResolution
		fields []string
	}{
		{"empty id", "", &travelrule.InquiryResolution{Approved: "true"}, []string{"q"}},
		{"empty approved", "t-1", &travelrule.InquiryResolution{}, []string{"approved"}},
		{"nil resolution", "t-1", nil, []string{"approved"}},
		{"both", "", &travelrule.InquiryResolution{Callback: "ftp://x"}, []string{"q", "approved", "callback"}},
		{"long callback", "t-1", &travelrule.InquiryResolution{Approved: "true", Callback: "https://x.example/" + strings.Repeat("a", 240)}, []string{"callback"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ts := setup(t, answer(200, `{"status":true}`))
			_, err := c.ResolveInquiry(context.Background(), tt.id, tt.r)
			var ve *travelrule.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.ErrorIs(t, err, travelrule.ErrInvalidRequest)
			assert.ElementsMatch(t, tt.fields, fieldPaths(ve))
			assert.Zero(t, ts.hits.Load(), "invalid input must never reach the network")
		})
	}
}

func fieldPaths(ve *travelrule.ValidationError) []string {
	var out []string
	for _, f := range ve.Fields {
		out = append(out, f.Field)
	}
	return out
}

func TestInitiateTransferValidationNeverSends(t *testing.T) {
	c, ts := setup(t, answer(200, `{"status":"succes"}`))
	req := minimalRequest()
	req.Asset = ""
	req.Originator.Country = "DEU"
	_, err := c.InitiateTransfer(context.Background(), req)
	var ve *travelrule.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.ElementsMatch(t, []string{"asset", "originator.country"}, fieldPaths(ve))
	_, err = c.InitiateTransfer(context.Background(), nil)
	assert.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	assert.Zero(t, ts.hits.Load())
}

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		status   int
		sentinel error
	}{
		{400, travelrule.ErrBadRequest},
		{401, travelrule.ErrUnauthorized},
		{403, nil},
		{404, travelrule.ErrNotFound},
		{409, nil},
		{422, nil},
	}
	body := `{"error":"bad_request","message":"asset is not supported","fields":[{"field":"asset","reason":"unsupported"}],"secretish":"RAW-BODY-MARKER"}`
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			for _, op := range []string{"InitiateTransfer", "ResolveInquiry"} {
				c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Request-Id", "rid-1")
					answer(tt.status, body)(w, r)
				})
				var err error
				if op == "InitiateTransfer" {
					_, err = c.InitiateTransfer(context.Background(), minimalRequest())
				} else {
					_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
				}
				var apiErr *travelrule.APIError
				require.ErrorAs(t, err, &apiErr, op)
				assert.Equal(t, tt.status, apiErr.StatusCode)
				assert.Equal(t, op, apiErr.Op)
				assert.Equal(t, body, string(apiErr.Body), "raw body kept")
				assert.Equal(t, "asset is not supported", apiErr.Message)
				assert.Equal(t, "bad_request", apiErr.Code)
				assert.Contains(t, err.Error(), "bad_request (fields: asset)")
				assert.NotContains(t, err.Error(), "not supported", "free server text stays out of the error string")
				require.Len(t, apiErr.Fields, 1)
				assert.Equal(t, "asset", apiErr.Fields[0].Field)
				assert.Equal(t, "unsupported", apiErr.Fields[0].Reason)
				assert.Equal(t, "asset: [redacted]", apiErr.Fields[0].Error(), "the server's reason stays in the field")
				assert.Equal(t, "rid-1", apiErr.RequestID)
				assert.Contains(t, err.Error(), op)
				assert.Contains(t, err.Error(), http.StatusText(tt.status))
				assert.NotContains(t, err.Error(), "RAW-BODY-MARKER", "the raw body never goes into the error string")
				if tt.sentinel != nil {
					assert.ErrorIs(t, err, tt.sentinel)
				}
				for _, other := range []error{travelrule.ErrBadRequest, travelrule.ErrUnauthorized, travelrule.ErrNotFound, travelrule.ErrOutcomeUnknown} {
					if other != tt.sentinel {
						assert.NotErrorIs(t, err, other)
					}
				}
				// A 4xx other than 429 is never retried (a 401 with a
				// static token cannot be cured by a refresh).
				assert.EqualValues(t, 1, ts.hits.Load(), "%s must not retry a %d", op, tt.status)
			}
		})
	}
}

func TestErrorBodyReadThroughLimit(t *testing.T) {
	huge := strings.Repeat("x", 4<<10)
	c, _ := setup(t, answer(400, huge), travelrule.WithMaxResponseBytes(1<<10))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.LessOrEqual(t, len(apiErr.Body), 1<<10)
}

func TestRetriesRateLimitAndUnavailable(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var n atomic.Int64
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) <= 2 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(status)
					return
				}
				answer(200, `{"status":"succes"}`)(w, r)
			})
			res, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err)
			assert.Equal(t, 3, res.Attempts)
			assert.EqualValues(t, 3, ts.hits.Load())
			reqs := ts.requests()
			assert.Equal(t, reqs[0].Body, reqs[2].Body, "the same body on every attempt")
		})
	}
}

func TestRetryAfterAboveBackoffMaxIsHonoured(t *testing.T) {
	var first time.Time
	var gap time.Duration
	var n atomic.Int64
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		gap = time.Since(first)
		answer(200, `{"status":"succes"}`)(w, r)
	}) // backoff max is 5ms in setup
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, gap, 900*time.Millisecond, "Retry-After: 1 must be honoured above the 5ms backoff maximum")
}

func TestRetryAfterBeyondCapOrDeadlineIsNotWaited(t *testing.T) {
	tests := []struct {
		name string
		opts []travelrule.Option
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"above cap", []travelrule.Option{travelrule.WithRetryAfterMax(time.Second)}, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}},
		// An hour asked, a minute left: far apart, so that no stall of
		// the machine decides the case.
		{"past deadline", []travelrule.Option{travelrule.WithRetryAfterMax(2 * time.Hour)}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusServiceUnavailable)
			}, tt.opts...)
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := c.InitiateTransfer(ctx, minimalRequest())
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 503, apiErr.StatusCode)
			assert.Equal(t, time.Hour, apiErr.RetryAfter)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "a 503 is a definite failure")
			assert.EqualValues(t, 1, ts.hits.Load())
			assert.NoError(t, ctx.Err(), "the call returned before the deadline instead of waiting for it")
		})
	}
}

func TestInitiateTransferNeverResentAfterServerError(t *testing.T) {
	for _, status := range []int{500, 502, 504, 520, 524, 599} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			c, ts := setup(t, answer(status, `{"message":"boom"}`))
			req := minimalRequest()
			req.TxID = "0xabc"
			_, err := c.InitiateTransfer(context.Background(), req)
			require.Error(t, err)
			assert.EqualValues(t, 1, ts.hits.Load(), "a %d may have created the transfer: never resend", status)
			assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			assert.ErrorIs(t, err, travelrule.ErrServer)
			var unknown *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, "0xabc", unknown.TxID)
			assert.Equal(t, 1, unknown.Attempts)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.StatusCode)
		})
	}
}

func TestResolveInquiryRetriesServerErrors(t *testing.T) {
	var n atomic.Int64
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		answer(200, `{"status":true}`)(w, r)
	})
	res, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	require.NoError(t, err)
	assert.True(t, res.Status)
	assert.EqualValues(t, 2, ts.hits.Load())
}

func TestContextEndsBackoffWait(t *testing.T) {
	// The client logs "retrying" once it has the 503 and has chosen to
	// wait: cancel then, never before the answer arrived.
	waiting := &logEvent{msg: "travelrule: retrying", seen: make(chan struct{})}
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusServiceUnavailable)
	}, travelrule.WithRetryAfterMax(time.Hour), travelrule.WithRetryMax(5),
		travelrule.WithLogger(slog.New(waiting)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-waiting.seen
		cancel()
	}()
	_, err := c.InitiateTransfer(ctx, minimalRequest())
	require.ErrorIs(t, err, context.Canceled, "cancellation during a one-minute Retry-After wait ends the call")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the only attempt got a 503 with Retry-After: definite")
	assert.EqualValues(t, 1, ts.hits.Load())
}

// TestContextEndDuringAttemptIsOutcomeUnknown ends the caller's context
// once the server holds the request, never before: the ending is an event,
// not a race between a short deadline and the dial.
func TestContextEndDuringAttemptIsOutcomeUnknown(t *testing.T) {
	for _, tt := range []struct {
		name string
		want error
	}{
		{"cancelled", context.Canceled},
		{"deadline", context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			arrived := make(chan struct{})
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				close(arrived)
				<-r.Context().Done() // the client gives up on the request
			})
			ctx := endsOn(arrived, tt.want)
			_, err := c.InitiateTransfer(ctx, minimalRequest())
			require.ErrorIs(t, err, tt.want)
			assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the request was written before the context ended")
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

// endsOn returns a context that ends with err (context.Canceled or
// context.DeadlineExceeded) when event is closed: a deadline that passes
// at a chosen moment instead of a chosen time.
func endsOn(event <-chan struct{}, err error) context.Context {
	return eventContext{Context: context.Background(), event: event, err: err}
}

type eventContext struct {
	context.Context
	event <-chan struct{}
	err   error
}

func (c eventContext) Done() <-chan struct{} { return c.event }

func (c eventContext) Err() error {
	select {
	case <-c.event:
		return c.err
	default:
		return nil
	}
}

func TestContextAlreadyDoneSendsNothing(t *testing.T) {
	c, ts := setup(t, answer(200, `{"status":"succes"}`))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.InitiateTransfer(ctx, minimalRequest())
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Zero(t, ts.hits.Load())
}

func TestNewClientRefusals(t *testing.T) {
	ts := travelrule.WithTokenSource(travelrule.StaticToken("t"))
	tests := []struct {
		name string
		url  string
		opts []travelrule.Option
		ok   bool
	}{
		{"https", "https://travelrule.example/api/v3", []travelrule.Option{ts}, true},
		{"http loopback ip", "http://127.0.0.1:8080", []travelrule.Option{ts}, true},
		{"http localhost", "http://localhost:8080/x", []travelrule.Option{ts}, true},
		{"http ipv6 loopback", "http://[::1]:8080", []travelrule.Option{ts}, true},
		{"no token source", "https://travelrule.example", nil, false},
		{"nil token source", "https://travelrule.example", []travelrule.Option{travelrule.WithTokenSource(nil)}, false},
		{"relative", "/api/v3", []travelrule.Option{ts}, false},
		{"no scheme", "travelrule.example/api", []travelrule.Option{ts}, false},
		{"ftp", "ftp://travelrule.example", []travelrule.Option{ts}, false},
		{"plain http remote", "http://travelrule.example", []travelrule.Option{ts}, false},
		{"plain http private ip", "http://10.0.0.1", []travelrule.Option{ts}, false},
		{"credentials", "https://user:pw@travelrule.example", []travelrule.Option{ts}, false},
		{"query", "https://travelrule.example?x=1", []travelrule.Option{ts}, false},
		{"bad retry wait", "https://travelrule.example", []travelrule.Option{ts, travelrule.WithRetryWait(time.Second, time.Millisecond)}, false},
		{"negative retries", "https://travelrule.example", []travelrule.Option{ts, travelrule.WithRetryMax(-1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := travelrule.NewClient(tt.url, tt.opts...)
			if tt.ok {
				require.NoError(t, err)
				assert.NotNil(t, c)
				return
			}
			require.Error(t, err)
			assert.Nil(t, c)
			assert.NotContains(t, err.Error(), "pw")
		})
	}
}

func TestCrossOriginRedirectKeepsToken(t *testing.T) {
	var leaked atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		answer(200, `{"status":"succes"}`)(w, r)
	}))
	defer other.Close()
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	})
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTemporaryRedirect, apiErr.StatusCode)
	assert.Zero(t, leaked.Load(), "the bearer token must never reach another origin")
}

func TestSameOriginRedirects(t *testing.T) {
	redirecting := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "-v2") {
				http.Redirect(w, r, r.URL.Path+"-v2?"+r.URL.RawQuery, status)
				return
			}
			if strings.Contains(r.URL.Path, "inquiry") {
				answer(200, `{"status":true}`)(w, r)
				return
			}
			answer(200, `{"status":"succes"}`)(w, r)
		}
	}
	t.Run("followed for calls that may be repeated", func(t *testing.T) {
		c, ts := setup(t, redirecting(http.StatusPermanentRedirect))
		_, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
		require.NoError(t, err)
		reqs := ts.requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, reqs[0].Body, reqs[1].Body)
		assert.Equal(t, "Bearer "+testToken, reqs[1].Header.Get("Authorization"))

		c, ts = setup(t, redirecting(http.StatusTemporaryRedirect), travelrule.WithIdempotency())
		_, err = c.InitiateTransfer(context.Background(), minimalRequest())
		require.NoError(t, err)
		assert.EqualValues(t, 2, ts.hits.Load())
	})
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusSeeOther, http.StatusFound} {
		t.Run("never followed for an initiation: "+http.StatusText(status), func(t *testing.T) {
			// A proxy that acted and then redirected would make a followed
			// redirect a second transfer; a 303 commonly means "done".
			c, ts := setup(t, redirecting(status))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.StatusCode)
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

func TestConnectionRefusedIsRetriedAndDefinite(t *testing.T) {
	// Every dial is refused by the dialer itself: a port closed by a test
	// could be taken by another process's listener before the client dials.
	var dials atomic.Int64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	c, err := travelrule.NewClient("http://127.0.0.1:9/api", travelrule.WithTokenSource(travelrule.StaticToken("t")),
		travelrule.WithHTTPClient(&http.Client{Transport: tr}),
		travelrule.WithRetryWait(time.Millisecond, 2*time.Millisecond), travelrule.WithRetryMax(2))
	require.NoError(t, err)
	_, err = c.ResolveInquiry(context.Background(), "secret-transfer-id", &travelrule.InquiryResolution{Approved: "true"})
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.EqualValues(t, 3, dials.Load(), "the first attempt and two retries")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "nothing was sent")
	assert.NotContains(t, err.Error(), "secret-transfer-id", "query strings stay out of error text")
	assert.False(t, errors.Is(err, context.Canceled))
}

// logEvent is a slog.Handler that closes seen the first time a record with
// message msg is logged: a test waits on it for an event inside the client.
type logEvent struct {
	msg  string
	seen chan struct{}
	once sync.Once
}

func (h *logEvent) Enabled(context.Context, slog.Level) bool { return true }

func (h *logEvent) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

func (h *logEvent) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logEvent) WithGroup(string) slog.Handler      { return h }
