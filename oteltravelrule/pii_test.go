package oteltravelrule_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/oteltravelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// wire records every request a client sends: its URL, query, credentials,
// idempotency key and body, which telemetry must never hold.
type wire struct {
	next  http.RoundTripper
	mu    sync.Mutex
	seen  []string       // secrets and personal values seen on the wire
	kinds map[string]int // how many of each kind: a header's name, or "query"
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.GetBody != nil {
		if rc, err := r.GetBody(); err == nil {
			body, _ = io.ReadAll(rc)
			_ = rc.Close()
		}
	}
	w.mu.Lock()
	if w.kinds == nil {
		w.kinds = map[string]int{}
	}
	w.seen = append(w.seen, r.URL.String())
	if r.URL.RawQuery != "" {
		w.kinds["query"]++
		w.seen = append(w.seen, r.URL.RawQuery)
		for _, vs := range r.URL.Query() {
			w.seen = append(w.seen, vs...)
		}
	}
	for _, h := range []string{"Authorization", "X-Api-Key", "Idempotency-Key"} {
		if v := r.Header.Get(h); v != "" {
			w.kinds[h]++
			w.seen = append(w.seen, v, strings.TrimPrefix(v, "Bearer "))
		}
	}
	w.seen = append(w.seen, bodyStrings(body)...)
	w.mu.Unlock()
	return w.next.RoundTrip(r)
}

// protocolWords are string values of the bodies that are the protocol's
// own words, not anyone's data: "approved":"true" in an
// INQUIRY_RESOLUTION.
var protocolWords = map[string]bool{"true": true, "false": true}

// bodyStrings returns the string values of a JSON body, at any depth, of
// four characters or more (shorter ones are codes such as "DE" or "ETH"),
// but the protocol's words.
func bodyStrings(body []byte) []string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if len([]rune(v)) >= 4 && !protocolWords[v] {
				out = append(out, v)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// personal is a transfer's personal data: the values are made so that
// none of them can turn up by chance in a port number or an id.
func personal(callbackURL, ta string) *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Asset: "ETH", Amount: "1.25", Callback: callbackURL, TravelAddress: ta,
		Originator: travelrule.Party{
			PersonType: "natural", FirstName: "Zoë", LastName: "Ødegård-Müller", DateOfBirth: "1984-02-29",
			AddressType: "HOME", StreetName: "Straße des 17. Juni", BuildingNumber: "135b", PostCode: "D-10623",
			TownName: "Berlin", Country: "DE", NationalID: "X123456789", NationalIDType: "IDCD",
			WalletAddress: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
		},
		Beneficiary: travelrule.Party{
			PersonType: "natural", FirstName: "美咲", LastName: "山田", DateOfBirth: "1990-07-01",
			TownName: "東京", Country: "JP", WalletAddress: "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
		},
	}
}

