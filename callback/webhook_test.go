package callback_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
)

// setSignatureHeaders signs a delivery of body the Standard Webhooks way,
// as a sender does: it sets the webhook-id, webhook-timestamp and
// webhook-signature headers in h.
func setSignatureHeaders(h http.Header, secret []byte, id string, ts time.Time, body []byte) {
	h.Set(callback.HeaderID, id)
	h.Set(callback.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(callback.HeaderSignature, callback.Sign(secret, id, ts, body))
}

// fixedNow is the stopped clock of the signature tests: their deliveries
// are signed at it, and their verifiers read it through fixedClock.
var fixedNow = time.Unix(1_750_000_000, 0)

// fixedClock is a WebhookVerifier.Now that always answers fixedNow.
func fixedClock() time.Time { return fixedNow }

// parseSecret decodes a secret as services hand it out, as
// NewWebhookVerifier does.
func parseSecret(s string) ([]byte, error) {
	v, err := callback.NewWebhookVerifier(s)
	if err != nil {
		return nil, err
	}
	return v.Secrets[0], nil
}

// The reference vector of the Standard Webhooks specification.
func TestCallbackSignStandardWebhooksVector(t *testing.T) {
	secret, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") // whsec_MfKQ…
	require.NoError(t, err)
	body := []byte(`{"test": 2432232314}`)
	ts := time.Unix(1614265330, 0)
	const want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	assert.Equal(t, want, callback.Sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body))

	r := httptest.NewRequest(http.MethodPost, "/cb", nil)
	r.Header.Set(callback.HeaderID, "msg_p5jXN8AQM9LWM0D4loKWxJek")
	r.Header.Set(callback.HeaderTimestamp, "1614265330")
	r.Header.Set(callback.HeaderSignature, want)
	v := &callback.WebhookVerifier{Secrets: [][]byte{secret}, Now: func() time.Time { return ts }}
	assert.NoError(t, v.Verify(r, body))
}
