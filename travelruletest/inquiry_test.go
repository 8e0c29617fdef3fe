package travelruletest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func TestStartInquiry(t *testing.T) {
	secret := []byte("inquiry-signing-secret")
	rc := newReceiver(t, nil)
	srv := newServer(t, travelruletest.WithCallbackSecret(secret))
	req := validRequest("https://counterparty.example/cb")
	req.TravelAddress = travelruletest.KnownTravelAddress

	id, err := srv.StartInquiry(context.Background(), rc.URL+"/inbound?x=1", req)
	require.NoError(t, err)
	assert.Regexp(t, uuidV4, id)

	hits := rc.Hits()
	require.Len(t, hits, 1)
	assert.Equal(t, "/inbound", hits[0].Path)
	assert.NotEmpty(t, hits[0].Header.Get("webhook-signature"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(hits[0].Body, &m))
	assert.Equal(t, id, m["transferId"])
	assert.Equal(t, "inquiry", m["status"])
	assert.Equal(t, "BTC", m["asset"])
	assert.Equal(t, travelruletest.KnownTravelAddress, m["travelAddress"])

	cb, err := travelrule.ParseCallback(hits[0].Body)
	require.NoError(t, err)
	assert.Equal(t, travelrule.KindInquiry, cb.Kind)
	assert.Equal(t, id, cb.TransferID)
	require.NotNil(t, cb.Inquiry)
	assert.Equal(t, *req, *cb.Inquiry, "the inquiry carries every field of the request")

	tr, ok := srv.Transfer(id)
	require.True(t, ok)
	assert.True(t, tr.Inquiry)
	assert.Equal(t, travelruletest.StateInquiry, tr.State)
	assert.Equal(t, *req, tr.Request)

	ds := srv.Callbacks()
	require.Len(t, ds, 1)
	assert.Equal(t, travelruletest.StateInquiry, ds[0].Status)
	assert.True(t, ds[0].Delivered)
	assert.Equal(t, 1, srv.Stats().Inquiries)
}

func TestResolveInquiry(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()

	approvedID, err := srv.StartInquiry(ctx, rc.URL, validRequest("https://counterparty.example/cb"))
	require.NoError(t, err)
	rejectedID, err := srv.StartInquiry(ctx, rc.URL, validRequest("https://counterparty.example/cb"))
	require.NoError(t, err)

	steps := []struct {
		name     string
		id       string
		approved string
		callback string
		status   bool
		state    travelruletest.State
	}{
		{"approve with callback", approvedID, "true", rc.URL + "/resolved", true, travelruletest.StateApproved},
		{"approve again", approvedID, "true", rc.URL + "/resolved", true, travelruletest.StateApproved},
		{"reject after approval", approvedID, "false", "", false, travelruletest.StateApproved},
		{"reject without callback", rejectedID, "false", "", true, travelruletest.StateRejected},
		{"approve after rejection", rejectedID, "true", rc.URL + "/resolved", false, travelruletest.StateRejected},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			res, err := c.ResolveInquiry(ctx, st.id, &travelrule.InquiryResolution{Approved: st.approved, Callback: st.callback})
			require.NoError(t, err)
			assert.Equal(t, st.status, res.Status)
			assert.JSONEq(t, `{"status":`+map[bool]string{true: "true", false: "false"}[st.status]+`}`, string(res.Raw))
			tr, _ := srv.Transfer(st.id)
			assert.Equal(t, st.state, tr.State)
		})
	}
	// Two inquiries, then one "approved" callback: only the first
	// resolution of an inquiry sends one.
	waitCallbacks(t, srv, 3)
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	ds, err := srv.WaitCallbacks(wctx, 4)
	require.ErrorIs(t, err, context.DeadlineExceeded, "no fourth callback")
	require.Len(t, ds, 3)
	assert.Equal(t, travelruletest.StateApproved, ds[2].Status)
	assert.Equal(t, approvedID, ds[2].TransferID)
	assert.Equal(t, rc.URL+"/resolved", ds[2].URL)
	var body statusCallback
	require.NoError(t, json.Unmarshal(ds[2].Body, &body))
	assert.Equal(t, statusCallback{TransferID: approvedID, Status: "approved", TxID: "0xabc123", Timestamp: body.Timestamp}, body)
	assert.Equal(t, 2, srv.Stats().Resolutions)
}

