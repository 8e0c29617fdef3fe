package oteltravelrule_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/oteltravelrule"
)

// BenchmarkInitiateObserved is what the observer costs an initiation:
// impl=none is the client with no observer, impl=otel the same client
// with the observer, every span sampled and ended (and dropped: an
// exporter's cost is the exporter's) and every metric aggregated. cpu-ns/op is the process's CPU over the loop (user
// and system, from getrusage), the loopback server's included, per
// initiation; compare the two at GOMAXPROCS=1 on one pinned core, as
// docs/performance.md does.
func BenchmarkInitiateObserved(b *testing.B) {
	answer := []byte(`{"status":true,"data":{"transferId":"019ac452-8660-7061-9b93-8d72eaa11a89"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	b.Cleanup(srv.Close)
	for _, impl := range []string{"none", "otel"} {
		b.Run("impl="+impl, func(b *testing.B) {
			opts := []travelrule.Option{travelrule.WithTokenSource(travelrule.StaticToken("bench-token"))}
			if impl == "otel" {
				spans := &endCounter{}
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
				obs, err := oteltravelrule.New(oteltravelrule.WithTracerProvider(tp), oteltravelrule.WithMeterProvider(mp))
				if err != nil {
					b.Fatal(err)
				}
				opts = append(opts, travelrule.WithObserver(obs))
				b.Cleanup(func() {
					if spans.n.Load() == 0 {
						b.Error("no span was recorded")
					}
				})
			}
			c, err := travelrule.NewClient(srv.URL, opts...)
			if err != nil {
				b.Fatal(err)
			}
			req := benchRequest()
			ctx := context.Background()
			if _, err := c.InitiateTransfer(ctx, req); err != nil { // a kept-alive connection
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			for range b.N {
				if _, err := c.InitiateTransfer(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

func benchRequest() *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Asset: "ETH", Amount: "1.25", Callback: "https://vasp-a.example/travelrule/callback",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
}

// cpuTime is the process's CPU time, user and system, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// endCounter is a span processor that counts the spans that end.
type endCounter struct{ n atomic.Int64 }

func (*endCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (e *endCounter) OnEnd(sdktrace.ReadOnlySpan)                   { e.n.Add(1) }
func (*endCounter) Shutdown(context.Context) error                  { return nil }
func (*endCounter) ForceFlush(context.Context) error                { return nil }
