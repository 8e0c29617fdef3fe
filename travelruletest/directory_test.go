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
			switch tt.status {
			case http.StatusNotFound:
				assert.Equal(t, "not_found", code)
				assert.Contains(t, msg, tt.reason)
			case http.StatusBadRequest:
				require.Len(t, fields, 1)
				assert.Equal(t, "travelAddress", fields[0].Field)
				assert.Contains(t, fields[0].Reason, tt.reason)
			}
			assert.NotContains(t, string(a.Body), tt.address, "the answer quotes the address")
		})
	}
}

func TestTravelAddressFaultComesWithTheOthers(t *testing.T) {
	srv := newServer(t)
	m := wire(t, validRequest("http://127.0.0.1:1/cb"))
	m["travelAddress"] = "ta0OIl"
	delete(m, "asset")
	a := post(t, srv.URL+"/transfers/initiate", token(t, srv), m)
	require.Equal(t, http.StatusBadRequest, a.Status)
	_, _, fields := a.errorBody(t)
	var got []string
	for _, f := range fields {
		got = append(got, f.Field)
	}
	assert.ElementsMatch(t, []string{"asset", "travelAddress"}, got)
	assert.Empty(t, srv.Transfers())
}

func TestUnknownTravelAddressThroughTheClient(t *testing.T) {
	srv := newServer(t)
	req := validRequest("http://127.0.0.1:1/cb")
	req.TravelAddress = travelruletest.UnknownTravelAddress
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), req)
	require.ErrorIs(t, err, travelrule.ErrNotFound)
	var ae *travelrule.APIError
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, ae.Message, ".invalid")
}
