package travelruletest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestFaultsBeforeActing: 429 and 503 with Retry-After are answered
// before the request is acted on, in the service's envelope, with the wait
// in whole seconds rounded up; nothing is stored, and a client with
// idempotency keys retries and stores the transfer once. (Whether a client
// without keys may send an initiation again after a 503 is the client's
// policy: a gateway's 503 after acting looks the same, see
// TestGatewayUnavailable.)
func TestFaultsBeforeActing(t *testing.T) {
	for _, tc := range []struct {
		kind   travelruletest.FaultKind
		status int
		code   string
	}{
		{travelruletest.FaultRateLimit, http.StatusTooManyRequests, "RATE_LIMITED"},
		{travelruletest.FaultUnavailable, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE"},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			srv := newServer(t, travelruletest.WithFaults(travelruletest.Fault{Kind: tc.kind, Rate: 1, Times: 1}))
			res, err := newClient(t, srv, travelrule.WithIdempotency()).InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err, "the client retries")
			assert.Equal(t, 2, res.Attempts)
			assert.Len(t, srv.Transfers(), 1, "the refused attempt stored nothing")
			rs := srv.Requests()
			require.Len(t, rs, 2)
			assert.Equal(t, tc.status, rs[0].Status)
			assert.Equal(t, []travelruletest.FaultKind{tc.kind}, rs[0].Faults)
			assert.Empty(t, rs[0].TransferID, "not acted on")
			assert.Equal(t, http.StatusOK, rs[1].Status)
			assert.Empty(t, rs[1].Faults)
			st := srv.Stats()
			assert.Equal(t, 1, st.Faults)
			assert.Zero(t, st.Replayed, "nothing was stored for the key: the retry acted")

			// Raw: the Retry-After header, in whole seconds rounded up.
			srv.SetFaults(travelruletest.Fault{Kind: tc.kind, Rate: 1, RetryAfter: 1500 * time.Millisecond})
			a := post(t, srv.URL+"/transfers/initiate", token(t, srv), validRequest("http://127.0.0.1:1/cb"))
			assert.Equal(t, tc.status, a.Status)
			assert.Equal(t, "2", a.Header.Get("Retry-After"))
			code, _, _ := a.errorBody(t)
			assert.Equal(t, tc.code, code)
			assert.Len(t, srv.Transfers(), 1)
		})
	}

	// A wait longer than the client honours is returned.
	srv := newServer(t, travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, RetryAfter: time.Minute}))
	_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
	var ae *travelrule.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusTooManyRequests, ae.StatusCode)
	assert.Equal(t, time.Minute, ae.RetryAfter)
	assert.Empty(t, srv.Transfers())
}

func TestFaultsAfterActing(t *testing.T) {
	for _, kind := range []travelruletest.FaultKind{travelruletest.FaultInternal, travelruletest.FaultDrop} {
		t.Run(kind.String(), func(t *testing.T) {
			srv := newServer(t, travelruletest.WithFaults(travelruletest.Fault{Kind: kind, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate}))
			rc := newReceiver(t, nil)
			_, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest(rc.URL))
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the transfer may exist")
			var ou *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &ou)
			assert.Equal(t, 1, ou.Attempts, "initiation is not retried without idempotency")
			ts := srv.Transfers()
			require.Len(t, ts, 1, "stored before the fault")
			waitCallbacks(t, srv, 2) // and its callbacks are sent
			rs := srv.Requests()
			require.Len(t, rs, 1)
			assert.Equal(t, ts[0].ID, rs[0].TransferID)
			if kind == travelruletest.FaultDrop {
				assert.Zero(t, rs[0].Status, "no answer")
				assert.Equal(t, 1, srv.Stats().ByStatus[0])
			} else {
				assert.Equal(t, http.StatusInternalServerError, rs[0].Status)
			}
		})
		t.Run(kind.String()+" with idempotency", func(t *testing.T) {
			srv := newServer(t, travelruletest.WithFaults(travelruletest.Fault{Kind: kind, Rate: 1, Times: 1}))
			res, err := newClient(t, srv, travelrule.WithIdempotency()).InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err, "retried with the same key")
			assert.Equal(t, 2, res.Attempts)
			ts := srv.Transfers()
			require.Len(t, ts, 1, "the retry replayed the stored answer")
			assert.Equal(t, ts[0].ID, res.TransferID)
			assert.Equal(t, 1, srv.Stats().Replayed)
		})
		t.Run(kind.String()+" on resolution", func(t *testing.T) {
			srv := newServer(t, travelruletest.WithFaults(travelruletest.Fault{Kind: kind, Rate: 1, Times: 1, Ops: travelruletest.OpResolve}))
			rc := newReceiver(t, nil)
			c := newClient(t, srv)
			_, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err, "the fault applies to resolution only")
			id, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://x.example/cb"))
			require.NoError(t, err)
			res, err := c.ResolveInquiry(context.Background(), id, &travelrule.InquiryResolution{Approved: "false"})
			require.NoError(t, err, "resolution is retried")
			assert.True(t, res.Status, "the repeated decision is answered true")
			assert.Equal(t, 2, res.Attempts)
			tr, _ := srv.Transfer(id)
			assert.Equal(t, travelruletest.StateRejected, tr.State)
		})
	}
}

