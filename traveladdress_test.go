package travelrule_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// trpExampleAddress is the travel address of the TRP specification's
// example, "beneficiary.com/x/12345?t=i".
const trpExampleAddress = "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv"

// Published travel addresses and the URIs they encode.
var publishedTravelAddresses = []struct{ source, uri, ta string }{
	{"TRP specification; trisa pkg/openvasp/traddr tests", "beneficiary.com/x/12345?t=i", trpExampleAddress},
	{"21 Analytics, How the TRP Travel Address Solves the FATF Travel Rule",
		"beneficiary.com/implementation/defined/path?t=i",
		"ta6MNBj2u4art71gN99C6xniYrNfDUF26QgZHdXwd6zzYsvk1S6M5A15K2REHRULnZHnJs88"},
	{"TRP Scout, Decode Travel Address (a host with a port)",
		"localhost:5001/trp/inquiry/cf7d27fb-75f9-4ea1-b65a-bd9050bba9db?t=i",
		"taN2raFk3zy7RvbLqAmHJ2kDTbSFrDoMhwLdPPzysxhXnGRqgnsfbqktRpoTssSVBXa9XS7nMjGA2Xqb8AH7eGTZx9cyr85KxZr"},
}

func TestTravelAddressPublishedExamples(t *testing.T) {
	for _, tt := range publishedTravelAddresses {
		t.Run(tt.source, func(t *testing.T) {
			ta, err := travelrule.EncodeTravelAddress(tt.uri)
			require.NoError(t, err)
			assert.Equal(t, tt.ta, ta)
			uri, err := travelrule.DecodeTravelAddress(tt.ta)
			require.NoError(t, err)
			assert.Equal(t, tt.uri, uri)
		})
	}
}

func TestEncodeTravelAddress(t *testing.T) {
	for _, tt := range []struct {
		name, uri string
		reason    string // "" when accepted
	}{
		{"t=i among other parameters", "vasp.example/inquiry?a=b&t=i&c", ""},
		{"t=i percent-encoded", "vasp.example/x?t=%69", ""},
		{"an IPv4 host and a port", "192.0.2.1:8443/x?t=i", ""},
		{"an IPv6 host", "[2001:db8::1]:8443/x?t=i", ""},
		{"a reserved test domain", "no-such-vasp.invalid/x/1?t=i", ""},
		{"a final dot", "vasp.example./x?t=i", ""},
		{"no path", "vasp.example?t=i", ""},
		{"another pair that does not parse", "vasp.example/x?a=%zz&t=i", ""},
		{"a fragment", "vasp.example/x?t=i#part", ""},
		{"an underscore in a label", "_trp.vasp.example/x?t=i", ""},

		{"empty", "", "is empty"},
		{"a scheme", "https://beneficiary.com/x/12345?t=i", "scheme"},
		{"an upper-case scheme", "HTTPS://beneficiary.com/x/12345?t=i", "scheme"},
		{"no t=i", "beneficiary.com/x/12345", "t=i"},
		{"another t", "beneficiary.com/x/12345?t=x", "t=i"},
		{"t=i only in the path", "beneficiary.com/t=i", "t=i"},
		{"t=i only in the fragment", "beneficiary.com/x#?t=i", "t=i"},
		{"t=i joined by a semicolon", "beneficiary.com/x?t=i;a=b", "t=i"},
		{"user information", "beneficiary.com@evil.example/x?t=i", "user information"},
		{"no host", "/x/12345?t=i", "no host"},
		{"only a port", ":8443/x?t=i", "no host"},
		{"port zero", "vasp.example:0/x?t=i", "port"},
		{"port too large", "vasp.example:65536/x?t=i", "port"},
		{"port not a number", "vasp.example:https/x?t=i", "port"},
		{"a host with a bang", "vasp!.example/x?t=i", "host name"},
		{"an empty label", "vasp..example/x?t=i", "label"},
		{"a label over 63", strings.Repeat("a", 64) + ".example/x?t=i", "label"},
		{"brackets around an IPv4 address", "[192.0.2.1]/x?t=i", "IPv6"},
		{"a bad percent escape", "vasp.example/%zz?t=i", "does not parse"},
		{"a space", "vasp.example/x y?t=i", "printable ASCII"},
		{"a non-ASCII host", "bücher.example/x?t=i", "printable ASCII"},
		{"a control character", "vasp.example/x\x00?t=i", "printable ASCII"},
		{"too long once encoded", "vasp.example/" + strings.Repeat("x", 165) + "?t=i", "255"},
		{"far too long, refused before any encoding", "vasp.example/" + strings.Repeat("x", 1<<20) + "?t=i", "255"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ta, err := travelrule.EncodeTravelAddress(tt.uri)
			if tt.reason == "" {
				require.NoError(t, err)
				uri, err := travelrule.DecodeTravelAddress(ta)
				require.NoError(t, err)
				assert.Equal(t, tt.uri, uri)
				return
			}
			require.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress)
			assert.Empty(t, ta)
			assert.Contains(t, err.Error(), tt.reason)
			if len(tt.uri) > 3 {
				assert.NotContains(t, err.Error(), tt.uri, "the error quotes the URI")
			}
		})
	}
}

