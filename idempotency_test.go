package travelrule_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vaspkit/travelrule"
)

func TestIdempotencyKeyRetriesAmbiguousFailures(t *testing.T) {
	var n atomic.Int64
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			// A fresh connection for the next attempt: net/http itself
			// resends a keyed request dropped on a reused connection,
			// which would hide the drop from the client's retry policy.
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			dropAfterRead(w, r)
		case 3:
			w.WriteHeader(http.StatusGatewayTimeout)
		default:
			answer(200, `{"status":"succes","transferId":"t-9"}`)(w, r)
		}
	}, travelrule.WithIdempotency(), travelrule.WithRetryMax(4))
	res, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.Equal(t, "t-9", res.TransferID)
	assert.Equal(t, 4, res.Attempts, "500, dropped, 504: each retried by the client")
	reqs := ts.requests()
	require.Len(t, reqs, 4)
	key := reqs[0].Header.Get("Idempotency-Key")
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, key)
	for _, r := range reqs {
		assert.Equal(t, key, r.Header.Get("Idempotency-Key"), "one key per logical call, the same on every attempt")
	}
	assert.Equal(t, key, res.IdempotencyKey)

	// A second logical call gets a new key; a key from the context is used as is.
	_, err = c.InitiateTransfer(travelrule.ContextWithIdempotencyKey(context.Background(), "payment-77"), minimalRequest())
	require.NoError(t, err)
	reqs = ts.requests()
	assert.Equal(t, "payment-77", reqs[len(reqs)-1].Header.Get("Idempotency-Key"))
}

func TestIdempotencyOutcomeUnknownCarriesKey(t *testing.T) {
	c, ts := setup(t, answer(500, ``), travelrule.WithIdempotency(), travelrule.WithRetryMax(2))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var unknown *travelrule.OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)
	assert.EqualValues(t, 3, ts.hits.Load())
	assert.Equal(t, 3, unknown.Attempts)
	assert.NotEmpty(t, unknown.IdempotencyKey)
	assert.Equal(t, ts.requests()[0].Header.Get("Idempotency-Key"), unknown.IdempotencyKey)
}