func TestResolveFromInsideTheInquiryHandler(t *testing.T) {
	// The transfer exists before the inquiry is sent: a receiver may
	// resolve it while handling the inquiry.
	srv := newServer(t)
	c := newClient(t, srv)
	var mu sync.Mutex
	var status bool
	var rerr error
	rc := newReceiver(t, func(_ *http.Request, body []byte, _ int) int {
		cb, err := travelrule.ParseCallback(body)
		if err != nil || cb.Kind != travelrule.KindInquiry {
			return http.StatusNoContent
		}
		res, err := c.ResolveInquiry(context.Background(), cb.TransferID, &travelrule.InquiryResolution{Approved: "true"})
		mu.Lock()
		defer mu.Unlock()
		rerr = err
		if err == nil {
			status = res.Status
		}
		return http.StatusNoContent
	})
	id, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://counterparty.example/cb"))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.NoError(t, rerr)
	assert.True(t, status)
	tr, _ := srv.Transfer(id)
	assert.Equal(t, travelruletest.StateApproved, tr.State)
}

func TestStartInquiryFailures(t *testing.T) {
	srv := newServer(t, travelruletest.WithCallbackRetry(2, time.Millisecond, time.Millisecond))
	ctx := context.Background()

	_, err := srv.StartInquiry(ctx, "http://127.0.0.1/cb", nil)
	assert.Error(t, err)
	_, err = srv.StartInquiry(ctx, "/relative", validRequest("https://x.example/cb"))
	assert.Error(t, err)

	rc := newReceiver(t, func(*http.Request, []byte, int) int { return http.StatusInternalServerError })
	id, err := srv.StartInquiry(ctx, rc.URL, validRequest("https://x.example/cb"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 attempt(s)")
	assert.NotContains(t, err.Error(), "Lovelace")
	tr, ok := srv.Transfer(id)
	require.True(t, ok, "the transfer stays recorded")
	assert.Equal(t, travelruletest.StateInquiry, tr.State)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	id, err = srv.StartInquiry(cctx, rc.URL, validRequest("https://x.example/cb"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "0 attempt(s)", "no attempt once ctx has ended")
	ds := srv.Callbacks()
	require.NotEmpty(t, ds)
	assert.Equal(t, id, ds[len(ds)-1].TransferID, "recorded all the same")
	assert.Empty(t, ds[len(ds)-1].Attempts)

	srv.Close()
	_, err = srv.StartInquiry(ctx, rc.URL, validRequest("https://x.example/cb"))
	assert.Error(t, err)
}

// TestResolutionCallbackWaitsForTheInquiry: a receiver that resolves while
// handling the inquiry, then fails that delivery, gets the inquiry again
// before the resolution's status callback, which never overtakes it.
func TestResolutionCallbackWaitsForTheInquiry(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, srv)
	var once sync.Once
	rc := newReceiver(t, func(_ *http.Request, body []byte, prior int) int {
		cb, err := travelrule.ParseCallback(body)
		if err != nil || cb.Kind != travelrule.KindInquiry {
			return http.StatusNoContent
		}
		once.Do(func() {
			_, err := c.ResolveInquiry(context.Background(), cb.TransferID, &travelrule.InquiryResolution{Approved: "true", Callback: cb.Inquiry.Callback})
			assert.NoError(t, err)
		})
		if prior == 0 {
			return http.StatusInternalServerError // the first delivery fails: the inquiry comes again
		}
		return http.StatusNoContent
	})
	req := validRequest(rc.URL)
	_, err := srv.StartInquiry(context.Background(), rc.URL, req)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = srv.WaitCallbacks(ctx, 2)
	require.NoError(t, err)

	var statuses []string
	for _, h := range rc.Hits() {
		cb, err := travelrule.ParseCallback(h.Body)
		require.NoError(t, err)
		statuses = append(statuses, cb.Status)
	}
	assert.Equal(t, []string{"inquiry", "inquiry", "approved"}, statuses)
	var recorded []travelruletest.State
	for _, d := range srv.Callbacks() {
		recorded = append(recorded, d.Status)
	}
	assert.Equal(t, []travelruletest.State{travelruletest.StateInquiry, travelruletest.StateApproved}, recorded)
}
