package callback

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// HeaderDataIntegrity is the header in which the live service (KYCAID's TRP
// API) signs a callback: the lower-case hex of an HMAC-SHA512 over the
// base64 text of the body. See [DataIntegrityVerifier].
const HeaderDataIntegrity = "x-data-integrity"

// dataIntegrityHexLen is the length of the header's value: the hex of a
// SHA-512 sum.
const dataIntegrityHexLen = 2 * sha512.Size

// DataIntegrityVerifier is a [Verifier] of the live service's callback
// signature: the [HeaderDataIntegrity] header must hold the hex (128
// characters, either case; the service sends lower case) of the
// HMAC-SHA512, keyed with one of the signing secrets, of the standard
// base64 encoding (with padding) of the raw body. Make it with
// [NewDataIntegrityVerifier].
//
// The header is compared in constant time against the signature under
// every secret, so that during a rotation the old and the new secret both
// verify and the time taken does not tell which, if any, matched. A
// request without the header, with more than one, or with one that is not
// 128 hex digits is refused; so is every request when the verifier has no
// usable secret (a zero DataIntegrityVerifier, say): it never fails open.
//
// What it proves: the body was made by a holder of a signing secret, and
// not altered since. What it does not: the header covers no time and no
// delivery id, so a callback captured on the way (a proxy's log, say)
// verifies again when it is sent again unchanged, at any later time. The
// [Handler]'s de-duplication is the guard against that replay: a request
// without a webhook-id is keyed by the digest of its body (and of the
// capability reference of its URL, if any), so a replayed body is
// acknowledged without calling the function again for as long as the
// store remembers the first delivery. The shared stores (callback/redisstore
// and callback/pgstore) remember it for [DefaultRetention], 7 days: longer
// than the service's redelivery schedule (retries after 1 m, 5 m, 15 m,
// 30 m, 1 h, 3 h, 6 h, 12 h and 24 h, about 47 hours in all), so every
// redelivery of the service's own, and a replay within a week, is
// recognised. The default [MemoryStore] remembers the last 100,000
// deliveries of this process only: it forgets on a restart and is not
// shared between replicas, so give a fleet, or any deployment that
// restarts within two days of a callback, a shared store. A replay after
// the retention calls the function again: act on callbacks idempotently
// (a transfer already approved stays approved).
//
// Its fmt and log/slog forms show how many secrets it has, never their
// bytes. Do not change a verifier once it is in use.
type DataIntegrityVerifier struct {
	secrets [][]byte
}

// NewDataIntegrityVerifier returns a [DataIntegrityVerifier] of the given
// signing secrets, each used as the bytes of the string exactly as the
// service's dashboard shows it (no prefix is stripped or decoded). During a
// rotation, pass the new secret and the old one. It fails, without quoting
// any secret, when there is none or when one is shorter than 16 bytes.
func NewDataIntegrityVerifier(secrets ...string) (*DataIntegrityVerifier, error) {
	if len(secrets) == 0 {
		return nil, errors.New("callback: NewDataIntegrityVerifier: no secret")
	}
	v := &DataIntegrityVerifier{secrets: make([][]byte, len(secrets))}
	for i, s := range secrets {
		if len(s) < minSecretLen {
			return nil, fmt.Errorf("callback: NewDataIntegrityVerifier: secret %d: %w", i+1, errSecretShort)
		}
		v.secrets[i] = []byte(s)
	}
	return v, nil
}

// check says why the verifier cannot verify anything, or returns nil.
func (v *DataIntegrityVerifier) check() error {
	if v == nil || len(v.secrets) == 0 {
		return errors.New("DataIntegrityVerifier has no secret (make it with NewDataIntegrityVerifier)")
	}
	for _, s := range v.secrets {
		if len(s) < minSecretLen {
			return errors.New("DataIntegrityVerifier has a secret shorter than 16 bytes")
		}
	}
	return nil
}

// errDataIntegrityMalformed is why a header that is not one 128-digit hex
// value is refused.
var errDataIntegrityMalformed = fmt.Errorf("%w: the %s header is not one HMAC-SHA512 in hex", ErrSignature, HeaderDataIntegrity)

// Verify implements [Verifier]. It returns an error matching
// [ErrNoSignature] when the request has no [HeaderDataIntegrity] header,
// [ErrSignature] when the header is malformed or matches no secret, or an
// error saying the verifier itself is unusable.
func (v *DataIntegrityVerifier) Verify(r *http.Request, body []byte) error {
	if err := v.check(); err != nil {
		return errors.New("callback: " + err.Error())
	}
	values := r.Header.Values(HeaderDataIntegrity)
	switch {
	case len(values) == 0 || len(values) == 1 && values[0] == "":
		return fmt.Errorf("%w: no %s header", ErrNoSignature, HeaderDataIntegrity)
	case len(values) > 1 || len(values[0]) != dataIntegrityHexLen:
		return errDataIntegrityMalformed
	}
	var got [sha512.Size]byte
	if _, err := hex.Decode(got[:], []byte(values[0])); err != nil {
		return errDataIntegrityMalformed
	}
	b64 := make([]byte, base64.StdEncoding.EncodedLen(len(body)))
	base64.StdEncoding.Encode(b64, body)
	ok := false
	for _, s := range v.secrets {
		if hmac.Equal(got[:], dataIntegrityMAC(s, b64)) {
			ok = true // no early return: every secret costs the same
		}
	}
	if !ok {
		return fmt.Errorf("%w (%s)", ErrSignature, HeaderDataIntegrity)
	}
	return nil
}

// SignDataIntegrity returns the value of the [HeaderDataIntegrity] header
// the live service sends with body: the lower-case hex of the HMAC-SHA512,
// keyed with secret, of the standard base64 encoding of body. A test (or a
// sender) sets it on a request to sign it as the service does.
func SignDataIntegrity(secret, body []byte) string {
	b64 := make([]byte, base64.StdEncoding.EncodedLen(len(body)))
	base64.StdEncoding.Encode(b64, body)
	return hex.EncodeToString(dataIntegrityMAC(secret, b64))
}

// dataIntegrityMAC is the HMAC-SHA512 of b64 keyed with secret.
func dataIntegrityMAC(secret, b64 []byte) []byte {
	m := hmac.New(sha512.New, secret)
	m.Write(b64)
	return m.Sum(nil)
}

// Format implements fmt.Formatter so that every verb prints the number of
// secrets, never their bytes.
func (v DataIntegrityVerifier) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "callback.DataIntegrityVerifier")
	}
	fmt.Fprintf(f, "{Secrets:%d Header:%s}", len(v.secrets), HeaderDataIntegrity)
}

// LogValue implements slog.LogValuer: the number of secrets only.
func (v DataIntegrityVerifier) LogValue() slog.Value {
	return slog.GroupValue(slog.String("header", HeaderDataIntegrity), slog.Int("secrets", len(v.secrets)))
}
