package oteltravelrule_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestMetrics: the metrics' values after a scripted run with faults: one
// initiation that succeeds, one after a 429, one whose outcome is unknown,
// one whose connection dropped after storing, one invalid, one resolution
// refused, one call whose login is refused, and three callbacks (one processed, one duplicate, one with a bad
// signature).
func TestMetrics(t *testing.T) {
	tel := newTelemetry(t)
	srv, client := sandbox(t, tel)
	addr, err := url.Parse(srv.URL)
	require.NoError(t, err)
	ctx := context.Background()

	_, err = client.InitiateTransfer(ctx, transfer())
	require.NoError(t, err)
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate})
	_, err = client.InitiateTransfer(ctx, transfer())
	require.NoError(t, err)
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate})
	_, err = client.InitiateTransfer(ctx, transfer())
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultDrop, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate})
	_, err = client.InitiateTransfer(ctx, transfer())
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	_, err = client.InitiateTransfer(ctx, &travelrule.TransferRequest{})
	require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	_, err = client.ResolveInquiry(ctx, unknownTransfer, travelrule.Reject())
	require.ErrorIs(t, err, travelrule.ErrNotFound)

	refusedKey, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.InactiveAPIKey), travelrule.WithObserver(tel.obs))
	require.NoError(t, err)
	_, err = refusedKey.InitiateTransfer(ctx, transfer())
	require.ErrorIs(t, err, travelrule.ErrAPIKeyRefused)
	loggedIn, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey), travelrule.WithObserver(tel.obs))
	require.NoError(t, err)
	require.NoError(t, loggedIn.Login(ctx))

	cb := receiver(t, tel, func(context.Context, *travelrule.Callback) error { return nil })
	require.Equal(t, 204, deliver(t, cb.URL, resolutionBody, travelruletest.DefaultSigningSecret))
	require.Equal(t, 204, deliver(t, cb.URL, resolutionBody, travelruletest.DefaultSigningSecret))
	// Another transfer's resolution: a second first delivery, so that
	// firsts and duplicates count differently.
	other := strings.Replace(resolutionBody, "6b1e4c1e", "7c2f5d2f", 1)
	require.Equal(t, 204, deliver(t, cb.URL, other, travelruletest.DefaultSigningSecret))
	require.Equal(t, 401, deliver(t, cb.URL, resolutionBody, "another-secret-of-16-bytes-or-more"))
	cb.Close() // waits for the handler to return: the deliveries are counted

	rm := tel.metrics(t)
	assert.Equal(t, map[string]int64{
		"travelrule.operation=InitiateTransfer,travelrule.outcome=success":         2,
		"travelrule.operation=InitiateTransfer,travelrule.outcome=outcome_unknown": 2,
		"travelrule.operation=InitiateTransfer,travelrule.outcome=validation":      1,
		"travelrule.operation=InitiateTransfer,travelrule.outcome=error":           1,
		"travelrule.operation=ResolveInquiry,travelrule.outcome=refused":           1,
	}, points(t, rm, "travelrule.client.call.duration"), "calls, counted by the histogram")
	assert.Equal(t, map[string]int64{
		"http.response.status_code=200,travelrule.operation=InitiateTransfer,travelrule.retry=false": 2,
		"http.response.status_code=429,travelrule.operation=InitiateTransfer,travelrule.retry=true":  1,
		"http.response.status_code=500,travelrule.operation=InitiateTransfer,travelrule.retry=false": 1,
		"http.response.status_code=404,travelrule.operation=ResolveInquiry,travelrule.retry=false":   1,
		"error.type=connection_closed,travelrule.operation=InitiateTransfer,travelrule.retry=false":  1,
	}, points(t, rm, "travelrule.client.attempts"))
	assert.Equal(t, map[string]int64{"travelrule.operation=InitiateTransfer": 2}, points(t, rm, "travelrule.client.outcome_unknown"))
	assert.Equal(t, map[string]int64{
		"travelrule.token.result=ok":                             2,
		"error.type=token_refused,travelrule.token.result=error": 1,
	}, points(t, rm, "travelrule.client.token.fetches"), "the first client's token source, the good login, the refused one")
	assert.Equal(t, map[string]int64{
		"travelrule.callback.kind=transfer_resolution,travelrule.callback.result=processed": 2,
		"travelrule.callback.kind=transfer_resolution,travelrule.callback.result=duplicate": 1,
		"travelrule.callback.result=unauthenticated":                                        1,
	}, points(t, rm, "travelrule.callback.deliveries"))
	assert.Equal(t, map[string]int64{"travelrule.callback.kind=transfer_resolution": 1}, points(t, rm, "travelrule.callback.duplicates"))
	server := "server.address=127.0.0.1,server.port=" + addr.Port()
	assert.Equal(t, map[string]int64{
		"http.request.method=POST,http.response.status_code=200," + server + ",url.template=/transfers/initiate":                         2,
		"error.type=429,http.request.method=POST,http.response.status_code=429," + server + ",url.template=/transfers/initiate":          1,
		"error.type=500,http.request.method=POST,http.response.status_code=500," + server + ",url.template=/transfers/initiate":          1,
		"error.type=404,http.request.method=POST,http.response.status_code=404," + server + ",url.template=/transfers/inquiryResolution": 1,
		"error.type=connection_closed,http.request.method=POST," + server + ",url.template=/transfers/initiate":                          1,
	}, points(t, rm, "http.client.request.duration"))

	// The instruments' kinds and units.
	want := map[string]string{
		"travelrule.client.call.duration": "s", "http.client.request.duration": "s",
		"travelrule.client.attempts": "{attempt}", "travelrule.client.outcome_unknown": "{call}",
		"travelrule.client.token.fetches": "{fetch}", "travelrule.callback.deliveries": "{delivery}",
		"travelrule.callback.duplicates": "{delivery}",
	}
	got := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, "github.com/vaspkit/travelrule/oteltravelrule", sm.Scope.Name)
		assert.Equal(t, travelrule.Version, sm.Scope.Version)
		for _, m := range sm.Metrics {
			got[m.Name] = m.Unit
			switch m.Name {
			case "travelrule.client.call.duration", "http.client.request.duration":
				assert.IsType(t, metricdata.Histogram[float64]{}, m.Data, m.Name)
			default:
				sum, ok := m.Data.(metricdata.Sum[int64])
				if assert.True(t, ok, m.Name) {
					assert.True(t, sum.IsMonotonic, "%s is a counter", m.Name)
				}
			}
		}
	}
	assert.Equal(t, want, got)
}
