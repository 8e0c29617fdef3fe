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

// Travel addresses come in three forms, told apart by their decoded bytes
// (decided in one place, inspectTravelAddress):
//
//   - checksummed: the OpenVASP Travel Rule Protocol's (TRP, from 3.1), "ta"
//     followed by the base58 form (Bitcoin's alphabet) of a URI's bytes
//     and the first 4 bytes of their double SHA-256, with no version byte.
//     The URI has no scheme (https is implied) and its query carries t=i.
//   - unchecked: the live service's, "ta" and the base58 form of the URI
//     alone, which ends in t=i ("trp.example.com/transfers/inquiry/<id>?t=i").
//   - opaque: a "ta" token of URL-safe characters whose URI cannot be read:
//     base58 of bytes that end in t=i but are not a URI (the live
//     service's encrypted-looking form), or not base58 at all (the service
//     calls its addresses "a URL-safe encoded routing token").
//
// Both of the service's forms end in t=i and the checksummed form ends in
// its checksum, so an address whose checksum fails and whose bytes do not
// end in t=i is none of them: a mistyped checksummed address (a typo
// anywhere but in its last few digits changes the URI and leaves the
// checksum, a typo there changes the checksum) is refused, with odds of
// 2^-24 of passing for an unchecked one. A typo in an unchecked or opaque
// address cannot be caught: it has no checksum, and the service judges it
// (INVALID_TRAVEL_ADDRESS).

// ErrInvalidTravelAddress is the [errors.Is] target of every failure of
// [EncodeTravelAddress] and [DecodeTravelAddress] to make or read an
// address that the service or TRP could have made, and of an [*APIError]
// with the code INVALID_TRAVEL_ADDRESS. The error's text names the fault
// (checksum, alphabet, missing t=i, ...) and never the address or the URI,
// which identify a customer's account.
var ErrInvalidTravelAddress = errors.New("travelrule: invalid travel address")

// ErrOpaqueTravelAddress is the error of [DecodeTravelAddress] for an
// address in the opaque form: well-formed, but its URI cannot be read.
// Such an address is valid as far as the client can tell: send it to the
// service unchanged, which judges it. It does not match
// [ErrInvalidTravelAddress].
var ErrOpaqueTravelAddress = errors.New("travelrule: travel address is opaque: its URI cannot be read; the service judges it")

// TravelAddressForm is the form of a travel address, as
// [InspectTravelAddress] tells it.
type TravelAddressForm uint8

// The forms of travel addresses.
const (
	// TravelAddressInvalid is no form the service or TRP makes: no "ta"
	// prefix, a character outside the URL-safe set, more than 255
	// characters, a failed checksum, or a checksummed URI that is not a
	// travel address's.
	TravelAddressInvalid TravelAddressForm = iota
	// TravelAddressChecksummed is TRP's form: base58 of the URI and a
	// 4-byte checksum.
	TravelAddressChecksummed
	// TravelAddressUnchecked is the live service's readable form: base58
	// of a URI that ends in t=i, without checksum.
	TravelAddressUnchecked
	// TravelAddressOpaque is a URL-safe "ta" token whose URI cannot be
	// read.
	TravelAddressOpaque
)

// String returns the form's name: "invalid", "checksummed", "unchecked"
// or "opaque".
func (f TravelAddressForm) String() string {
	switch f {
	case TravelAddressChecksummed:
		return "checksummed"
	case TravelAddressUnchecked:
		return "unchecked"
	case TravelAddressOpaque:
		return "opaque"
	}
	return "invalid"
}

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
	// travelQuerySuffix ends the URI of both of the live service's forms.
	travelQuerySuffix = "t=i"
)

// EncodeTravelAddress returns the checksummed (TRP) travel address of uri,
// a URI without a scheme whose query carries t=i, such as
// "beneficiary.com/x/12345?t=i":
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
	return encodeChecked(uri, true)
}

// EncodeUncheckedTravelAddress returns the travel address of uri in the
// live service's unchecked form: "ta" and the base58 form of the URI
// without a checksum, such as the service's own
// "trp.your-domain.com/transfers/inquiry/<id>?t=i". The URI must satisfy
// what [EncodeTravelAddress] asks, and end in t=i (which is how a reader
// tells the form from a mistyped checksummed address). Every failure
// matches [ErrInvalidTravelAddress]. Prefer [EncodeTravelAddress], whose
// checksum catches typos, unless the unchecked form is what a counterparty
// expects.
func EncodeUncheckedTravelAddress(uri string) (string, error) {
	return encodeChecked(uri, false)
}

func encodeChecked(uri string, checksum bool) (string, error) {
	// Base58 costs time quadratic in the length: refuse at once what could
	// not fit (255 base58 digits hold fewer than 187 bytes).
	if len(uri)+4 > maxTravelAddressBytes {
		return "", invalidTravelAddress("longer than " + strconv.Itoa(maxTravelAddress) + " characters once encoded")
	}
	if reason := travelURIFault(uri); reason != "" {
		return "", invalidTravelAddress(reason)
	}
	var ta string
	if checksum {
		ta = encodeTravelAddress(uri)
	} else {
		if !strings.HasSuffix(uri, travelQuerySuffix) {
			return "", invalidTravelAddress("does not end in t=i, which the unchecked form needs")
		}
		ta = travelAddressPrefix + base58Encode([]byte(uri))
	}
	if len(ta) > maxTravelAddress {
		return "", invalidTravelAddress("longer than " + strconv.Itoa(maxTravelAddress) + " characters once encoded")
	}
	return ta, nil
}

