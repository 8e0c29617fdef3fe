package travelruletest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestInitiateBadRequest(t *testing.T) {
	srv := newServer(t)
	tok := token(t, srv)
	party := func(m map[string]any, which string) map[string]any { return m[which].(map[string]any) }
	tests := []struct {
		name   string
		change func(m map[string]any)
		fields []string
	}{
		{"asset missing", func(m map[string]any) { delete(m, "asset") }, []string{"asset"}},
		{"asset empty", func(m map[string]any) { m["asset"] = "" }, []string{"asset"}},
		{"asset 21 characters", func(m map[string]any) { m["asset"] = strings.Repeat("€", 21) }, []string{"asset"}},
		{"amount missing", func(m map[string]any) { delete(m, "amount") }, []string{"amount"}},
		{"amount 51 characters", func(m map[string]any) { m["amount"] = strings.Repeat("1", 51) }, []string{"amount"}},
		{"callback missing", func(m map[string]any) { delete(m, "callback") }, []string{"callback"}},
		{"callback 256 characters", func(m map[string]any) { m["callback"] = "https://h/" + strings.Repeat("a", 246) }, []string{"callback"}},
		{"callback not a URL", func(m map[string]any) { m["callback"] = "ftp://h/cb" }, []string{"callback"}},
		{"travelAddress 256 characters", func(m map[string]any) { m["travelAddress"] = strings.Repeat("x", 256) }, []string{"travelAddress"}},
		{"travelAddress empty", func(m map[string]any) { m["travelAddress"] = "" }, []string{"travelAddress"}},
		{"email 256 characters", func(m map[string]any) { m["email"] = strings.Repeat("e", 256) }, []string{"email"}},
		{"txId 256 characters", func(m map[string]any) { m["txId"] = strings.Repeat("t", 256) }, []string{"txId"}},
		{"originator missing", func(m map[string]any) { delete(m, "originator") },
			[]string{"originator.personType", "originator.firstName", "originator.lastName", "originator.dateOfBirth"}},
		{"originator.personType missing", func(m map[string]any) { delete(party(m, "originator"), "personType") }, []string{"originator.personType"}},
		{"originator.firstName missing", func(m map[string]any) { delete(party(m, "originator"), "firstName") }, []string{"originator.firstName"}},
		{"originator.lastName missing", func(m map[string]any) { delete(party(m, "originator"), "lastName") }, []string{"originator.lastName"}},
		{"originator.dateOfBirth missing", func(m map[string]any) { delete(party(m, "originator"), "dateOfBirth") }, []string{"originator.dateOfBirth"}},
		{"beneficiary.personType missing", func(m map[string]any) { delete(party(m, "beneficiary"), "personType") }, []string{"beneficiary.personType"}},
		{"beneficiary.firstName missing", func(m map[string]any) { delete(party(m, "beneficiary"), "firstName") }, []string{"beneficiary.firstName"}},
		{"beneficiary.lastName missing", func(m map[string]any) { delete(party(m, "beneficiary"), "lastName") }, []string{"beneficiary.lastName"}},
		{"beneficiary.dateOfBirth missing", func(m map[string]any) { delete(party(m, "beneficiary"), "dateOfBirth") }, []string{"beneficiary.dateOfBirth"}},
		{"originator.country 3 characters", func(m map[string]any) { party(m, "originator")["country"] = "GBR" }, []string{"originator.country"}},
		{"beneficiary.country 1 character", func(m map[string]any) { party(m, "beneficiary")["country"] = "G" }, []string{"beneficiary.country"}},
		{"beneficiary.country digits", func(m map[string]any) { party(m, "beneficiary")["country"] = "12" }, []string{"beneficiary.country"}},
		{"buildingNumber a number", func(m map[string]any) { party(m, "originator")["buildingNumber"] = 221 }, []string{"originator.buildingNumber"}},
		{"postCode a number", func(m map[string]any) { party(m, "beneficiary")["postCode"] = 10115 }, []string{"beneficiary.postCode"}},
		{"nationalId a number", func(m map[string]any) { party(m, "beneficiary")["nationalId"] = 1234567 }, []string{"beneficiary.nationalId"}},
		{"amount a number", func(m map[string]any) { m["amount"] = 0.25 }, []string{"amount"}},
		{"asset a boolean", func(m map[string]any) { m["asset"] = true }, []string{"asset"}},
		{"callback an object", func(m map[string]any) { m["callback"] = map[string]any{"url": "x"} }, []string{"callback"}},
		{"originator a string", func(m map[string]any) { m["originator"] = "Ada Lovelace" }, []string{"originator"}},
		{"beneficiary an array", func(m map[string]any) { m["beneficiary"] = []any{"Alan"} }, []string{"beneficiary"}},
		{"several faults at once", func(m map[string]any) {
			delete(m, "asset")
			m["amount"] = 1
			party(m, "originator")["country"] = "GBR"
			delete(party(m, "beneficiary"), "firstName")
		}, []string{"amount", "asset", "originator.country", "beneficiary.firstName"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := wire(t, validRequest("https://vasp.example/cb"))
			tc.change(m)
			a := post(t, srv.URL+"/transfers/initiate", tok, m)
			a.badRequestFields(t, tc.fields)
			noPersonalData(t, a.Body)
		})
	}
	assert.Empty(t, srv.Transfers(), "no bad request stores a transfer")
}

