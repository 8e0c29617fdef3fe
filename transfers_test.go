package travelrule_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

func TestValidate(t *testing.T) {
	type row struct {
		name   string
		mutate func(r *travelrule.TransferRequest)
		fields []string // nil: valid
	}
	described := []row{
		{"full request", func(r *travelrule.TransferRequest) {}, nil},
		{"missing asset", func(r *travelrule.TransferRequest) { r.Asset = "" }, []string{"asset"}},
		{"missing amount", func(r *travelrule.TransferRequest) { r.Amount = "" }, []string{"amount"}},
		{"missing callback", func(r *travelrule.TransferRequest) { r.Callback = "" }, []string{"callback"}},
		{"missing party fields", func(r *travelrule.TransferRequest) {
			r.Originator.PersonType, r.Originator.FirstName = "", ""
			r.Beneficiary.LastName, r.Beneficiary.DateOfBirth = "", ""
		}, []string{"originator.personType", "originator.firstName", "beneficiary.lastName", "beneficiary.dateOfBirth"}},
		{"asset 20 code points", func(r *travelrule.TransferRequest) { r.Asset = strings.Repeat("Ä", 20) }, nil},
		{"asset 21", func(r *travelrule.TransferRequest) { r.Asset = strings.Repeat("A", 21) }, []string{"asset"}},
		{"amount 50", func(r *travelrule.TransferRequest) { r.Amount = strings.Repeat("9", 50) }, nil},
		{"amount 51", func(r *travelrule.TransferRequest) { r.Amount = strings.Repeat("9", 51) }, []string{"amount"}},
		{"email 255 multibyte", func(r *travelrule.TransferRequest) { r.Email = strings.Repeat("é", 255) }, nil},
		{"email 256", func(r *travelrule.TransferRequest) { r.Email = strings.Repeat("e", 256) }, []string{"email"}},
		{"email empty is accepted", func(r *travelrule.TransferRequest) { r.Email = "" }, nil},
		{"txId 256", func(r *travelrule.TransferRequest) { r.TxID = strings.Repeat("f", 256) }, []string{"txId"}},
		{"travelAddress 255 CJK", func(r *travelrule.TransferRequest) { r.TravelAddress = strings.Repeat("漢", 255) }, nil},
		{"travelAddress 256", func(r *travelrule.TransferRequest) { r.TravelAddress = strings.Repeat("t", 256) }, []string{"travelAddress"}},
		{"callback 255", func(r *travelrule.TransferRequest) { r.Callback = "https://a.example/" + strings.Repeat("p", 255-18) }, nil},
		{"callback 256", func(r *travelrule.TransferRequest) { r.Callback = "https://a.example/" + strings.Repeat("p", 256-18) }, []string{"callback"}},
		{"callback relative", func(r *travelrule.TransferRequest) { r.Callback = "/cb" }, []string{"callback"}},
		{"callback ftp", func(r *travelrule.TransferRequest) { r.Callback = "ftp://a.example/cb" }, []string{"callback"}},
		{"callback no host", func(r *travelrule.TransferRequest) { r.Callback = "https:///cb" }, []string{"callback"}},
		{"callback with space", func(r *travelrule.TransferRequest) { r.Callback = "https://a.example/c b" }, []string{"callback"}},
		{"callback upper-case scheme", func(r *travelrule.TransferRequest) { r.Callback = "HTTPS://a.example/cb" }, nil},
		{"callback http", func(r *travelrule.TransferRequest) { r.Callback = "http://127.0.0.1:8080/cb" }, nil},
		{"country 3 letters", func(r *travelrule.TransferRequest) { r.Originator.Country = "DEU" }, []string{"originator.country"}},
		{"country 1 letter", func(r *travelrule.TransferRequest) { r.Beneficiary.Country = "D" }, []string{"beneficiary.country"}},
		{"country digits", func(r *travelrule.TransferRequest) { r.Beneficiary.Country = "12" }, []string{"beneficiary.country"}},
		{"country two non-ASCII letters", func(r *travelrule.TransferRequest) { r.Beneficiary.Country = "ÄÖ" }, []string{"beneficiary.country"}},
		{"country lower case passes the description's rule", func(r *travelrule.TransferRequest) { r.Originator.Country = "de" }, nil},
		{"unknown personType passes the description's rule", func(r *travelrule.TransferRequest) { r.Originator.PersonType = "robot" }, nil},
		{"a travel address with a bad checksum passes the description's rule", func(r *travelrule.TransferRequest) {
			r.TravelAddress = trpExampleAddress[:len(trpExampleAddress)-1] + "w"
		}, nil},
		{"every fault at once", func(r *travelrule.TransferRequest) {
			*r = travelrule.TransferRequest{}
		}, []string{"asset", "amount", "callback",
			"originator.personType", "originator.firstName", "originator.lastName", "originator.dateOfBirth",
			"beneficiary.personType", "beneficiary.firstName", "beneficiary.lastName", "beneficiary.dateOfBirth"}},
	}
	strict := []row{
		{"full request", func(r *travelrule.TransferRequest) {}, nil},
		{"legal person", func(r *travelrule.TransferRequest) {
			r.Beneficiary = travelrule.Party{PersonType: "legal", LegalName: "Acme Custody GmbH", Country: "DE"}
		}, nil},
		{"legal person without legalName", func(r *travelrule.TransferRequest) {
			r.Beneficiary = travelrule.Party{PersonType: "legal", FirstName: "Ada"}
		}, []string{"beneficiary.legalName"}},
		{"EMAIL flow: beneficiary.email and no travel address", func(r *travelrule.TransferRequest) {
			r.TravelAddress, r.Beneficiary.Email = "", "alan@example.org"
		}, nil},
		{"EMAIL flow: top-level email", func(r *travelrule.TransferRequest) { r.TravelAddress, r.Email = "", "alan@example.org" }, nil},
		{"no way to reach the beneficiary", func(r *travelrule.TransferRequest) { r.TravelAddress, r.Email = "", "" }, []string{"travelAddress"}},
		{"email not an address", func(r *travelrule.TransferRequest) { r.Beneficiary.Email = "Alan Turing" }, []string{"beneficiary.email"}},
		{"email with a display name", func(r *travelrule.TransferRequest) { r.Email = "Alan <alan@example.org>" }, []string{"email"}},
		{"unknown personType", func(r *travelrule.TransferRequest) { r.Originator.PersonType = "robot" }, []string{"originator.personType"}},
		{"date format", func(r *travelrule.TransferRequest) { r.Originator.DateOfBirth = "29.02.1984" }, []string{"originator.dateOfBirth"}},
		{"date month 13", func(r *travelrule.TransferRequest) { r.Originator.DateOfBirth = "1984-13-01" }, []string{"originator.dateOfBirth"}},
		{"address type", func(r *travelrule.TransferRequest) { r.Beneficiary.AddressType = "CASTLE" }, []string{"beneficiary.addressType"}},
		{"unassigned country", func(r *travelrule.TransferRequest) { r.Originator.Country = "XQ" }, []string{"originator.country"}},
		{"withdrawn country (East Germany)", func(r *travelrule.TransferRequest) { r.Originator.Country = "DD" }, []string{"originator.country"}},
		{"reserved code, not a country (Ascension's AC)", func(r *travelrule.TransferRequest) { r.Originator.Country = "AC" }, []string{"originator.country"}},
		{"lower-case country", func(r *travelrule.TransferRequest) { r.Originator.Country = "de" }, []string{"originator.country"}},
		{"national id type", func(r *travelrule.TransferRequest) { r.Originator.NationalIDType = "PASSPORT" }, []string{"originator.nationalIdType"}},
		{"id type without id", func(r *travelrule.TransferRequest) { r.Originator.NationalID = "" }, []string{"originator.nationalId"}},
		{"strict keeps the description's checks", func(r *travelrule.TransferRequest) { r.Asset = "" }, []string{"asset"}},
		{"TRP's example travel address", func(r *travelrule.TransferRequest) { r.TravelAddress = trpExampleAddress }, nil},
		{"travel address checksum", func(r *travelrule.TransferRequest) {
			r.TravelAddress = trpExampleAddress[:len(trpExampleAddress)-1] + "w"
		}, []string{"travelAddress"}},
		{"travel address outside the URL-safe set", func(r *travelrule.TransferRequest) { r.TravelAddress = "ta4n7W+rAH/Q=" }, []string{"travelAddress"}},
		{"travel address outside base58 but URL-safe: opaque, the service's", func(r *travelrule.TransferRequest) { r.TravelAddress = "ta0OIl" }, nil},
		{"the live docs' placeholder", func(r *travelrule.TransferRequest) { r.TravelAddress = "ta1qexamplebeneficiaryvasp1ahjk23" }, nil},
		{"the live service's unchecked example", func(r *travelrule.TransferRequest) { r.TravelAddress = liveUncheckedAddress }, nil},
		{"the live service's opaque example", func(r *travelrule.TransferRequest) { r.TravelAddress = liveOpaqueAddress }, nil},
		{"a checksummed address with a typo in its first digit", func(r *travelrule.TransferRequest) {
			r.TravelAddress = "ta3W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv"
		}, []string{"travelAddress"}},
		{"a checksummed address with a typo in its last digit", func(r *travelrule.TransferRequest) {
			r.TravelAddress = "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wa"
		}, []string{"travelAddress"}},
		{"longer than 255", func(r *travelrule.TransferRequest) { r.TravelAddress = "ta" + strings.Repeat("x", 254) }, []string{"travelAddress", "travelAddress"}},
		{"travel address without t=i", func(r *travelrule.TransferRequest) {
			r.TravelAddress = travelrule.EncodeTravelAddressWithoutChecks("beneficiary.com/x/12345")
		}, []string{"travelAddress"}},
		{"no ta prefix: the service cannot have made it", func(r *travelrule.TransferRequest) { r.TravelAddress = "LNURL1DP68GURN8GHJ7" }, []string{"travelAddress"}},
	}
	for _, set := range []struct {
		name     string
		validate func(*travelrule.TransferRequest) error
		rows     []row
	}{
		{"Validate", (*travelrule.TransferRequest).Validate, described},
		{"ValidateStrict", (*travelrule.TransferRequest).ValidateStrict, strict},
	} {
		for _, tt := range set.rows {
			t.Run(set.name+"/"+tt.name, func(t *testing.T) {
				r := fullRequest()
				tt.mutate(r)
				assertFaults(t, set.validate(r), tt.fields)
			})
		}
	}
}

