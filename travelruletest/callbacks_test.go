package travelruletest_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

func TestCallbacksInOrderWithRetries(t *testing.T) {
	// The receiver fails the first two attempts of every "received" and
	// the first attempt of every "approved" callback.
	rc := newReceiver(t, func(_ *http.Request, body []byte, prior int) int {
		switch {
		case bytes.Contains(body, []byte(`"received"`)) && prior < 2:
			return http.StatusInternalServerError
		case bytes.Contains(body, []byte(`"approved"`)) && prior < 1:
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	srv := newServer(t, travelruletest.WithCallbackRetry(4, time.Millisecond, 4*time.Millisecond))
	c := newClient(t, srv)

	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.InitiateTransfer(context.Background(), validRequest(rc.URL+"/cb"))
			if assert.NoError(t, err) {
				ids[i] = res.TransferID
			}
		}()
	}
	wg.Wait()
	ds := waitCallbacks(t, srv, 3*n)
	require.Len(t, ds, 3*n)

	groups := byTransfer(ds)
	require.Len(t, groups, n)
	for _, id := range ids {
		g := groups[id]
		require.Equal(t, "received,approved,completed", statuses(g), id)
		wantCodes := [][]int{{500, 500, 204}, {503, 204}, {204}}
		for i, d := range g {
			assert.True(t, d.Delivered)
			var codes []int
			for _, a := range d.Attempts {
				codes = append(codes, a.StatusCode)
			}
			assert.Equal(t, wantCodes[i], codes)
			assert.Regexp(t, `^msg_[0-9a-f]{32}$`, d.ID)
			assert.Equal(t, rc.URL+"/cb", d.URL)
		}
		tr, ok := srv.Transfer(id)
		require.True(t, ok)
		assert.Equal(t, travelruletest.StateCompleted, tr.State)
	}

	// At the receiver: per transfer, no callback arrives before the one
	// before it was delivered, and every attempt of one callback carries
	// the same webhook-id and body.
	type seen struct {
		ids     map[string]string // status → webhook-id
		success map[string]bool
	}
	per := map[string]*seen{}
	for _, h := range rc.Hits() {
		cb := h.callback(t)
		s := per[cb.TransferID]
		if s == nil {
			s = &seen{ids: map[string]string{}, success: map[string]bool{}}
			per[cb.TransferID] = s
		}
		prev := map[string]string{"received": "", "approved": "received", "completed": "approved"}[cb.Status]
		if prev != "" {
			assert.True(t, s.success[prev], "%s arrived before %s was delivered", cb.Status, prev)
		}
		if id, ok := s.ids[cb.Status]; ok {
			assert.Equal(t, id, h.Header.Get("webhook-id"), "redelivery keeps the webhook-id")
		}
		s.ids[cb.Status] = h.Header.Get("webhook-id")
		if h.Status == http.StatusNoContent {
			s.success[cb.Status] = true
		}
		assert.Equal(t, "0xabc123", cb.TxID)
		_, err := time.Parse(time.RFC3339, cb.Timestamp)
		assert.NoError(t, err)
		assert.Equal(t, "application/json", h.Header.Get("Content-Type"))
		assert.NotEmpty(t, h.Header.Get("webhook-timestamp"))
		assert.Empty(t, h.Header.Get("webhook-signature"), "unsigned without a secret")
	}
	assert.Len(t, per, n)
	assert.Len(t, rc.Hits(), n*(3+2+1))

	st := srv.Stats()
	assert.Equal(t, 3*n, st.Callbacks)
	assert.Equal(t, 0, st.CallbacksFailed)
	assert.Equal(t, 6*n, st.CallbackAttempts)
}

func TestCallbackBackoff(t *testing.T) {
	rc := newReceiver(t, func(_ *http.Request, _ []byte, prior int) int {
		if prior < 4 {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	srv := newServer(t, travelruletest.WithCallbackRetry(5, 20*time.Millisecond, 50*time.Millisecond),
		travelruletest.WithApproval(func(travelrule.TransferRequest) bool { return false }))
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
	require.NoError(t, err)
	ds := waitCallbacks(t, srv, 1)
	at := ds[0].Attempts
	require.Len(t, at, 5)
	for i, want := range []time.Duration{20, 40, 50, 50} {
		gap := at[i+1].Time.Sub(at[i].Time)
		assert.GreaterOrEqual(t, gap, want*time.Millisecond, "wait before attempt %d", i+2)
	}
	assert.True(t, ds[0].Delivered)
}

func TestCallbackGivesUp(t *testing.T) {
	t.Run("receiver keeps failing", func(t *testing.T) {
		rc := newReceiver(t, func(*http.Request, []byte, int) int { return http.StatusServiceUnavailable })
		srv := newServer(t, travelruletest.WithCallbackRetry(2, time.Millisecond, time.Millisecond))
		_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
		require.NoError(t, err)
		ds := waitCallbacks(t, srv, 3)
		assert.Equal(t, "received,approved,completed", statuses(ds), "the next callback follows a failed one")
		for _, d := range ds {
			assert.False(t, d.Delivered)
			require.Len(t, d.Attempts, 2)
			assert.Equal(t, http.StatusServiceUnavailable, d.Attempts[1].StatusCode)
		}
		st := srv.Stats()
		assert.Equal(t, 3, st.CallbacksFailed)
		assert.Equal(t, 6, st.CallbackAttempts)
	})
	t.Run("receiver unreachable", func(t *testing.T) {
		srv := newServer(t, travelruletest.WithCallbackRetry(3, time.Millisecond, time.Millisecond))
		// The query stands for a capability: the errors never quote it.
		_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(closedURL(t)+"?tag=capability-7f3a"))
		require.NoError(t, err)
		ds := waitCallbacks(t, srv, 3)
		for _, d := range ds {
			assert.False(t, d.Delivered)
			require.Len(t, d.Attempts, 3)
			for _, a := range d.Attempts {
				assert.Zero(t, a.StatusCode)
				assert.NotEmpty(t, a.Err)
				assert.NotContains(t, a.Err, "capability-7f3a")
			}
		}
	})
	t.Run("redirect is a failure", func(t *testing.T) {
		rc := newReceiver(t, func(*http.Request, []byte, int) int { return http.StatusTemporaryRedirect })
		srv := newServer(t, travelruletest.WithCallbackRetry(1, 0, 0))
		_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
		require.NoError(t, err)
		ds := waitCallbacks(t, srv, 3)
		assert.False(t, ds[0].Delivered)
		assert.Equal(t, http.StatusTemporaryRedirect, ds[0].Attempts[0].StatusCode)
	})
}

func TestRejectedLifecycle(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := newServer(t, travelruletest.WithApproval(func(req travelrule.TransferRequest) bool {
		return req.Asset != "XMR"
	}))
	c := newClient(t, srv)
	req := validRequest(rc.URL)
	req.Asset = "XMR"
	req.TxID = ""
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	ds := waitCallbacks(t, srv, 2)
	assert.Equal(t, "received,rejected", statuses(ds))
	tr, _ := srv.Transfer(res.TransferID)
	assert.Equal(t, travelruletest.StateRejected, tr.State)
	assert.True(t, tr.Updated.After(tr.Created) || tr.Updated.Equal(tr.Created))
	for _, h := range rc.Hits() {
		assert.NotContains(t, string(h.Body), "txId", "txId is omitted when the request has none")
	}
}

func TestCallbackSigning(t *testing.T) {
	secret := []byte("whsec-test-secret-0123456789")
	verifier := &callback.WebhookVerifier{Secrets: [][]byte{secret}}
	wrong := &callback.WebhookVerifier{Secrets: [][]byte{[]byte("another secret, not the one")}}
	var mu sync.Mutex
	var verr, werr []error
	rc := newReceiver(t, func(r *http.Request, body []byte, _ int) int {
		mu.Lock()
		defer mu.Unlock()
		verr = append(verr, verifier.Verify(r, body))
		werr = append(werr, wrong.Verify(r, body))
		return http.StatusNoContent
	})
	srv := newServer(t, travelruletest.WithCallbackSecret(secret))
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
	require.NoError(t, err)
	waitCallbacks(t, srv, 3)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, verr, 3)
	for i := range verr {
		assert.NoError(t, verr[i])
		assert.ErrorIs(t, werr[i], callback.ErrSignature)
	}
	for _, h := range rc.Hits() {
		ts, err := strconv.ParseInt(h.Header.Get(callback.HeaderTimestamp), 10, 64)
		require.NoError(t, err)
		want := callback.Sign(secret, h.Header.Get(callback.HeaderID), time.Unix(ts, 0), h.Body)
		assert.Equal(t, want, h.Header.Get(callback.HeaderSignature))
	}
}

func TestCallbackHandlerEndToEnd(t *testing.T) {
	// The SDK's callback handler, verifying signatures, as the receiver;
	// its function fails once, so the sandbox delivers again.
	secret := []byte("whsec-test-secret-0123456789")
	var mu sync.Mutex
	var got []*travelrule.Callback
	failed := false
	h := callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error {
		mu.Lock()
		defer mu.Unlock()
		if cb.Status == "approved" && !failed {
			failed = true
			return assert.AnError
		}
		got = append(got, cb)
		return nil
	}, callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{secret}}))
	require.NoError(t, h.Err())
	rc := httptest.NewServer(h)
	t.Cleanup(rc.Close)

	srv := newServer(t, travelruletest.WithCallbackSecret(secret))
	res, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
	require.NoError(t, err)
	ds := waitCallbacks(t, srv, 3)
	for _, d := range ds {
		assert.True(t, d.Delivered)
	}
	assert.Len(t, ds[1].Attempts, 2)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 3)
	for i, want := range []string{"received", "approved", "completed"} {
		assert.Equal(t, travelrule.KindStatus, got[i].Kind)
		assert.Equal(t, res.TransferID, got[i].TransferID)
		assert.Equal(t, want, got[i].Status)
		assert.Equal(t, "0xabc123", got[i].TxID)
		assert.False(t, got[i].Timestamp.IsZero())
	}

	t.Run("unsigned callbacks are refused", func(t *testing.T) {
		plain := newServer(t, travelruletest.WithCallbackRetry(2, time.Millisecond, time.Millisecond))
		_, err := newClient(t, plain).InitiateTransfer(context.Background(), validRequest(rc.URL))
		require.NoError(t, err)
		for _, d := range waitCallbacks(t, plain, 3) {
			assert.False(t, d.Delivered)
			assert.Equal(t, http.StatusUnauthorized, d.Attempts[0].StatusCode)
		}
	})
}

func TestCallbackOverTLS(t *testing.T) {
	var mu sync.Mutex
	var got []string
	rc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rc.Close)
	srv := newServer(t, travelruletest.WithCallbackHTTPClient(rc.Client()))
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL+"/tls-cb"))
	require.NoError(t, err)
	for _, d := range waitCallbacks(t, srv, 3) {
		assert.True(t, d.Delivered)
		assert.Equal(t, http.StatusAccepted, d.Attempts[0].StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"/tls-cb", "/tls-cb", "/tls-cb"}, got)
}
