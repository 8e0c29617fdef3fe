package travelruletest_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// get sends a GET to url with the bearer token (none if empty).
func get(t *testing.T, url, token string) rawAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawAnswer{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// transferState is the body of GET {base}/sandbox/transfers/{id}.
type transferState struct {
	TransferID string          `json:"transferId"`
	State      string          `json:"state"`
	Inquiry    bool            `json:"inquiry"`
	Created    time.Time       `json:"created"`
	Updated    time.Time       `json:"updated"`
	Callbacks  []callbackState `json:"callbacks"`
}

type callbackState struct {
	WebhookID string `json:"webhookId"`
	Kind      string `json:"kind"`
	Status    string `json:"status"`
	URL       string `json:"url"`
	Delivered bool   `json:"delivered"`
	Pending   bool   `json:"pending"`
	Attempts  []struct {
		Time       time.Time `json:"time"`
		StatusCode int       `json:"statusCode"`
		Error      string    `json:"error"`
	} `json:"attempts"`
}

// codes returns the status codes of the callback's attempts.
func (c callbackState) codes() []int {
	out := make([]int, len(c.Attempts))
	for i, a := range c.Attempts {
		out[i] = a.StatusCode
	}
	return out
}

// stateOf fetches the state of the transfer id from srv's control plane.
func stateOf(t *testing.T, srv *travelruletest.Server, id string) (transferState, []byte) {
	t.Helper()
	a := get(t, srv.URL+"/sandbox/transfers/"+id, token(t, srv))
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	assert.Equal(t, "application/json", a.Header.Get("Content-Type"))
	var st transferState
	require.NoError(t, json.Unmarshal(a.Body, &st))
	return st, a.Body
}

// startInquiry posts body to srv's control plane, expecting 201, and
// returns the transfer's id.
func startInquiry(t *testing.T, srv *travelruletest.Server, body any) string {
	t.Helper()
	a := post(t, srv.URL+"/sandbox/inquiries", token(t, srv), body)
	require.Equal(t, http.StatusCreated, a.Status, "body %s", a.Body)
	var out map[string]string
	require.NoError(t, json.Unmarshal(a.Body, &out))
	require.Regexp(t, uuidV4, out["transferId"])
	assert.Equal(t, srv.URL+"/sandbox/transfers/"+out["transferId"], a.Header.Get("Location"))
	return out["transferId"]
}

func TestControlPlaneRefusals(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/api/v3"))
	tok := token(t, srv)
	rc := newReceiver(t, nil)
	id := startInquiry(t, srv, map[string]any{"callback": rc.URL})
	inquiries, transfer := srv.URL+"/sandbox/inquiries", srv.URL+"/sandbox/transfers/"+id
	origin := strings.TrimSuffix(srv.URL, "/api/v3")
	tests := []struct {
		name, method, url, token string
		status                   int
		code, allow              string
	}{
		{"POST without token", http.MethodPost, inquiries, "", http.StatusUnauthorized, "UNAUTHORIZED", ""},
		{"POST with an expired token", http.MethodPost, inquiries, srv.ExpiredToken(), http.StatusForbidden, "FORBIDDEN", ""},
		{"POST with a forged token", http.MethodPost, inquiries, srv.ForgedToken(), http.StatusUnauthorized, "UNAUTHORIZED", ""},
		{"GET without token", http.MethodGet, transfer, "", http.StatusUnauthorized, "UNAUTHORIZED", ""},
		{"GET with an expired token", http.MethodGet, transfer, srv.ExpiredToken(), http.StatusForbidden, "FORBIDDEN", ""},
		{"GET inquiries", http.MethodGet, inquiries, tok, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", http.MethodPost},
		{"PUT inquiries", http.MethodPut, inquiries, tok, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", http.MethodPost},
		{"POST a transfer", http.MethodPost, transfer, tok, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", http.MethodGet},
		{"DELETE a transfer", http.MethodDelete, transfer, tok, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", http.MethodGet},
		{"GET an unknown transfer", http.MethodGet, srv.URL + "/sandbox/transfers/0b6f4a5e-8a3c-4d2b-9f1e-2c3d4e5f6a7b", tok, http.StatusNotFound, "TRANSFER_NOT_FOUND", ""},
		{"GET transfers", http.MethodGet, srv.URL + "/sandbox/transfers/", tok, http.StatusNotFound, "NOT_FOUND", ""},
		{"GET below a transfer", http.MethodGet, transfer + "/callbacks", tok, http.StatusNotFound, "NOT_FOUND", ""},
		{"GET sandbox", http.MethodGet, srv.URL + "/sandbox/", tok, http.StatusNotFound, "NOT_FOUND", ""},
		{"POST an unknown control path", http.MethodPost, srv.URL + "/sandbox/reset", tok, http.StatusNotFound, "NOT_FOUND", ""},
		{"POST inquiries without the prefix", http.MethodPost, origin + "/sandbox/inquiries", tok, http.StatusNotFound, "NOT_FOUND", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, tt.url, strings.NewReader(`{"callback":"`+rc.URL+`"}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			a := rawAnswer{Status: resp.StatusCode, Header: resp.Header, Body: body}
			require.Equal(t, tt.status, a.Status, "body %s", a.Body)
			code, msg, _ := a.errorBody(t)
			assert.Equal(t, tt.code, code)
			assert.NotEmpty(t, msg)
			assert.Equal(t, tt.allow, a.Header.Get("Allow"))
			if tt.status == http.StatusUnauthorized || tt.status == http.StatusForbidden {
				assert.Contains(t, a.Header.Get("WWW-Authenticate"), "Bearer")
			}
		})
	}
	assert.Len(t, srv.Transfers(), 1, "only the first inquiry was started")
}

func TestStartInquiryOverHTTPBadRequest(t *testing.T) {
	srv := newServer(t)
	tok := token(t, srv)
	cb := "https://vasp.example/cb"
	tests := []struct {
		name   string
		body   string
		fields []string
	}{
		{"empty object", `{}`, []string{"callback"}},
		{"callback null", `{"callback":null}`, []string{"callback"}},
		{"callback empty", `{"callback":""}`, []string{"callback"}},
		{"callback relative", `{"callback":"/inbound"}`, []string{"callback"}},
		{"callback not http", `{"callback":"ftp://vasp.example/cb"}`, []string{"callback"}},
		{"callback 256 characters", `{"callback":"https://h/` + strings.Repeat("a", 246) + `"}`, []string{"callback"}},
		{"callback a number", `{"callback":7}`, []string{"callback"}},
		{"asset a number", `{"callback":"` + cb + `","asset":5}`, []string{"asset"}},
		{"asset empty", `{"callback":"` + cb + `","asset":""}`, []string{"asset"}},
		{"amount 51 characters", `{"callback":"` + cb + `","amount":"` + strings.Repeat("1", 51) + `"}`, []string{"amount"}},
		{"travelAddress empty", `{"callback":"` + cb + `","travelAddress":""}`, []string{"travelAddress"}},
		{"email an array", `{"callback":"` + cb + `","email":["a@b.example"]}`, []string{"email"}},
		{"originator a string", `{"callback":"` + cb + `","originator":"Ada Lovelace"}`, []string{"originator"}},
		{"originator.firstName a number", `{"callback":"` + cb + `","originator":{"personType":"natural","firstName":1,"lastName":"L","dateOfBirth":"1815-12-10"}}`,
			[]string{"originator.firstName"}},
		{"a party given replaces the default whole", `{"callback":"` + cb + `","beneficiary":{"firstName":"Alan","country":"GBR"}}`,
			[]string{"beneficiary.personType", "beneficiary.lastName", "beneficiary.dateOfBirth", "beneficiary.country"}},
		{"an empty party", `{"callback":"` + cb + `","originator":{}}`,
			[]string{"originator.personType", "originator.firstName", "originator.lastName", "originator.dateOfBirth"}},
		{"every fault at once", `{"callback":"mailto:x@y.example","asset":true,"txId":"` + strings.Repeat("t", 256) + `","originator":[],"beneficiary":{"personType":"natural","firstName":"A","lastName":"B"}}`,
			[]string{"callback", "asset", "txId", "originator", "beneficiary.dateOfBirth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := post(t, srv.URL+"/sandbox/inquiries", tok, tt.body)
			a.badRequestFields(t, tt.fields)
			assert.NotContains(t, string(a.Body), "Lovelace", "reasons never carry values")
		})
	}
	assert.Empty(t, srv.Transfers(), "nothing was started")
	assert.Zero(t, srv.Stats().Inquiries)
}

// TestStartInquiryOverHTTPBadBody: a body that is not a JSON object is 400
// without fields; one larger than 1 MiB is 413.
func TestStartInquiryOverHTTPBadBody(t *testing.T) {
	srv := newServer(t)
	tok := token(t, srv)
	for _, body := range []string{``, `null`, `[]`, `"x"`, `{"callback":`} {
		t.Run("body "+body, func(t *testing.T) {
			a := post(t, srv.URL+"/sandbox/inquiries", tok, body)
			require.Equal(t, http.StatusBadRequest, a.Status, "body %s", a.Body)
			code, _, fields := a.errorBody(t)
			assert.Equal(t, "INVALID_REQUEST", code)
			assert.Empty(t, fields)
		})
	}
	t.Run("too large", func(t *testing.T) {
		a := post(t, srv.URL+"/sandbox/inquiries", tok, `{"callback":"https://vasp.example/cb","x":"`+strings.Repeat("x", 1<<20)+`"}`)
		assert.Equal(t, http.StatusRequestEntityTooLarge, a.Status)
	})
	assert.Empty(t, srv.Transfers(), "nothing was started")
}

// TestStartInquiryOverHTTP: the control plane starts an inbound inquiry
// with the defaults and the fields given, signed as StartInquiry's; the
// SDK's client resolves it; its state shows the decision and both
// callbacks.
func TestStartInquiryOverHTTP(t *testing.T) {
	secret := "inquiry-signing-secret"
	verifier, err := callback.NewDataIntegrityVerifier(secret)
	require.NoError(t, err)
	type delivery struct {
		body   []byte
		signed error
	}
	inquiries := make(chan delivery, 5)
	rc := newReceiver(t, func(r *http.Request, body []byte, _ int) int {
		err := verifier.Verify(r, body)
		if r.URL.Path == "/inbound" {
			inquiries <- delivery{body, err}
		}
		if err != nil {
			return http.StatusUnauthorized
		}
		return http.StatusNoContent
	})
	srv := newServer(t, travelruletest.WithCallbackSecret([]byte(secret)), travelruletest.WithPathPrefix("/api/v3"))
	beneficiary := map[string]any{"personType": "legal", "legalName": "Acme Ltd", "email": "ops@acme.example"}
	id := startInquiry(t, srv, map[string]any{
		"callback": rc.URL + "/inbound?ref=r1", "asset": "ETH", "txId": "0xdef456", "beneficiary": beneficiary, "unknown": 1,
	})

	got := <-inquiries
	require.NoError(t, got.signed, "signed as every callback")
	cb, err := travelrule.ParseCallback(got.body)
	require.NoError(t, err)
	assert.Equal(t, travelrule.KindInquiry, cb.Kind)
	assert.Equal(t, id, cb.TransferID)
	assert.Equal(t, srv.URL+"/transfers/inquiryResolution?q="+id, decodeLive(t, got.body).Callback,
		"the INQUIRY's callback resolves it, under the path prefix")
	require.NotNil(t, cb.Inquiry)
	assert.Equal(t, "ETH", cb.Inquiry.Asset)
	assert.Equal(t, "0.25", cb.Inquiry.Amount)
	assert.Equal(t, travelrule.Party{PersonType: "natural", FirstName: "Grace", LastName: "Hopper", Country: "US", AccountNumber: "sample-customer-1"},
		cb.Inquiry.Originator, "the default originator, through IVMS101: no date of birth without a place of birth")
	require.NoError(t, cb.IVMS101.Validate(), "valid IVMS101")
	assert.Equal(t, "Acme Ltd", cb.Inquiry.Beneficiary.LegalName, "the beneficiary given")
	assert.Empty(t, cb.Inquiry.Beneficiary.Email, "IVMS101 has no email")
	tr, ok := srv.Transfer(id)
	require.True(t, ok)
	assert.Equal(t, travelrule.TransferRequest{
		TxID:     "0xdef456",
		Asset:    "ETH",
		Amount:   "0.25",
		Callback: rc.URL + "/inbound?ref=r1",
		Originator: travelrule.Party{
			PersonType: "natural", FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09", Country: "US",
			AccountNumber: "sample-customer-1",
		},
		Beneficiary: travelrule.Party{PersonType: "legal", LegalName: "Acme Ltd", Email: "ops@acme.example"},
	}, tr.Request, "the defaults, the fields given, and the beneficiary given whole")

	c := newClient(t, srv)
	res, err := c.ResolveInquiry(context.Background(), id, &travelrule.InquiryResolution{Approved: "true", Callback: rc.URL + "/resolved"})
	require.NoError(t, err)
	assert.True(t, res.Status)
	ds := waitCallbacks(t, srv, 2)

	assertResolvedState(t, srv, id, ds, rc.URL)
	assertControlRecorded(t, srv, id)
}

// assertResolvedState checks the state of the inquiry id of
// TestStartInquiryOverHTTP once approved, with its callbacks ds.
func assertResolvedState(t *testing.T, srv *travelruletest.Server, id string, ds []travelruletest.Delivery, receiver string) {
	t.Helper()
	st, raw := stateOf(t, srv, id)
	assert.Equal(t, id, st.TransferID)
	assert.Equal(t, "approved", st.State)
	assert.True(t, st.Inquiry)
	assert.Equal(t, time.UTC, st.Created.Location())
	assert.False(t, st.Updated.Before(st.Created))
	require.Len(t, st.Callbacks, 2)
	for i, want := range []struct{ kind, status, path string }{{"INQUIRY", "inquiry", "/inbound"}, {"TRANSFER_CONFIRMATION", "approved", "/resolved"}} {
		c := st.Callbacks[i]
		assert.Equal(t, ds[i].ID, c.WebhookID)
		assert.Equal(t, want.kind, c.Kind)
		assert.Equal(t, want.status, c.Status)
		assert.Equal(t, receiver+want.path, c.URL, "scheme, host and path only")
		assert.True(t, c.Delivered)
		assert.False(t, c.Pending)
		assert.Equal(t, []int{http.StatusNoContent}, c.codes())
		assert.Empty(t, c.Attempts[0].Error)
	}
	assert.NotContains(t, string(raw), "ref=r1")
	assertKeys(t, raw)
}

// assertControlRecorded checks that the control plane's requests about the
// transfer id (a POST, then a GET) are recorded and counted.
func assertControlRecorded(t *testing.T, srv *travelruletest.Server, id string) {
	t.Helper()
	var recorded []string
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "/sandbox/") {
			assert.Zero(t, r.Op)
			assert.Equal(t, id, r.TransferID)
			recorded = append(recorded, r.Method+" "+strings.TrimPrefix(r.Path, "/api/v3"))
		}
	}
	assert.Equal(t, []string{"POST /sandbox/inquiries", "GET /sandbox/transfers/" + id}, recorded)
	stats := srv.Stats()
	assert.Equal(t, 1, stats.Inquiries)
	assert.Equal(t, 1, stats.Resolutions)
	assert.Equal(t, 2, stats.Callbacks)
}

// assertKeys checks the names of the state's fields, which clients in other
// languages read.
func assertKeys(t *testing.T, raw []byte) {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	assert.ElementsMatch(t, []string{"transferId", "state", "inquiry", "created", "updated", "callbacks"}, slices.Collect(maps.Keys(m)))
	var cbs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m["callbacks"], &cbs))
	require.NotEmpty(t, cbs)
	assert.ElementsMatch(t, []string{"webhookId", "kind", "status", "url", "delivered", "pending", "attempts"}, slices.Collect(maps.Keys(cbs[0])))
	var attempts []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(cbs[0]["attempts"], &attempts))
	require.NotEmpty(t, attempts)
	assert.ElementsMatch(t, []string{"time", "statusCode", "latency"}, slices.Collect(maps.Keys(attempts[0])))
}

// TestTransferStateShowsRetries: a receiver that answers 500 and then
// blocks shows a pending callback with its first attempt; once it answers
// 204, the callback is delivered after two attempts.
func TestTransferStateShowsRetries(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	rc := newReceiver(t, func(_ *http.Request, _ []byte, prior int) int {
		if prior == 0 {
			return http.StatusInternalServerError
		}
		close(entered)
		<-release
		return http.StatusNoContent
	})
	srv := newServer(t)
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // before the receiver's and the server's Close
	id := startInquiry(t, srv, map[string]any{"callback": rc.URL})

	<-entered
	st, _ := stateOf(t, srv, id)
	assert.Equal(t, "inquiry", st.State)
	require.Len(t, st.Callbacks, 1)
	assert.True(t, st.Callbacks[0].Pending, "still being delivered")
	assert.False(t, st.Callbacks[0].Delivered)
	assert.Equal(t, []int{http.StatusInternalServerError}, st.Callbacks[0].codes(), "the attempts so far")

	releaseOnce()
	waitCallbacks(t, srv, 1)
	st, _ = stateOf(t, srv, id)
	require.Len(t, st.Callbacks, 1)
	cb := st.Callbacks[0]
	assert.False(t, cb.Pending)
	assert.True(t, cb.Delivered)
	assert.Equal(t, []int{http.StatusInternalServerError, http.StatusNoContent}, cb.codes())
	assert.False(t, cb.Attempts[1].Time.Before(cb.Attempts[0].Time))
}

// TestTransferStateHidesPersonalData plants distinctive values in every
// personal field of an inquiry, and in the capability of its callback
// URLs: the state shows none of them, even in the errors of failed
// attempts.
func TestTransferStateHidesPersonalData(t *testing.T) {
	party := func(p string) map[string]any {
		return map[string]any{
			"personType": "natural", "firstName": p + "Firstname", "lastName": p + "Lastname", "dateOfBirth": "1901-02-03",
			"addressType": "HOME", "streetName": p + "Street", "buildingNumber": p + "Building", "postCode": p + "Postcode",
			"townName": p + "Town", "country": "NZ", "nationalId": p + "NationalID", "nationalIdType": "CCPT",
			"accountNumber": p + "Account", "walletAddress": p + "Wallet",
		}
	}
	planted := []string{"1901-02-03", "PlantedTravelAddress", "planted-mail@", "CAPTAG", "plantuser"}
	for _, p := range []string{"Orig", "Bene"} {
		for _, f := range []string{"Firstname", "Lastname", "Street", "Building", "Postcode", "Town", "NationalID", "Account", "Wallet"} {
			planted = append(planted, p+f)
		}
	}
	rc := newReceiver(t, nil)
	srv := newServer(t, travelruletest.WithCallbackRetry(2, time.Millisecond, time.Millisecond))
	id := startInquiry(t, srv, map[string]any{
		"callback":      strings.Replace(closedURL(t), "http://", "http://plantuser:pw@", 1) + "?ref=r1&tag=CAPTAG-inquiry",
		"travelAddress": "PlantedTravelAddress", "email": "planted-mail@example.org",
		"originator": party("Orig"), "beneficiary": party("Bene"),
	})
	waitCallbacks(t, srv, 1) // given up: the receiver never answers
	_, err := newClient(t, srv).ResolveInquiry(context.Background(), id, &travelrule.InquiryResolution{
		Approved: "true", Callback: rc.URL + "/resolved?ref=r1&tag=CAPTAG-resolution",
	})
	require.NoError(t, err)
	waitCallbacks(t, srv, 2)

	st, raw := stateOf(t, srv, id)
	for _, v := range planted {
		assert.NotContains(t, string(raw), v)
	}
	assert.NotContains(t, string(raw), "Grace") // nor the defaults' names
	assert.Equal(t, "approved", st.State)
	require.Len(t, st.Callbacks, 2)
	assert.False(t, st.Callbacks[0].Delivered)
	require.Len(t, st.Callbacks[0].Attempts, 2)
	assert.NotEmpty(t, st.Callbacks[0].Attempts[0].Error, "why no answer came is shown")
	assert.Zero(t, st.Callbacks[0].Attempts[0].StatusCode)
	assert.True(t, st.Callbacks[1].Delivered)
	assert.Equal(t, rc.URL+"/resolved", st.Callbacks[1].URL)
}

// stubborn is a callback transport that, once its request is cancelled,
// answers only when proceed is closed, as a slow network stack might. It
// closes entered when the request reaches it.
type stubborn struct {
	entered, cancelled, proceed chan struct{}
}

func (s stubborn) RoundTrip(r *http.Request) (*http.Response, error) {
	close(s.entered)
	<-r.Context().Done()
	close(s.cancelled)
	<-s.proceed
	return nil, r.Context().Err()
}

// TestCloseWaitsForInquiryDelivery: Close does not return before the
// delivery of a control plane's inquiry has ended, even when ending it
// takes a while.
func TestCloseWaitsForInquiryDelivery(t *testing.T) {
	tr := stubborn{entered: make(chan struct{}), cancelled: make(chan struct{}), proceed: make(chan struct{})}
	srv := travelruletest.NewServer(travelruletest.WithCallbackHTTPClient(&http.Client{Transport: tr}))
	defer srv.Close()
	id := startInquiry(t, srv, map[string]any{"callback": "https://vasp.example/inbound"})
	// The control plane answers once the delivery has begun, which may be
	// before its request reaches the transport: a Close before that would
	// give the delivery up without a request, and tr.cancelled would never
	// close.
	<-tr.entered

	closed := make(chan struct{})
	go func() {
		defer close(closed)
		srv.Close()
	}()
	<-tr.cancelled
	select {
	case <-closed:
		t.Fatal("Close returned while the inquiry's delivery was still running")
	case <-time.After(100 * time.Millisecond): // Close waits, as it must
	}
	close(tr.proceed)
	<-closed
	if leaked := serverGoroutines(); leaked != "" {
		t.Fatalf("goroutines of the server left after Close:\n%s", leaked)
	}
	ds := srv.Callbacks()
	require.Len(t, ds, 1, "the delivery was recorded before Close returned")
	assert.Equal(t, id, ds[0].TransferID)
	assert.False(t, ds[0].Delivered)
}

// TestStartInquiryOverHTTPAndClose: Close while the inquiry of the control
// plane is being delivered (its attempt waiting for the receiver, or the
// wait before its retry) returns, records the delivery as not delivered,
// and leaves no goroutine of the server's.
func TestStartInquiryOverHTTPAndClose(t *testing.T) {
	for _, tt := range []struct {
		name  string
		retry time.Duration
		block bool
	}{
		{"attempt in flight", time.Millisecond, true},
		{"waiting to retry", time.Hour, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			entered, release := make(chan struct{}, 1), make(chan struct{})
			rc := newReceiver(t, func(*http.Request, []byte, int) int {
				if tt.block {
					entered <- struct{}{}
					<-release
				}
				return http.StatusInternalServerError
			})
			t.Cleanup(func() { close(release) }) // before the receiver's Close
			events := newLogEvents()
			srv := travelruletest.NewServer(travelruletest.WithLogger(slog.New(events)), travelruletest.WithCallbackRetry(5, tt.retry, tt.retry))
			defer srv.Close()
			id := startInquiry(t, srv, map[string]any{"callback": rc.URL})
			if tt.block {
				<-entered
			} else {
				events.wait(t, "travelruletest: callback attempt", 1)
			}

			srv.Close()
			if leaked := serverGoroutines(); leaked != "" {
				t.Fatalf("goroutines of the server left after Close:\n%s", leaked)
			}
			ds := srv.Callbacks()
			require.Len(t, ds, 1)
			assert.Equal(t, id, ds[0].TransferID)
			assert.False(t, ds[0].Delivered)
			assert.Equal(t, 1, srv.Stats().Inquiries)
		})
	}
}

// TestInquiryLocationFollowsHost: Location names the host the request
// named, so that it holds behind a port mapping or a name.
func TestInquiryLocationFollowsHost(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	rc := newReceiver(t, nil)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/sandbox/inquiries", strings.NewReader(`{"callback":"`+rc.URL+`"}`))
	require.NoError(t, err)
	req.Host = "sandbox.example:9000"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token(t, srv))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "http://sandbox.example:9000/sandbox/transfers/"+out["transferId"], resp.Header.Get("Location"))
}

// At most 64 inquiries are delivered at once; beyond, 503 with Retry-After,
// and a slot freed by a delivery that ended takes the next one.
func TestControlPlaneBoundsDeliveriesInFlight(t *testing.T) {
	const bound = 64
	arrived := make(chan struct{}, bound+1)
	release := make(chan struct{})
	rc := newReceiver(t, func(*http.Request, []byte, int) int {
		arrived <- struct{}{}
		<-release
		return http.StatusNoContent
	})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	srv := newServer(t)
	t.Cleanup(open) // runs first: before the server's Close waits for the deliveries
	tok := token(t, srv)
	for range bound {
		startInquiry(t, srv, map[string]any{"callback": rc.URL})
	}
	for range bound {
		<-arrived // every delivery is in flight, held by the receiver
	}
	a := post(t, srv.URL+"/sandbox/inquiries", tok, map[string]any{"callback": rc.URL})
	require.Equal(t, http.StatusServiceUnavailable, a.Status, "body %s", a.Body)
	assert.Equal(t, "1", a.Header.Get("Retry-After"))
	assert.Len(t, srv.Transfers(), bound, "the refused inquiry is not stored")

	open()
	waitCallbacks(t, srv, bound)
	startInquiry(t, srv, map[string]any{"callback": rc.URL})
}

// With as many open inquiries kept beyond the record limit as the limit,
// the control plane starts no more until one is resolved.
func TestControlPlaneBoundsOpenInquiries(t *testing.T) {
	srv := newServer(t, travelruletest.WithRecordLimit(2), travelruletest.WithoutCallbacks())
	rc := newReceiver(t, nil)
	var ids []string
	for range 4 { // two kept as the newest, two beyond the limit
		ids = append(ids, startInquiry(t, srv, map[string]any{"callback": rc.URL}))
	}
	waitCallbacks(t, srv, 4)
	a := post(t, srv.URL+"/sandbox/inquiries", token(t, srv), map[string]any{"callback": rc.URL})
	require.Equal(t, http.StatusServiceUnavailable, a.Status, "body %s", a.Body)
	assert.Contains(t, string(a.Body), "resolve some first")

	_, err := newClient(t, srv).ResolveInquiry(context.Background(), ids[0], &travelrule.InquiryResolution{Approved: "false"})
	require.NoError(t, err)
	startInquiry(t, srv, map[string]any{"callback": rc.URL})
}

func TestControlPlaneRefusesAnUndecodableTravelAddress(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	rc := newReceiver(t, nil)
	// Base58 with a checksum that fails and no t=i: no one made it.
	a := post(t, srv.URL+"/sandbox/inquiries", token(t, srv), map[string]any{"callback": rc.URL, "travelAddress": "taSandboxBeneficiaryVASP"})
	a.badRequestFields(t, []string{"travelAddress"})
	assert.Empty(t, srv.Transfers())
	startInquiry(t, srv, map[string]any{"callback": rc.URL, "travelAddress": travelruletest.KnownTravelAddress})
	// An opaque one (not base58) is the service's to judge.
	startInquiry(t, srv, map[string]any{"callback": rc.URL, "travelAddress": "taNotATravelAddress0"})
}

// The state shows none of the request's values, not even a name carried in
// txId.
func TestTransferStateShowsNoRequestValue(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	rc := newReceiver(t, nil)
	bene := map[string]any{"personType": "natural", "firstName": "Zebulon", "lastName": "Quarterfield", "dateOfBirth": "1901-02-03"}
	id := startInquiry(t, srv, map[string]any{"callback": rc.URL, "txId": "payout-Quarterfield-Zebulon", "asset": "ZEBULON", "beneficiary": bene})
	_, raw := stateOf(t, srv, id)
	for _, v := range []string{"Zebulon", "ZEBULON", "Quarterfield"} {
		assert.NotContains(t, string(raw), v)
	}
}

// A token from the login works on the control plane as on the operations.
func TestControlPlaneTakesALoginToken(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	rc := newReceiver(t, nil)
	a := login(t, http.MethodPost, srv.LoginURL(), "x-api-key", travelruletest.DefaultAPIKey)
	require.Equal(t, http.StatusOK, a.Status)
	var ans struct {
		AccessToken string `json:"accessToken"`
	}
	require.NoError(t, json.Unmarshal(a.Body, &ans))
	a = post(t, srv.URL+"/sandbox/inquiries", ans.AccessToken, map[string]any{"callback": rc.URL})
	require.Equal(t, http.StatusCreated, a.Status, "body %s", a.Body)
	var started struct {
		TransferID string `json:"transferId"`
	}
	require.NoError(t, json.Unmarshal(a.Body, &started))
	g := get(t, srv.URL+"/sandbox/transfers/"+started.TransferID, ans.AccessToken)
	assert.Equal(t, http.StatusOK, g.Status, "body %s", g.Body)
}
