package callback

import (
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Verifier checks the authenticity of a callback request. Verify gets the
// request and its whole body (already read; r.Body must not be read again)
// and returns nil to accept it. Any error makes the handler answer 401; the
// error text is logged, so it must not carry secrets or the body.
type Verifier interface {
	Verify(r *http.Request, body []byte) error
}

// defaultTolerance is how far a webhook-timestamp may be from the
// verifier's clock, either way, when WebhookVerifier.Tolerance is zero.
const defaultTolerance = 5 * time.Minute

// Errors of [WebhookVerifier].
var (
	// ErrNoSignature means a request lacks the headers of its verifier's
	// signature: for [WebhookVerifier] the webhook-id, webhook-timestamp
	// or webhook-signature header (under either its Standard Webhooks name
	// or its svix- alias), for [DataIntegrityVerifier] the
	// x-data-integrity header.
	ErrNoSignature = errors.New("callback: request carries no signature")
	// ErrTimestamp means the webhook-timestamp is not Unix seconds or is
	// farther from the verifier's clock than the tolerance.
	ErrTimestamp = errors.New("callback: webhook timestamp is invalid or outside the tolerance")
	// ErrSignature means no signature of the request verifies with any of
	// the secrets, or the signature header is malformed.
	ErrSignature = errors.New("callback: signature does not verify")
)

const maxTimestamp = 1 << 40 // far beyond any real clock; keeps arithmetic in range

// minSecretLen is the fewest bytes a webhook secret may have, as for a
// capability key (see [travelrule.NewCallbackURL]): a forger who can send
// deliveries finds a secret of n bytes in at most 256^n tries.
const minSecretLen = 16

// The reasons a secret is refused by [NewWebhookVerifier]. They never quote
// the secret.
var (
	errSecretBase64 = errors.New("a whsec_ secret must be base64 after the prefix")
	errSecretShort  = errors.New("secret must have at least 16 bytes (after decoding a whsec_ secret)")
)

// WebhookVerifier is a [Verifier] of Standard Webhooks signatures: the
// webhook-signature header must hold, among its space-separated entries, a
// "v1,<base64>" entry whose value is the HMAC-SHA256, under one of Secrets,
// of webhook-id + "." + webhook-timestamp + "." + body, and the
// webhook-timestamp (Unix seconds) must be within Tolerance of Now.
// Signatures are compared in constant time. Several secrets verify during a
// key rotation, as do several signatures in one header.
//
// The svix library sends the same scheme under the names svix-id,
// svix-timestamp and svix-signature; each header is read under its
// Standard Webhooks name or, when that is absent, under its svix name, so
// deliveries from either library verify.
//
// Secrets are the raw key bytes, at least 16 of them each: a Standard
// Webhooks secret written "whsec_<base64>" must be base64-decoded first
// ([NewWebhookVerifier] does it, and refuses a short secret). A
// WebhookVerifier with no secret, or with one shorter than 16 bytes,
// refuses every request, and [WithVerifier] reports it. Do not change its
// fields once it is in use.
//
// Its fmt and log/slog forms show how many secrets it has, never their
// bytes.
type WebhookVerifier struct {
	// Secrets are the accepted signing secrets.
	Secrets [][]byte
	// Tolerance is the largest accepted distance between the timestamp and
	// Now, either way; zero means 5 minutes.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (v *WebhookVerifier) check() error {
	if len(v.Secrets) == 0 {
		return errors.New("WebhookVerifier has no secret")
	}
	for _, s := range v.Secrets {
		if len(s) < minSecretLen {
			return errors.New("WebhookVerifier has a secret shorter than 16 bytes")
		}
	}
	if v.Tolerance < 0 {
		return errors.New("WebhookVerifier has a negative tolerance")
	}
	return nil
}

// Verify implements [Verifier]. It returns [ErrNoSignature],
// [ErrTimestamp] or [ErrSignature], or an error saying the verifier itself
// is unusable (no secret, or one shorter than 16 bytes).
func (v *WebhookVerifier) Verify(r *http.Request, body []byte) error {
	if err := v.check(); err != nil {
		return errors.New("callback: " + err.Error())
	}
	id, ts, sigs := webhookHeaders(r.Header)
	if id == "" || ts == "" || len(sigs) == 0 {
		return ErrNoSignature
	}
	if !v.inTolerance(ts) {
		return ErrTimestamp
	}
	macs := make([][]byte, len(v.Secrets))
	for i, s := range v.Secrets {
		macs[i] = signature(s, id, ts, body)
	}
	if !anySignatureMatches(sigs, macs) {
		return ErrSignature
	}
	return nil
}

// inTolerance reports whether ts is Unix seconds within the tolerance of
// the verifier's clock.
func (v *WebhookVerifier) inTolerance(ts string) bool {
	sec, ok := unixSeconds(ts)
	if !ok {
		return false
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	tol := v.Tolerance
	if tol == 0 {
		tol = defaultTolerance
	}
	diff := now().Unix() - sec
	if diff < 0 {
		diff = -diff
	}
	return diff <= int64(tol/time.Second)
}

// anySignatureMatches reports whether a "v1,<base64>" entry of the
// signature headers equals one of macs. It compares every entry with every
// mac in constant time, so that the time taken depends only on the
// headers' length.
func anySignatureMatches(sigs []string, macs [][]byte) bool {
	ok := false
	for _, line := range sigs {
		for _, entry := range strings.Fields(line) {
			version, b64, found := strings.Cut(entry, ",")
			if !found || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				continue
			}
			for _, m := range macs {
				if hmac.Equal(got, m) {
					ok = true
				}
			}
		}
	}
	return ok
}

// NewWebhookVerifier returns a [WebhookVerifier] of secrets written as
// services hand them out: a Standard Webhooks secret "whsec_<base64>" is
// decoded; any other string is used as it is. During a rotation, pass the
// new secret and the old one. It fails, without quoting any secret, when
// there is no secret or when one is shorter than 16 bytes (after decoding).
// Set Tolerance and Now on the result before use if the defaults do not
// suit; a sender finds the decoded secrets in Secrets.
func NewWebhookVerifier(secrets ...string) (*WebhookVerifier, error) {
	if len(secrets) == 0 {
		return nil, errors.New("callback: NewWebhookVerifier: no secret")
	}
	v := &WebhookVerifier{Secrets: make([][]byte, len(secrets))}
	for i, s := range secrets {
		b, err := parseSecret(s)
		if err != nil {
			return nil, fmt.Errorf("callback: NewWebhookVerifier: secret %d: %w", i+1, err)
		}
		v.Secrets[i] = b
	}
	return v, nil
}

// parseSecret reads a secret as services hand it out.
func parseSecret(s string) ([]byte, error) {
	b := []byte(s)
	if rest, ok := strings.CutPrefix(s, "whsec_"); ok {
		var err error
		if b, err = base64.StdEncoding.DecodeString(rest); err != nil {
			return nil, errSecretBase64
		}
	}
	if len(b) < minSecretLen {
		return nil, errSecretShort
	}
	return b, nil
}

// unixSeconds reads a webhook-timestamp: decimal digits only.
func unixSeconds(ts string) (int64, bool) {
	if ts == "" || len(ts) > 13 {
		return 0, false
	}
	for i := 0; i < len(ts); i++ {
		if ts[i] < '0' || ts[i] > '9' {
			return 0, false
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec > maxTimestamp {
		return 0, false
	}
	return sec, true
}

// Format implements fmt.Formatter so that every verb prints the verifier's
// shape, never its secrets: each is shown as "[redacted]", or as nothing if
// it is empty. Format and LogValue have value receivers so that a copy of a
// verifier is redacted too.
func (v WebhookVerifier) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, "callback.WebhookVerifier")
	}
	fmt.Fprint(f, "{Secrets:[")
	for i, s := range v.Secrets {
		if i > 0 {
			fmt.Fprint(f, " ")
		}
		fmt.Fprint(f, mask(s))
	}
	now := "<nil>"
	if v.Now != nil {
		now = "func()"
	}
	fmt.Fprintf(f, "] Tolerance:%s Now:%s}", v.Tolerance, now)
}

// LogValue implements slog.LogValuer: the number of secrets and the
// tolerance, never the secrets.
func (v WebhookVerifier) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int("secrets", len(v.Secrets)),
		slog.Duration("tolerance", v.Tolerance),
	)
}