func TestDecodeTravelAddressRefuses(t *testing.T) {
	last := len(trpExampleAddress) - 1
	for _, tt := range []struct {
		name, ta, reason string
	}{
		{"no ta prefix (trisa's case)", trpExampleAddress[2:], `"ta"`},
		{"an upper-case prefix", "TA" + trpExampleAddress[2:], `"ta"`},
		{"empty", "", `"ta"`},
		{"a lost character", trpExampleAddress[:last], "checksum"},
		{"a changed last character", trpExampleAddress[:last] + "w", "checksum"},
		{"two characters swapped", "ta" + trpExampleAddress[3:4] + trpExampleAddress[2:3] + trpExampleAddress[4:], "checksum"},
		{"the sandbox's old made-up address", "taSandboxBeneficiaryVASP", "checksum"},
		{"a space", trpExampleAddress + " ", "URL-safe"},
		{"a slash", trpExampleAddress[:10] + "/" + trpExampleAddress[11:], "URL-safe"},
		{"a percent sign", trpExampleAddress[:10] + "%" + trpExampleAddress[11:], "URL-safe"},
		{"a non-ASCII letter", trpExampleAddress[:10] + "ü" + trpExampleAddress[11:], "URL-safe"},
		{"nothing after ta", "ta", `nothing after "ta"`},
		{"only a checksum's worth", "ta2W2H", "checksum"},
		{"the live service's unchecked example, last character mistyped", liveUncheckedAddress[:len(liveUncheckedAddress)-1] + "M", "checksum"},
		{"longer than the field", "ta" + strings.Repeat("2", 254), "255"},
		{"no t=i", travelrule.EncodeTravelAddressWithoutChecks("beneficiary.com/x/12345"), "t=i"},
		{"a scheme", travelrule.EncodeTravelAddressWithoutChecks("https://beneficiary.com/x/12345?t=i"), "scheme"},
		{"user information", travelrule.EncodeTravelAddressWithoutChecks("beneficiary.com@evil.example/x?t=i"), "user information"},
		{"no host", travelrule.EncodeTravelAddressWithoutChecks("/x?t=i"), "no host"},
		{"a non-ASCII byte", travelrule.EncodeTravelAddressWithoutChecks("b\xfccher.example/x?t=i"), "printable ASCII"},
		{"a leading zero byte", travelrule.EncodeTravelAddressWithoutChecks("\x00beneficiary.com/x?t=i"), "printable ASCII"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			uri, err := travelrule.DecodeTravelAddress(tt.ta)
			require.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress)
			assert.Empty(t, uri)
			assert.Contains(t, err.Error(), tt.reason)
			if len(tt.ta) > 3 {
				assert.NotContains(t, err.Error(), tt.ta, "the error quotes the address")
			}
			assert.NotContains(t, err.Error(), "beneficiary.com", "the error quotes the URI")
		})
	}
}

func TestTravelAddressErrorIsOneSentinel(t *testing.T) {
	_, err1 := travelrule.DecodeTravelAddress("ta")
	_, err2 := travelrule.EncodeTravelAddress("")
	for _, err := range []error{err1, err2} {
		assert.True(t, errors.Is(err, travelrule.ErrInvalidTravelAddress))
		assert.True(t, strings.HasPrefix(err.Error(), "travelrule: invalid travel address: "), err.Error())
	}
}

// The live service's examples (live-service.md), decoded by hand there.
const (
	liveUncheckedAddress = "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN"
	liveUncheckedURI     = "trp.your-domain.com/transfers/inquiry/019ac452-8660-7061-9b93-8d72eaa11a89?t=i"
	liveOpaqueAddress    = "taCFLQmuE6GqfR2jRM6m8qF7b9V8PjhzGiED4KmteccXagHRPKVDbLSKe9MwF755NJuKL5Q1CJ1zmXDm2m7crZBUJ7pPfDCoKL1n"
	livePlaceholder      = "ta1qexamplebeneficiaryvasp1ahjk23"
)

