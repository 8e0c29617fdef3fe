package travelrule

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Travel addresses, as the OpenVASP Travel Rule Protocol (TRP, from 3.1)
// defines them: "ta" followed by the base58 form (Bitcoin's alphabet) of a
// URI's bytes and the first 4 bytes of their double SHA-256, with no version
// byte. The URI has no scheme (https is implied) and its query carries t=i.
//
// What this file accepts is decided in one place, travelURIFault, for both
// directions, so that everything EncodeTravelAddress makes decodes and
// everything DecodeTravelAddress returns encodes back to the same address.

// ErrInvalidTravelAddress is the [errors.Is] target of every failure of
// [EncodeTravelAddress] and [DecodeTravelAddress]. The error's text names
// the fault (checksum, alphabet, missing t=i, ...) and never the address or
// the URI, which identify a customer's account.
var ErrInvalidTravelAddress = errors.New("travelrule: invalid travel address")

const (
	travelAddressPrefix = "ta"
	// maxTravelAddress is the bound of the travelAddress field (part 8 of
	// the interface description): a longer address could not be sent.
	maxTravelAddress = 255
	// maxTravelAddressBytes bounds the bytes (URI and checksum) that a
	// travel address of maxTravelAddress characters can encode: 253 base58
	// digits carry 253·log2(58)/8 < 186 bytes.
	maxTravelAddressBytes = 186
	// base58Alphabet is Bitcoin's: no 0, O, I or l.
	base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
)

// EncodeTravelAddress returns the travel address of uri, a URI without a
// scheme whose query carries t=i, such as "beneficiary.com/x/12345?t=i":
//
//	ta, err := travelrule.EncodeTravelAddress("beneficiary.com/x/12345?t=i")
//	// ta == "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv"
//
// The URI must be printable ASCII (RFC 3986: percent-encode anything else,
// and write an internationalised host in its xn-- form), name a host (a DNS
// name or an IP address) with no user information before it, carry no
// scheme, and have a query with t=i; and its travel address must fit the
// 255 characters of the travelAddress field. The host is not checked
// against a list of top-level domains: such lists go stale, and reserved
// names such as .invalid or .test are legitimate in tests. Every failure
// matches [ErrInvalidTravelAddress].
func EncodeTravelAddress(uri string) (string, error) {
	// Base58 costs time quadratic in the length: refuse at once what could
	// not fit (255 base58 digits hold fewer than 187 bytes).
	if len(uri)+4 > maxTravelAddressBytes {
		return "", invalidTravelAddress("longer than " + strconv.Itoa(maxTravelAddress) + " characters once encoded")
	}
	if reason := travelURIFault(uri); reason != "" {
		return "", invalidTravelAddress(reason)
	}
	ta := encodeTravelAddress(uri)
	if len(ta) > maxTravelAddress {
		return "", invalidTravelAddress("longer than " + strconv.Itoa(maxTravelAddress) + " characters once encoded")
	}
	return ta, nil
}

// DecodeTravelAddress returns the URI that the travel address ta encodes,
// without a scheme (https is implied), such as
// "beneficiary.com/x/12345?t=i". It refuses, with an error that matches
// [ErrInvalidTravelAddress], an address that does not start with "ta", is
// longer than the 255 characters of the travelAddress field, has a
// character outside the base58 alphabet, whose checksum does not match, or
// whose URI [EncodeTravelAddress] would refuse (no t=i in its query, a
// scheme, no host, ...).
//
// The legacy LNURL form of TRP before 3.1 is not decoded: TRP 3.1 replaced
// it with this one, and reading it would need a bech32 decoder with
// LNURL's own length rules for addresses no current implementation issues.
// [TransferRequest.ValidateStrict] leaves a travelAddress that does not
// start with "ta" to the service.
func DecodeTravelAddress(ta string) (string, error) {
	uri, reason := decodeTravelAddress(ta)
	if reason != "" {
		return "", invalidTravelAddress(reason)
	}
	return uri, nil
}

// decodeTravelAddress is DecodeTravelAddress with the fault as a reason
// ("" when there is none), for ValidateStrict's field error.
func decodeTravelAddress(ta string) (uri, reason string) {
	switch {
	case !strings.HasPrefix(ta, travelAddressPrefix):
		return "", `does not start with "ta"`
	case len(ta) > maxTravelAddress:
		return "", "longer than " + strconv.Itoa(maxTravelAddress) + " characters"
	}
	b, ok := base58Decode(ta[len(travelAddressPrefix):])
	switch {
	case !ok:
		return "", "has a character outside the base58 alphabet"
	case len(b) <= 4:
		return "", "too short to hold a URI and its checksum"
	}
	u, got := b[:len(b)-4], b[len(b)-4:]
	if sum := travelAddressChecksum(u); string(sum[:]) != string(got) {
		return "", "checksum does not match (mistyped?)"
	}
	if reason := travelURIFault(string(u)); reason != "" {
		return "", "encodes a URI that " + reason
	}
	return string(u), ""
}

