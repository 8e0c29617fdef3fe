package travelruletest_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// dataIntegrity is the x-data-integrity of body under secret as
// live-service.md describes it, computed here without the SDK: the
// lower-case hex of HMAC-SHA512 over the base64 text of the body.
func dataIntegrity(secret, body []byte) string {
	m := hmac.New(sha512.New, secret)
	m.Write([]byte(base64.StdEncoding.EncodeToString(body)))
	return hex.EncodeToString(m.Sum(nil))
}

func TestCallbacksInOrderWithRetries(t *testing.T) {
	// The receiver fails the first two attempts of every
	// INQUIRY_RESOLUTION and the first attempt of every
	// TRANSFER_RESOLUTION.
	rc := newReceiver(t, func(_ *http.Request, body []byte, prior int) int {
		switch {
		case bytes.Contains(body, []byte(`"approved":{`)) && prior < 2:
			return http.StatusInternalServerError
		case bytes.Contains(body, []byte(`"statusComment"`)) && prior < 1:
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	srv := newServer(t, travelruletest.WithCallbackRetry(4, time.Millisecond, 4*time.Millisecond))
	c := newClient(t, srv)

	// Each transfer has a callback URL of its own, as NewCallbackURL
	// makes them: the INQUIRY_RESOLUTION carries no transfer id.
	const n = 20
	ids := make([]string, n)
	pathOf := map[string]string{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			path := "/cb/" + strconv.Itoa(i)
			res, err := c.InitiateTransfer(context.Background(), validRequest(rc.URL+path))
			if assert.NoError(t, err) {
				mu.Lock()
				ids[i], pathOf[res.TransferID] = res.TransferID, path
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	ds := waitCallbacks(t, srv, 2*n)
	require.Len(t, ds, 2*n)

	groups := byTransfer(ds)
	require.Len(t, groups, n)
	for _, id := range ids {
		g := groups[id]
		require.Equal(t, resolutionKinds, kinds(g), id)
		assert.Equal(t, "approved,completed", statuses(g), id)
		wantCodes := [][]int{{500, 500, 204}, {503, 204}}
		for i, d := range g {
			assert.True(t, d.Delivered)
			var codes []int
			for _, a := range d.Attempts {
				codes = append(codes, a.StatusCode)
			}
			assert.Equal(t, wantCodes[i], codes)
			assert.Regexp(t, `^msg_[0-9a-f]{32}$`, d.ID)
			assert.Equal(t, rc.URL+pathOf[id], d.URL)
		}
		tr, ok := srv.Transfer(id)
		require.True(t, ok)
		assert.Equal(t, travelruletest.StateCompleted, tr.State)
	}

	// At the receiver: per transfer, its TRANSFER_RESOLUTION never arrives
	// before its INQUIRY_RESOLUTION was delivered, and every attempt of one
	// callback carries the same body and signature.
	type seen struct {
		resolved bool
		first    map[bool]hit // by "is a TRANSFER_RESOLUTION"
	}
	per := map[string]*seen{}
	for _, h := range rc.Hits() {
		s := per[h.Path]
		if s == nil {
			s = &seen{first: map[bool]hit{}}
			per[h.Path] = s
		}
		cb := h.callback(t)
		final := cb.TransferID != ""
		if final {
			assert.True(t, s.resolved, "the TRANSFER_RESOLUTION of %s arrived before its INQUIRY_RESOLUTION was delivered", h.Path)
			assert.Equal(t, h.Path, pathOf[cb.TransferID])
		}
		if first, ok := s.first[final]; ok {
			assert.Equal(t, first.Body, h.Body, "redelivery keeps the body")
			assert.Equal(t, first.Header.Get(callback.HeaderDataIntegrity), h.Header.Get(callback.HeaderDataIntegrity))
		} else {
			s.first[final] = h
		}
		if !final && h.Status == http.StatusNoContent {
			s.resolved = true
		}
		assert.Equal(t, "application/json", h.Header.Get("Content-Type"))
		assert.Equal(t, dataIntegrity([]byte(travelruletest.DefaultSigningSecret), h.Body), h.Header.Get(callback.HeaderDataIntegrity))
		for _, name := range []string{callback.HeaderID, callback.HeaderTimestamp, callback.HeaderSignature} {
			assert.Empty(t, h.Header.Get(name), "the live service sends no %s", name)
		}
	}
	assert.Len(t, per, n)
	assert.Len(t, rc.Hits(), n*(3+2))

	st := srv.Stats()
	assert.Equal(t, 2*n, st.Callbacks)
	assert.Equal(t, 0, st.CallbacksFailed)
	assert.Equal(t, 5*n, st.CallbackAttempts)
}

// TestCallbackBodies: the originator's callbacks, as the live service
// sends them, for an approved and a rejected transfer: a rejection gets
// the INQUIRY_RESOLUTION alone unless WithRejectionResolution.
func TestCallbackBodies(t *testing.T) {
	rc := newReceiver(t, nil)
	for _, tt := range []struct {
		name                string
		approve             bool
		generate            bool // to a travel address the sandbox generated, with no wallet in the request
		rejectionResolution bool
		kinds               string
		states              string
		state               travelruletest.State
	}{
		{"approved", true, false, false, resolutionKinds, "approved,completed", travelruletest.StateCompleted},
		{"approved, the wallet of the travel address", true, true, false, resolutionKinds, "approved,completed", travelruletest.StateCompleted},
		{"approved, WithRejectionResolution", true, false, true, resolutionKinds, "approved,completed", travelruletest.StateCompleted},
		{"rejected", false, false, false, "INQUIRY_RESOLUTION", "rejected", travelruletest.StateRejected},
		{"rejected, WithRejectionResolution", false, false, true, resolutionKinds, "rejected,rejected", travelruletest.StateRejected},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := []travelruletest.Option{travelruletest.WithApproval(func(travelrule.TransferRequest) bool { return tt.approve })}
			if tt.rejectionResolution {
				opts = append(opts, travelruletest.WithRejectionResolution())
			}
			srv := newServer(t, opts...)
			c := newClient(t, srv)
			req := validRequest(rc.URL + "/cb?ref=" + url.QueryEscape(tt.name))
			wallet := req.Beneficiary.WalletAddress
			if tt.generate {
				ta, err := c.GenerateTravelAddress(context.Background(), &travelrule.TravelAddressRequest{
					PersonType: "natural", FirstName: "Alan", LastName: "Turing", WalletAddress: "0x742d35cc6634c0532925a3b844bc454e4438f44e"})
				require.NoError(t, err)
				req.TravelAddress, req.Beneficiary.WalletAddress, wallet = ta.TravelAddress, "", "0x742d35cc6634c0532925a3b844bc454e4438f44e"
			}
			res, err := c.InitiateTransfer(context.Background(), req)
			require.NoError(t, err)
			id := res.TransferID
			ds := waitCallbacks(t, srv, strings.Count(tt.kinds, ",")+1)
			require.Equal(t, tt.kinds, kinds(ds))
			assert.Equal(t, tt.states, statuses(ds))
			cbURL := jsonText(req.Callback)
			if tt.approve {
				assert.JSONEq(t, `{"approved":{"address":"`+wallet+`","callback":"`+srv.URL+`/transfers/txId?q=`+id+`"},"callback":`+cbURL+`}`, string(ds[0].Body))
				assert.JSONEq(t, `{"transferId":"`+id+`","status":"APPROVED","statusComment":"approved by the beneficiary's VASP","callback":`+cbURL+`}`, string(ds[1].Body))
			} else {
				assert.JSONEq(t, `{"approved":false,"callback":`+cbURL+`}`, string(ds[0].Body))
				if tt.rejectionResolution {
					assert.JSONEq(t, `{"transferId":"`+id+`","status":"REJECTED","statusComment":"rejected by the beneficiary's VASP","callback":`+cbURL+`}`, string(ds[1].Body))
				}
			}
			for _, d := range ds {
				assert.Equal(t, req.Callback, d.URL)
				assert.True(t, d.Delivered)
			}
			tr, _ := srv.Transfer(id)
			assert.Equal(t, tt.state, tr.State)
			assert.False(t, tr.Updated.Before(tr.Created))
		})
	}
}

// jsonText is s as a JSON string.
func jsonText(s string) string { return strconv.Quote(s) }

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

// liveDelays are the live service's waits before the second to the tenth
// attempt, in minutes (live-service.md, "Callbacks").
var liveDelays = []time.Duration{1, 5, 15, 30, 60, 180, 360, 720, 1440}

// TestCallbackSchedule: by default the live schedule; WithCallbackTimeScale
// scales it, WithCallbackRetry replaces it, the later option winning.
func TestCallbackSchedule(t *testing.T) {
	scaled := func(minute time.Duration) []time.Duration {
		out := make([]time.Duration, len(liveDelays))
		for i, m := range liveDelays {
			out[i] = m * minute
		}
		return out
	}
	for _, tt := range []struct {
		name string
		opts []travelruletest.Option
		want []time.Duration
	}{
		{"default: the live schedule", nil, scaled(time.Minute)},
		{"scaled", []travelruletest.Option{travelruletest.WithCallbackTimeScale(time.Millisecond)}, scaled(time.Millisecond)},
		{"exponential", []travelruletest.Option{travelruletest.WithCallbackRetry(4, time.Second, 3*time.Second)},
			[]time.Duration{time.Second, 2 * time.Second, 3 * time.Second}},
		{"one attempt", []travelruletest.Option{travelruletest.WithCallbackRetry(1, 0, 0)}, []time.Duration{}},
		{"the later wins: scale", []travelruletest.Option{travelruletest.WithCallbackRetry(2, 0, 0), travelruletest.WithCallbackTimeScale(time.Second)}, scaled(time.Second)},
		{"the later wins: retry", []travelruletest.Option{travelruletest.WithCallbackTimeScale(time.Second), travelruletest.WithCallbackRetry(2, time.Hour, time.Hour)}, []time.Duration{time.Hour}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := travelruletest.NewServer(tt.opts...)
			defer srv.Close()
			assert.Equal(t, tt.want, travelruletest.CallbackDelays(srv))
		})
	}
	assert.Panics(t, func() { travelruletest.NewServer(travelruletest.WithCallbackTimeScale(0)) })
}

// TestCallbackLiveSchedule: a receiver that never acknowledges gets ten
// attempts, after the live schedule's waits (scaled), then the delivery is
// given up and recorded as failed.
func TestCallbackLiveSchedule(t *testing.T) {
	const minute = 100 * time.Microsecond // the whole schedule in 282 ms
	rc := newReceiver(t, func(*http.Request, []byte, int) int { return http.StatusServiceUnavailable })
	srv := newServer(t, travelruletest.WithCallbackTimeScale(minute))
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
	require.NoError(t, err)
	d := waitCallbacks(t, srv, 1)[0]
	assert.Equal(t, travelruletest.KindInquiryResolution, d.Kind)
	assert.False(t, d.Delivered, "given up")
	require.Len(t, d.Attempts, 10)
	for i, m := range liveDelays {
		gap := d.Attempts[i+1].Time.Sub(d.Attempts[i].Time)
		assert.GreaterOrEqual(t, gap, m*minute, "wait before attempt %d", i+2)
	}
	assert.Equal(t, 1, srv.Stats().CallbacksFailed)
}

// TestCallbackRetryAfter: a receiver's Retry-After lengthens the wait, but
// not beyond the schedule's next delay.
func TestCallbackRetryAfter(t *testing.T) {
	var mu sync.Mutex
	n := 0
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 1 {
			w.Header().Set("Retry-After", "3600") // an hour: far beyond the schedule's 5 "minutes"
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	srv := newServer(t, travelruletest.WithCallbackTimeScale(time.Millisecond))
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
	require.NoError(t, err)
	// The second attempt comes within waitCallbacks' bound, not after the
	// Retry-After's hour.
	d := waitCallbacks(t, srv, 1)[0]
	require.Len(t, d.Attempts, 2)
	gap := d.Attempts[1].Time.Sub(d.Attempts[0].Time)
	assert.GreaterOrEqual(t, gap, 5*time.Millisecond, "lengthened from 1 minute to the next delay, 5")
}

func TestCallbackGivesUp(t *testing.T) {
	t.Run("receiver keeps failing", func(t *testing.T) {
		rc := newReceiver(t, func(*http.Request, []byte, int) int { return http.StatusServiceUnavailable })
		srv := newServer(t, travelruletest.WithCallbackRetry(2, time.Millisecond, time.Millisecond))
		_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
		require.NoError(t, err)
		ds := waitCallbacks(t, srv, 2)
		assert.Equal(t, resolutionKinds, kinds(ds), "the next callback follows a failed one")
		for _, d := range ds {
			assert.False(t, d.Delivered)
			require.Len(t, d.Attempts, 2)
			assert.Equal(t, http.StatusServiceUnavailable, d.Attempts[1].StatusCode)
		}
		st := srv.Stats()
		assert.Equal(t, 2, st.CallbacksFailed)
		assert.Equal(t, 4, st.CallbackAttempts)
	})
	t.Run("receiver unreachable", func(t *testing.T) {
		srv := newServer(t, travelruletest.WithCallbackRetry(3, time.Millisecond, time.Millisecond))
		// The query stands for a capability: the errors never quote it.
		_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(closedURL(t)+"?tag=capability-7f3a"))
		require.NoError(t, err)
		ds := waitCallbacks(t, srv, 2)
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
		ds := waitCallbacks(t, srv, 2)
		assert.False(t, ds[0].Delivered)
		assert.Equal(t, http.StatusTemporaryRedirect, ds[0].Attempts[0].StatusCode)
	})
}

// TestCallbackSigning: x-data-integrity by default, under the default
// secret or the one given; Standard Webhooks headers with
// WithStandardWebhooks, and then no x-data-integrity.
func TestCallbackSigning(t *testing.T) {
	secret := []byte("whsec-test-secret-0123456789")
	def := []byte(travelruletest.DefaultSigningSecret)
	for _, tt := range []struct {
		name     string
		opts     []travelruletest.Option
		webhooks bool
		secret   []byte
	}{
		{"default", nil, false, def},
		{"a secret of one's own", []travelruletest.Option{travelruletest.WithCallbackSecret(secret)}, false, secret},
		{"standard webhooks", []travelruletest.Option{travelruletest.WithStandardWebhooks()}, true, def},
		{"standard webhooks with a secret", []travelruletest.Option{travelruletest.WithCallbackSecret(secret), travelruletest.WithStandardWebhooks()}, true, secret},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var verifier, wrong callback.Verifier
			var err error
			if tt.webhooks {
				verifier = &callback.WebhookVerifier{Secrets: [][]byte{tt.secret}}
				wrong = &callback.WebhookVerifier{Secrets: [][]byte{[]byte("another secret, not the one")}}
			} else {
				verifier, err = callback.NewDataIntegrityVerifier(string(tt.secret))
				require.NoError(t, err)
				wrong, err = callback.NewDataIntegrityVerifier("another secret, not the one")
				require.NoError(t, err)
			}
			var mu sync.Mutex
			var verr, werr []error
			rc := newReceiver(t, func(r *http.Request, body []byte, _ int) int {
				mu.Lock()
				defer mu.Unlock()
				verr = append(verr, verifier.Verify(r, body))
				werr = append(werr, wrong.Verify(r, body))
				return http.StatusNoContent
			})
			srv := newServer(t, tt.opts...)
			_, err = newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
			require.NoError(t, err)
			waitCallbacks(t, srv, 2)
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, verr, 2)
			for i := range verr {
				assert.NoError(t, verr[i])
				assert.ErrorIs(t, werr[i], callback.ErrSignature)
			}
			for _, h := range rc.Hits() {
				if !tt.webhooks {
					assert.Equal(t, dataIntegrity(tt.secret, h.Body), h.Header.Get(callback.HeaderDataIntegrity))
					assert.Empty(t, h.Header.Get(callback.HeaderID))
					assert.Empty(t, h.Header.Get(callback.HeaderSignature))
					continue
				}
				assert.Empty(t, h.Header.Get(callback.HeaderDataIntegrity))
				ts, err := strconv.ParseInt(h.Header.Get(callback.HeaderTimestamp), 10, 64)
				require.NoError(t, err)
				want := callback.Sign(tt.secret, h.Header.Get(callback.HeaderID), time.Unix(ts, 0), h.Body)
				assert.Equal(t, want, h.Header.Get(callback.HeaderSignature))
			}
		})
	}
	assert.Panics(t, func() { travelruletest.NewServer(travelruletest.WithCallbackSecret([]byte("too-short"))) },
		"a secret no verifier takes")
	assert.GreaterOrEqual(t, len(travelruletest.DefaultSigningSecret), 16)
}

