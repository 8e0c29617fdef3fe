package travelruletest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestControlClientFaults: every kind of fault set over HTTP by the
// control client hits the next initiation as the in-process SetFaults
// would, seen through the SDK (one attempt, no retry), and SetFaults with
// none turns injection off.
func TestControlClientFaults(t *testing.T) {
	for _, tt := range []struct {
		kind   travelruletest.FaultKind
		want   error // what the SDK's error matches; nil: no error
		stored bool  // the transfer was stored
	}{
		{travelruletest.FaultLatency, nil, true},
		{travelruletest.FaultRateLimit, travelrule.ErrRateLimited, false},
		{travelruletest.FaultUnavailable, travelrule.ErrServer, false},
		{travelruletest.FaultInternal, travelrule.ErrOutcomeUnknown, true},
		{travelruletest.FaultDrop, travelrule.ErrOutcomeUnknown, true},
		{travelruletest.FaultResetProtocolError, travelrule.ErrOutcomeUnknown, true},
		{travelruletest.FaultResetRefusedStream, nil, false},
		{travelruletest.FaultGoAway, nil, false},
		{travelruletest.FaultProxyUnavailable, travelrule.ErrOutcomeUnknown, true},
		{travelruletest.FaultGatewayUnavailable, travelrule.ErrOutcomeUnknown, true},
	} {
		t.Run(tt.kind.String(), func(t *testing.T) {
			srv := newServer(t, travelruletest.WithoutCallbacks())
			cc := travelruletest.NewControlClient(srv.URL)
			ctx := context.Background()
			require.NoError(t, cc.SetFaults(ctx, travelruletest.Fault{Kind: tt.kind, Rate: 1, Times: 1,
				Ops: travelruletest.OpInitiate, RetryAfter: time.Second, Latency: time.Millisecond}))
			sdk := newClient(t, srv, travelrule.WithRetryMax(0))
			_, err := sdk.InitiateTransfer(ctx, validRequest("https://originator.example/cb"))
			switch {
			case tt.want != nil:
				require.ErrorIs(t, err, tt.want)
			case tt.kind == travelruletest.FaultLatency:
				require.NoError(t, err)
			default:
				require.Error(t, err, "a connection closed before acting")
			}
			assert.Equal(t, 1, srv.Stats().ByFault[tt.kind], "the fault hit the initiation")
			assert.Len(t, srv.Transfers(), map[bool]int{false: 0, true: 1}[tt.stored])

			// Times 1: the next initiation passes; and none clears.
			require.NoError(t, cc.SetFaults(ctx, travelruletest.Fault{Kind: tt.kind, Rate: 1, Ops: travelruletest.OpInitiate}))
			require.NoError(t, cc.SetFaults(ctx))
			_, err = sdk.InitiateTransfer(ctx, validRequest("https://originator.example/cb"))
			require.NoError(t, err)
		})
	}
}

// TestControlClientDecision: the decision set over HTTP decides the next
// initiations: the originator hears an approval, a rejection, or nothing
// (the transfer stays received); the zero decision gives it back to
// WithApproval.
func TestControlClientDecision(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := newServer(t, travelruletest.WithApproval(func(travelrule.TransferRequest) bool { return false }))
	cc := travelruletest.NewControlClient(srv.URL)
	sdk := newClient(t, srv)
	ctx := context.Background()
	for _, tt := range []struct {
		decision  travelruletest.Decision
		state     travelruletest.State
		approved  string // the INQUIRY_RESOLUTION's approved member; "": none sent
		callbacks int    // an approval gets two, a rejection one
	}{
		{travelruletest.DecisionApprove, travelruletest.StateCompleted, "{", 2},
		{travelruletest.DecisionReject, travelruletest.StateRejected, "false", 1},
		{travelruletest.DecisionNone, travelruletest.StateReceived, "", 0},
		{"", travelruletest.StateRejected, "false", 1}, // WithApproval's
	} {
		t.Run(string(tt.decision), func(t *testing.T) {
			require.NoError(t, cc.SetDecision(ctx, tt.decision))
			res, err := sdk.InitiateTransfer(ctx, validRequest(rc.URL+"/cb"))
			require.NoError(t, err)
			if tt.approved == "" {
				tr, ds, err := cc.Transfer(ctx, res.TransferID)
				require.NoError(t, err)
				assert.Equal(t, travelruletest.StateReceived, tr.State)
				assert.Empty(t, ds)
				return
			}
			require.Eventually(t, func() bool {
				tr, ds, err := cc.Transfer(ctx, res.TransferID)
				return err == nil && tr.State == tt.state && len(ds) == tt.callbacks
			}, 30*time.Second, time.Millisecond)
			_, ds, err := cc.Transfer(ctx, res.TransferID)
			require.NoError(t, err)
			assert.Equal(t, travelruletest.KindInquiryResolution, ds[0].Kind)
			assert.True(t, ds[0].Delivered)
			var approved string
			for _, h := range rc.Hits() {
				if cb := h.callback(t); cb.Approved != nil {
					approved = string(cb.Approved)
				}
			}
			assert.True(t, strings.HasPrefix(approved, tt.approved), "the last INQUIRY_RESOLUTION: %s", approved)
		})
	}
	assert.Panics(t, func() { srv.SetDecision("maybe") })
	assert.Error(t, cc.SetDecision(ctx, "maybe"))
}