// encodeTravelAddress returns the travel address of uri without checking
// uri.
func encodeTravelAddress(uri string) string {
	b := make([]byte, 0, len(uri)+4)
	b = append(b, uri...)
	sum := travelAddressChecksum(b)
	return travelAddressPrefix + base58Encode(append(b, sum[:]...))
}

func invalidTravelAddress(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalidTravelAddress, reason)
}

// travelAddressChecksum is the first 4 bytes of the double SHA-256 of b.
func travelAddressChecksum(b []byte) [4]byte {
	h := sha256.Sum256(b)
	h = sha256.Sum256(h[:])
	return [4]byte(h[:4])
}

// travelURIFault says what is wrong with uri as the URI of a travel
// address, or "" if nothing is. Its reasons complete the sentence "the URI
// ..." and never quote the URI.
func travelURIFault(uri string) string {
	if uri == "" {
		return "is empty"
	}
	for i := 0; i < len(uri); i++ {
		if c := uri[i]; c <= ' ' || c >= 0x7f {
			return "has a character that is not printable ASCII (percent-encode it)"
		}
	}
	if i := strings.Index(uri, "://"); i >= 0 && !strings.ContainsAny(uri[:i], "/?#") {
		return "has a scheme (https:// is implied: leave it out)"
	}
	authority := uri
	if i := strings.IndexAny(uri, "/?#"); i >= 0 {
		authority = uri[:i]
	}
	if strings.Contains(authority, "@") {
		return "has user information before the host"
	}
	if reason := hostFault(authority); reason != "" {
		return reason
	}
	u, err := url.Parse("//" + uri)
	if err != nil {
		return "does not parse"
	}
	// As net/url's Query does (and trisa with it), a pair that does not
	// parse is skipped, not a fault of the whole query.
	if u.Query().Get("t") != "i" {
		return "has no t=i in its query"
	}
	return ""
}

// hostFault says what is wrong with hostport, the authority of a travel
// address's URI without user information, or "" if nothing is: the host is
// a DNS name (labels of letters, digits, '-' and '_', an optional final
// dot), an IPv4 address, or an IPv6 address in brackets; a port is decimal
// and at most 65535.
func hostFault(hostport string) string {
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.Contains(hostport[i:], "]") {
		host, port = hostport[:i], hostport[i+1:]
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return "has a port that is not a number from 1 to 65535"
		}
	}
	if strings.HasPrefix(host, "[") {
		if a, err := netip.ParseAddr(strings.TrimSuffix(host[1:], "]")); err != nil || !a.Is6() || !strings.HasSuffix(host, "]") {
			return "has a host that is not an IPv6 address in brackets"
		}
		return ""
	}
	if host == "" {
		return "has no host"
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if label == "" || len(label) > 63 {
			return "has a host name with an empty or over-long label"
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isASCIILetter(c) && !(c >= '0' && c <= '9') && c != '-' && c != '_' {
				return "has a host name with a character other than letters, digits, '-' and '_'"
			}
		}
	}
	return ""
}

// base58Index maps a byte to its value in base58Alphabet, or 0xff.
var base58Index = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(base58Alphabet); i++ {
		t[base58Alphabet[i]] = byte(i)
	}
	return t
}()

// base58Encode returns the base58 form of b: one '1' for each leading zero
// byte, then the rest of b as a big-endian number in base 58.
func base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// log(256)/log(58) < 1.37: that many digits per byte are enough.
	digits := make([]byte, (len(b)-zeros)*137/100+1)
	top := len(digits) // digits[top:] holds the number so far
	for _, c := range b[zeros:] {
		carry := int(c)
		j := len(digits) - 1
		for ; j >= top || carry != 0; j-- {
			carry += 256 * int(digits[j])
			digits[j] = byte(carry % 58)
			carry /= 58
		}
		top = j + 1
	}
	out := make([]byte, 0, zeros+len(digits)-top)
	for range zeros {
		out = append(out, '1')
	}
	for _, d := range digits[top:] {
		out = append(out, base58Alphabet[d])
	}
	return string(out)
}

// base58Decode is the inverse of base58Encode; ok is false if s has a
// character outside the alphabet.
func base58Decode(s string) (b []byte, ok bool) {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// log(58)/log(256) < 0.733: that many bytes per digit are enough.
	num := make([]byte, (len(s)-zeros)*733/1000+1)
	top := len(num) // num[top:] holds the number so far
	for i := zeros; i < len(s); i++ {
		carry := int(base58Index[s[i]])
		if carry == 0xff {
			return nil, false
		}
		j := len(num) - 1
		for ; j >= top || carry != 0; j-- {
			carry += 58 * int(num[j])
			num[j] = byte(carry)
			carry >>= 8
		}
		top = j + 1
	}
	b = make([]byte, zeros, zeros+len(num)-top)
	return append(b, num[top:]...), true
}
