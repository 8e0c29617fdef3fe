// Command telemetry shows what package oteltravelrule reports: it starts
// the sandbox (travelruletest) in-process, as the quickstart does, and
// sends the SDK's traces and metrics to the OpenTelemetry stdout
// exporters:
//
//	go run ./examples/telemetry
//
// It initiates one transfer, whose first attempt the sandbox refuses with
// a 429 (so the call's span has two attempt spans, the second with
// http.request.resend_count 1), and receives the transfer's callbacks on a
// callback.Handler reporting to the same observer (a travelrule.callback
// span for each) until the first decision arrives. The spans are printed
// as they end, the metrics once at the end. The transfer carries personal data; none of it is in the
// output.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/oteltravelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "telemetry:", err)
		os.Exit(1)
	}
}

// run is the whole example; out makes it testable.
func run(ctx context.Context, w io.Writer) (err error) {
	out := &lockedWriter{w: w} // the exporters write from the handler's goroutines too

	// The OpenTelemetry SDK: spans printed as they end, metrics at the end.
	tp, mp, err := stdoutProviders(out)
	if err != nil {
		return err
	}
	defer func() {
		// Shutting the meter provider down exports the metrics.
		fmt.Fprintln(out, "\n== Metrics (stdoutmetric) ==")
		err = errors.Join(err, tp.Shutdown(context.Background()), mp.Shutdown(context.Background()))
	}()

	// One observer for the client and the callback handler; the service
	// is told the trace context (traceparent) of each attempt.
	obs, err := oteltravelrule.New(oteltravelrule.WithTracerProvider(tp), oteltravelrule.WithMeterProvider(mp),
		oteltravelrule.WithPropagator(propagation.TraceContext{}))
	if err != nil {
		return err
	}

	// The callback listener.
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	listener, base, resolved, err := listen(key, obs)
	if err != nil {
		return err
	}

	// The sandbox, which refuses the first initiation with a 429.
	sandbox := travelruletest.NewServer(travelruletest.WithCallbackTimeScale(100*time.Millisecond),
		travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate}))
	defer sandbox.Close()
	client, err := travelrule.NewClient(sandbox.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey), travelrule.WithObserver(obs))
	if err != nil {
		return err
	}

	fmt.Fprintln(out, "== Spans (stdouttrace), as they end ==")
	callbackURL, err := travelrule.NewCallbackURL(base+"/travelrule/callback", travelrule.NewCallbackRef(), key)
	if err != nil {
		return err
	}
	if _, err := client.InitiateTransfer(ctx, exampleTransfer(callbackURL)); err != nil {
		return err
	}
	select {
	case <-resolved:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the transfer's decision: %w", ctx.Err())
	}
	// Stop the sandbox's callbacks, and wait for the listener's requests
	// to end: each delivery's span has then ended.
	sandbox.Close()
	return listener.Shutdown(ctx)
}

// stdoutProviders are the OpenTelemetry SDK's tracer and meter providers,
// printing to out: each span as it ends, the metrics when the meter
// provider shuts down.
func stdoutProviders(out io.Writer) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider, error) {
	res := resource.NewSchemaless(semconv.ServiceName("telemetry-example"))
	spanExp, err := stdouttrace.New(stdouttrace.WithWriter(out), stdouttrace.WithPrettyPrint())
	if err != nil {
		return nil, nil, err
	}
	metricExp, err := stdoutmetric.New(stdoutmetric.WithWriter(out), stdoutmetric.WithPrettyPrint())
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spanExp), sdktrace.WithResource(res))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp, sdkmetric.WithInterval(time.Hour))),
		sdkmetric.WithResource(res))
	return tp, mp, nil
}

// listen serves a callback.Handler, for the capability URLs made with key
// and reporting to obs, on a loopback port; it returns the server, its
// base URL, and a channel closed once the transfer's first decision
// arrives.
func listen(key []byte, obs *oteltravelrule.Observer) (*http.Server, string, <-chan struct{}, error) {
	verifier, err := callback.NewDataIntegrityVerifier(travelruletest.DefaultSigningSecret)
	if err != nil {
		return nil, "", nil, err
	}
	resolved := make(chan struct{})
	var once sync.Once
	handler := callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error {
		if cb.Decision() != "" { // the first decision, whichever message carries it
			once.Do(func() { close(resolved) })
		}
		return nil
	}, callback.WithVerifier(verifier), callback.WithCapabilityKey(key), callback.WithObserver(obs))
	if err := handler.Err(); err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	listener := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = listener.Serve(ln) }()
	return listener, "http://" + ln.Addr().String(), resolved, nil
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// exampleTransfer is the quickstart's transfer between two natural
// persons.
func exampleTransfer(callbackURL string) *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Asset:    "ETH",
		Amount:   "1.25",
		Callback: callbackURL,
		Originator: travelrule.Party{
			PersonType: "natural", FirstName: "Zoë", LastName: "Ødegård-Müller", DateOfBirth: "1984-02-29",
			AddressType: "HOME", StreetName: "Straße des 17. Juni", BuildingNumber: "135", PostCode: "10623",
			TownName: "Berlin", Country: "DE", NationalID: "123456789", NationalIDType: "IDCD",
			WalletAddress: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
		},
		Beneficiary: travelrule.Party{
			PersonType: "natural", FirstName: "美咲", LastName: "山田", DateOfBirth: "1990-07-01",
			TownName: "東京", Country: "JP", WalletAddress: "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
		},
	}
}
