package callback_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

func TestCallbackWebhookVerifier(t *testing.T) {
	oldSecret, newSecret := []byte("old-secret-0123456789"), []byte("new-secret-0123456789")
	body := []byte(statusBody)
	signed := func(secret []byte, id string, ts time.Time, body []byte) http.Header {
		h := http.Header{}
		setSignatureHeaders(h, secret, id, ts, body)
		return h
	}
	with := func(h http.Header, key, value string) http.Header {
		h = h.Clone()
		if value == "" {
			h.Del(key)
		} else {
			h.Set(key, value)
		}
		return h
	}
	good := signed(newSecret, "msg_1", fixedNow, body)
	tests := []struct {
		name    string
		secrets [][]byte
		tol     time.Duration
		header  http.Header
		body    []byte
		want    error
	}{
		{"valid", [][]byte{newSecret}, 0, good, body, nil},
		{"valid at the edge of the tolerance", [][]byte{newSecret}, 0, signed(newSecret, "m", fixedNow.Add(-5*time.Minute), body), body, nil},
		{"expired", [][]byte{newSecret}, 0, signed(newSecret, "m", fixedNow.Add(-5*time.Minute-time.Second), body), body, callback.ErrTimestamp},
		{"from the future", [][]byte{newSecret}, 0, signed(newSecret, "m", fixedNow.Add(6*time.Minute), body), body, callback.ErrTimestamp},
		{"custom tolerance", [][]byte{newSecret}, time.Hour, signed(newSecret, "m", fixedNow.Add(-59*time.Minute), body), body, nil},
		{"body changed", [][]byte{newSecret}, 0, good, []byte(strings.Replace(statusBody, "approved", "rejected", 1)), callback.ErrSignature},
		{"id changed", [][]byte{newSecret}, 0, with(good, callback.HeaderID, "msg_2"), body, callback.ErrSignature},
		{"timestamp changed", [][]byte{newSecret}, 0, with(good, callback.HeaderTimestamp, strconv.FormatInt(fixedNow.Unix()+1, 10)), body, callback.ErrSignature},
		{"wrong secret", [][]byte{oldSecret}, 0, good, body, callback.ErrSignature},
		{"rotation: old and new secrets accepted", [][]byte{newSecret, oldSecret}, 0, signed(oldSecret, "m", fixedNow, body), body, nil},
		{"rotation: several signatures in the header", [][]byte{newSecret}, 0,
			with(good, callback.HeaderSignature, callback.Sign(oldSecret, "msg_1", fixedNow, body)+" "+good.Get(callback.HeaderSignature)), body, nil},
		{"rotation: signature of a retired secret only", [][]byte{newSecret}, 0, signed(oldSecret, "m", fixedNow, body), body, callback.ErrSignature},
		{"other version", [][]byte{newSecret}, 0, with(good, callback.HeaderSignature, "v1a,"+strings.TrimPrefix(good.Get(callback.HeaderSignature), "v1,")), body, callback.ErrSignature},
		{"not base64", [][]byte{newSecret}, 0, with(good, callback.HeaderSignature, "v1,***"), body, callback.ErrSignature},
		{"truncated signature", [][]byte{newSecret}, 0, with(good, callback.HeaderSignature, good.Get(callback.HeaderSignature)[:20]), body, callback.ErrSignature},
		{"no signature", [][]byte{newSecret}, 0, with(good, callback.HeaderSignature, ""), body, callback.ErrNoSignature},
		{"no id", [][]byte{newSecret}, 0, with(good, callback.HeaderID, ""), body, callback.ErrNoSignature},
		{"no timestamp", [][]byte{newSecret}, 0, with(good, callback.HeaderTimestamp, ""), body, callback.ErrNoSignature},
		{"timestamp not a number", [][]byte{newSecret}, 0, with(good, callback.HeaderTimestamp, "2025-01-01T00:00:00Z"), body, callback.ErrTimestamp},
		{"timestamp with sign", [][]byte{newSecret}, 0, with(good, callback.HeaderTimestamp, "+"+good.Get(callback.HeaderTimestamp)), body, callback.ErrTimestamp},
		{"timestamp huge", [][]byte{newSecret}, 0, with(good, callback.HeaderTimestamp, "99999999999999999999"), body, callback.ErrTimestamp},
		{"no secrets refuses everything", nil, 0, good, body, errors.New("any")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &callback.WebhookVerifier{Secrets: tt.secrets, Tolerance: tt.tol, Now: fixedClock}
			r := httptest.NewRequest(http.MethodPost, "/cb", nil)
			r.Header = tt.header
			err := v.Verify(r, tt.body)
			switch {
			case tt.want == nil:
				assert.NoError(t, err)
			case tt.secrets == nil:
				assert.Error(t, err)
			default:
				assert.ErrorIs(t, err, tt.want)
			}
		})
	}
}

