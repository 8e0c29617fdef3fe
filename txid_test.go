package travelrule_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

const txHash = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"

func TestSubmitTxID(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	res, err := c.SubmitTxID(context.Background(), liveTransferID, txHash)
	require.NoError(t, err)
	assert.Equal(t, "true", res.Status)
	reqs := live.requests("/transfers/txId")
	require.Len(t, reqs, 1)
	assert.Equal(t, "q="+liveTransferID, reqs[0].Query)
	var sent map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &sent))
	assert.Equal(t, map[string]any{"txId": txHash}, sent)

	_, err = c.SubmitTxID(context.Background(), "unknown", txHash)
	require.ErrorIs(t, err, travelrule.CodeTransferNotFound)
}

// TestSubmitTxIDIsRetried: the same value every time, so a failure after
// sending is retried, and an answer of unknown shape is kept, not refused.
func TestSubmitTxIDIsRetried(t *testing.T) {
	for _, tt := range []struct{ name, body, status string }{
		{"empty body", ``, "true"},
		{"unknown shape", `{"transferId":"x","confirmed":true}`, "true"},
		{"wrapped", `{"status":"success","data":{"txId":"` + txHash + `"}}`, "success"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			var n atomic.Int64
			live.handle("/transfers/txId", func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					dropAfterRead(w, r)
					return
				}
				answer(200, tt.body)(w, r)
			})
			c := live.client(t, liveKey)
			res, err := c.SubmitTxID(context.Background(), liveTransferID, txHash)
			require.NoError(t, err)
			assert.Equal(t, 2, res.Attempts)
			assert.Equal(t, tt.status, res.Status)
			assert.True(t, res.OK())
			assert.Equal(t, tt.body, string(res.Raw))
		})
	}
}

func TestSubmitTxIDValidates(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	_, err := c.SubmitTxID(context.Background(), "", "")
	var ve *travelrule.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, []string{"q", "txId"}, fieldPaths(ve))
	assert.Empty(t, live.requests(""))
}
