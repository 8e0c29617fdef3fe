package callback_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
)

// The vector of live-service.md, made by running the service's published
// Node.js verifier code.
const (
	liveSecret = "whsec-live-signing-secret-0123456789abcdef"
	liveBody   = `{"transferId":"abc","status":"APPROVED","statusComment":"ok","callback":"https://x"}`
	liveHeader = "77bfd3f7096582866b4468ddaea1abd8c28efc3eff10c1ce1634aec29543e68b830357121538d34dbeb7d04d3f5475f9b98a5b573d6a54cbaf50fc9215b90226"
)

// flipByte returns s with the byte at i changed to another printable one.
func flipByte(s string, i int) string {
	b := []byte(s)
	if b[i] == 'a' {
		b[i] = 'b'
	} else {
		b[i] = 'a'
	}
	return string(b)
}

// signedRequest is a callback request with the given x-data-integrity
// values (none when nil).
func signedRequest(body string, header ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/transfers/inquiry/b-1", strings.NewReader(body))
	for _, h := range header {
		r.Header.Add(callback.HeaderDataIntegrity, h)
	}
	return r
}

func TestSignDataIntegrityMatchesTheLiveVector(t *testing.T) {
	assert.Equal(t, liveHeader, callback.SignDataIntegrity([]byte(liveSecret), []byte(liveBody)))
}

// TestDataIntegrityVerifier: the vector verifies; one byte changed in the
// body, the header or the secret does not, nor does a missing, repeated or
// malformed header.
func TestDataIntegrityVerifier(t *testing.T) {
	good, err := callback.NewDataIntegrityVerifier(liveSecret)
	require.NoError(t, err)
	rotated, err := callback.NewDataIntegrityVerifier("whsec-the-new-secret-after-rotation", liveSecret)
	require.NoError(t, err)
	wrongKey, err := callback.NewDataIntegrityVerifier(flipByte(liveSecret, len(liveSecret)-1))
	require.NoError(t, err)

	tests := []struct {
		name    string
		v       *callback.DataIntegrityVerifier
		body    string
		headers []string
		want    error // nil: accepted
	}{
		{"the live vector", good, liveBody, []string{liveHeader}, nil},
		{"upper-case hex", good, liveBody, []string{strings.ToUpper(liveHeader)}, nil},
		{"rotation: the old secret still verifies", rotated, liveBody, []string{liveHeader}, nil},
		{"one byte of the body changed", good, flipByte(liveBody, 16), []string{liveHeader}, callback.ErrSignature},
		{"a byte added to the body", good, liveBody + " ", []string{liveHeader}, callback.ErrSignature},
		{"one digit of the header changed", good, liveBody, []string{flipByte(liveHeader, 40)}, callback.ErrSignature},
		{"one byte of the secret changed", wrongKey, liveBody, []string{liveHeader}, callback.ErrSignature},
		{"the HMAC of the body itself, not of its base64", good, liveBody, []string{rawBodyMAC(liveSecret, liveBody)}, callback.ErrSignature},
		{"no header", good, liveBody, nil, callback.ErrNoSignature},
		{"an empty header", good, liveBody, []string{""}, callback.ErrNoSignature},
		{"the header twice", good, liveBody, []string{liveHeader, liveHeader}, callback.ErrSignature},
		{"not hex", good, liveBody, []string{strings.Repeat("z", 128)}, callback.ErrSignature},
		{"truncated", good, liveBody, []string{liveHeader[:127]}, callback.ErrSignature},
		{"with a scheme prefix", good, liveBody, []string{"sha512=" + liveHeader}, callback.ErrSignature},
		{"base64 instead of hex", good, liveBody, []string{"d7/T9wlluChmtEaN3aoavYwo7D7/EMHOFjSuwpVD5ouDA1cSFTjTTb630E0/VHX5uYpbVz1qVMuvUPySFbkCJg=="}, callback.ErrSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Verify(signedRequest(tt.body, tt.headers...), []byte(tt.body))
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
			assert.NotContains(t, err.Error(), liveSecret)
			assert.NotContains(t, err.Error(), liveHeader[:16])
		})
	}
}

// rawBodyMAC is the signature a verifier that forgot the base64 step
// would expect.
func rawBodyMAC(secret, body string) string {
	m := hmac.New(sha512.New, []byte(secret))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

func TestNewDataIntegrityVerifierRefusesWeakSecrets(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
	}{
		{"none", nil},
		{"15 bytes", []string{"0123456789abcde"}},
		{"empty", []string{""}},
		{"a good one and a short one", []string{liveSecret, "short"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := callback.NewDataIntegrityVerifier(tt.secrets...)
			require.Error(t, err)
			assert.Nil(t, v)
			for _, s := range tt.secrets {
				if s != "" {
					assert.NotContains(t, err.Error(), s)
				}
			}
		})
	}
	v, err := callback.NewDataIntegrityVerifier(strings.Repeat("k", 16))
	require.NoError(t, err, "16 bytes are enough")
	require.NotNil(t, v)
}

// TestDataIntegrityVerifierNeverFailsOpen: a verifier made without its
// constructor refuses everything, and a handler given one refuses every
// request without calling its function.
func TestDataIntegrityVerifierNeverFailsOpen(t *testing.T) {
	var zero callback.DataIntegrityVerifier
	err := zero.Verify(signedRequest(liveBody, liveHeader), []byte(liveBody))
	require.Error(t, err)

	for _, v := range []*callback.DataIntegrityVerifier{nil, &zero} {
		var rc recorder
		h := callback.NewHandler(rc.fn, callback.WithVerifier(v))
		require.Error(t, h.Err())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, signedRequest(liveBody, liveHeader))
		assert.Equal(t, http.StatusInternalServerError, rec.Code)
		assert.Zero(t, rc.count())
	}
}

// TestDataIntegrityVerifierRedacted: no form of the verifier shows a
// secret.
func TestDataIntegrityVerifierRedacted(t *testing.T) {
	v, err := callback.NewDataIntegrityVerifier(liveSecret, "whsec-the-new-secret-after-rotation")
	require.NoError(t, err)
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("v", "verifier", v, "copy", *v)
	for _, out := range []string{
		fmt.Sprint(v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v), fmt.Sprintf("%#v", *v), fmt.Sprintf("%q", *v), fmt.Sprintf("%x", *v),
		fmt.Sprint(callback.NewHandler(new(recorder).fn, callback.WithVerifier(v))),
		logs.String(),
	} {
		assert.NotContains(t, out, "whsec")
		assert.NotContains(t, out, "rotation")
		assert.NotContains(t, out, fmt.Sprintf("%x", liveSecret)[:20])
	}
	assert.Contains(t, fmt.Sprint(*v), "Secrets:2")
}
