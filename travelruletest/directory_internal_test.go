package travelruletest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/vaspkit/travelrule"
)

func TestDirectoryLookup(t *testing.T) {
	d := directory{"taRegisteredElsewhere": true}
	d2 := directory{KnownTravelAddress: false, UnknownTravelAddress: true}
	for _, tt := range []struct {
		name   string
		dir    directory
		ta     string
		want   verdict
		reason string
	}{
		{"none", nil, "", resolves, ""},
		{"TRP's example", nil, KnownTravelAddress, resolves, ""},
		{"a host under .invalid", nil, UnknownTravelAddress, noVASP, ".invalid"},
		{".invalid in upper case with a final dot", nil, encode(t, "VASP.INVALID./x?t=i"), noVASP, ".invalid"},
		{"the TLD invalid itself", nil, encode(t, "invalid/x?t=i"), noVASP, ".invalid"},
		{"invalid only as a label", nil, encode(t, "invalid.example/x?t=i"), resolves, ""},
		{"a host ending in invalid but not the TLD", nil, encode(t, "notinvalid/x?t=i"), resolves, ""},
		{"a port", nil, encode(t, "vasp.invalid:8443/x?t=i"), noVASP, ".invalid"},
		{"a checksum fault", nil, KnownTravelAddress[:len(KnownTravelAddress)-1] + "w", undecodable, "checksum"},
		{"the old made-up address", nil, "taSandboxBeneficiaryVASP", undecodable, "checksum"},
		{"an alphabet fault", nil, "ta0000", undecodable, "alphabet"},
		{"no ta prefix", nil, "acct:ada@vasp.example", resolves, ""},
		{"an LNURL", nil, "LNURL1DP68GURN8GHJ7", resolves, ""},
		{"registered, undecodable", d, "taRegisteredElsewhere", resolves, ""},
		{"registered as unknown", d2, KnownTravelAddress, noVASP, "WithUnknownTravelAddresses"},
		{"registered over .invalid", d2, UnknownTravelAddress, resolves, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, reason := tt.dir.lookup(tt.ta)
			assert.Equal(t, tt.want, v)
			if tt.reason == "" {
				assert.Empty(t, reason)
			} else {
				assert.Contains(t, reason, tt.reason)
			}
			if len(tt.ta) > 2 {
				assert.NotContains(t, reason, tt.ta, "the reason quotes the address")
			}
		})
	}
}

func encode(t *testing.T, uri string) string {
	t.Helper()
	ta, err := travelrule.EncodeTravelAddress(uri)
	if err != nil {
		t.Fatal(err)
	}
	return ta
}

func TestTestTravelAddressesAreWhatTheySay(t *testing.T) {
	assert.Equal(t, KnownTravelAddress, encode(t, "beneficiary.com/x/12345?t=i"))
	assert.Equal(t, UnknownTravelAddress, encode(t, "no-such-vasp.invalid/x/1?t=i"))
}
