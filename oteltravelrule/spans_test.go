package oteltravelrule_test

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/oteltravelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// sandbox starts the sandbox, without callbacks, and a client of it that
// reports to tel and retries at once.
func sandbox(t *testing.T, tel *telemetry, opts ...travelrule.Option) (*travelruletest.Server, *travelrule.Client) {
	t.Helper()
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	client, err := travelrule.NewClient(srv.URL, append([]travelrule.Option{
		travelrule.WithTokenSource(srv.TokenSource()), travelrule.WithObserver(tel.obs),
		travelrule.WithRetryWait(time.Millisecond, 5*time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	return srv, client
}

// transfer is a valid transfer between two natural persons.
func transfer() *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.25", Callback: "https://vasp.example/travelrule/callback",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
}

// unknownTransfer is a transfer id the sandbox does not know.
const unknownTransfer = "3f1c2b4a-1111-4222-8333-444455556666"

var requestIDPattern = regexp.MustCompile(`^req_[0-9]+$`)

// normalized is a span's attributes with the sandbox's port and request
// ids, which vary from run to run, checked and replaced by fixed values.
func normalized(t *testing.T, s sdktrace.ReadOnlySpan, port int) map[attribute.Key]any {
	t.Helper()
	m := attrs(s)
	if v, ok := m["server.port"]; ok {
		assert.Equal(t, int64(port), v, "server.port")
		m["server.port"] = "PORT"
	}
	if v, ok := m["travelrule.request_id"]; ok {
		assert.Regexp(t, requestIDPattern, v)
		m["travelrule.request_id"] = "REQ"
	}
	return m
}

// span is what a test expects of a span.
type span struct {
	name   string
	kind   trace.SpanKind
	status codes.Code
	desc   string
	attrs  map[attribute.Key]any
}

func initiateAttempt(extra map[attribute.Key]any) map[attribute.Key]any {
	m := map[attribute.Key]any{
		"http.request.method": "POST", "server.address": "127.0.0.1", "server.port": "PORT",
		"url.template": "/transfers/initiate", "travelrule.attempt.written": true,
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestSpans: each call is a span with a child span per attempt, named and
// given attributes as the conventions and docs/telemetry.md say.
func TestSpans(t *testing.T) {
	tests := []struct {
		name     string
		faults   []travelruletest.Fault
		call     func(ctx context.Context, c *travelrule.Client) error
		want     span
		attempts []span
	}{
		{
			name: "success",
			call: func(ctx context.Context, c *travelrule.Client) error {
				_, err := c.InitiateTransfer(ctx, transfer())
				return err
			},
			want: span{"travelrule.InitiateTransfer", trace.SpanKindInternal, codes.Unset, "", map[attribute.Key]any{
				"travelrule.operation": "InitiateTransfer", "travelrule.outcome": "success", "travelrule.attempts": int64(1),
				"http.response.status_code": int64(200), "travelrule.request_id": "REQ",
			}},
			attempts: []span{{"POST /transfers/initiate", trace.SpanKindClient, codes.Unset, "", initiateAttempt(map[attribute.Key]any{
				"http.response.status_code": int64(200), "travelrule.retry": false, "travelrule.retry_reason": "answered",
			})}},
		},
		{
			name:   "429, then success",
			faults: []travelruletest.Fault{{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate}},
			call: func(ctx context.Context, c *travelrule.Client) error {
				_, err := c.InitiateTransfer(ctx, transfer())
				return err
			},
			want: span{"travelrule.InitiateTransfer", trace.SpanKindInternal, codes.Unset, "", map[attribute.Key]any{
				"travelrule.operation": "InitiateTransfer", "travelrule.outcome": "success", "travelrule.attempts": int64(2),
				"http.response.status_code": int64(200), "travelrule.request_id": "REQ",
			}},
			attempts: []span{
				{"POST /transfers/initiate", trace.SpanKindClient, codes.Error, "error status", initiateAttempt(map[attribute.Key]any{
					"http.response.status_code": int64(429), "error.type": "429",
					"travelrule.retry": true, "travelrule.retry_reason": "status 429 with Retry-After",
				})},
				{"POST /transfers/initiate", trace.SpanKindClient, codes.Unset, "", initiateAttempt(map[attribute.Key]any{
					"http.request.resend_count": int64(1), "http.response.status_code": int64(200),
					"travelrule.retry": false, "travelrule.retry_reason": "answered",
				})},
			},
		},
		{
			name:   "500 after storing: outcome unknown",
			faults: []travelruletest.Fault{{Kind: travelruletest.FaultInternal, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate}},
			call: func(ctx context.Context, c *travelrule.Client) error {
				_, err := c.InitiateTransfer(ctx, transfer())
				require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
				return nil
			},
			want: span{"travelrule.InitiateTransfer", trace.SpanKindInternal, codes.Error, "outcome unknown: the service may have acted", map[attribute.Key]any{
				"travelrule.operation": "InitiateTransfer", "travelrule.outcome": "outcome_unknown", "travelrule.outcome_unknown": true,
				"travelrule.attempts": int64(1), "http.response.status_code": int64(500), "error.type": "500",
				"travelrule.error_codes": []string{"INTERNAL_ERROR"}, "travelrule.request_id": "REQ",
			}},
			attempts: []span{{"POST /transfers/initiate", trace.SpanKindClient, codes.Error, "error status", initiateAttempt(map[attribute.Key]any{
				"http.response.status_code": int64(500), "error.type": "500", "travelrule.retry": false, "travelrule.retry_reason": "status 500",
			})}},
		},
		{
			name:   "connection dropped after storing: outcome unknown, no answer",
			faults: []travelruletest.Fault{{Kind: travelruletest.FaultDrop, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate}},
			call: func(ctx context.Context, c *travelrule.Client) error {
				_, err := c.InitiateTransfer(ctx, transfer())
				require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
				return nil
			},
			want: span{"travelrule.InitiateTransfer", trace.SpanKindInternal, codes.Error, "outcome unknown: the service may have acted", map[attribute.Key]any{
				"travelrule.operation": "InitiateTransfer", "travelrule.outcome": "outcome_unknown", "travelrule.outcome_unknown": true,
				"travelrule.attempts": int64(1), "error.type": "connection_closed",
			}},
			attempts: []span{{"POST /transfers/initiate", trace.SpanKindClient, codes.Error, "no answer", initiateAttempt(map[attribute.Key]any{
				"error.type": "connection_closed", "travelrule.retry": false, "travelrule.retry_reason": "connection failed after sending",
			})}},
		},
		{
			name: "the client's own validation",
			call: func(ctx context.Context, c *travelrule.Client) error {
				_, err := c.InitiateTransfer(ctx, &travelrule.TransferRequest{Asset: "BTC"})
				require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
				return nil
			},
			want: span{"travelrule.InitiateTransfer", trace.SpanKindInternal, codes.Error, "invalid request, nothing sent", map[attribute.Key]any{
				"travelrule.operation": "InitiateTransfer", "travelrule.outcome": "validation", "travelrule.attempts": int64(0),
				"error.type": "validation",
			}},
		},
		{
			name: "refused",
			call: func(ctx context.Context, c *travelrule.Client) error {
				_, err := c.ResolveInquiry(ctx, unknownTransfer, travelrule.Reject())
				require.ErrorIs(t, err, travelrule.ErrNotFound)
				return nil
			},
			want: span{"travelrule.ResolveInquiry", trace.SpanKindInternal, codes.Error, "refused by the service", map[attribute.Key]any{
				"travelrule.operation": "ResolveInquiry", "travelrule.outcome": "refused", "travelrule.attempts": int64(1),
				"http.response.status_code": int64(404), "error.type": "404", "travelrule.error_codes": []string{"TRANSFER_NOT_FOUND"},
				"travelrule.request_id": "REQ", "travelrule.decision": "rejected",
			}},
			attempts: []span{{"POST /transfers/inquiryResolution", trace.SpanKindClient, codes.Error, "error status", map[attribute.Key]any{
				"http.request.method": "POST", "server.address": "127.0.0.1", "server.port": "PORT", "url.template": "/transfers/inquiryResolution",
				"http.response.status_code": int64(404), "error.type": "404", "travelrule.attempt.written": true,
				"travelrule.retry": false, "travelrule.retry_reason": "status 404",
			}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := newTelemetry(t)
			srv, client := sandbox(t, tel)
			u, err := url.Parse(srv.URL)
			require.NoError(t, err)
			port, err := strconv.Atoi(u.Port())
			require.NoError(t, err)
			srv.SetFaults(tt.faults...)
			require.NoError(t, tt.call(context.Background(), client))

			calls := tel.named(tt.want.name)
			require.Len(t, calls, 1)
			call := calls[0]
			assert.Equal(t, tt.want.kind, call.SpanKind())
			assert.Equal(t, tt.want.status, call.Status().Code)
			assert.Equal(t, tt.want.desc, call.Status().Description)
			assert.False(t, call.Parent().IsValid(), "a call span is a root here")
			assert.Equal(t, tt.want.attrs, normalized(t, call, port))
			assert.Empty(t, call.Events(), "nothing recorded as an event")

			children := tel.childrenOf(call)
			require.Len(t, children, len(tt.attempts))
			assert.Len(t, tel.ended(), 1+len(tt.attempts), "no other span")
			for i, want := range tt.attempts {
				got := children[i]
				assert.Equal(t, want.name, got.Name(), "attempt %d", i+1)
				assert.Equal(t, want.kind, got.SpanKind(), "attempt %d", i+1)
				assert.Equal(t, want.status, got.Status().Code, "attempt %d", i+1)
				assert.Equal(t, want.desc, got.Status().Description, "attempt %d", i+1)
				assert.Equal(t, want.attrs, normalized(t, got, port), "attempt %d", i+1)
				assert.Equal(t, call.SpanContext().TraceID(), got.SpanContext().TraceID())
				assert.False(t, got.StartTime().Before(call.StartTime()), "within the call")
				assert.False(t, got.EndTime().After(call.EndTime()), "within the call")
			}
		})
	}
}

// TestSpansTransferIDs: the transfer id is on call spans only with
// WithTransferIDs, and never on attempt spans.
func TestSpansTransferIDs(t *testing.T) {
	for _, withIDs := range []bool{false, true} {
		t.Run(strconv.FormatBool(withIDs), func(t *testing.T) {
			var opts []oteltravelrule.Option
			if withIDs {
				opts = append(opts, oteltravelrule.WithTransferIDs())
			}
			tel := newTelemetry(t, opts...)
			_, client := sandbox(t, tel)
			ctx := context.Background()
			res, err := client.InitiateTransfer(ctx, transfer())
			require.NoError(t, err)
			require.NotEmpty(t, res.TransferID)
			_, err = client.ResolveInquiry(ctx, unknownTransfer, travelrule.Reject())
			require.Error(t, err)

			want := map[string]string{"travelrule.InitiateTransfer": res.TransferID, "travelrule.ResolveInquiry": unknownTransfer}
			for _, s := range tel.ended() {
				v, ok := attrs(s)["travelrule.transfer_id"]
				if id, isCall := want[s.Name()]; isCall && withIDs {
					assert.Equal(t, id, v, s.Name())
					continue
				}
				assert.False(t, ok, "%s has no transfer id", s.Name())
			}
		})
	}
}

// TestSpanParent: a call's span is a child of the span in the caller's
// context.
func TestSpanParent(t *testing.T) {
	tel := newTelemetry(t)
	_, client := sandbox(t, tel)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
	_, err := client.InitiateTransfer(ctx, transfer())
	require.NoError(t, err)
	_, err = client.InitiateTransfer(ctx, &travelrule.TransferRequest{})
	require.Error(t, err)
	parent.End()
	calls := tel.named("travelrule.InitiateTransfer")
	require.Len(t, calls, 2)
	for _, c := range calls {
		assert.Equal(t, parent.SpanContext().SpanID(), c.Parent().SpanID(), "the caller's span is the parent, valid call or not")
	}
}

// TestAttemptSpanNames: an attempt span is named by its method and its
// url.template, the base URL's path included and the query left out.
func TestAttemptSpanNames(t *testing.T) {
	tel := newTelemetry(t)
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/api/v3"))
	t.Cleanup(srv.Close)
	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()), travelrule.WithObserver(tel.obs))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := client.InitiateTransfer(ctx, transfer())
	require.NoError(t, err)
	_, err = client.SubmitTxID(ctx, res.TransferID, "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060")
	require.NoError(t, err)
	_, err = client.SearchVASPs(ctx, &travelrule.VASPQuery{Name: "Example VASP"})
	require.NoError(t, err)

	want := map[string]string{
		"POST /api/v3/transfers/initiate": "/api/v3/transfers/initiate",
		"POST /api/v3/transfers/txId":     "/api/v3/transfers/txId",
		"GET /api/v3/discovery/vasp":      "/api/v3/discovery/vasp",
	}
	got := map[string]string{}
	for _, s := range tel.ended() {
		if s.SpanKind() == trace.SpanKindClient {
			got[s.Name()], _ = attrs(s)["url.template"].(string)
		}
	}
	assert.Equal(t, want, got)
	assert.Len(t, tel.named("travelrule.SearchVASPs"), 1)
}

// TestTwoObservers: two observers on one client, each with its own
// tracer provider, each see a whole tree of their own: every attempt span
// is a child of the observer's own call span.
func TestTwoObservers(t *testing.T) {
	a, b := newTelemetry(t), newTelemetry(t)
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()),
		travelrule.WithObserver(a.obs), travelrule.WithObserver(b.obs), travelrule.WithRetryWait(0, 0))
	require.NoError(t, err)
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate})
	_, err = client.InitiateTransfer(context.Background(), transfer())
	require.NoError(t, err)
	for name, tel := range map[string]*telemetry{"first": a, "second": b} {
		calls := tel.named("travelrule.InitiateTransfer")
		require.Len(t, calls, 1, name)
		attempts := tel.named("POST /transfers/initiate")
		require.Len(t, attempts, 2, name)
		for _, at := range attempts {
			assert.Equal(t, calls[0].SpanContext().SpanID(), at.Parent().SpanID(), "%s observer's attempt under its own call", name)
			assert.Equal(t, calls[0].SpanContext().TraceID(), at.SpanContext().TraceID())
		}
		assert.Equal(t, "429", attrs(attempts[0])["error.type"])
	}
}

