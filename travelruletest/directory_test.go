package travelruletest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func TestTravelAddressResolution(t *testing.T) {
	unknown, err := travelrule.EncodeTravelAddress("vasp.example/registered-unknown?t=i")
	require.NoError(t, err)
	srv := newServer(t,
		travelruletest.WithTravelAddresses("taRegisteredElsewhere"),
		travelruletest.WithUnknownTravelAddresses(unknown))
	corrupted := travelruletest.KnownTravelAddress[:len(travelruletest.KnownTravelAddress)-1] + "w"
	tok := token(t, srv)
	for _, tt := range []struct {
		name    string
		address string
		status  int
		reason  string // in the message (404) or the field's reason (400)
	}{
		{"none", "", http.StatusOK, ""},
		{"TRP's example", travelruletest.KnownTravelAddress, http.StatusOK, ""},
		{"the trisa example with a port", "taN2raFk3zy7RvbLqAmHJ2kDTbSFrDoMhwLdPPzysxhXnGRqgnsfbqktRpoTssSVBXa9XS7nMjGA2Xqb8AH7eGTZx9cyr85KxZr", http.StatusOK, ""},
		{"not a TRP travel address", "acct:ada@vasp.example", http.StatusOK, ""},
		{"registered", "taRegisteredElsewhere", http.StatusOK, ""},
		{"a host under .invalid", travelruletest.UnknownTravelAddress, http.StatusNotFound, ".invalid"},
		{"registered as unknown", unknown, http.StatusNotFound, "registered as unknown"},
		{"a corrupted checksum", corrupted, http.StatusBadRequest, "checksum"},
		{"the old made-up address", "taSandboxBeneficiaryVASP", http.StatusBadRequest, "checksum"},
		{"a character outside the URL-safe set", "ta0OI/l", http.StatusBadRequest, "URL-safe"},
		{"the docs' placeholder (opaque)", travelruletest.PlaceholderTravelAddress, http.StatusOK, ""},
		{"the live unchecked example", "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN", http.StatusOK, ""},
		{"the live opaque example", "taCFLQmuE6GqfR2jRM6m8qF7b9V8PjhzGiED4KmteccXagHRPKVDbLSKe9MwF755NJuKL5Q1CJ1zmXDm2m7crZBUJ7pPfDCoKL1n", http.StatusOK, ""},
		{"not base58 (opaque)", "ta0OIl", http.StatusOK, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := wire(t, validRequest("http://127.0.0.1:1/cb"))
			if tt.address != "" {
				m["travelAddress"] = tt.address
			}
			a := post(t, srv.URL+"/transfers/initiate", tok, m)
			require.Equal(t, tt.status, a.Status, "body %s", a.Body)
			if tt.status == http.StatusOK {
				return
			}
			code, msg, fields := a.errorBody(t)
			assert.Equal(t, "INVALID_TRAVEL_ADDRESS", code, "404 unknown and 400 malformed alike")
			require.Len(t, fields, 1)
			assert.Equal(t, "travelAddress", fields[0].Field)
			assert.Contains(t, msg, tt.reason)
			assert.NotContains(t, string(a.Body), tt.address, "the answer quotes the address")
		})
	}
}

func TestTravelAddressFaultComesWithTheOthers(t *testing.T) {
	srv := newServer(t)
	m := wire(t, validRequest("http://127.0.0.1:1/cb"))
	m["travelAddress"] = "ta0OI+l"
	delete(m, "asset")
	a := post(t, srv.URL+"/transfers/initiate", token(t, srv), m)
	// asset VALIDATION_ERROR, travelAddress INVALID_TRAVEL_ADDRESS.
	a.badRequestFields(t, []string{"asset", "travelAddress"})
	assert.Empty(t, srv.Transfers())
}

func TestUnknownTravelAddressThroughTheClient(t *testing.T) {
	srv := newServer(t)
	req := validRequest("http://127.0.0.1:1/cb")
	req.TravelAddress = travelruletest.UnknownTravelAddress
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), req)
	require.ErrorIs(t, err, travelrule.ErrNotFound)
	require.ErrorIs(t, err, travelrule.CodeInvalidTravelAddress)
	require.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress)
	var ae *travelrule.APIError
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, ae.ServerMessage(), ".invalid")
}
