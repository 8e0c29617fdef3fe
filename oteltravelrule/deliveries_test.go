package oteltravelrule_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// resolutionBody is a TRANSFER_RESOLUTION of the live service.
const resolutionBody = `{"transferId":"6b1e4c1e-2f0a-4d7b-9a43-0c1d2e3f4a5b","status":"APPROVED","statusComment":"ok"}`

// receiver serves a callback.Handler that reports to tel and calls fn,
// verifying the sandbox's signature.
func receiver(t *testing.T, tel *telemetry, fn func(context.Context, *travelrule.Callback) error, opts ...callback.Option) *httptest.Server {
	t.Helper()
	v, err := callback.NewDataIntegrityVerifier(travelruletest.DefaultSigningSecret)
	require.NoError(t, err)
	h := callback.NewHandler(fn, append([]callback.Option{callback.WithVerifier(v), callback.WithObserver(tel.obs)}, opts...)...)
	require.NoError(t, h.Err())
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// deliver posts body to url, signed with secret (unsigned when ""), and
// returns the status.
func deliver(t *testing.T, url, body, secret string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set(callback.HeaderDataIntegrity, callback.SignDataIntegrity([]byte(secret), []byte(body)))
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode
}

// TestDeliverySpans: each request the handler serves is a SERVER span
// named travelrule.callback, with what the handler made of it.
func TestDeliverySpans(t *testing.T) {
	secret := travelruletest.DefaultSigningSecret
	tests := []struct {
		name   string
		body   string
		secret string
		fail   bool
		status int
		code   codes.Code
		attrs  map[attribute.Key]any
	}{
		{"processed", resolutionBody, secret, false, 204, codes.Unset, map[attribute.Key]any{
			"travelrule.callback.kind": "transfer_resolution", "travelrule.callback.result": "processed",
			"travelrule.callback.verification": "passed", "travelrule.callback.dedup": "first", "http.response.status_code": int64(204),
		}},
		{"a bad signature", resolutionBody, "another-secret-of-16-bytes-or-more", false, 401, codes.Unset, map[attribute.Key]any{
			"travelrule.callback.result": "unauthenticated", "travelrule.callback.verification": "failed",
			"http.response.status_code": int64(401),
		}},
		{"the function fails", resolutionBody, secret, true, 500, codes.Error, map[attribute.Key]any{
			"travelrule.callback.kind": "transfer_resolution", "travelrule.callback.result": "failed",
			"travelrule.callback.verification": "passed", "travelrule.callback.dedup": "first",
			"http.response.status_code": int64(500), "error.type": "500",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := newTelemetry(t)
			var fnSpan trace.SpanContext
			srv := receiver(t, tel, func(ctx context.Context, _ *travelrule.Callback) error {
				fnSpan = trace.SpanContextFromContext(ctx)
				if tt.fail {
					return errors.New("the integrator's failure, Ada Lovelace")
				}
				return nil
			})
			require.Equal(t, tt.status, deliver(t, srv.URL, tt.body, tt.secret))
			srv.Close() // waits for the handler to return: the span has ended
			spans := tel.ended()
			require.Len(t, spans, 1)
			s := spans[0]
			assert.Equal(t, "travelrule.callback", s.Name())
			assert.Equal(t, trace.SpanKindServer, s.SpanKind())
			assert.Equal(t, tt.code, s.Status().Code)
			if tt.code == codes.Error {
				assert.Equal(t, "not processed, to be delivered again", s.Status().Description)
			}
			assert.Equal(t, tt.attrs, attrs(s))
			assert.Empty(t, s.Events())
			if tt.secret == secret {
				assert.Equal(t, s.SpanContext(), fnSpan, "the function runs under the delivery's span")
			}
		})
	}
}

// TestDeliverySpansDuplicate: a callback delivered again after it was
// processed is a duplicate, acknowledged without the function.
func TestDeliverySpansDuplicate(t *testing.T) {
	tel := newTelemetry(t)
	calls := 0
	srv := receiver(t, tel, func(context.Context, *travelrule.Callback) error { calls++; return nil })
	require.Equal(t, 204, deliver(t, srv.URL, resolutionBody, travelruletest.DefaultSigningSecret))
	require.Equal(t, 204, deliver(t, srv.URL, resolutionBody, travelruletest.DefaultSigningSecret))
	srv.Close()
	assert.Equal(t, 1, calls)
	spans := tel.ended()
	require.Len(t, spans, 2)
	assert.Equal(t, "first", attrs(spans[0])["travelrule.callback.dedup"])
	assert.Equal(t, map[attribute.Key]any{
		"travelrule.callback.kind": "transfer_resolution", "travelrule.callback.result": "duplicate",
		"travelrule.callback.verification": "passed", "travelrule.callback.dedup": "duplicate", "http.response.status_code": int64(204),
	}, attrs(spans[1]))
}

// TestDeliveredIsNeutral: the observer never makes a handler refuse a
// delivery.
func TestDeliveredIsNeutral(t *testing.T) {
	tel := newTelemetry(t)
	assert.NoError(t, tel.obs.Delivered(context.Background(), &callback.Delivery{ID: "x"}))
}

// TestEndDeliveryEndsOnlyItsOwnSpan: given a context without its own span
// (a caller's span in it), EndDelivery ends nothing.
func TestEndDeliveryEndsOnlyItsOwnSpan(t *testing.T) {
	tel := newTelemetry(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	ctx, caller := tp.Tracer("test").Start(context.Background(), "caller")
	tel.obs.EndDelivery(ctx, &callback.DeliveryEnd{Result: callback.DeliveryProcessed, Status: 204})
	assert.True(t, caller.IsRecording(), "the caller's span is not ended")
	assert.Empty(t, tel.ended())
}

// The live service's four signed callbacks (live-service.md, Callbacks):
// the INQUIRY with its IVMS101 payload (testdata), INQUIRY_RESOLUTION,
// TRANSFER_RESOLUTION and TRANSFER_CONFIRMATION.
var (
	liveInquiryResolution    = `{"approved":{"address":"bc1qodalyswallet00000000000000000000000","callback":"https://trp.travel-rule.com/transfers/txId?q=t-42"},"callback":"https://vasp.example/travelrule/callback"}`
	liveTransferResolution   = `{"transferId":"t-42","status":"REJECTED","statusComment":"the beneficiary is not our customer","callback":"https://vasp.example/travelrule/callback"}`
	liveTransferConfirmation = `{"txid":"0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"}`
)

// TestDeliverySpansOfTheLiveCallbacks: each of the live service's four
// callbacks, signed with x-data-integrity as it signs them, is a span of
// its kind, verified, processed, then a duplicate; none of its content is
// exported.
func TestDeliverySpansOfTheLiveCallbacks(t *testing.T) {
	inquiry, err := os.ReadFile("../testdata/callback_inquiry_live.json")
	require.NoError(t, err)
	for _, tc := range []struct {
		kind travelrule.CallbackKind
		body string
	}{
		{travelrule.KindInquiry, strings.TrimSpace(string(inquiry))},
		{travelrule.KindInquiryResolution, liveInquiryResolution},
		{travelrule.KindTransferResolution, liveTransferResolution},
		{travelrule.KindTransferConfirmation, liveTransferConfirmation},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			tel := newTelemetry(t)
			srv := receiver(t, tel, func(context.Context, *travelrule.Callback) error { return nil })
			require.Equal(t, 204, deliver(t, srv.URL, tc.body, travelruletest.DefaultSigningSecret))
			require.Equal(t, 204, deliver(t, srv.URL, tc.body, travelruletest.DefaultSigningSecret))
			srv.Close()
			spans := tel.named("travelrule.callback")
			require.Len(t, spans, 2)
			for i, s := range spans {
				a := attrs(s)
				assert.Equal(t, trace.SpanKindServer, s.SpanKind())
				assert.Equal(t, string(tc.kind), a["travelrule.callback.kind"])
				assert.Equal(t, "passed", a["travelrule.callback.verification"])
				assert.Equal(t, []string{"processed", "duplicate"}[i], a["travelrule.callback.result"])
			}
			exported := fmt.Sprint(attrs(spans[0]), attrs(spans[1]))
			for _, v := range []string{"t-42", "bc1qodalyswallet", "0x5c504ed4", "beneficiary is not", "vasp.example"} {
				assert.NotContains(t, exported, v)
			}
		})
	}
}