// TestTravelAddressForms: every address the service or TRP makes is read
// as its form, and the URI comes back where one can be read; an opaque
// address is not an invalid one.
func TestTravelAddressForms(t *testing.T) {
	for _, tt := range []struct {
		name string
		ta   string
		form travelrule.TravelAddressForm
		uri  string
	}{
		{"TRP's example", trpExampleAddress, travelrule.TravelAddressChecksummed, "beneficiary.com/x/12345?t=i"},
		{"the live service's unchecked example", liveUncheckedAddress, travelrule.TravelAddressUnchecked, liveUncheckedURI},
		{"the live service's opaque example", liveOpaqueAddress, travelrule.TravelAddressOpaque, ""},
		{"the live docs' placeholder (not base58)", livePlaceholder, travelrule.TravelAddressOpaque, ""},
		{"URL-safe but outside base58: a zero", "ta0" + liveUncheckedAddress[2:40], travelrule.TravelAddressOpaque, ""},
		{"URL-safe but outside base58: -._~", "taroute-token_1.2~3", travelrule.TravelAddressOpaque, ""},
		{"a typo early in the unchecked example: no checksum to catch it", liveUncheckedAddress[:3] + "5" + liveUncheckedAddress[4:], travelrule.TravelAddressOpaque, ""},
		{"a checksummed typo in the first digit", "ta3" + trpExampleAddress[3:], travelrule.TravelAddressInvalid, ""},
		{"no ta prefix", "LNURL1DP68GURN8GHJ7", travelrule.TravelAddressInvalid, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			form, uri := travelrule.InspectTravelAddress(tt.ta)
			assert.Equal(t, tt.form, form, form.String())
			assert.Equal(t, tt.uri, uri)
			got, err := travelrule.DecodeTravelAddress(tt.ta)
			switch tt.form {
			case travelrule.TravelAddressOpaque:
				require.ErrorIs(t, err, travelrule.ErrOpaqueTravelAddress)
				assert.NotErrorIs(t, err, travelrule.ErrInvalidTravelAddress)
			case travelrule.TravelAddressInvalid:
				require.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress)
				assert.NotErrorIs(t, err, travelrule.ErrOpaqueTravelAddress)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.uri, got)
			}
		})
	}
}

// TestTypoInAChecksummedAddressIsCaught changes each digit of TRP's
// example, and of a longer checksummed address, to every other base58
// digit: every such address is refused, none read as unchecked or opaque.
// The rule: a checksummed address ends in its checksum, the service's
// forms end in t=i, so a failed checksum without a t=i ending is a typo.
func TestTypoInAChecksummedAddressIsCaught(t *testing.T) {
	long, err := travelrule.EncodeTravelAddress("trp.your-domain.com/transfers/inquiry/019ac452-8660-7061-9b93-8d72eaa11a89?t=i")
	require.NoError(t, err)
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	for _, ta := range []string{trpExampleAddress, long} {
		tried := 0
		for i := 2; i < len(ta); i++ {
			for j := 0; j < len(alphabet); j++ {
				if alphabet[j] == ta[i] {
					continue
				}
				typo := ta[:i] + alphabet[j:j+1] + ta[i+1:]
				form, _ := travelrule.InspectTravelAddress(typo)
				if !assert.Equal(t, travelrule.TravelAddressInvalid, form, "digit %d changed to %c", i, alphabet[j]) {
					return
				}
				tried++
			}
		}
		t.Logf("%d typos of a %d-character address, all refused", tried, len(ta))
	}
}

// TestLookAlikeTypoInAChecksummedAddressIsCaught: a digit of a checksummed
// address mistyped as a character outside base58 (0 for o, l or I for 1,
// a stray dot) is refused, not read as an opaque token.
func TestLookAlikeTypoInAChecksummedAddressIsCaught(t *testing.T) {
	long, err := travelrule.EncodeTravelAddress("trp.your-domain.com/transfers/inquiry/019ac452-8660-7061-9b93-8d72eaa11a89?t=i")
	require.NoError(t, err)
	tried := 0
	for _, ta := range []string{trpExampleAddress, long} {
		for i := 2; i < len(ta); i++ {
			for _, c := range "0OIl-._~" {
				for _, typo := range []string{ta[:i] + string(c) + ta[i+1:], ta[:i] + string(c) + ta[i:]} {
					form, _ := travelrule.InspectTravelAddress(typo)
					if !assert.Equal(t, travelrule.TravelAddressInvalid, form, "%q at %d", c, i) {
						return
					}
					tried++
				}
			}
		}
	}
	t.Logf("%d look-alike typos, all refused", tried)
	for _, ta := range []string{livePlaceholder, liveOpaqueAddress, "taroute-token_1.2~3"} {
		form, _ := travelrule.InspectTravelAddress(ta)
		assert.Equal(t, travelrule.TravelAddressOpaque, form, ta)
	}
}

func TestEncodeUncheckedTravelAddress(t *testing.T) {
	ta, err := travelrule.EncodeUncheckedTravelAddress(liveUncheckedURI)
	require.NoError(t, err)
	assert.Equal(t, liveUncheckedAddress, ta, "the live service's own example")

	_, err = travelrule.EncodeUncheckedTravelAddress("beneficiary.com/x?t=i&a=b")
	require.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress, "a URI not ending in t=i would read as a typo")
	assert.Contains(t, err.Error(), "t=i")
	_, err = travelrule.EncodeUncheckedTravelAddress("https://beneficiary.com/x?t=i")
	require.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress)
}