func TestValidationErrorNamesPathsNotValues(t *testing.T) {
	r := fullRequest()
	r.Originator.Country = "Zoë"
	r.Asset = "SECRETASSET-TOO-LONG-FOR-THE-BOUND"
	err := r.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "originator.country")
	assert.Contains(t, err.Error(), "asset")
	assert.NotContains(t, err.Error(), "Zoë")
	assert.NotContains(t, err.Error(), "SECRETASSET")
}

func BenchmarkValidate(b *testing.B) {
	r := fullRequest()
	measure(b, r.Validate)
}

func TestValidateAllocatesNothing(t *testing.T) {
	r := fullRequest()
	allocs := testing.AllocsPerRun(100, func() {
		if r.Validate() != nil {
			t.Fatal("invalid")
		}
	})
	assert.Zero(t, allocs)
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

// assertFaults checks that err is a *ValidationError that names exactly
// fields, or nil when fields is nil.
func assertFaults(t *testing.T, err error, fields []string) {
	t.Helper()
	if fields == nil {
		require.NoError(t, err)
		return
	}
	var ve *travelrule.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.ElementsMatch(t, fields, fieldPaths(ve))
	assert.True(t, errors.Is(err, travelrule.ErrInvalidRequest))
	for _, f := range fields {
		assert.True(t, ve.Has(f))
	}
}

// A result's JSON is its slog form: no Raw body, and a transfer id or a
// request id that echoes the request hidden, as in every other form.
func TestResultJSONShowsWhatLogValueShows(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-lovelace")
		answer(200, `{"status":true,"data":{"transferId":"tr-Lovelace-1"},"message":"hello Ada Lovelace"}`)(w, r)
	}))
	defer ts.Close()
	c, err := travelrule.NewClient(ts.URL, travelrule.WithTokenSource(travelrule.StaticToken("bearer-of-the-test")))
	require.NoError(t, err)
	res, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.NotContains(t, strings.ToLower(string(b)), "lovelace")
	var shown map[string]any
	require.NoError(t, json.Unmarshal(b, &shown))
	assert.Equal(t, "[redacted]", shown["transferId"])
	assert.Equal(t, float64(1), shown["attempts"])
	assert.Equal(t, "tr-Lovelace-1", res.TransferID, "the field itself is the server's")
}