// resender is a transport that reports writing each request twice, as a
// transport that sends it again by itself (an HTTP/2 retry of a refused
// stream) does, then sends it once.
type resender struct{ base http.RoundTripper }

func (r resender) RoundTrip(req *http.Request) (*http.Response, error) {
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.WroteHeaders != nil {
		tr.WroteHeaders()
	}
	return r.base.RoundTrip(req)
}

// TestTransportResendIsCounted: a request a transport sent again within
// one attempt counts in the attempt's http.request.resend_count and in
// travelrule.client.attempts, as the call's travelrule.attempts does.
func TestTransportResendIsCounted(t *testing.T) {
	tel := newTelemetry(t)
	_, client := sandbox(t, tel, travelrule.WithHTTPClient(&http.Client{Transport: resender{http.DefaultTransport}}))
	_, err := client.SearchVASPs(context.Background(), &travelrule.VASPQuery{Name: "Example"})
	require.NoError(t, err)
	call := tel.named("travelrule.SearchVASPs")
	require.Len(t, call, 1)
	assert.Equal(t, int64(2), attrs(call[0])["travelrule.attempts"])
	attempt := tel.named("GET /discovery/vasp")
	require.Len(t, attempt, 1)
	assert.Equal(t, int64(1), attrs(attempt[0])["http.request.resend_count"])
	var sum int64
	for _, n := range points(t, tel.metrics(t), "travelrule.client.attempts") {
		sum += n
	}
	assert.Equal(t, int64(2), sum)
}
