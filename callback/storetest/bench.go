//go:build unix

package storetest

import (
	"bytes"
	"context"
	"log/slog"
	"math"
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
	d := newDeliveries(b, store)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	d.deliver(b, b.N)
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkDeliveryInterleaved is BenchmarkDelivery on the floor (no
// store), on store and, unless it is nil, on bare (a store of the least
// work, to compare with), one batch of 500 deliveries of each after the
// other in one process, so that a neighbour's load that comes and goes
// hits all alike. It reports the least CPU time per delivery of each over
// the batches (floor-, sdk- and bare-cpu-ns/op), sdk/floor and sdk/bare.
func BenchmarkDeliveryInterleaved(b *testing.B, store, bare callback.Store) {
	names := []string{"floor", "sdk", "bare"}
	ds := []*deliveries{newDeliveries(b, nil), newDeliveries(b, store)}
	if bare != nil {
		ds = append(ds, newDeliveries(b, bare))
	}
	best := make([]float64, len(ds))
	for i := range best {
		best[i] = math.Inf(1)
	}
	batch := min(b.N, 500)
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		for i, d := range ds {
			start := cpuTime()
			d.deliver(b, batch)
			best[i] = min(best[i], float64(cpuTime()-start)/float64(batch))
		}
	}
	for i := range ds {
		b.ReportMetric(best[i], names[i]+"-cpu-ns/op")
	}
	b.ReportMetric(best[1]/best[0], "sdk/floor")
	if bare != nil {
		b.ReportMetric(best[1]/best[2], "sdk/bare")
	}
}

// deliveries delivers callbacks, each of its own, through a handler.
type deliveries struct {
	h     *callback.Handler
	body  []byte
	slot  []byte // the part of body that counts the deliveries
	rd    *bytes.Reader
	n     int // deliveries made
	calls int // calls of the function
}

// newDeliveries returns the deliveries through a handler on store (nil:
// none) that logs nothing (its warning that it does not authenticate
// would break the benchmark's line).
func newDeliveries(b *testing.B, store callback.Store) *deliveries {
	d := &deliveries{}
	opts := []callback.Option{callback.WithoutAuthentication(), callback.WithLogger(slog.New(slog.DiscardHandler)), callback.WithoutDedup()}
	if store != nil {
		opts[2] = callback.WithStore(store)
	}
	d.h = callback.NewHandler(func(context.Context, *travelrule.Callback) error {
		d.calls++
		return nil
	}, opts...)
	if err := d.h.Err(); err != nil {
		b.Fatal(err)
	}
	// The handler keys deliveries by their body: each has a transfer id of
	// its own, a prefix no other run used and a count.
	const digits = "000000000000"
	d.body = []byte(`{"transferId":"` + NewKey(b)[5:37] + `-` + digits + `","status":"approved","timestamp":"2026-11-23T08:00:00Z"}`)
	d.slot = d.body[bytes.Index(d.body, []byte(digits)):][:len(digits)]
	d.rd = bytes.NewReader(d.body)
	return d
}

// deliver makes n more deliveries; each must call the function.
func (d *deliveries) deliver(b *testing.B, n int) {
	for range n {
		for j, k := len(d.slot)-1, d.n; j >= 0; j-- { // the count in decimal, zero-padded
			d.slot[j] = byte('0' + k%10)
			k /= 10
		}
		d.n++
		d.rd.Reset(d.body)
		w := httptest.NewRecorder()
		d.h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/travelrule/callback", d.rd))
		if w.Code != http.StatusNoContent {
			b.Fatalf("status %d", w.Code)
		}
	}
	if d.calls != d.n {
		b.Fatalf("%d deliveries called the function %d times: some were taken for duplicates", d.n, d.calls)
	}
}

// cpuTime is the CPU time, user and system, the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
