package travelruletest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

const txHash = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"

// initiated initiates req and returns the transfer's id.
func initiated(t *testing.T, srv *travelruletest.Server, req *travelrule.TransferRequest) string {
	t.Helper()
	res, err := newClient(t, srv).InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	require.NotEmpty(t, res.TransferID)
	return res.TransferID
}

func TestSubmitTxID(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	req := validRequest("http://127.0.0.1:1/cb")
	req.TxID = ""
	id := initiated(t, srv, req)
	tr, _ := srv.Transfer(id)
	assert.False(t, tr.Confirmed)

	for range 2 { // the same txId again answers the same
		a := post(t, srv.URL+"/transfers/txId?q="+id, tok, map[string]string{"txId": txHash})
		require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
		assert.JSONEq(t, `{"status":true,"data":{"transferId":"`+id+`","txId":"`+txHash+`"}}`, string(a.Body))
	}
	tr, _ = srv.Transfer(id)
	assert.Equal(t, txHash, tr.TxID)
	assert.True(t, tr.Confirmed, "the confirmation to the beneficiary's VASP")
	assert.Equal(t, 1, srv.Stats().Confirmations, "one confirmation")
	assert.Empty(t, tr.Request.TxID, "the request stays as initiated")

	// Another txId for the transfer.
	a := post(t, srv.URL+"/transfers/txId?q="+id, tok, map[string]string{"txId": "0xother"})
	a.badRequestFields(t, []string{"txId"})
	assert.NotContains(t, string(a.Body), "0xother")
	tr, _ = srv.Transfer(id)
	assert.Equal(t, txHash, tr.TxID)

	// A transfer initiated with a txId has it already.
	withTx := initiated(t, srv, validRequest("http://127.0.0.1:1/cb")) // txId 0xabc123
	post(t, srv.URL+"/transfers/txId?q="+withTx, tok, map[string]string{"txId": txHash}).badRequestFields(t, []string{"txId"})
	a = post(t, srv.URL+"/transfers/txId?q="+withTx, tok, map[string]string{"txId": "0xabc123"})
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	tr, _ = srv.Transfer(withTx)
	assert.True(t, tr.Confirmed)
	assert.Equal(t, 2, srv.Stats().Confirmations)
}

func TestSubmitTxIDRefusals(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	id := initiated(t, srv, validRequest("http://127.0.0.1:1/cb"))
	rc := newReceiver(t, nil)
	inquiry, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://vasp.example/cb"))
	require.NoError(t, err)

	for _, tt := range []struct {
		name, query, body string
		fields            []string
	}{
		{"q missing", "", `{"txId":"0xabc123"}`, []string{"q"}},
		{"txId missing", "?q=" + id, `{}`, []string{"txId"}},
		{"txId empty", "?q=" + id, `{"txId":""}`, []string{"txId"}},
		{"txId a number", "?q=" + id, `{"txId":12}`, []string{"txId"}},
		{"txId 256 characters", "?q=" + id, `{"txId":"` + strings.Repeat("t", 256) + `"}`, []string{"txId"}},
		{"both", "", `{"txId":null}`, []string{"q", "txId"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			post(t, srv.URL+"/transfers/txId"+tt.query, tok, tt.body).badRequestFields(t, tt.fields)
		})
	}
	for name, q := range map[string]string{"unknown": "0b6f4a5e-8a3c-4d2b-9f1e-2c3d4e5f6a7b", "an inquiry": inquiry} {
		t.Run(name, func(t *testing.T) {
			a := post(t, srv.URL+"/transfers/txId?q="+q, tok, map[string]string{"txId": txHash})
			require.Equal(t, http.StatusNotFound, a.Status, "body %s", a.Body)
			code, _, _ := a.errorBody(t)
			assert.Equal(t, "TRANSFER_NOT_FOUND", code)
		})
	}
	a := post(t, srv.URL+"/transfers/txId?q="+id, "", map[string]string{"txId": txHash})
	assert.Equal(t, http.StatusUnauthorized, a.Status)
	assert.Zero(t, srv.Stats().Confirmations, "nothing confirmed")
}

// The SDK's SubmitTxID, retried after a 500 that struck once the txId was
// recorded: the retry answers the same.
func TestSubmitTxIDThroughTheClient(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	id := initiated(t, srv, validRequest("http://127.0.0.1:1/cb"))
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 1, Times: 1, Ops: travelruletest.OpSubmitTxID})
	res, err := newClient(t, srv).SubmitTxID(context.Background(), id, "0xabc123")
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	assert.Equal(t, "true", res.Status)
	rs := srv.Requests()
	last := rs[len(rs)-2:]
	assert.Equal(t, travelruletest.OpSubmitTxID, last[0].Op)
	assert.Equal(t, []travelruletest.FaultKind{travelruletest.FaultInternal}, last[0].Faults)
	assert.Equal(t, id, last[0].TransferID)
	assert.Equal(t, http.StatusOK, last[1].Status)

	_, err = newClient(t, srv).SubmitTxID(context.Background(), "0b6f4a5e-8a3c-4d2b-9f1e-2c3d4e5f6a7b", "0xabc123")
	require.ErrorIs(t, err, travelrule.ErrNotFound)
	require.ErrorIs(t, err, travelrule.CodeTransferNotFound)
}

// TestTxIDRefusedForARejectedTransfer: a transfer the beneficiary's VASP
// rejected is not to be broadcast, so its txId is refused, at once, before
// the callbacks that announce the rejection have gone.
func TestTxIDRefusedForARejectedTransfer(t *testing.T) {
	srv := newServer(t, travelruletest.WithApproval(func(travelrule.TransferRequest) bool { return false }), travelruletest.WithoutCallbacks())
	c := newClient(t, srv)
	req := validRequest("https://vasp.example/cb")
	req.TxID = ""
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	_, err = c.SubmitTxID(context.Background(), res.TransferID, "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060")
	require.ErrorIs(t, err, travelrule.CodeValidationError)
	tr, _ := srv.Transfer(res.TransferID)
	assert.False(t, tr.Confirmed)
	assert.Zero(t, srv.Stats().Confirmations)
}