// TestNothingPersonal runs what the quickstart does, with faults, a
// refused key and callbacks good and bad, under an observer with a
// propagator, and searches everything exported for every personal value,
// credential, capability, idempotency key, query string and body
// fragment of the run.
func TestNothingPersonal(t *testing.T) {
	tel := newTelemetry(t, oteltravelrule.WithPropagator(propagation.TraceContext{}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Integrator errors may quote personal data; they are never recorded.
	const integratorError = "could not book payment for Zoë Ødegård-Müller"

	// The listener: callbacks, confirmations and inquiries, each a
	// callback.Handler reporting to the observer.
	key, confirmKey := make([]byte, 32), make([]byte, 32)
	_, _ = rand.Read(key)
	_, _ = rand.Read(confirmKey)
	events := make(chan *travelrule.Callback, 16)
	failOnce := sync.Once{}
	deliverFn := func(ctx context.Context, cb *travelrule.Callback) error {
		failed := false
		if cb.Kind == travelrule.KindTransferResolution {
			failOnce.Do(func() { failed = true }) // the first is delivered again
		}
		if failed {
			return errors.New(integratorError)
		}
		select {
		case events <- cb:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	v, err := callback.NewDataIntegrityVerifier(travelruletest.DefaultSigningSecret)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/cb", callback.NewHandler(deliverFn, callback.WithVerifier(v), callback.WithCapabilityKey(key), callback.WithObserver(tel.obs)))
	mux.Handle("/cb/confirmation", callback.NewHandler(deliverFn, callback.WithVerifier(v), callback.WithCapabilityKey(confirmKey), callback.WithObserver(tel.obs)))
	mux.Handle("POST /transfers/inquiry/{beneficiaryId}", callback.NewHandler(deliverFn, callback.WithVerifier(v), callback.WithObserver(tel.obs)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listener := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = listener.Serve(ln) }()
	t.Cleanup(func() { _ = listener.Close() })
	base := "http://" + ln.Addr().String()

	srv := travelruletest.NewServer(travelruletest.WithInquiryURL(base), travelruletest.WithCallbackTimeScale(10*time.Millisecond))
	t.Cleanup(srv.Close)
	w := &wire{next: http.DefaultTransport.(*http.Transport).Clone()}
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey), travelrule.WithObserver(tel.obs),
		travelrule.WithHTTPClient(&http.Client{Transport: w}), travelrule.WithIdempotency(), travelrule.WithRetryWait(time.Millisecond, 5*time.Millisecond))
	require.NoError(t, err)
	await := func(match func(*travelrule.Callback) bool) *travelrule.Callback {
		t.Helper()
		for {
			select {
			case cb := <-events:
				if match(cb) {
					return cb
				}
			case <-ctx.Done():
				t.Fatal("no callback")
			}
		}
	}

	// The five stages, with a 429 on the initiation.
	b := personal("", "").Beneficiary
	ta, err := client.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{PersonType: b.PersonType, FirstName: b.FirstName,
		LastName: b.LastName, WalletAddress: b.WalletAddress, ExternalID: "pii-beneficiary-Yamada"})
	require.NoError(t, err)
	_, err = client.LookupTravelAddress(ctx, ta.TravelAddress)
	require.NoError(t, err)
	ref := "pii-ref-" + travelrule.NewCallbackRef()[:12]
	cbURL, err := travelrule.NewCallbackURL(base+"/cb", ref, key)
	require.NoError(t, err)
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate})
	res, err := client.InitiateTransfer(ctx, personal(cbURL, ta.TravelAddress))
	require.NoError(t, err)
	inquiry := await(func(cb *travelrule.Callback) bool { return cb.Kind == travelrule.KindInquiry })
	confirmRef := "pii-confirm-" + travelrule.NewCallbackRef()[:12]
	confirmURL, err := travelrule.NewCallbackURL(base+"/cb/confirmation", confirmRef, confirmKey)
	require.NoError(t, err)
	_, err = client.ResolveInquiry(ctx, inquiry.TransferID, travelrule.Approve(confirmURL))
	require.NoError(t, err)
	await(func(cb *travelrule.Callback) bool {
		return cb.Ref == ref && cb.Kind == travelrule.KindTransferResolution
	})
	const txHash = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"
	_, err = client.SubmitTxID(ctx, res.TransferID, txHash)
	require.NoError(t, err)
	await(func(cb *travelrule.Callback) bool { return cb.Kind == travelrule.KindTransferConfirmation })

	// Faults: an initiation whose outcome stays unknown, an invalid one, a
	// refused resolution, a refused key.
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 1, Ops: travelruletest.OpInitiate})
	_, err = client.InitiateTransfer(ctx, personal(cbURL, ta.TravelAddress))
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	srv.SetFaults()
	invalid := personal(cbURL, ta.TravelAddress)
	invalid.Originator.Country = "Deutschland-Ødegård"
	_, err = client.InitiateTransfer(ctx, invalid)
	require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	_, err = client.ResolveInquiry(ctx, unknownTransfer, travelrule.Approve(confirmURL))
	require.ErrorIs(t, err, travelrule.ErrNotFound)
	refused, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.InactiveAPIKey), travelrule.WithObserver(tel.obs),
		travelrule.WithHTTPClient(&http.Client{Transport: w}))
	require.NoError(t, err)
	_, err = refused.InitiateTransfer(ctx, personal(cbURL, ta.TravelAddress))
	require.ErrorIs(t, err, travelrule.ErrAPIKeyRefused)

	// Callbacks again: each one the sandbox delivered, once more (a
	// duplicate), and with a bad signature.
	delivered := srv.Callbacks()
	require.NotEmpty(t, delivered)
	var seen []string
	for _, d := range delivered {
		seen = append(seen, d.URL, d.TransferID)
		seen = append(seen, bodyStrings(d.Body)...)
		if u, err := url.Parse(d.URL); err == nil && u.RawQuery != "" {
			seen = append(seen, u.RawQuery)
			for _, vs := range u.Query() {
				seen = append(seen, vs...)
			}
		}
		deliver(t, d.URL, string(d.Body), travelruletest.DefaultSigningSecret)
		deliver(t, d.URL, string(d.Body), "another-secret-of-16-bytes-or-more")
	}

	// What must never be exported.
	forbidden := append(seen, w.seen...)
	for _, p := range []travelrule.Party{personal("", "").Originator, personal("", "").Beneficiary} {
		for _, s := range []string{p.FirstName, p.LastName, p.DateOfBirth, p.StreetName, p.BuildingNumber, p.PostCode, p.TownName, p.NationalID, p.WalletAddress} {
			if s != "" {
				forbidden = append(forbidden, s)
			}
		}
	}
	forbidden = append(forbidden, travelruletest.DefaultAPIKey, travelruletest.InactiveAPIKey, ta.TravelAddress,
		res.TransferID, inquiry.TransferID, unknownTransfer, txHash, cbURL, confirmURL, ref, confirmRef,
		hex.EncodeToString(key), hex.EncodeToString(confirmKey), integratorError, "Deutschland", "q=", "tr_tag", "tr_ref", "?")
	// Every delivery's span has ended once the listener has shut down.
	srv.Close()
	require.NoError(t, listener.Shutdown(ctx))

	for _, kind := range []string{"query", "Authorization", "X-Api-Key", "Idempotency-Key"} {
		require.Positive(t, w.kinds[kind], "the wire carried %s", kind)
	}

	exported := export(t, tel)
	require.Contains(t, exported, "travelrule.InitiateTransfer", "the export holds the run")
	require.Contains(t, exported, "travelrule.callback")
	require.Contains(t, exported, "outcome_unknown")
	require.Contains(t, exported, "unauthenticated")
	require.Contains(t, exported, "duplicate")
	require.Contains(t, exported, "token_refused")
	require.GreaterOrEqual(t, len(forbidden), 40, "the run put many values on the wire")
	for _, s := range forbidden {
		require.NotEmpty(t, s)
		assert.False(t, strings.Contains(exported, s), "exported telemetry holds %q, a value of the run", s)
	}
}

// export serializes everything the observer exported, resource aside: each
// span's name, kind, attributes, events, links and status, and each
// metric's name, description, unit and data points with their attributes
// and counts. Times and measured durations are left out: they are numbers
// that can match a personal number by chance.
func export(t *testing.T, tel *telemetry) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, s := range tel.ended() {
		require.NoError(t, enc.Encode(struct {
			Name   string
			Kind   string
			Attrs  any
			Events []sdktrace.Event
			Links  []sdktrace.Link
			Status any
		}{s.Name(), s.SpanKind().String(), s.Attributes(), s.Events(), s.Links(), s.Status()}))
	}
	rm := tel.metrics(t)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			require.NoError(t, enc.Encode([]string{m.Name, m.Description, m.Unit}))
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					require.NoError(t, enc.Encode(struct {
						Attrs any
						Value int64
					}{p.Attributes.ToSlice(), p.Value}))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					require.NoError(t, enc.Encode(struct {
						Attrs any
						Count uint64
					}{p.Attributes.ToSlice(), p.Count}))
				}
			default:
				t.Fatalf("metric %s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return b.String() // UTF-8 as it is, and no HTML escapes: a search finds what is there
}
