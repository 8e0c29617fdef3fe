package travelruletest

import (
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/vaspkit/travelrule"
)

// The sandbox's directory of travel addresses: how the travelAddress of an
// initiation resolves, decided in one place (lookup) as a real service's
// directory would, with documented test values in place of real VASPs.

// KnownTravelAddress is the Travel Rule Protocol specification's own
// example travel address, in the checksummed form, which encodes
// "beneficiary.com/x/12345?t=i". Like every readable travel address whose
// host is not under .invalid, it resolves to the sandbox's beneficiary
// VASP.
const KnownTravelAddress = "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv"

// UnknownTravelAddress is a well-formed travel address that resolves to no
// VASP, for tests of that answer (404 INVALID_TRAVEL_ADDRESS): it encodes
// "no-such-vasp.invalid/x/1?t=i", and every travel address whose host is
// under the reserved top-level domain .invalid (RFC 2606) is answered so.
const UnknownTravelAddress = "ta8S6B25wVTEQ74mZS9MqdVgv9CkHE62ht5CmHNFZdFNKX"

// PlaceholderTravelAddress is the travel address of the live service's
// own curl example, a placeholder that is not even base58: a URL-safe "ta"
// token, so the opaque form (travelrule.InspectTravelAddress), which
// resolves to the sandbox's beneficiary VASP like every opaque address.
const PlaceholderTravelAddress = "ta1qexamplebeneficiaryvasp1ahjk23"

// verdict is how a travelAddress resolves.
type verdict int

const (
	resolves    verdict = iota // to the sandbox's beneficiary VASP
	noVASP                     // 404 INVALID_TRAVEL_ADDRESS
	undecodable                // 400 INVALID_TRAVEL_ADDRESS, field travelAddress
)

// notATravelAddress opens the reason of an undecodable travelAddress, as
// the client's ValidateStrict words it; the fault's entry has the code
// INVALID_TRAVEL_ADDRESS (envelope.go).
const notATravelAddress = "not a travel address: "

// directory holds the travel addresses registered by WithTravelAddresses
// (true: resolves) and WithUnknownTravelAddresses (false: no VASP). It is
// fixed when the server starts.
type directory map[string]bool

// lookup says how ta resolves, and why when it does not. The reason never
// quotes ta: a travel address identifies a customer's account.
func (d directory) lookup(ta string) (verdict, string) {
	if known, ok := d[ta]; ok {
		if known {
			return resolves, ""
		}
		return noVASP, "travel address resolves to no VASP (registered as unknown with WithUnknownTravelAddresses or --unknown-travel-address)"
	}
	if ta == "" || !strings.HasPrefix(ta, "ta") {
		// No travel address, or another kind of identifier: the sandbox
		// judges only the "ta" forms.
		return resolves, ""
	}
	return readings.read(ta)
}

// readTravelAddress is how ta, a "ta" form, resolves by what it encodes.
func readTravelAddress(ta string) (verdict, string) {
	form, uri := travelrule.InspectTravelAddress(ta)
	switch form {
	case travelrule.TravelAddressInvalid:
		_, err := travelrule.DecodeTravelAddress(ta)
		return undecodable, notATravelAddress + strings.TrimPrefix(err.Error(), travelrule.ErrInvalidTravelAddress.Error()+": ")
	case travelrule.TravelAddressOpaque:
		// The service's own routing token, which only it can read.
		return resolves, ""
	}
	if host := travelURIHost(uri); host == "invalid" || strings.HasSuffix(host, ".invalid") {
		return noVASP, "travel address resolves to no VASP: its host is under .invalid, which the sandbox keeps for that answer; any other travel address resolves"
	}
	return resolves, ""
}

// readings remembers readTravelAddress's verdicts: a test suite sends many
// initiations to a few travel addresses, and decoding one (base58, a
// checksum, its URI) costs more than the rest of an initiation's checks.
var readings = readingCache{max: 4096}

// readingCache memoizes readTravelAddress, a pure function, for at most max
// travel addresses, all forgotten when full (as the verified tokens are).
type readingCache struct {
	max int

	mu   sync.Mutex
	seen map[string]reading
}

// reading is a verdict and its reason.
type reading struct {
	v      verdict
	reason string
}

// read is readTravelAddress(ta), remembered.
func (c *readingCache) read(ta string) (verdict, string) {
	c.mu.Lock()
	r, ok := c.seen[ta]
	c.mu.Unlock()
	if ok {
		return r.v, r.reason
	}
	r.v, r.reason = readTravelAddress(ta)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil || len(c.seen) >= c.max {
		c.seen = make(map[string]reading)
	}
	c.seen[ta] = r
	return r.v, r.reason
}

// travelURIHost is the host name of a decoded travel address's URI, in lower
// case and without a final dot.
func travelURIHost(uri string) string {
	u, err := url.Parse("//" + uri)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// travelAddressFaults appends to faults the 400 fault of a travelAddress
// that no one could have made, unless faults holds one of the field already
// (its length).
func (d directory) travelAddressFaults(ta string, faults []travelrule.FieldError) []travelrule.FieldError {
	faults, _ = d.judge(ta, faults)
	return faults
}

// judge looks ta up once: it appends to faults the 400 fault of a
// travelAddress that no one could have made, unless faults holds one of
// the field already (its length), and returns the 404 answer to an
// initiation whose travelAddress resolves to no VASP, or nil.
func (d directory) judge(ta string, faults []travelrule.FieldError) ([]travelrule.FieldError, *answer) {
	for _, f := range faults {
		if f.Field == "travelAddress" {
			return faults, nil
		}
	}
	switch v, reason := d.lookup(ta); v {
	case undecodable:
		return append(faults, travelrule.FieldError{Field: "travelAddress", Reason: reason}), nil
	case noVASP:
		return faults, fieldAnswer(http.StatusNotFound, codeInvalidTravelAddress, "travelAddress", reason)
	}
	return faults, nil
}