func TestFaultSkipsErrorAnswers(t *testing.T) {
	srv := newServer(t, travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 1, Times: 1}))
	tok := token(t, srv)
	bad := validRequest("http://127.0.0.1:1/cb")
	bad.Asset = ""
	a := post(t, srv.URL+"/transfers/initiate", tok, bad)
	assert.Equal(t, http.StatusBadRequest, a.Status, "a 400 stays a 400")
	a = post(t, srv.URL+"/transfers/initiate", "", validRequest("http://127.0.0.1:1/cb"))
	assert.Equal(t, http.StatusUnauthorized, a.Status, "faults come after authentication")
	a = post(t, srv.URL+"/transfers/initiate", tok, validRequest("http://127.0.0.1:1/cb"))
	assert.Equal(t, http.StatusInternalServerError, a.Status, "Times was not used up by the 400")
	a = post(t, srv.URL+"/transfers/initiate", tok, validRequest("http://127.0.0.1:1/cb"))
	assert.Equal(t, http.StatusOK, a.Status)
	assert.Equal(t, 1, srv.Stats().Faults)
	assert.Len(t, srv.Transfers(), 2)
}

func TestFaultLatency(t *testing.T) {
	const holding, served = "travelruletest: holding request", "travelruletest: request"
	events := newLogEvents()
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithLogger(slog.New(events)),
		travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultLatency, Rate: 1, Latency: 30 * time.Millisecond}))
	c := newClient(t, srv)
	start := time.Now()
	_, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)

	// A client that gives up while its request is held ends the wait;
	// nothing is stored.
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultLatency, Rate: 1, Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer cancel()
		if err := events.waitErr(holding, 2); err != nil {
			t.Error(err)
		}
	}()
	_, err = c.InitiateTransfer(ctx, validRequest("http://127.0.0.1:1/cb"))
	require.ErrorIs(t, err, context.Canceled)
	events.wait(t, served, 2) // logged once the request is recorded
	rs := srv.Requests()
	require.Len(t, rs, 2)
	assert.Zero(t, rs[1].Status)
	assert.Equal(t, []travelruletest.FaultKind{travelruletest.FaultLatency}, rs[1].Faults)
	assert.Len(t, srv.Transfers(), 1)

	// Close ends the wait too, and the held request gets no answer at all.
	done := make(chan error, 1)
	go func() {
		_, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
		done <- err
	}()
	events.wait(t, holding, 3)
	srv.Close()
	err = <-done
	assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the request was sent and never answered")
	var apiErr *travelrule.APIError
	assert.False(t, errors.As(err, &apiErr), "no answer, not an empty 200: %v", err)
}

// TestHoldingLineCarriesRequestID: the line logged when a request is held
// names the client's X-Request-Id when it is a short identifier, and
// carries no request_id otherwise.
func TestHoldingLineCarriesRequestID(t *testing.T) {
	var logs safeBuffer
	srv := newServer(t, travelruletest.WithoutCallbacks(),
		travelruletest.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
		travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultLatency, Rate: 1, Latency: time.Millisecond}))
	tok, err := srv.TokenSource().Token()
	require.NoError(t, err)
	body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	for _, tt := range []struct{ sent, logged string }{
		{"req-42", "req-42"},
		{"", ""},
		{"Ada Lovelace", ""},
		{strings.Repeat("x", 65), ""},
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/transfers/initiate", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		if tt.sent != "" {
			req.Header.Set("X-Request-Id", tt.sent)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)

		var line map[string]any // the last holding line: this request's
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			if m["msg"] == "travelruletest: holding request" {
				line = m
			}
		}
		require.NotNil(t, line, "holding line for %q", tt.sent)
		if tt.logged == "" {
			assert.NotContains(t, line, "request_id", "%q", tt.sent)
		} else {
			assert.Equal(t, tt.logged, line["request_id"])
		}
	}
}