// TestCallbackHandlerWebhookSignature goes through HTTP: a refused
// signature answers 401 and never reaches the function.
func TestCallbackHandlerWebhookSignature(t *testing.T) {
	secret, retired := []byte("whsec-test-secret-1"), []byte("whsec-test-secret-0")
	rc := &recorder{}
	srv, h := serve(t, rc.fn, callback.WithVerifier(&callback.WebhookVerifier{
		Secrets: [][]byte{secret, retired},
		Now:     fixedClock,
	}))
	require.NoError(t, h.Err())
	sign := func(secret []byte, id string, ts time.Time, body string) http.Header {
		hd := http.Header{}
		setSignatureHeaders(hd, secret, id, ts, []byte(body))
		return hd
	}
	tests := []struct {
		name   string
		header http.Header
		body   string
		want   int
	}{
		{"valid", sign(secret, "msg_1", fixedNow, statusBody), statusBody, http.StatusNoContent},
		{"valid with the retired secret", sign(retired, "msg_2", fixedNow, statusBody), statusBody, http.StatusNoContent},
		{"expired", sign(secret, "msg_3", fixedNow.Add(-time.Hour), statusBody), statusBody, http.StatusUnauthorized},
		{"bad signature", sign([]byte("guessed-secret"), "msg_4", fixedNow, statusBody), statusBody, http.StatusUnauthorized},
		{"body swapped", sign(secret, "msg_5", fixedNow, statusBody), `{"transferId":"tr-1","status":"rejected"}`, http.StatusUnauthorized},
		{"unsigned", nil, statusBody, http.StatusUnauthorized},
		{"signed but malformed", sign(secret, "msg_6", fixedNow, "[]"), "[]", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rc.count()
			a := send(t, http.MethodPost, srv.URL+"/cb", tt.body, tt.header)
			assert.Equal(t, tt.want, a.code)
			if tt.want == http.StatusNoContent {
				assert.Equal(t, before+1, rc.count())
			} else {
				assert.Equal(t, before, rc.count())
				assert.NotContains(t, a.body, "transferId")
			}
		})
	}
}

// TestCallbackHandlerCustomVerifier checks that any Verifier gates the
// function and sees the body.
func TestCallbackHandlerCustomVerifier(t *testing.T) {
	rc := &recorder{}
	var seen []byte
	srv, _ := serve(t, rc.fn, callback.WithVerifier(verifierFunc(func(r *http.Request, body []byte) error {
		seen = append([]byte(nil), body...)
		if r.Header.Get("X-Token") != "let-me-in" {
			return errors.New("bad token")
		}
		return nil
	})))
	assert.Equal(t, http.StatusUnauthorized, post(t, srv.URL+"/cb", statusBody).code)
	assert.Equal(t, statusBody, string(seen))
	assert.Zero(t, rc.count())
	a := send(t, http.MethodPost, srv.URL+"/cb", statusBody, http.Header{"X-Token": {"let-me-in"}})
	assert.Equal(t, http.StatusNoContent, a.code)
	assert.Equal(t, 1, rc.count())
}

func TestCallbackHandlerCapabilityAndSignature(t *testing.T) {
	secret := []byte("whsec-test-secret-1")
	rc := &recorder{}
	srv, _ := serve(t, rc.fn, callback.WithCapabilityKey(capKey),
		callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{secret}, Now: fixedClock}))
	u, err := travelrule.NewCallbackURL(srv.URL+"/cb", "pay-1", capKey)
	require.NoError(t, err)
	hd := http.Header{}
	setSignatureHeaders(hd, secret, "msg_1", fixedNow, []byte(statusBody))
	assert.Equal(t, http.StatusUnauthorized, send(t, http.MethodPost, srv.URL+"/cb", statusBody, hd).code, "signature without capability")
	assert.Equal(t, http.StatusUnauthorized, post(t, u, statusBody).code, "capability without signature")
	assert.Equal(t, http.StatusNoContent, send(t, http.MethodPost, u, statusBody, hd).code)
	require.Equal(t, 1, rc.count())
	assert.Equal(t, "pay-1", rc.last(t).Ref)
}

func TestTypedNilVerifiersAreReported(t *testing.T) {
	for _, v := range []callback.Verifier{nil, (*callback.WebhookVerifier)(nil)} {
		h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil }, callback.WithVerifier(v))
		assert.Error(t, h.Err())
	}
}

