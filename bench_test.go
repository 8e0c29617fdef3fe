package travelrule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
)

// The benchmarks compare the SDK with a floor measured in the same run on
// the same loopback server: what a careful integrator writes with net/http
// and encoding/json alone, sending the same body and the same headers.
// scripts/bench runs them in alternating rounds at GOMAXPROCS=1 on one
// pinned core and compares cpu-ns/op: the process's CPU time (user and
// system, from getrusage) over the loop, per operation. It counts the
// loopback server's work too, alike for both.

// benchToken is the bench server's access token: a JWT of the live
// service's shape (EdDSA, as its example's header says).
const benchToken = "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ2YXNwLTNmMmM5YTFlIiwiaXNzIjoidHJwLnRyYXZlbC1ydWxlLmNvbSIsImF1ZCI6InRycC1hcGkiLCJpYXQiOjE3NjQ1NDcyMDAsImV4cCI6MTc2NDU1MDgwMCwianRpIjoiN2QzYzFmMGEtNTJiNC00ZThlLTlhNjEtMGMyYjhkNGY2ZTE5In0.Z7VdR3InO7Qb-jVXdxBpX3E07M9bf82SZZ1iQCAC1XTsF8Q93CwgpZ4sjtfjUR1kf2I1NcjnIXSNNjQGf8MDqQ"

// benchServer answers a login at /auth/token as the live service does, and
// every initiation with the live service's envelope, and counts the TCP
// connections it accepts.
type benchServer struct {
	*httptest.Server
	conns atomic.Int64
	ids   atomic.Int64 // the transfer ids handed out
	impl  string       // the client under measure
}

// newBenchServer starts a benchServer whose answers each name a new
// transfer id, as the live service's do.
func newBenchServer(tb testing.TB) *benchServer {
	bs := &benchServer{}
	login := []byte(`{"accessToken":"` + benchToken + `","expiresIn":3600,"tokenType":"Bearer"}`)
	bs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/auth/token" {
			_, _ = w.Write(login)
			return
		}
		var buf [96]byte
		_, _ = w.Write(fmt.Appendf(buf[:0], `{"status":true,"data":{"transferId":"019ac452-8660-7061-9b93-%012x"}}`, bs.ids.Add(1)))
	}))
	bs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			bs.conns.Add(1)
		}
	}
	bs.Start()
	tb.Cleanup(bs.Close)
	return bs
}

// floorClient is the hand-written integration the SDK is measured against.
type floorClient struct {
	hc    *http.Client
	url   string
	token string
}

func newFloorClient(base string) *floorClient {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 128
	return &floorClient{hc: &http.Client{Transport: t}, url: base + "/transfers/initiate", token: benchToken}
}

