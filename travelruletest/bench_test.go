package travelruletest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
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
	return srv, client, benchRequest()
}

// benchRequest is a minimal valid initiation.
func benchRequest() *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.5", Callback: "https://vasp-a.example/cb",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
}

// BenchmarkSandbox measures the sandbox's own work per initiation, the
// budget a test suite that runs on it has: the CPU time (user and system,
// from getrusage, the garbage collection included) of this process, which
// runs the sandbox alone (without callbacks: they are recorded, not sent),
// over b.N initiations that the SDK client makes from 16 concurrent callers
// in a child process (this test binary again, TestSandboxLoadClient), whose
// CPU is not counted. It reports that as cpu-ns/op and as initiations/s,
// how many initiations one core serves per second (1e9 / cpu-ns/op), and
// the child's CPU per initiation as client-cpu-ns/op. Its token and its
// connections are made before the measure. Run it at GOMAXPROCS=1 pinned
// with taskset, as scripts/bench does; BenchmarkSandboxFloor is its floor.
func BenchmarkSandbox(b *testing.B) {
	srv, _, _ := benchSandbox(b)
	tok, err := srv.TokenSource().Token()
	if err != nil {
		b.Fatal(err)
	}
	serveLoad(b, srv.URL, tok.AccessToken, func() int { return srv.Stats().Initiated })
}

// BenchmarkSandboxFloor is BenchmarkSandbox with a bare net/http server in
// place of the sandbox, measured alike: the http.Server the sandbox runs
// (with its ReadHeaderTimeout), whose handler reads each body and answers
// the live service's envelope with a new transfer id, and does nothing
// else. What the sandbox costs beyond it is its work as the service's twin.
func BenchmarkSandboxFloor(b *testing.B) {
	var served atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":true,"data":{"transferId":"`+travelrule.NewIdempotencyKey()+`"}}`)
	}))
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	srv.Start()
	b.Cleanup(srv.Close)
	serveLoad(b, srv.URL, "floor-token", func() int { return int(served.Load()) })
}

// serveLoad measures, as BenchmarkSandbox says, b.N initiations made
// through the SDK, by the child process, of the server at url with the
// bearer token; served is how many initiations the server has stored.
func serveLoad(b *testing.B, url, token string, served func() int) {
	child := exec.Command(os.Args[0], "-test.run=^TestSandboxLoadClient$", "-test.count=1")
	child.Env = append(os.Environ(), loadURL+"="+url, loadToken+"="+token)
	var stderr strings.Builder
	child.Stderr = &stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = child.Wait() }) // the child ends when its stdin does
	// fail ends the child and b, with what the child said on stderr.
	fail := func(format string, args ...any) {
		_ = stdin.Close()
		_ = child.Wait()
		b.Fatalf(format+"; the load client's stderr:\n%s", append(args, stderr.String())...)
	}
	lines := bufio.NewScanner(stdout)
	// reply is the child's next line that starts with word, without it.
	reply := func(word string) string {
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), word); ok {
				return rest
			}
		}
		fail("the load client ended before it said %q", word)
		return ""
	}
	reply("ready")
	warm := served()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	fmt.Fprintln(stdin, b.N)
	clientNs, err := strconv.ParseFloat(reply("done "), 64)
	server := cpuTime() - start
	b.StopTimer()
	if n := served() - warm; err != nil || n != b.N {
		fail("%d initiations served, want %d (%v)", n, b.N, err)
	}
	perOp := float64(server) / float64(b.N)
	b.ReportMetric(perOp, "cpu-ns/op")
	b.ReportMetric(1e9/perOp, "initiations/s")
	b.ReportMetric(clientNs/float64(b.N), "client-cpu-ns/op")
}

// The environment of BenchmarkSandbox's child: the sandbox's URL and a
// bearer token of it.
const (
	loadURL   = "TRAVELRULETEST_LOAD_URL"
	loadToken = "TRAVELRULETEST_LOAD_TOKEN"
)

// TestSandboxLoadClient is BenchmarkSandbox's client, in the child process
// it starts; it skips unless started so. It makes one initiation from each
// of 16 callers (the connections then exist) and says "ready"; then, for
// each number n it reads, it makes n initiations from 16 callers and says
// "done" and the CPU time they took in nanoseconds. It ends when its input
// does.
func TestSandboxLoadClient(t *testing.T) {
	url := os.Getenv(loadURL)
	if url == "" {
		t.Skip("BenchmarkSandbox's client, in the child process it starts")
	}
	client, err := travelrule.NewClient(url, travelrule.WithTokenSource(travelrule.StaticToken(os.Getenv(loadToken))))
	if err != nil {
		t.Fatal(err)
	}
	req := benchRequest()
	ctx := context.Background()
	initiate := func() bool {
		_, err := client.InitiateTransfer(ctx, req)
		if err != nil {
			fmt.Fprintln(os.Stderr, err) // at once, for BenchmarkSandbox to show
			t.Error(err)
		}
		return err == nil
	}
	concurrently(16, initiate)
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && !t.Failed() {
		n, err := strconv.Atoi(in.Text())
		if err != nil {
			t.Fatal(err)
		}
		start := cpuTime()
		concurrently(n, initiate)
		fmt.Println("done", int64(cpuTime()-start))
	}
}

// cpuTime is the CPU time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
