package travelruletest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func TestIdempotencyReplay(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, srv, travelrule.WithIdempotency())
	ctx := travelrule.ContextWithIdempotencyKey(context.Background(), "payment-42")
	req := validRequest("http://127.0.0.1:1/cb")

	first, err := c.InitiateTransfer(ctx, req)
	require.NoError(t, err)
	second, err := c.InitiateTransfer(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, first.TransferID, second.TransferID)
	assert.Equal(t, string(first.Raw), string(second.Raw))
	assert.Equal(t, "payment-42", second.IdempotencyKey)

	ts := srv.Transfers()
	require.Len(t, ts, 1, "a replay makes no new transfer")
	assert.Equal(t, "payment-42", ts[0].IdempotencyKey)
	assert.Equal(t, 1, srv.Stats().Replayed)
	rs := srv.Requests()
	require.Len(t, rs, 2)
	assert.False(t, rs[0].Replayed)
	assert.True(t, rs[1].Replayed)
	assert.Equal(t, first.TransferID, rs[1].TransferID)
	assert.Equal(t, "payment-42", rs[1].Header.Get("Idempotency-Key"))

	// Another key is another transfer.
	other, err := c.InitiateTransfer(travelrule.ContextWithIdempotencyKey(context.Background(), "payment-43"), req)
	require.NoError(t, err)
	assert.NotEqual(t, first.TransferID, other.TransferID)
	assert.Len(t, srv.Transfers(), 2)
}

func TestIdempotencyKeyReuse(t *testing.T) {
	srv := newServer(t)
	tok := token(t, srv)
	url := srv.URL + "/transfers/initiate"
	a := post(t, url, tok, validRequest("http://127.0.0.1:1/cb"), "Idempotency-Key", "k1")
	require.Equal(t, http.StatusOK, a.Status)

	changed := validRequest("http://127.0.0.1:1/cb")
	changed.Amount = "0.26"
	a = post(t, url, tok, changed, "Idempotency-Key", "k1")
	require.Equal(t, http.StatusUnprocessableEntity, a.Status)
	code, _, _ := a.errorBody(t)
	assert.Equal(t, "IDEMPOTENCY_KEY_REUSED", code)

	// The key is per operation.
	rc := newReceiver(t, nil)
	id, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://x.example/cb"))
	require.NoError(t, err)
	a = post(t, srv.URL+"/transfers/inquiryResolution?q="+id, tok, `{"approved":"true"}`, "Idempotency-Key", "k1")
	assert.Equal(t, http.StatusOK, a.Status)
	// The query is part of the request.
	a = post(t, srv.URL+"/transfers/inquiryResolution?q=other", tok, `{"approved":"true"}`, "Idempotency-Key", "k1")
	assert.Equal(t, http.StatusUnprocessableEntity, a.Status)

	// An over-long key is refused.
	a = post(t, url, tok, validRequest("http://127.0.0.1:1/cb"), "Idempotency-Key", strings.Repeat("k", 256))
	assert.Equal(t, http.StatusBadRequest, a.Status)
	assert.Len(t, srv.Transfers(), 2)
}

func TestIdempotencyBadRequestReplayed(t *testing.T) {
	srv := newServer(t)
	tok := token(t, srv)
	bad := validRequest("http://127.0.0.1:1/cb")
	bad.Asset = ""
	for range 2 {
		a := post(t, srv.URL+"/transfers/initiate", tok, bad, "Idempotency-Key", "k-bad")
		assert.Equal(t, http.StatusBadRequest, a.Status)
	}
	assert.Equal(t, 1, srv.Stats().Replayed)
}

func TestIdempotencyInProgress(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := newServer(t, travelruletest.WithApproval(func(travelrule.TransferRequest) bool {
		once.Do(func() { close(entered); <-release })
		return true
	}))
	// Registered after newServer's Close, so it runs first: a failing
	// test ends instead of Close waiting for the held approval forever.
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce)
	tok := token(t, srv)
	url := srv.URL + "/transfers/initiate"
	done := make(chan int, 1)
	go func() {
		body, _ := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "slow")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-entered
	a := post(t, url, tok, validRequest("http://127.0.0.1:1/cb"), "Idempotency-Key", "slow")
	assert.Equal(t, http.StatusConflict, a.Status)
	assert.Equal(t, "1", a.Header.Get("Retry-After"))
	code, _, _ := a.errorBody(t)
	assert.Equal(t, "IDEMPOTENCY_KEY_IN_USE", code)
	releaseOnce()
	assert.Equal(t, http.StatusOK, <-done)
	a = post(t, url, tok, validRequest("http://127.0.0.1:1/cb"), "Idempotency-Key", "slow")
	assert.Equal(t, http.StatusOK, a.Status)
	assert.Len(t, srv.Transfers(), 1)
}

func TestWithoutIdempotency(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutIdempotency())
	c := newClient(t, srv, travelrule.WithIdempotency())
	ctx := travelrule.ContextWithIdempotencyKey(context.Background(), "payment-42")
	first, err := c.InitiateTransfer(ctx, validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	second, err := c.InitiateTransfer(ctx, validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	assert.NotEqual(t, first.TransferID, second.TransferID)
	ts := srv.Transfers()
	require.Len(t, ts, 2)
	assert.Empty(t, ts[0].IdempotencyKey)
}