func TestFaultsDeterministic(t *testing.T) {
	run := func(seed uint64) []int {
		srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithSeed(seed), travelruletest.WithFaults(
			travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 0.3},
			travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 0.3},
		))
		tok := token(t, srv)
		var out []int
		for range 60 {
			out = append(out, post(t, srv.URL+"/transfers/initiate", tok, validRequest("http://127.0.0.1:1/cb")).Status)
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	assert.Equal(t, a, b, "same seed, same faults")
	assert.NotEqual(t, a, c, "another seed, other faults")
	count := map[int]int{}
	for _, s := range a {
		count[s]++
	}
	assert.Positive(t, count[http.StatusTooManyRequests])
	assert.Positive(t, count[http.StatusInternalServerError])
	assert.Positive(t, count[http.StatusOK])
}

func TestFaultRate(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultUnavailable, Rate: 0.25}))
	tok := token(t, srv)
	n := 0
	for range 400 {
		if post(t, srv.URL+"/transfers/initiate", tok, validRequest("http://127.0.0.1:1/cb")).Status == http.StatusServiceUnavailable {
			n++
		}
	}
	assert.InDelta(t, 100, n, 40)
	assert.Len(t, srv.Transfers(), 400-n)
}

func TestSetFaultsConcurrently(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	c := newClient(t, srv, travelrule.WithRetryMax(10))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			if i%2 == 0 {
				srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 0.5})
			} else {
				srv.SetFaults()
			}
			_ = srv.Stats()
			_ = srv.Requests()
		}
	}()
	var errs sync.Map
	var cw sync.WaitGroup
	for i := range 8 {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for range 25 {
				if _, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb")); err != nil {
					errs.Store(i, err)
				}
			}
		}()
	}
	cw.Wait()
	cancel()
	wg.Wait()
	errs.Range(func(_, v any) bool {
		assert.True(t, errors.Is(v.(error), travelrule.ErrRateLimited), "%v", v)
		return true
	})
	assert.Positive(t, len(srv.Transfers()))
}

func TestInvalidFaultPanics(t *testing.T) {
	srv := newServer(t)
	for name, f := range map[string]travelruletest.Fault{
		"no kind":        {Rate: 1},
		"rate above one": {Kind: travelruletest.FaultDrop, Rate: 1.5},
		"negative rate":  {Kind: travelruletest.FaultDrop, Rate: -0.1},
		"unknown op":     {Kind: travelruletest.FaultDrop, Rate: 1, Ops: 32},
		"kind past last": {Kind: travelruletest.FaultGatewayUnavailable + 1, Rate: 1},
		"negative times": {Kind: travelruletest.FaultDrop, Rate: 1, Times: -1},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Panics(t, func() { srv.SetFaults(f) })
			assert.Panics(t, func() { travelruletest.NewServer(travelruletest.WithFaults(f)).Close() })
		})
	}
}

func TestOperationString(t *testing.T) {
	for op, want := range map[travelruletest.Operation]string{
		0:                                      "",
		travelruletest.OpInitiate:              "initiate",
		travelruletest.OpResolve:               "resolve",
		travelruletest.OpGenerateTravelAddress: "generate-travel-address",
		travelruletest.OpDecodeTravelAddress:   "decode-travel-address",
		travelruletest.OpSubmitTxID:            "submit-txid",
		travelruletest.OpInitiate | travelruletest.OpResolve:                 "initiate|resolve",
		travelruletest.OpGenerateTravelAddress | travelruletest.OpSubmitTxID: "generate-travel-address|submit-txid",
		travelruletest.OpSubmitTxID | 32:                                     "Operation(48)",
	} {
		assert.Equal(t, want, op.String())
	}
}

func TestFaultKindString(t *testing.T) {
	for kind, want := range map[travelruletest.FaultKind]string{
		travelruletest.FaultLatency:                "latency",
		travelruletest.FaultRateLimit:              "rate-limit",
		travelruletest.FaultUnavailable:            "unavailable",
		travelruletest.FaultInternal:               "internal",
		travelruletest.FaultDrop:                   "drop",
		travelruletest.FaultResetProtocolError:     "reset-protocol-error",
		travelruletest.FaultResetRefusedStream:     "reset-refused-stream",
		travelruletest.FaultGoAway:                 "goaway",
		travelruletest.FaultProxyUnavailable:       "proxy-unavailable",
		travelruletest.FaultGatewayUnavailable:     "gateway-unavailable",
		travelruletest.FaultGatewayUnavailable + 1: "FaultKind(11)",
	} {
		assert.Equal(t, want, kind.String())
	}
}