// TestDeliverySpanUnderAServerSpan: a handler mounted under an otelhttp-like
// SERVER span gives an INTERNAL span under it, so that one request is one
// SERVER span; a lost completion is an error, counted.
func TestDeliverySpanUnderAServerSpan(t *testing.T) {
	tel := newTelemetry(t)
	v, err := callback.NewDataIntegrityVerifier(travelruletest.DefaultSigningSecret)
	require.NoError(t, err)
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(v), callback.WithObserver(tel.obs), callback.WithStore(claimLostStore{}))
	tracer := tel.provider.Tracer("otelhttp-like")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := tracer.Start(r.Context(), "POST /travelrule/callback", trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	require.Equal(t, 204, deliver(t, srv.URL, liveTransferResolution, travelruletest.DefaultSigningSecret))
	srv.Close()
	spans := tel.named("travelrule.callback")
	require.Len(t, spans, 1)
	assert.Equal(t, trace.SpanKindInternal, spans[0].SpanKind())
	assert.Equal(t, true, attrs(spans[0])["travelrule.callback.completion_lost"])
	assert.Equal(t, codes.Error, spans[0].Status().Code)
	assert.Equal(t, map[string]int64{"travelrule.callback.kind=transfer_resolution": 1},
		points(t, tel.metrics(t), "travelrule.callback.completions_lost"))
}

// claimLostStore claims every delivery and then loses the claim.
type claimLostStore struct{}

func (claimLostStore) Claim(context.Context, string) (callback.ClaimResult, error) {
	return callback.ClaimNew, nil
}
func (claimLostStore) Complete(context.Context, string) error { return callback.ErrClaimLost }
func (claimLostStore) Release(context.Context, string) error  { return nil }