// DecodeTravelAddress returns the URI that the travel address ta encodes,
// without a scheme (https is implied), such as
// "beneficiary.com/x/12345?t=i", for an address in the checksummed or the
// unchecked form (see [InspectTravelAddress]). For an opaque address it
// returns [ErrOpaqueTravelAddress]: valid, but not readable. It refuses,
// with an error that matches [ErrInvalidTravelAddress], an address that
// does not start with "ta", is longer than the 255 characters of the
// travelAddress field, has a character outside the URL-safe set (RFC 3986's
// unreserved characters), whose checksum does not match while its bytes do
// not end in t=i (a mistyped checksummed address), or whose checksummed
// URI [EncodeTravelAddress] would refuse (no t=i in its query, a scheme,
// no host, ...).
//
// The legacy LNURL form of TRP before 3.1 is not decoded: TRP 3.1 replaced
// it with this one, and reading it would need a bech32 decoder with
// LNURL's own length rules for addresses no current implementation issues.
func DecodeTravelAddress(ta string) (string, error) {
	form, uri, reason := inspectTravelAddress(ta)
	switch form {
	case TravelAddressInvalid:
		return "", invalidTravelAddress(reason)
	case TravelAddressOpaque:
		return "", ErrOpaqueTravelAddress
	}
	return uri, nil
}

// InspectTravelAddress returns the form of the travel address ta (see
// [TravelAddressForm]) and, for the checksummed and unchecked forms, its
// URI. It never fails: an address no one could have made is
// [TravelAddressInvalid], with "" as its URI.
func InspectTravelAddress(ta string) (TravelAddressForm, string) {
	form, uri, _ := inspectTravelAddress(ta)
	return form, uri
}

// inspectTravelAddress is the whole rule: the form of ta, its URI when it
// can be read, and, for an invalid address, the fault as a reason that
// never quotes the address.
func inspectTravelAddress(ta string) (form TravelAddressForm, uri, reason string) {
	switch {
	case !strings.HasPrefix(ta, travelAddressPrefix):
		return TravelAddressInvalid, "", `does not start with "ta"`
	case len(ta) > maxTravelAddress:
		return TravelAddressInvalid, "", "longer than " + strconv.Itoa(maxTravelAddress) + " characters"
	case len(ta) == len(travelAddressPrefix):
		return TravelAddressInvalid, "", `has nothing after "ta"`
	}
	token := ta[len(travelAddressPrefix):]
	for i := 0; i < len(token); i++ {
		if c := token[i]; !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return TravelAddressInvalid, "", "has a character outside the URL-safe set (letters, digits, -._~)"
		}
	}
	b, ok := base58Decode(token)
	if !ok {
		if mistypedChecksummed(token) {
			return TravelAddressInvalid, "", "a character outside base58 where a checksummed address has a digit (mistyped? 0, O, I and l are not base58)"
		}
		// URL-safe but not base58: a routing token of the service's that
		// the client cannot read.
		return TravelAddressOpaque, "", ""
	}
	if len(b) > 4 {
		u, got := b[:len(b)-4], b[len(b)-4:]
		if sum := travelAddressChecksum(u); string(sum[:]) == string(got) {
			if reason := travelURIFault(string(u)); reason != "" {
				return TravelAddressInvalid, "", "encodes a URI that " + reason
			}
			return TravelAddressChecksummed, string(u), ""
		}
	}
	if !strings.HasSuffix(string(b), travelQuerySuffix) {
		return TravelAddressInvalid, "", "checksum does not match and it does not end in t=i (mistyped?)"
	}
	if travelURIFault(string(b)) == "" {
		return TravelAddressUnchecked, string(b), ""
	}
	return TravelAddressOpaque, "", ""
}

// mistypedChecksummed reports whether token, which is not base58, is a
// checksummed address with one character mistyped as one outside base58
// (a 0, O, I or l for the digit it looks like, or a stray -._~): it has
// exactly one such character, and putting a base58 digit in its place, or
// taking it out, makes an address whose checksum and URI hold. Base58
// leaves those characters out because they are the ones people mistype.
func mistypedChecksummed(token string) bool {
	bad := -1
	for i := 0; i < len(token); i++ {
		if base58Index[token[i]] == 0xff {
			if bad >= 0 {
				return false // two or more: a token of another kind
			}
			bad = i
		}
	}
	if bad < 0 {
		return false
	}
	checksummed := func(candidate string) bool {
		b, ok := base58Decode(candidate)
		if !ok || len(b) <= 4 {
			return false
		}
		u, got := b[:len(b)-4], b[len(b)-4:]
		sum := travelAddressChecksum(u)
		return string(sum[:]) == string(got) && travelURIFault(string(u)) == ""
	}
	if checksummed(token[:bad] + token[bad+1:]) {
		return true
	}
	for j := 0; j < len(base58Alphabet); j++ {
		if checksummed(token[:bad] + base58Alphabet[j:j+1] + token[bad+1:]) {
			return true
		}
	}
	return false
}

// travelAddressFault says why the service cannot have made ta, or "" when
// it may have: the rule of ValidateStrict.
func travelAddressFault(ta string) string {
	if form, _, reason := inspectTravelAddress(ta); form == TravelAddressInvalid {
		return reason
	}
	return ""
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