func TestNewWebhookVerifierSecrets(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		want    [][]byte // nil means an error
	}{
		{"whsec_", []string{"whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))}, [][]byte{[]byte("0123456789abcdef")}},
		{"raw", []string{"plain-secret-0123"}, [][]byte{[]byte("plain-secret-0123")}},
		{"rotation", []string{"plain-secret-0123", "plain-secret-4567"}, [][]byte{[]byte("plain-secret-0123"), []byte("plain-secret-4567")}},
		{"none", nil, nil},
		{"empty", []string{""}, nil},
		{"empty whsec_", []string{"whsec_"}, nil},
		{"whsec_ not base64", []string{"whsec_!!not base64!!"}, nil},
		{"one short", []string{"plain-secret-0123", "short"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := callback.NewWebhookVerifier(tt.secrets...)
			if tt.want == nil {
				assert.Error(t, err)
				assert.Nil(t, v)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, v.Secrets)
		})
	}
}

// verifierFunc adapts a function to callback.Verifier.
type verifierFunc func(r *http.Request, body []byte) error

func (f verifierFunc) Verify(r *http.Request, body []byte) error { return f(r, body) }

// asSvix moves the webhook-* headers of h to the names the svix library
// sends them under.
func asSvix(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		out[http.CanonicalHeaderKey(strings.Replace(strings.ToLower(k), "webhook-", "svix-", 1))] = v
	}
	return out
}

// interopVectors are deliveries signed by the reference webhook libraries
// on npm (testdata/interop/gen.js made them; see its comment to remake
// them).
type interopVectors struct {
	Generator  string
	Secret     string
	Body       string
	Deliveries map[string]map[string]string
}

// TestCallbackHandlerInteropVectors sends the deliveries that svix and
// standardwebhooks signed through the handler: each header set verifies
// under the right secret and is refused under another, and the two
// deliveries of one message id reach the function once.
func TestCallbackHandlerInteropVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "interop", "webhooks.json"))
	require.NoError(t, err)
	var v interopVectors
	require.NoError(t, json.Unmarshal(raw, &v))
	require.Contains(t, v.Deliveries, "svix")
	require.Contains(t, v.Deliveries, "standardwebhooks")
	secret, err := parseSecret(v.Secret)
	require.NoError(t, err)
	ts, err := strconv.ParseInt(v.Deliveries["svix"]["svix-timestamp"], 10, 64)
	require.NoError(t, err)
	now := func() time.Time { return time.Unix(ts, 0) }
	header := func(m map[string]string) http.Header {
		h := http.Header{}
		for k, val := range m {
			h.Set(k, val)
		}
		return h
	}

	for _, lib := range []string{"svix", "standardwebhooks"} {
		t.Run(lib, func(t *testing.T) {
			h := header(v.Deliveries[lib])
			good := &callback.WebhookVerifier{Secrets: [][]byte{secret}, Now: now}
			wrong := &callback.WebhookVerifier{Secrets: [][]byte{[]byte("another-secret-0123456789")}, Now: now}
			r := httptest.NewRequest(http.MethodPost, "/cb", nil)
			r.Header = h
			assert.NoError(t, good.Verify(r, []byte(v.Body)))
			assert.ErrorIs(t, wrong.Verify(r, []byte(v.Body)), callback.ErrSignature)

			for _, tt := range []struct {
				name     string
				verifier *callback.WebhookVerifier
				want     int
			}{
				{"right secret", good, http.StatusNoContent},
				{"wrong secret", wrong, http.StatusUnauthorized},
			} {
				t.Run(tt.name, func(t *testing.T) {
					rc := &recorder{}
					srv, _ := serve(t, rc.fn, callback.WithVerifier(tt.verifier))
					assert.Equal(t, tt.want, send(t, http.MethodPost, srv.URL+"/cb", v.Body, h).code)
					if tt.want == http.StatusNoContent {
						assert.Equal(t, 1, rc.count())
					} else {
						assert.Zero(t, rc.count())
					}
				})
			}
		})
	}

	t.Run("one message id under both header sets", func(t *testing.T) {
		rc := &recorder{}
		srv, _ := serve(t, rc.fn, callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{secret}, Now: now}))
		for _, lib := range []string{"svix", "standardwebhooks"} {
			assert.Equal(t, http.StatusNoContent, send(t, http.MethodPost, srv.URL+"/cb", v.Body, header(v.Deliveries[lib])).code, lib)
		}
		assert.Equal(t, 1, rc.count(), "the redelivery under the other header names is a duplicate")
	})
}

