package travelruletest_test

import (
	"context"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// BenchmarkSandbox reports the initiations per second the sandbox sustains
// through the SDK client from concurrent callers (with callbacks recorded,
// not sent), so that tests know their budget.
func BenchmarkSandbox(b *testing.B) {
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
	if err != nil {
		b.Fatal(err)
	}
	req := &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.5", Callback: "https://vasp-a.example/cb",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
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