func TestCallbackHandlerEndToEnd(t *testing.T) {
	// The SDK's callback handler, verifying the live service's signature,
	// as the receiver; its function fails once, so the sandbox delivers
	// again.
	verifier, err := callback.NewDataIntegrityVerifier(travelruletest.DefaultSigningSecret)
	require.NoError(t, err)
	var mu sync.Mutex
	var got []*travelrule.Callback
	failed := false
	h := callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error {
		mu.Lock()
		defer mu.Unlock()
		if cb.Kind == travelrule.KindTransferResolution && !failed {
			failed = true
			return assert.AnError
		}
		got = append(got, cb)
		return nil
	}, callback.WithVerifier(verifier))
	require.NoError(t, h.Err())
	rc := httptest.NewServer(h)
	t.Cleanup(rc.Close)

	srv := newServer(t)
	res, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
	require.NoError(t, err)
	ds := waitCallbacks(t, srv, 2)
	for _, d := range ds {
		assert.True(t, d.Delivered)
	}
	assert.Len(t, ds[1].Attempts, 2)

	received := func() []*travelrule.Callback {
		mu.Lock()
		defer mu.Unlock()
		return append([]*travelrule.Callback(nil), got...)
	}
	cbs := received()
	require.Len(t, cbs, 2)
	assert.Equal(t, travelrule.KindInquiryResolution, cbs[0].Kind)
	assert.Equal(t, travelrule.Approved, cbs[0].Decision())
	assert.Equal(t, "0xfeedbeef", cbs[0].Address, "the beneficiary's wallet")
	assert.Equal(t, srv.URL+"/transfers/txId?q="+res.TransferID, cbs[0].ApprovedCallback)
	assert.Equal(t, travelrule.KindTransferResolution, cbs[1].Kind)
	assert.Equal(t, travelrule.Approved, cbs[1].Decision())
	assert.Equal(t, res.TransferID, cbs[1].TransferID)
	assert.Equal(t, "APPROVED", cbs[1].Status)

	for _, tt := range []struct {
		name string
		opt  travelruletest.Option
	}{
		{"another secret", travelruletest.WithCallbackSecret([]byte("not the receiver's secret"))},
		{"standard webhooks", travelruletest.WithStandardWebhooks()},
	} {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			other := newServer(t, travelruletest.WithCallbackRetry(2, time.Millisecond, time.Millisecond), tt.opt)
			_, err := newClient(t, other).InitiateTransfer(context.Background(), validRequest(rc.URL))
			require.NoError(t, err)
			for _, d := range waitCallbacks(t, other, 2) {
				assert.False(t, d.Delivered)
				assert.Equal(t, http.StatusUnauthorized, d.Attempts[0].StatusCode)
			}
		})
	}
	assert.Len(t, received(), 2, "the function never saw a refused callback")
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
	for _, d := range waitCallbacks(t, srv, 2) {
		assert.True(t, d.Delivered)
		assert.Equal(t, http.StatusAccepted, d.Attempts[0].StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"/tls-cb", "/tls-cb"}, got)
}