// TestCallbackWebhookSecretLength is the table of secret lengths: a secret
// shorter than 16 bytes, given raw or as "whsec_<base64>" (and then counted
// after decoding), is refused when it is read, when the verifier is made
// and when a handler is configured with it; such a verifier refuses a
// delivery signed with that very secret, and such a handler answers it 500
// without calling the function.
func TestCallbackWebhookSecretLength(t *testing.T) {
	secretOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('A' + (i*7+n)%26)
		}
		return b
	}
	tests := []struct {
		name    string
		lens    []int // the secrets' lengths in bytes; the delivery is signed with the last
		encoded bool  // handed out as "whsec_<base64>" rather than raw
		ok      bool
	}{
		{"0 bytes", []int{0}, false, false},
		{"1 byte", []int{1}, false, false},
		{"15 bytes", []int{15}, false, false},
		{"16 bytes", []int{16}, false, true},
		{"32 bytes", []int{32}, false, true},
		{"whsec_, 0 bytes", []int{0}, true, false},
		{"whsec_, 1 byte", []int{1}, true, false},
		{"whsec_, 15 bytes (20 characters encoded)", []int{15}, true, false},
		{"whsec_, 16 bytes", []int{16}, true, true},
		{"whsec_, 32 bytes", []int{32}, true, true},
		{"rotation: a 32-byte and a 15-byte secret", []int{32, 15}, false, false},
		{"rotation: a 15-byte and a 32-byte secret", []int{15, 32}, true, false},
		{"rotation: a 16-byte and a 32-byte secret", []int{16, 32}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets := make([][]byte, len(tt.lens))
			given := make([]string, len(tt.lens))
			for i, n := range tt.lens {
				secrets[i] = secretOf(n)
				given[i] = string(secrets[i])
				if tt.encoded {
					given[i] = "whsec_" + base64.StdEncoding.EncodeToString(secrets[i])
				}
				b, err := parseSecret(given[i])
				if n >= 16 {
					require.NoError(t, err)
					assert.Equal(t, secrets[i], b)
				} else {
					assert.ErrorContains(t, err, "at least 16 bytes")
					assert.Nil(t, b)
				}
			}

			v, err := callback.NewWebhookVerifier(given...)
			if tt.ok {
				require.NoError(t, err)
				assert.Equal(t, secrets, v.Secrets)
			} else {
				assert.ErrorContains(t, err, "at least 16 bytes")
				assert.Nil(t, v)
			}

			body := []byte(statusBody)
			signed := func() *http.Request {
				r := httptest.NewRequest(http.MethodPost, "/cb", strings.NewReader(statusBody))
				setSignatureHeaders(r.Header, secrets[len(secrets)-1], "msg_1", fixedNow, body)
				return r
			}
			literal := &callback.WebhookVerifier{Secrets: secrets, Now: fixedClock}
			if err := literal.Verify(signed(), body); tt.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
				assert.NotErrorIs(t, err, callback.ErrSignature, "refused for the secret, not the signature")
			}

			var calls int
			h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { calls++; return nil }, callback.WithVerifier(literal))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, signed())
			if tt.ok {
				assert.NoError(t, h.Err())
				assert.Equal(t, http.StatusNoContent, w.Code)
				assert.Equal(t, 1, calls)
			} else {
				assert.ErrorContains(t, h.Err(), "16 bytes")
				assert.Equal(t, http.StatusInternalServerError, w.Code, "a misconfigured handler asks for redelivery")
				assert.Zero(t, calls, "a misconfigured handler never calls the function")
			}
		})
	}
	_, err := callback.NewWebhookVerifier()
	assert.Error(t, err, "no secret")
}

// TestCallbackWebhookOneByteSecretForgery is the attack a short secret
// allows: with a 1-byte secret, one of the 256 possible secrets signs a
// forged delivery that the verifier would accept. The verifier refuses all
// 256, and the handler answers each 500 without calling the function.
func TestCallbackWebhookOneByteSecretForgery(t *testing.T) {
	v := &callback.WebhookVerifier{Secrets: [][]byte{{0xa7}}, Now: fixedClock}
	var calls int
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { calls++; return nil }, callback.WithVerifier(v))
	assert.Error(t, h.Err())

	forged := []byte(`{"transferId":"tr-1","status":"completed"}`)
	verified, codes := 0, map[int]int{}
	for guess := range 256 {
		r := httptest.NewRequest(http.MethodPost, "/cb", bytes.NewReader(forged))
		setSignatureHeaders(r.Header, []byte{byte(guess)}, "msg_"+strconv.Itoa(guess), fixedNow, forged)
		if v.Verify(r, forged) == nil {
			verified++
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		codes[w.Code]++
	}
	assert.Zero(t, verified, "no guess verifies")
	assert.Equal(t, map[int]int{http.StatusInternalServerError: 256}, codes)
	assert.Zero(t, calls)
}
