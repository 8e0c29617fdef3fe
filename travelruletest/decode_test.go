package travelruletest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// CheckTransfer says what the sandbox answers, fault for fault.
func TestCheckTransferAgreesWithTheServer(t *testing.T) {
	srv := newServer(t)
	tok := token(t, srv)
	valid := func() map[string]any { return wire(t, validRequest("http://127.0.0.1:1/cb")) }
	with := func(change func(m map[string]any)) []byte {
		m := valid()
		change(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	party := func(m map[string]any, which string) map[string]any { return m[which].(map[string]any) }
	for _, tt := range []struct {
		name string
		body []byte
		err  string // for a body that is not a JSON object
	}{
		{"valid", with(func(map[string]any) {}), ""},
		{"unknown fields are ignored", with(func(m map[string]any) { m["memo"] = 1 }), ""},
		{"not JSON", []byte(`{"asset":`), "not valid JSON"},
		{"an array", []byte(`[1]`), "JSON object"},
		{"null", []byte(`null`), "JSON object"},
		{"seven faults", with(func(m map[string]any) {
			m["amount"] = 0.25
			m["asset"] = true
			m["travelAddress"] = "taSandboxBeneficiaryVASP"
			m["beneficiary"] = []any{"Alan"}
			party(m, "originator")["buildingNumber"] = 221
			party(m, "originator")["country"] = "GBR"
			delete(m, "callback")
		}), ""},
		{"an empty travelAddress", with(func(m map[string]any) { m["travelAddress"] = "" }), ""},
		{"a bad travel address alone", with(func(m map[string]any) { m["travelAddress"] = "ta0OI+l" }), ""},
		{"an opaque travel address", with(func(m map[string]any) { m["travelAddress"] = travelruletest.PlaceholderTravelAddress }), ""},
		{"a travel address too long", with(func(m map[string]any) { m["travelAddress"] = "ta" + strings.Repeat("z", 254) }), ""},
		{"a legal beneficiary", with(func(m map[string]any) {
			m["beneficiary"] = map[string]any{"personType": "legal", "legalName": "Acme Ltd", "email": "ops@acme.example"}
		}), ""},
		{"a legal beneficiary without its name", with(func(m map[string]any) {
			m["beneficiary"] = map[string]any{"personType": "legal", "firstName": "Acme"}
		}), ""},
		{"an amount of 50 characters", with(func(m map[string]any) { m["amount"] = strings.Repeat("9", 50) }), ""},
		{"an amount of 51 characters", with(func(m map[string]any) { m["amount"] = strings.Repeat("9", 51) }), ""},
		{"an amount that is not a number: the live backend checks its length only", with(func(m map[string]any) { m["amount"] = "one BTC" }), ""},
		{"an amount with a sign and a newline: the newline alone is refused", with(func(m map[string]any) { m["amount"] = "-1\n" }), ""},
		{"an empty amount", with(func(m map[string]any) { m["amount"] = "" }), ""},
		{"no amount", with(func(m map[string]any) { delete(m, "amount") }), ""},
		{"a first name of 255 characters", with(func(m map[string]any) { party(m, "originator")["firstName"] = strings.Repeat("é", 255) }), ""},
		{"a first name of 256 characters", with(func(m map[string]any) { party(m, "originator")["firstName"] = strings.Repeat("é", 256) }), ""},
		{"a first name of 100,000 characters", with(func(m map[string]any) { party(m, "originator")["firstName"] = strings.Repeat("x", 100_000) }), ""},
		{"every party text too long", with(func(m map[string]any) {
			for _, k := range []string{"personType", "lastName", "dateOfBirth", "email", "addressType", "streetName", "buildingNumber",
				"postCode", "townName", "nationalId", "nationalIdType", "accountNumber", "walletAddress"} {
				party(m, "beneficiary")[k] = strings.Repeat("w", 256)
			}
			party(m, "beneficiary")["personType"], party(m, "beneficiary")["legalName"] = "legal", strings.Repeat("w", 256)
		}), ""},
		{"legalName and email not strings", with(func(m map[string]any) {
			party(m, "originator")["legalName"] = 1
			party(m, "beneficiary")["email"] = []any{}
		}), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := travelruletest.CheckTransfer(tt.body)
			a := post(t, srv.URL+"/transfers/initiate", tok, tt.body)
			switch {
			case a.Status == http.StatusOK:
				assert.NoError(t, err)
			case tt.err != "":
				require.Equal(t, http.StatusBadRequest, a.Status)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				_, msg, _ := a.errorBody(t)
				assert.Equal(t, msg, err.Error())
			default:
				require.Equal(t, http.StatusBadRequest, a.Status, "body %s", a.Body)
				_, _, fields := a.errorBody(t)
				var ve *travelrule.ValidationError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, fields, ve.Fields)
			}
		})
	}
}

func TestCheckTransferReportsEveryFault(t *testing.T) {
	m := wire(t, validRequest("http://127.0.0.1:1/cb"))
	m["amount"] = 0.25
	m["asset"] = true
	m["travelAddress"] = "taSandboxBeneficiaryVASP"
	m["beneficiary"] = []any{"Alan"}
	m["originator"].(map[string]any)["buildingNumber"] = 221
	m["originator"].(map[string]any)["country"] = "GBR"
	delete(m, "callback")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var ve *travelrule.ValidationError
	require.ErrorAs(t, travelruletest.CheckTransfer(b), &ve)
	var got []string
	for _, f := range ve.Fields {
		got = append(got, f.Field+": "+f.Reason)
	}
	assert.ElementsMatch(t, []string{
		"amount: must be a string",
		"asset: must be a string",
		"beneficiary: must be an object",
		"originator.buildingNumber: must be a string",
		"originator.country: must be exactly 2 letters",
		"callback: required",
		"travelAddress: not a travel address: checksum does not match and it does not end in t=i (mistyped?)",
	}, got)
}

