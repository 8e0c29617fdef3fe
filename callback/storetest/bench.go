//go:build unix

package storetest

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// BenchmarkDelivery delivers b.N callbacks, each of its own, through a
// [callback.Handler] on store, in process, each answered 204: a claim and
// a completion per delivery. A nil store is the floor, the same handler
// without de-duplication ([callback.WithoutDedup]). It reports cpu-ns/op,
// the process's CPU time (user and system, getrusage) per delivery: the
// store's client counts, its server (another process) does not; ns/op, the
// wall time, shows the round trips. A delivery taken for a duplicate
// (acknowledged without calling the function) fails the benchmark.
func BenchmarkDelivery(b *testing.B, store callback.Store) {
	// The handler logs nothing (its warning that it does not authenticate
	// would break the benchmark's line).
	opts := []callback.Option{callback.WithoutAuthentication(), callback.WithLogger(slog.New(slog.DiscardHandler)), callback.WithoutDedup()}
	if store != nil {
		opts[2] = callback.WithStore(store)
	}
	calls := 0
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error {
		calls++
		return nil
	}, opts...)
	if err := h.Err(); err != nil {
		b.Fatal(err)
	}
	// The handler keys deliveries by their body: each has a transfer id of
	// its own, a prefix no other run used and a count.
	const digits = "000000000000"
	body := []byte(`{"transferId":"` + NewKey(b)[5:37] + `-` + digits + `","status":"approved","timestamp":"2026-11-23T08:00:00Z"}`)
	slot := body[bytes.Index(body, []byte(digits)):][:len(digits)]
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		for j, n := len(slot)-1, i; j >= 0; j-- { // i in decimal, zero-padded
			slot[j] = byte('0' + n%10)
			n /= 10
		}
		rd.Reset(body)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/travelrule/callback", rd))
		if w.Code != http.StatusNoContent {
			b.Fatalf("status %d", w.Code)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	if calls != b.N {
		b.Fatalf("%d deliveries called the function %d times: some were taken for duplicates", b.N, calls)
	}
}

// cpuTime is the CPU time, user and system, the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