// TestGatewayUnavailable: FaultGatewayUnavailable stores the transfer, then
// answers 503 with Retry-After and a gateway's maintenance page, not the
// service's envelope; with an Idempotency-Key the retry is replayed the
// stored success, and a resolution hit by it is retried and recorded once.
func TestGatewayUnavailable(t *testing.T) {
	for _, newSrv := range []func(testing.TB, ...travelruletest.Option) *travelruletest.Server{newServer, newTLSServer} {
		srv := newSrv(t, travelruletest.WithoutCallbacks(), travelruletest.WithFaults(travelruletest.Fault{
			Kind: travelruletest.FaultGatewayUnavailable, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate, RetryAfter: time.Second}))
		body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/transfers/initiate", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token(t, srv))
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		var page map[string]any
		require.NoError(t, json.Unmarshal(b, &page))
		assert.Equal(t, true, page["maintenance"])
		assert.NotContains(t, page, "errors", "not the service's envelope")
		ts := srv.Transfers()
		require.Len(t, ts, 1, "acted on before the 503")
		rs := srv.Requests()
		require.Len(t, rs, 1)
		assert.Equal(t, ts[0].ID, rs[0].TransferID)
		assert.Equal(t, http.StatusServiceUnavailable, rs[0].Status)
		assert.Equal(t, []travelruletest.FaultKind{travelruletest.FaultGatewayUnavailable}, rs[0].Faults)

		srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultGatewayUnavailable, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate})
		c := newClient(t, srv, travelrule.WithIdempotency(), travelrule.WithHTTPClient(srv.Client()))
		res, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
		require.NoError(t, err, "the keyed retry is replayed the stored success")
		assert.Equal(t, 2, res.Attempts)
		require.Len(t, srv.Transfers(), 2)
		assert.Equal(t, srv.Transfers()[1].ID, res.TransferID)
		assert.Equal(t, 1, srv.Stats().Replayed)

		rc := newReceiver(t, nil)
		id, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://x.example/cb"))
		require.NoError(t, err)
		srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultGatewayUnavailable, Rate: 1, Times: 1, Ops: travelruletest.OpResolve})
		rr, err := c.ResolveInquiry(context.Background(), id, &travelrule.InquiryResolution{Approved: "false"})
		require.NoError(t, err, "resolution is retried")
		assert.True(t, rr.Status, "the repeated decision is answered true")
		assert.Equal(t, 2, rr.Attempts)
		tr, _ := srv.Transfer(id)
		assert.Equal(t, travelruletest.StateRejected, tr.State, "recorded by the first request")
		assert.Equal(t, 1, srv.Stats().Resolutions)
	}
}

// TestFaultRateUnsetHitsEveryRequest: a Fault without a Rate hits every
// request, as the CLI's --fault and the control plane's faults without a
// rate do; to hit none, a caller leaves the fault out. Each kind, Rate
// unset, set in-process or through the ControlClient, fires on the first
// request it applies to.
func TestFaultRateUnsetHitsEveryRequest(t *testing.T) {
	set := map[string]func(*testing.T, *travelruletest.Server, travelruletest.Fault){
		"SetFaults": func(_ *testing.T, srv *travelruletest.Server, f travelruletest.Fault) { srv.SetFaults(f) },
		"ControlClient": func(t *testing.T, srv *travelruletest.Server, f travelruletest.Fault) {
			require.NoError(t, travelruletest.NewControlClient(srv.URL).SetFaults(context.Background(), f))
		},
	}
	for k := travelruletest.FaultLatency; k <= travelruletest.FaultGatewayUnavailable; k++ {
		for how, setFault := range set {
			t.Run(k.String()+" by "+how, func(t *testing.T) {
				f := travelruletest.Fault{Kind: k, Times: 1, Ops: travelruletest.OpGenerateTravelAddress}
				if k == travelruletest.FaultLatency {
					f.Latency = time.Millisecond
				}
				srv := newServer(t, travelruletest.WithoutCallbacks())
				setFault(t, srv, f)
				_, _ = newClient(t, srv, travelrule.WithRetryMax(0)).GenerateTravelAddress(context.Background(),
					&travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "Alan", LastName: "Turing"})
				var faults []travelruletest.FaultKind
				for _, r := range srv.Requests() {
					if r.Op == travelruletest.OpGenerateTravelAddress {
						faults = append(faults, r.Faults...)
					}
				}
				assert.Equal(t, []travelruletest.FaultKind{k}, faults, "fired")
				assert.Equal(t, 1, srv.Stats().ByFault[k])
			})
		}
	}
}
