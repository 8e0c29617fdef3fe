package oteltravelrule_test

import (
	"context"
	"fmt"
	"log"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/oteltravelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// ExampleNew reports a client's calls and a callback handler's deliveries
// through one observer. Here the spans go to an in-memory exporter; a
// service gives its own tracer and meter providers (or sets the global
// ones and passes no option).
func ExampleNew() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()

	obs, err := oteltravelrule.New(
		oteltravelrule.WithTracerProvider(tp),
		oteltravelrule.WithMeterProvider(mp),
		oteltravelrule.WithPropagator(propagation.TraceContext{}), // opt-in: send traceparent to the service
	)
	if err != nil {
		log.Fatal(err)
	}

	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey),
		travelrule.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	// The same observer watches the callbacks (mount handler in your mux).
	verifier, err := callback.NewDataIntegrityVerifier("whsec-live-signing-secret-0123456789abcdef") // from the service's dashboard
	if err != nil {
		log.Fatal(err)
	}
	handler := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(verifier), callback.WithObserver(obs))
	_ = handler

	_, err = client.InitiateTransfer(context.Background(), &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.25", Callback: "https://vasp.example/travelrule/callback",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range spans.GetSpans() {
		fmt.Println(s.SpanKind, s.Name)
	}
	// Output:
	// client POST /transfers/initiate
	// internal travelrule.InitiateTransfer
}
