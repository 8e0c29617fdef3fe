//go:build unix

package storetest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/journal"
)

// BenchmarkInitiate measures one initiation through a client whose
// journal is on store (nil: no journal, the floor), against a loopback
// server that answers as the live service does. Each initiation carries
// its own capability callback URL, so each makes its own entry: two
// Steps (before and after), two round trips. It reports the process's CPU
// time per initiation (getrusage, the cpu-ns/op metric that scripts/bench
// compares): the store's client counts, its server (another process) does
// not; ns/op, the wall time, shows the round trips to it.
func BenchmarkInitiate(b *testing.B, store journal.Store) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":true,"data":{"transferId":"bench-%d"}}`, n.Add(1))
	}))
	b.Cleanup(srv.Close)
	opts := []travelrule.Option{travelrule.WithTokenSource(travelrule.StaticToken("bench-token"))}
	if store != nil {
		j, err := journal.New(store)
		if err != nil {
			b.Fatal(err)
		}
		opts = append(opts, travelrule.WithObserver(j))
	}
	c, err := travelrule.NewClient(srv.URL, opts...)
	if err != nil {
		b.Fatal(err)
	}
	key := []byte("bench-capability-key-0123456789")
	prefix := unique("b")
	reqs := make([]travelrule.TransferRequest, 0, 1)
	base := travelrule.TransferRequest{
		TravelAddress: "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN",
		Asset:         "BTC", Amount: "0.25",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		req := base
		req.Callback, err = travelrule.NewCallbackURL("https://vasp.example/cb", fmt.Sprintf("%s-%d", prefix, i), key)
		if err != nil {
			b.Fatal(err)
		}
		reqs = append(reqs[:0], req)
		b.StartTimer()
		if _, err := c.InitiateTransfer(ctx, &reqs[0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// filled is how many done entries BenchmarkStuck wrote on each store, so
// that the runs of one benchmark, and a growth series on one store, fill
// it once.
var filled sync.Map // journal.Store -> *fill

type fill struct {
	mu   sync.Mutex
	done int
}

// Bulk writes many Steps, and closes many entries, at once: a
// benchmark's set-up on a store on a server (pipelined, as
// redisstore's). Its zero value makes them one call at a time.
type Bulk struct {
	// Write makes the Steps, in order.
	Write func(ctx context.Context, steps []journal.Step) error
	// Close closes the entries keys, each of n records.
	Close func(ctx context.Context, keys []string, n int) error
}

// BenchmarkStuck measures one [journal.Journal.Stuck] over store holding
// at least entries done entries (refused initiations, closed as Stuck
// closes them) and 100 open ones (outcomes unknown, each reported): its
// cost should follow the open entries, not the store's size. It reports
// cpu-ns/op (getrusage) with ns/op. The store is filled, once per store
// and size, with the Steps a journal made, through bulk.
func BenchmarkStuck(b *testing.B, store journal.Store, entries int, bulk Bulk) {
	ctx := context.Background()
	v, _ := filled.LoadOrStore(store, &fill{})
	f := v.(*fill)
	f.mu.Lock()
	if f.done == 0 {
		fillStuck(b, store, bulk, 100, travelrule.CallOutcomeUnknown)
	}
	fillStuck(b, store, bulk, entries-f.done, travelrule.CallNotDone)
	f.done = max(f.done, entries)
	f.mu.Unlock()
	j, err := journal.New(store)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		found, err := j.Stuck(ctx, journal.Thresholds{})
		if err != nil {
			b.Fatal(err)
		}
		if len(found) < 100 {
			b.Fatalf("Stuck found %d transfers, not the 100 open ones", len(found))
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// capture is a store that keeps the Steps written to it.
type capture struct {
	journal.Store
	steps []journal.Step
}

func (c *capture) Write(ctx context.Context, st journal.Step) (journal.Written, error) {
	c.steps = append(c.steps, st)
	return c.Store.Write(ctx, st)
}

// fillStuck writes to store the Steps of n initiations, each under a
// reference of its own, an hour ago, that ended with outcome; refused
// ones are closed.
func fillStuck(b *testing.B, store journal.Store, bulk Bulk, n int, outcome travelrule.CallOutcome) {
	if n <= 0 {
		return
	}
	ctx := context.Background()
	c := &capture{Store: journal.NewMemoryStore(n, 0)}
	past := time.Now().Add(-time.Hour)
	j, err := journal.New(c, journal.WithClock(func() time.Time { return past }))
	if err != nil {
		b.Fatal(err)
	}
	prefix := unique("stuck-")
	var keys []string
	for i := range n {
		info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: fmt.Sprintf("%s-%d", prefix, i)}
		cctx, err := j.StartCall(ctx, info)
		if err != nil {
			b.Fatal(err)
		}
		j.EndCall(cctx, info, &travelrule.CallEnd{Outcome: outcome, Attempts: 1})
		keys = append(keys, "o:"+info.CallbackRef)
	}
	if j.Lost() != 0 || len(c.steps) != 2*n {
		b.Fatalf("%d Steps for %d initiations, %d lost", len(c.steps), n, j.Lost())
	}
	if err := bulk.write(ctx, store, c.steps); err != nil {
		b.Fatal(err)
	}
	if outcome == travelrule.CallNotDone {
		if err := bulk.close(ctx, store, keys, 2); err != nil { // a sent record and its end
			b.Fatal(err)
		}
	}
}

func (bk Bulk) write(ctx context.Context, store journal.Store, steps []journal.Step) error {
	if bk.Write != nil {
		return bk.Write(ctx, steps)
	}
	for _, st := range steps {
		if _, err := store.Write(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

func (bk Bulk) close(ctx context.Context, store journal.Store, keys []string, n int) error {
	if bk.Close != nil {
		return bk.Close(ctx, keys, n)
	}
	for _, k := range keys {
		if err := store.Close(ctx, k, n); err != nil {
			return err
		}
	}
	return nil
}