func TestInitiateBadRequestReasons(t *testing.T) {
	// The reasons of field checks are the client's own.
	srv := newServer(t)
	m := wire(t, validRequest("https://vasp.example/cb"))
	m["originator"].(map[string]any)["country"] = "GBR"
	m["originator"].(map[string]any)["buildingNumber"] = 221
	a := post(t, srv.URL+"/transfers/initiate", token(t, srv), m)
	require.Equal(t, http.StatusBadRequest, a.Status)
	_, _, fields := a.errorBody(t)

	req := validRequest("https://vasp.example/cb")
	req.Originator.Country = "GBR"
	var ve *travelrule.ValidationError
	require.ErrorAs(t, req.Validate(), &ve)
	assert.Equal(t, []travelrule.FieldError{
		{Field: "originator.buildingNumber", Reason: "must be a string"},
		ve.Fields[0],
	}, fields)
}

func TestInitiateBadBody(t *testing.T) {
	srv := newServer(t)
	tok := token(t, srv)
	for name, body := range map[string]string{
		"not JSON":      `{"asset":`,
		"empty":         ``,
		"array":         `[{"asset":"BTC"}]`,
		"string":        `"BTC"`,
		"null":          `null`,
		"trailing junk": `{} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			a := post(t, srv.URL+"/transfers/initiate", tok, body)
			require.Equal(t, http.StatusBadRequest, a.Status)
			code, msg, fields := a.errorBody(t)
			assert.Equal(t, "INVALID_REQUEST", code)
			assert.Contains(t, msg, "body")
			assert.Empty(t, fields)
		})
	}
	t.Run("too large", func(t *testing.T) {
		a := post(t, srv.URL+"/transfers/initiate", tok, `{"asset":"`+strings.Repeat("x", 1<<20)+`"}`)
		assert.Equal(t, http.StatusRequestEntityTooLarge, a.Status)
	})
}

func TestInitiateTolerant(t *testing.T) {
	srv := newServer(t)
	m := wire(t, validRequest("https://vasp.example/cb"))
	m["futureField"] = map[string]any{"nested": []any{1, 2}}
	m["version"] = 3
	m["originator"].(map[string]any)["middleName"] = 42
	m["txId"] = nil
	m["beneficiary"].(map[string]any)["postCode"] = nil
	a := post(t, srv.URL+"/transfers/initiate", token(t, srv), m)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	ts := srv.Transfers()
	require.Len(t, ts, 1)
	assert.Empty(t, ts[0].Request.TxID)
	assert.Equal(t, "Ada", ts[0].Request.Originator.FirstName)
}

func TestInitiateSuccessBody(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []travelruletest.Option
		body   string // with %s for the transfer's id
		status string // TransferResult.Status
		withID bool
	}{
		{"live, with transferId", nil, `{"status":true,"data":{"transferId":"%s"}}`, "true", true},
		{"live, without transferId", []travelruletest.Option{travelruletest.WithTransferIDInAnswer(false)}, `{"status":true,"data":{}}`, "true", false},
		{"excerpt, with transferId", []travelruletest.Option{travelruletest.WithExcerptAnswers()}, `{"status":"succes","transferId":"%s"}`, "succes", true},
		{"excerpt, documented body only", []travelruletest.Option{travelruletest.WithExcerptAnswers(), travelruletest.WithTransferIDInAnswer(false)}, `{"status":"succes"}`, "succes", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.opts...)
			a := post(t, srv.URL+"/transfers/initiate", token(t, srv), validRequest("http://127.0.0.1:1/cb"))
			require.Equal(t, http.StatusOK, a.Status)
			assert.Equal(t, "application/json", a.Header.Get("Content-Type"))
			assert.NotEmpty(t, a.Header.Get("X-Request-Id"))
			ts := srv.Transfers()
			require.Len(t, ts, 1)
			assert.Regexp(t, uuidV4, ts[0].ID)
			want := tt.body
			if tt.withID {
				want = fmt.Sprintf(tt.body, ts[0].ID)
			}
			assert.JSONEq(t, want, string(a.Body))

			// The same through the client.
			res, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			assert.Equal(t, tt.status, res.Status)
			assert.Equal(t, 1, res.Attempts)
			if tt.withID {
				assert.Regexp(t, uuidV4, res.TransferID)
				_, ok := srv.Transfer(res.TransferID)
				assert.True(t, ok)
			} else {
				assert.Empty(t, res.TransferID)
			}
		})
	}
}

func TestPathPrefix(t *testing.T) {
	srv := newServer(t, travelruletest.WithPathPrefix("api/v3/"))
	require.True(t, strings.HasSuffix(srv.URL, "/api/v3"), srv.URL)
	res, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	assert.Equal(t, "true", res.Status)

	origin := strings.TrimSuffix(srv.URL, "/api/v3")
	for _, p := range []string{"/transfers/initiate", "/auth/token", "/travel-address/generate", "/transfers/txId", "/discovery/vasp"} {
		a := post(t, origin+p, token(t, srv), validRequest("http://127.0.0.1:1/cb"))
		assert.Equal(t, http.StatusNotFound, a.Status, p)
		code, _, _ := a.errorBody(t)
		assert.Equal(t, "NOT_FOUND", code)
	}
	assert.Equal(t, origin+"/oauth/token", srv.TokenURL())
}

func TestMethodNotAllowed(t *testing.T) {
	srv := newServer(t)
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/transfers/initiate", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token(t, srv))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, http.MethodPost, resp.Header.Get("Allow"))
}

func TestResolveBadRequest(t *testing.T) {
	srv := newServer(t)
	tok := token(t, srv)
	rc := newReceiver(t, nil)
	id, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://vasp.example/cb"))
	require.NoError(t, err)
	tests := []struct {
		name   string
		query  string
		body   string
		fields []string
	}{
		{"q missing", "", `{"approved":"true"}`, []string{"q"}},
		{"approved missing", "?q=" + id, `{}`, []string{"approved"}},
		{"approved yes", "?q=" + id, `{"approved":"yes"}`, []string{"approved"}},
		{"approved True", "?q=" + id, `{"approved":"True"}`, []string{"approved"}},
		{"approved a boolean", "?q=" + id, `{"approved":true}`, []string{"approved"}},
		{"callback not a URL", "?q=" + id, `{"approved":"true","callback":"mailto:x@y"}`, []string{"callback"}},
		{"callback 256 characters", "?q=" + id, `{"approved":"true","callback":"https://h/` + strings.Repeat("a", 246) + `"}`, []string{"callback"}},
		{"callback a number", "?q=" + id, `{"approved":"true","callback":7}`, []string{"callback"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := post(t, srv.URL+"/transfers/inquiryResolution"+tc.query, tok, tc.body)
			a.badRequestFields(t, tc.fields)
		})
	}
	tr, _ := srv.Transfer(id)
	assert.Equal(t, travelruletest.StateInquiry, tr.State)

	// Through the client, an approved value the sandbox does not know is
	// refused before it is sent.
	_, err = newClient(t, srv).ResolveInquiry(context.Background(), id, &travelrule.InquiryResolution{Approved: "maybe"})
	require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	var ve *travelrule.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Fields, 1)
	assert.Equal(t, "approved", ve.Fields[0].Field)
}

func TestResolveNotFound(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, srv)
	res, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	for name, id := range map[string]string{
		"unknown id":         "0b6f4a5e-8a3c-4d2b-9f1e-2c3d4e5f6a7b",
		"initiated transfer": res.TransferID,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.ResolveInquiry(context.Background(), id, &travelrule.InquiryResolution{Approved: "true"})
			require.ErrorIs(t, err, travelrule.ErrNotFound)
			var ae *travelrule.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "TRANSFER_NOT_FOUND", ae.Code)
			assert.ErrorIs(t, err, travelrule.CodeTransferNotFound)
		})
	}
}

func TestErrorBodyShapeMatchesClient(t *testing.T) {
	// The client's APIError reads the code and the fields of the sandbox's
	// error body.
	srv := newServer(t)
	req := validRequest("http://127.0.0.1:1/cb")
	// Break the request after the client's own validation, so the client
	// sends it.
	hc := &http.Client{Transport: rewrite{strings.NewReplacer(`"country":"GB"`, `"country":"GBR"`)}}
	c := newClient(t, srv, travelrule.WithHTTPClient(hc))
	_, err := c.InitiateTransfer(context.Background(), req)
	require.Error(t, err)
	var ae *travelrule.APIError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, "VALIDATION_ERROR", ae.Code)
	assert.Equal(t, []string{"VALIDATION_ERROR", "VALIDATION_ERROR"}, ae.Codes, "one entry per fault")
	var paths []string
	for _, f := range ae.Fields {
		paths = append(paths, f.Field)
	}
	assert.Equal(t, []string{"originator.country", "beneficiary.country"}, paths)
	assert.NotContains(t, err.Error(), "GBR")
}

// The flow of an initiation: OPEN_VASP with a travelAddress, EMAIL with
// only an email (beneficiary.email, else the top-level one), OPEN_VASP to
// the sandbox's own VASP with neither.
func TestInitiateFlows(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	for _, tt := range []struct {
		name                         string
		travelAddress, email, bEmail string
		flow                         travelruletest.Flow
	}{
		{"a travel address", travelruletest.KnownTravelAddress, "", "", travelruletest.FlowOpenVASP},
		{"a travel address and emails", travelruletest.KnownTravelAddress, "ada@example.com", "alan@example.com", travelruletest.FlowOpenVASP},
		{"beneficiary.email", "", "", "alan@example.com", travelruletest.FlowEmail},
		{"the top-level email", "", "ada@example.com", "", travelruletest.FlowEmail},
		{"both emails", "", "ada@example.com", "alan@example.com", travelruletest.FlowEmail},
		{"neither", "", "", "", travelruletest.FlowOpenVASP},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := validRequest("http://127.0.0.1:1/cb")
			req.TravelAddress, req.Email, req.Beneficiary.Email = tt.travelAddress, tt.email, tt.bEmail
			a := post(t, srv.URL+"/transfers/initiate", tok, req)
			require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
			ts := srv.Transfers()
			tr := ts[len(ts)-1]
			assert.Equal(t, tt.flow, tr.Flow)
			assert.Equal(t, tt.flow == travelruletest.FlowEmail, tr.EmailDelivered, "the email is sent in the EMAIL flow only")
			assert.Equal(t, tt.bEmail, tr.Request.Beneficiary.Email)
		})
	}
}

// WithTravelAddressRequired refuses an initiation with no way to reach the
// beneficiary, in the client's ValidateStrict's words.
func TestTravelAddressRequired(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithTravelAddressRequired())
	tok := token(t, srv)
	req := validRequest("http://127.0.0.1:1/cb")
	req.Email = ""
	a := post(t, srv.URL+"/transfers/initiate", tok, req)
	a.badRequestFields(t, []string{"travelAddress"})
	_, _, fields := a.errorBody(t)
	var strict *travelrule.ValidationError
	require.ErrorAs(t, req.ValidateStrict(), &strict)
	assert.Contains(t, strict.Fields, fields[0])
	assert.Empty(t, srv.Transfers())
	body, err := json.Marshal(req)
	require.NoError(t, err)
	assert.NoError(t, travelruletest.CheckTransfer(body), "CheckTransfer judges as a server without the option")

	req.Beneficiary.Email = "alan@example.com"
	require.Equal(t, http.StatusOK, post(t, srv.URL+"/transfers/initiate", tok, req).Status)
	req.Beneficiary.Email, req.TravelAddress = "", travelruletest.KnownTravelAddress
	require.Equal(t, http.StatusOK, post(t, srv.URL+"/transfers/initiate", tok, req).Status)
}

// Parties may be legal persons, with legalName instead of the natural
// person's names and date of birth.
func TestInitiateLegalPersons(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	m := wire(t, validRequest("http://127.0.0.1:1/cb"))
	m["originator"] = map[string]any{"personType": "legal", "legalName": "Analytical Engines Ltd", "country": "GB"}
	m["beneficiary"] = map[string]any{"personType": "legal", "legalName": "Bletchley Park Trust", "email": "ops@bletchley.example"}
	a := post(t, srv.URL+"/transfers/initiate", tok, m)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	tr := srv.Transfers()[0]
	assert.Equal(t, "Analytical Engines Ltd", tr.Request.Originator.LegalName)
	assert.Equal(t, "ops@bletchley.example", tr.Request.Beneficiary.Email)

	m["beneficiary"] = map[string]any{"personType": "legal", "firstName": "Bletchley", "email": 5}
	post(t, srv.URL+"/transfers/initiate", tok, m).badRequestFields(t, []string{"beneficiary.legalName", "beneficiary.email"})
}