func (f *floorClient) initiate(ctx context.Context, req *travelrule.TransferRequest) (string, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	hr.Header.Set("Authorization", "Bearer "+f.token)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", "travelrule-go/"+travelrule.Version)
	resp, err := f.hc.Do(hr)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var ans struct {
		Status bool `json:"status"`
		Data   struct {
			TransferID string `json:"transferId"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return "", err
	}
	return ans.Data.TransferID, nil
}

// cpuTime is the CPU time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs op b.N times and reports its CPU time per operation.
func measure(b *testing.B, op func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// newBenchSDK returns a client that logs in with an API key, as against
// the live service, and has its token cached: it made one call already.
func newBenchSDK(tb testing.TB, base string) *travelrule.Client {
	c, err := travelrule.NewClient(base, travelrule.WithAPIKey("bench-api-key"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := c.InitiateTransfer(context.Background(), fullRequest()); err != nil {
		tb.Fatal(err)
	}
	return c
}

// BenchmarkInitiate/{floor,sdk}: one caller, whose context has no
// deadline: the SDK bounds each attempt with a timer of its own. Every
// answer names a new transfer id, which the SDK checks before it shows it.
func BenchmarkInitiate(b *testing.B) {
	benchInitiate(b, func() (context.Context, context.CancelFunc) { return context.Background(), func() {} })
}

// BenchmarkInitiateDeadline/{floor,sdk}: one caller that gives every call
// a deadline, as a production caller should; it comes before the SDK's
// attempt time-out, so the SDK arms no timer of its own.
func BenchmarkInitiateDeadline(b *testing.B) {
	benchInitiate(b, func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 10*time.Second)
	})
}

func benchInitiate(b *testing.B, callContext func() (context.Context, context.CancelFunc)) {
	bs := newBenchServer(b)
	req := fullRequest()
	b.Run("impl=floor", func(b *testing.B) {
		f := newFloorClient(bs.URL)
		measure(b, func() error {
			ctx, cancel := callContext()
			defer cancel()
			_, err := f.initiate(ctx, req)
			return err
		})
	})
	b.Run("impl=sdk", func(b *testing.B) {
		c := newBenchSDK(b, bs.URL)
		measure(b, func() error {
			ctx, cancel := callContext()
			defer cancel()
			_, err := c.InitiateTransfer(ctx, req)
			return err
		})
	})
}

// BenchmarkInitiateParallel/{floor,sdk}: 64 concurrent callers. Each
// first makes one call, all at once, to fill the connection pool (net/http
// may dial more connections than callers then: a connection that comes
// free goes to a caller still waiting for its dial, whose dial completes
// later); the measured calls must then open no more connections than
// there are callers (in practice none). It reports both counts.
func BenchmarkInitiateParallel(b *testing.B) {
	const callers = 64
	req := fullRequest()
	ctx := context.Background()
	run := func(b *testing.B, bs *benchServer, do func() error) {
		var warm sync.WaitGroup
		for range callers {
			warm.Go(func() {
				if err := do(); err != nil {
					b.Error(err)
				}
			})
		}
		warm.Wait()
		pooled := bs.conns.Load()
		procs := runtime.GOMAXPROCS(0)
		b.SetParallelism((callers + procs - 1) / procs) // RunParallel starts parallelism × GOMAXPROCS goroutines
		b.ReportAllocs()
		b.ResetTimer()
		start := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := do(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(pooled), "warmconns")
		b.ReportMetric(float64(bs.conns.Load()-pooled), "conns")
		// A connection the warm-up used may come back to the pool a moment
		// after its call returned, so a measured call may dial one more;
		// a client that does not reuse connections dials one per call,
		// more than there are callers over any real run.
		if opened := bs.conns.Load() - pooled; opened > callers && bs.impl == "sdk" {
			b.Errorf("%d TCP connections opened by %d callers over a warm pool in %d calls: connections are not reused", opened, callers, b.N)
		}
	}
	for _, impl := range []string{"floor", "sdk"} {
		b.Run("impl="+impl, func(b *testing.B) {
			bs := newBenchServer(b)
			bs.impl = impl
			if impl == "floor" {
				f := newFloorClient(bs.URL)
				run(b, bs, func() error { _, err := f.initiate(ctx, req); return err })
				return
			}
			c := newBenchSDK(b, bs.URL)
			run(b, bs, func() error { _, err := c.InitiateTransfer(ctx, req); return err })
		})
	}
}

// BenchmarkInitiateInterleaved runs floor and SDK in one process, one
// batch of calls after the other, each batch's CPU time per call kept, so
// that a neighbour's load that comes and goes within seconds hits both
// alike; it reports the least of each and their ratio. With callers > 1
// (sub-benchmark callers=64) every batch is shared by that many goroutines.
func BenchmarkInitiateInterleaved(b *testing.B) {
	for _, callers := range []int{1, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			bs := newBenchServer(b)
			req, ctx := fullRequest(), context.Background()
			f, c := newFloorClient(bs.URL), newBenchSDK(b, bs.URL)
			floor := func() error { _, err := f.initiate(ctx, req); return err }
			sdk := func() error { _, err := c.InitiateTransfer(ctx, req); return err }
			batch := min(b.N, 500)
			best := [2]float64{math.Inf(1), math.Inf(1)}
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				for i, op := range [2]func() error{floor, sdk} {
					start := cpuTime()
					runBatch(b, batch, callers, op)
					best[i] = min(best[i], float64(cpuTime()-start)/float64(batch))
				}
			}
			b.ReportMetric(best[0], "floor-cpu-ns/op")
			b.ReportMetric(best[1], "sdk-cpu-ns/op")
			b.ReportMetric(best[1]/best[0], "sdk/floor")
		})
	}
}

// runBatch makes n calls of op from callers goroutines.
func runBatch(b *testing.B, n, callers int, op func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(callers, n) {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// initiateAllocBudget is the most allocations one InitiateTransfer may make
// beyond the floor's call, against the live-shaped answer with a new
// transfer id, measured alike (the loopback server's own included, the same
// for both). Measured: +6 (109 against 103); before the request path was
// rebuilt and identifiers were checked by shape and echo, +224.
const initiateAllocBudget = 8

// TestInitiateAllocationBudget fails when one InitiateTransfer allocates
// more than initiateAllocBudget beyond the floor. The race detector's
// sync.Pool drops items at random, so a race build is not measured.
func TestInitiateAllocationBudget(t *testing.T) {
	if raceBuild() {
		t.Skip("allocations are not deterministic under the race detector")
	}
	bs := newBenchServer(t)
	c := newBenchSDK(t, bs.URL)
	f := newFloorClient(bs.URL)
	req, ctx := fullRequest(), context.Background()
	floor := testing.AllocsPerRun(200, func() {
		if _, err := f.initiate(ctx, req); err != nil {
			t.Fatal(err)
		}
	})
	sdk := testing.AllocsPerRun(200, func() {
		if _, err := c.InitiateTransfer(ctx, req); err != nil {
			t.Fatal(err)
		}
	})
	if sdk > floor+initiateAllocBudget {
		t.Errorf("InitiateTransfer allocates %v times, more than %d above the floor's %v", sdk, initiateAllocBudget, floor)
	}
	t.Logf("allocations per call: SDK %v, floor %v", sdk, floor)
}

// raceBuild reports whether the test binary was built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// BenchmarkParseCallback parses the live service's TRANSFER_RESOLUTION
// and INQUIRY (its IVMS101 payload nested), as every callback is parsed.
// Besides the wall time it reports cpu-ns/op.
func BenchmarkParseCallback(b *testing.B) {
	for _, bc := range []struct{ name, body string }{
		{"body=resolution", `{"transferId":"6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11","status":"APPROVED","statusComment":"ok","callback":"https://vasp.example/travelrule/callback"}`},
		{"body=inquiry", cbLiveInquiryBody},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(bc.body)
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if _, err := travelrule.ParseCallback(body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