// TestControlClientInquiry: StartInquiry over HTTP sends the receiver an
// INQUIRY of the sample transfer (nil request) or of the request given,
// and Transfer shows it delivered.
func TestControlClientInquiry(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := newServer(t)
	cc := travelruletest.NewControlClient(srv.URL + "/")
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		req   *travelrule.TransferRequest
		asset string
	}{
		{"sample", nil, "BTC"},
		{"given", func() *travelrule.TransferRequest {
			r := validRequest("ignored")
			r.Asset = "ETH"
			return r
		}(), "ETH"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id, err := cc.StartInquiry(ctx, rc.URL+"/inbound/"+tt.name, tt.req)
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				_, ds, err := cc.Transfer(ctx, id)
				return err == nil && len(ds) == 1
			}, 30*time.Second, time.Millisecond)
			tr, ds, err := cc.Transfer(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, travelruletest.StateInquiry, tr.State)
			assert.True(t, tr.Inquiry)
			assert.False(t, tr.Created.IsZero())
			assert.Equal(t, travelruletest.KindInquiry, ds[0].Kind)
			assert.Equal(t, rc.URL+"/inbound/"+tt.name, ds[0].URL)
			assert.True(t, ds[0].Delivered)
			require.Len(t, ds[0].Attempts, 1)
			assert.Equal(t, http.StatusNoContent, ds[0].Attempts[0].StatusCode)
			got, ok := srv.Transfer(id)
			require.True(t, ok)
			assert.Equal(t, tt.asset, got.Request.Asset)
		})
	}
}

// TestControlClientErrors: the sandbox's refusals are *travelrule.APIError
// matched by the SDK's sentinels; a fault the server would refuse is not
// sent.
func TestControlClientErrors(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	cc := travelruletest.NewControlClient(srv.URL)
	_, _, err := cc.Transfer(ctx, "no-such-transfer")
	require.ErrorIs(t, err, travelrule.ErrNotFound)
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "TRANSFER_NOT_FOUND", apiErr.Code)
	assert.ErrorIs(t, err, travelrule.CodeTransferNotFound)

	_, err = cc.StartInquiry(ctx, "not a URL", nil)
	require.ErrorIs(t, err, travelrule.ErrBadRequest)
	bad := validRequest("")
	bad.Asset, bad.Amount = "", ""
	_, err = cc.StartInquiry(ctx, "https://vasp.example/inbound", bad)
	require.ErrorAs(t, err, &apiErr)
	var fields []string
	for _, f := range apiErr.Fields {
		fields = append(fields, f.Field)
	}
	assert.Equal(t, []string{"amount"}, fields, "the empty asset's entry is the live docs' example, without a field")
	assert.Equal(t, []string{"INVALID_REQUEST", "VALIDATION_ERROR"}, apiErr.Codes)
	assert.NotContains(t, err.Error(), "Lovelace", "no personal data")

	before := srv.Stats().Requests
	assert.Error(t, cc.SetFaults(ctx, travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 2}))
	assert.Equal(t, before, srv.Stats().Requests, "nothing sent")

	wrongKey := travelruletest.NewControlClient(srv.URL, travelruletest.WithControlAPIKey("not-the-key"))
	err = wrongKey.SetFaults(ctx)
	require.ErrorIs(t, err, travelrule.ErrUnauthorized)
	assert.NotContains(t, err.Error(), "not-the-key")
}

// TestControlClientTLS: with the HTTP client given, the control client
// reaches a TLS sandbox.
func TestControlClientTLS(t *testing.T) {
	srv := newTLSServer(t)
	ctx := context.Background()
	require.Error(t, travelruletest.NewControlClient(srv.URL).SetDecision(ctx, travelruletest.DecisionReject), "the certificate is not trusted")
	cc := travelruletest.NewControlClient(srv.URL, travelruletest.WithControlHTTPClient(srv.Client()))
	require.NoError(t, cc.SetDecision(ctx, travelruletest.DecisionReject))
}

// TestControlClientRenewsItsToken: a token that expired (403) is replaced
// by a new login, once, and the call goes through.
func TestControlClientRenewsItsToken(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	srv := newServer(t, travelruletest.WithClock(clock), travelruletest.WithTokenLifetime(time.Minute))
	cc := travelruletest.NewControlClient(srv.URL)
	ctx := context.Background()
	require.NoError(t, cc.SetDecision(ctx, travelruletest.DecisionReject))
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	require.NoError(t, cc.SetDecision(ctx, travelruletest.DecisionApprove))
	var logins, refused int
	for _, r := range srv.Requests() {
		switch {
		case strings.HasSuffix(r.Path, "/auth/token"):
			logins++
		case r.Status == http.StatusForbidden:
			refused++
		}
	}
	assert.Equal(t, 2, logins)
	assert.Equal(t, 1, refused, "the expired token")
}

// TestControlClientFollowsNoRedirect: a redirect of the login to another
// host gets neither the API key nor anything else; the login fails.
func TestControlClientFollowsNoRedirect(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("X-Api-Key"))
	}))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	for _, opts := range [][]travelruletest.ControlOption{nil, {travelruletest.WithControlHTTPClient(&http.Client{})}} {
		c := travelruletest.NewControlClient(redirecting.URL, append(opts, travelruletest.WithControlAPIKey("planted-api-key-123"))...)
		err := c.SetDecision(context.Background(), travelruletest.DecisionApprove)
		require.Error(t, err)
		assert.Nil(t, leaked.Load(), "the other host got a request")
	}
}

// TestControlClientWaitEndsWithItsContext: a caller waiting behind
// another's login gives up when its own context ends.
func TestControlClientWaitEndsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	defer hang.Close()
	defer close(release)
	c := travelruletest.NewControlClient(hang.URL)
	go func() { _ = c.SetDecision(context.Background(), travelruletest.DecisionApprove) }()
	<-entered // the first caller's login is held
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.SetDecision(ctx, travelruletest.DecisionReject) }()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}
