package travelruletest

import (
	"strings"
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
		{"a character outside the URL-safe set", nil, "ta00+00", undecodable, "URL-safe"},
		{"nothing after ta", nil, "ta", undecodable, `nothing after "ta"`},
		{"longer than 255 characters", nil, "ta" + strings.Repeat("1", 254), undecodable, "255"},
		{"not base58: opaque", nil, "ta0000", resolves, ""},
		{"the docs' placeholder: opaque", nil, PlaceholderTravelAddress, resolves, ""},
		{"the live service's unchecked example", nil, liveUnchecked, resolves, ""},
		{"the live service's opaque example", nil, liveOpaque, resolves, ""},
		{"unchecked under .invalid", nil, unchecked(t, "vasp.invalid/transfers/inquiry/1?t=i"), noVASP, ".invalid"},
		{"unchecked elsewhere", nil, unchecked(t, "127.0.0.1:8080/api/transfers/inquiry/1?t=i"), resolves, ""},
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

// The live service's examples (live-service.md).
const (
	liveUnchecked = "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN"
	liveOpaque    = "taCFLQmuE6GqfR2jRM6m8qF7b9V8PjhzGiED4KmteccXagHRPKVDbLSKe9MwF755NJuKL5Q1CJ1zmXDm2m7crZBUJ7pPfDCoKL1n"
)

func unchecked(t *testing.T, uri string) string {
	t.Helper()
	ta, err := travelrule.EncodeUncheckedTravelAddress(uri)
	if err != nil {
		t.Fatal(err)
	}
	return ta
}

func TestTestTravelAddressesAreWhatTheySay(t *testing.T) {
	assert.Equal(t, KnownTravelAddress, encode(t, "beneficiary.com/x/12345?t=i"))
	assert.Equal(t, UnknownTravelAddress, encode(t, "no-such-vasp.invalid/x/1?t=i"))
	form, _ := travelrule.InspectTravelAddress(PlaceholderTravelAddress)
	assert.Equal(t, travelrule.TravelAddressOpaque, form)
}

// TestReadingCache: the verdicts remembered are readTravelAddress's, a
// travel address read again is not decoded again, and the cache holds at
// most its bound.
func TestReadingCache(t *testing.T) {
	c := readingCache{max: 3}
	for _, ta := range []string{KnownTravelAddress, UnknownTravelAddress, PlaceholderTravelAddress, "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wx", "ta0OIl"} {
		wantV, wantReason := readTravelAddress(ta)
		for range 2 {
			v, reason := c.read(ta)
			assert.Equal(t, wantV, v, ta)
			assert.Equal(t, wantReason, reason, ta)
		}
		assert.LessOrEqual(t, len(c.seen), c.max)
	}
	c.read(KnownTravelAddress)
	assert.Zero(t, testing.AllocsPerRun(10, func() { c.read(KnownTravelAddress) }), "a travel address read again")
}
