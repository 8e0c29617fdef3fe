package travelruletest_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// benchSandbox starts a sandbox without callbacks, closed when b ends, and
// returns it with an SDK client for it and a minimal valid request.
func benchSandbox(b *testing.B, opts ...travelruletest.Option) (*travelruletest.Server, *travelrule.Client, *travelrule.TransferRequest) {
	b.Helper()
	srv := travelruletest.NewServer(append([]travelruletest.Option{travelruletest.WithoutCallbacks()}, opts...)...)
	b.Cleanup(srv.Close)
	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
	if err != nil {
		b.Fatal(err)
	}
	req := &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.5", Callback: "https://vasp-a.example/cb",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
	return srv, client, req
}

// BenchmarkSandbox reports the initiations per second the sandbox sustains
// through the SDK client from concurrent callers (with callbacks recorded,
// not sent), so that tests know their budget.
func BenchmarkSandbox(b *testing.B) {
	_, client, req := benchSandbox(b)
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := client.InitiateTransfer(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "initiations/s")
}

// BenchmarkRetainedHeap reports the heap the sandbox keeps after b.N
// initiations through the SDK (each with its request record and three
// callback records), measured after a garbage collection once all their
// callbacks finished: with the default record limit, and with none (which
// is how the sandbox behaved before it had one). Run it with
// -benchtime 100000x to see a long run's memory.
func BenchmarkRetainedHeap(b *testing.B) {
	for _, bc := range []struct {
		name  string
		limit int
	}{
		{"limit=default", travelruletest.DefaultRecordLimit},
		{"limit=none", 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, client, req := benchSandbox(b, travelruletest.WithRecordLimit(bc.limit))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			// One call first, so that the token and the connections are
			// not counted.
			if _, err := client.InitiateTransfer(ctx, req); err != nil {
				b.Fatal(err)
			}
			if _, err := srv.WaitCallbacks(ctx, 2); err != nil {
				b.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			concurrently(b.N, func() bool {
				_, err := client.InitiateTransfer(ctx, req)
				if err != nil {
					b.Error(err)
				}
				return err == nil
			})
			if _, err := srv.WaitCallbacks(ctx, 2*(b.N+1)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			retained := float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
			b.ReportMetric(retained/float64(b.N), "retained-B/op")
			b.ReportMetric(retained/(1<<20), "retained-MiB")
			if st := srv.Stats(); st.Initiated != b.N+1 {
				b.Fatalf("%d initiations counted, want %d", st.Initiated, b.N+1)
			}
			runtime.KeepAlive(srv)
		})
	}
}
