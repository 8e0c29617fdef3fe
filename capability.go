package travelrule

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Capability callback URLs. The description documents neither a callback
// body with the transfer id nor a signature on callbacks, so the SDK gives
// each transfer its own callback URL: the integrator's URL plus a reference
// of its choosing and an HMAC tag over that reference. The callback handler
// verifies the tag in constant time and hands the reference on, which lets
// callbacks be matched to their transfer even when the service returns no
// transferId, or calls back before InitiateTransfer has returned, and makes
// callbacks to guessed URLs fail.

// The query parameters of a capability callback URL.
const (
	callbackRefParam = "tr_ref"
	callbackTagParam = "tr_tag"
)

const (
	callbackTagLen   = 22 // 128 bits of HMAC-SHA256, base64url without padding
	maxCallbackRef   = 64
	minCallbackKey   = 16
	callbackTagLabel = "travelrule/callback/v1\x00"
)

// Errors of capability callback URLs.
var (
	// ErrCallbackUnsigned means a callback URL carries no reference or no tag.
	ErrCallbackUnsigned = errors.New("travelrule: callback URL carries no capability tag")
	// ErrCallbackTag means a callback URL's tag does not match its reference.
	ErrCallbackTag = errors.New("travelrule: callback URL capability tag does not verify")
)

// NewCallbackRef returns a new random reference (22 URL-safe characters) for
// [NewCallbackURL], for integrators without an identifier of their own.
func NewCallbackRef() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// NewCallbackURL returns base with the reference ref and an HMAC-SHA256 tag
// made with key added to its query (as tr_ref and tr_tag). ref is the
// integrator's own identifier of the transfer, such as a payment id: 1 to 64
// characters from A-Z, a-z, 0-9, '-', '_', '.' and '~'. It is not secret, but
// it is not personal data either: never put names or addresses in it. key
// must have at least 16 bytes and stays with the integrator; the handler
// option callback.WithCapabilityKey verifies the tag with it. The result must
// fit the description's 255-character bound on callback.
func NewCallbackURL(base, ref string, key []byte) (string, error) {
	if len(key) < minCallbackKey {
		return "", errors.New("travelrule: NewCallbackURL: key must have at least 16 bytes")
	}
	if !validRef(ref) {
		return "", errors.New("travelrule: NewCallbackURL: ref must be 1 to 64 characters from A-Z a-z 0-9 - _ . ~")
	}
	if !isAbsoluteHTTPURL(base) {
		return "", errors.New("travelrule: NewCallbackURL: base must be an absolute http or https URL")
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", errors.New("travelrule: NewCallbackURL: base does not parse")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", errors.New("travelrule: NewCallbackURL: base has a query that does not parse")
	}
	if q.Has(callbackRefParam) || q.Has(callbackTagParam) {
		return "", errors.New("travelrule: NewCallbackURL: base already carries a capability")
	}
	if strings.ContainsRune(base, '#') { // even an empty fragment would swallow the capability
		return "", errors.New("travelrule: NewCallbackURL: base must not carry a fragment")
	}
	var sep string
	switch {
	case u.RawQuery == "" && strings.HasSuffix(base, "?"): // "https://x/cb?"
	case u.RawQuery == "":
		sep = "?"
	case strings.HasSuffix(u.RawQuery, "&"):
	default:
		sep = "&"
	}
	out := base + sep + callbackRefParam + "=" + ref + "&" + callbackTagParam + "=" + callbackTag(ref, key)
	if utf8.RuneCountInString(out) > 255 {
		return "", errors.New("travelrule: NewCallbackURL: result is longer than the 255 characters the service accepts")
	}
	return out, nil
}

// CallbackRef returns the reference carried by a capability callback URL,
// without verifying it, or "" if it carries none.
func CallbackRef(callbackURL string) string {
	i := strings.IndexByte(callbackURL, '?')
	if i < 0 {
		return ""
	}
	// Like url.URL.Query, keep the pairs that parse.
	q, _ := url.ParseQuery(callbackURL[i+1:])
	return q.Get(callbackRefParam)
}

// VerifyCallbackURL checks the capability of a request URL in constant time
// and returns its reference. It returns [ErrCallbackUnsigned] if the URL
// carries no capability and [ErrCallbackTag] if the tag does not match.
func VerifyCallbackURL(u *url.URL, key []byte) (string, error) {
	if u == nil || len(key) < minCallbackKey {
		return "", ErrCallbackTag
	}
	q := u.Query()
	ref, tag := q.Get(callbackRefParam), q.Get(callbackTagParam)
	if ref == "" || tag == "" {
		return "", ErrCallbackUnsigned
	}
	if len(q[callbackRefParam]) != 1 || len(q[callbackTagParam]) != 1 || !validRef(ref) {
		return "", ErrCallbackTag
	}
	if !hmac.Equal([]byte(tag), []byte(callbackTag(ref, key))) {
		return "", ErrCallbackTag
	}
	return ref, nil
}

func callbackTag(ref string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(callbackTagLabel))
	m.Write([]byte(ref))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))[:callbackTagLen]
}

func validRef(ref string) bool {
	if ref == "" || len(ref) > maxCallbackRef {
		return false
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~') {
			return false
		}
	}
	return true
}

// appendURLSecrets appends to dst a callback URL and, when it carries
// them, its capability tags: what no error string or redacted form may
// show, whole or echoed alone. It reads the query as url.ParseQuery does,
// without allocating for a tag that needs no unescaping.
func appendURLSecrets(dst []string, u string) []string {
	if u == "" {
		return dst
	}
	dst = append(dst, u)
	_, query, _ := strings.Cut(u, "?")
	query, _, _ = strings.Cut(query, "#")
	for query != "" {
		var pair string
		pair, query, _ = strings.Cut(query, "&")
		key, value, _ := strings.Cut(pair, "=")
		if key != callbackTagParam {
			if k, err := url.QueryUnescape(key); err != nil || k != callbackTagParam {
				continue
			}
		}
		dst = append(dst, value)
		if v, err := url.QueryUnescape(value); err == nil && v != value {
			dst = append(dst, v)
		}
	}
	return dst
}