// The sandbox's reason for a travel address that does not decode is the
// client's own (ValidateStrict), word for word.
func TestTravelAddressReasonsAreTheClients(t *testing.T) {
	for _, ta := range []string{"taSandboxBeneficiaryVASP", "ta0OI+l", "ta", travelruletest.KnownTravelAddress + "x"} {
		req := validRequest("http://127.0.0.1:1/cb")
		req.TravelAddress = ta
		var client, sandbox *travelrule.ValidationError
		require.ErrorAs(t, req.ValidateStrict(), &client)
		body, err := json.Marshal(req)
		require.NoError(t, err)
		require.ErrorAs(t, travelruletest.CheckTransfer(body), &sandbox)
		assert.Equal(t, client.Fields, sandbox.Fields, ta)
	}
}

// The sandbox refuses what the live docs say the service validates (the
// amount's length, missing fields) and, as its own bound, party texts of
// absurd length, through a real client: a body the client validated and a
// proxy spoilt on its way.
func TestSandboxRefusesLengthsThroughTheClient(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	long := strings.Repeat("9", 51)
	huge := strings.Repeat("Zoë", 100_000/3+1)
	for _, tt := range []struct {
		name   string
		from   string
		to     string
		fields []string
	}{
		{"amount of 51 characters", `"amount":"0.25"`, `"amount":"` + long + `"`, []string{"amount"}},
		{"amount missing", `"amount":"0.25",`, ``, []string{"amount"}},
		{"first name of 100,000 characters", `"firstName":"Ada"`, `"firstName":"` + huge + `"`, []string{"originator.firstName"}},
		{"town of 256 characters", `"townName":"London"`, `"townName":"` + strings.Repeat("ø", 256) + `"`, []string{"originator.townName"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hc := &http.Client{Transport: rewrite{strings.NewReplacer(tt.from, tt.to)}}
			_, err := newClient(t, srv, travelrule.WithHTTPClient(hc)).InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.ErrorIs(t, err, travelrule.ErrBadRequest)
			var ae *travelrule.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, http.StatusBadRequest, ae.StatusCode)
			assert.Equal(t, []string{"VALIDATION_ERROR"}, ae.Codes)
			var paths []string
			for _, f := range ae.Fields {
				paths = append(paths, f.Field)
			}
			assert.Equal(t, tt.fields, paths)
			assert.NotContains(t, string(ae.Body), "999999")
			assert.NotContains(t, string(ae.Body), "Zoë")
			assert.NotContains(t, string(ae.Body), "øø")
		})
	}

	// An amount that is no number passes: the live backend checks only its
	// length.
	req := validRequest("http://127.0.0.1:1/cb")
	req.Amount = "one BTC"
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
}

// The sandbox judges an amount by its length alone, as the live backend
// does (A17): the forms the client refuses before sending ("-1", what
// fmt.Sprint(1e-7) gives, zero) and the text ValidateStrict refuses are
// accepted, at initiation, by CheckTransfer and by the control plane.
func TestSandboxJudgesTheAmountByItsLengthOnly(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	rc := newReceiver(t, nil)
	for _, amount := range []string{"-1", "+1", "1e-07", "0", "0.000", " 1", "1 ", "NaN", "one BTC", strings.Repeat("9", 50)} {
		t.Run(amount, func(t *testing.T) {
			m := wire(t, validRequest("http://127.0.0.1:1/cb"))
			m["amount"] = amount
			body, err := json.Marshal(m)
			require.NoError(t, err)
			require.NoError(t, travelruletest.CheckTransfer(body))
			a := post(t, srv.URL+"/transfers/initiate", tok, body)
			assert.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
			startInquiry(t, srv, map[string]any{"callback": rc.URL, "amount": amount})
		})
	}
}

// The sandbox judges the amount's form by its length alone (A17) but its
// characters as every field's (A6): a control character or a
// bidirectional override is refused, naming the character and its offset,
// and no form fault comes with it.
func TestSandboxRefusesAnAmountThatIsNotPlainText(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	for _, tt := range []struct{ amount, reason string }{
		{"1\x00", "holds a NUL (U+0000) at byte offset 1"},
		{"1\n2", "holds a newline (U+000A) at byte offset 1"},
		{"\u202e1", "holds a bidirectional formatting character (U+202E) at byte offset 0"},
		{"-1\t", "holds a tab (U+0009) at byte offset 2"},
	} {
		t.Run(fmt.Sprintf("%q", tt.amount), func(t *testing.T) {
			m := wire(t, validRequest("http://127.0.0.1:1/cb"))
			m["amount"] = tt.amount
			body, err := json.Marshal(m)
			require.NoError(t, err)
			want := []travelrule.FieldError{{Field: "amount", Reason: tt.reason}}
			var ve *travelrule.ValidationError
			require.ErrorAs(t, travelruletest.CheckTransfer(body), &ve)
			assert.Equal(t, want, ve.Fields)
			a := post(t, srv.URL+"/transfers/initiate", tok, body)
			require.Equal(t, http.StatusBadRequest, a.Status, "body %s", a.Body)
			_, _, fields := a.errorBody(t)
			assert.Equal(t, want, fields)
		})
	}
}
