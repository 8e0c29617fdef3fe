//go:build unix

package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// BenchmarkInitiateJournal/journal={none,redis}: an initiation through a
// client without a journal, and with one on a Redis this binary started.
func BenchmarkInitiateJournal(b *testing.B) {
	b.Run("journal=none", func(b *testing.B) { storetest.BenchmarkInitiate(b, nil) })
	b.Run("journal=redis", func(b *testing.B) {
		storetest.BenchmarkInitiate(b, redisstore.NewJournal(startRedis(b).Client(b, nil)))
	})
}

// BenchmarkStuck/entries={1k,10k,100k}: one Journal.Stuck on a journal
// of that many entries on a Redis this binary started, 100 of them open
// (initiations whose outcome is unknown, not yet past their threshold),
// the rest closed (initiations the service refused, closed as Stuck
// closes them): its cost follows the open entries, not the journal's
// size. Each size is filled once, by the Steps a journal made in memory,
// written with the store's own script in pipelines.
func BenchmarkStuck(b *testing.B) {
	c := startRedis(b).Client(b, nil)
	for _, n := range []int{1_000, 10_000, 100_000} {
		name := fmt.Sprintf("entries=%dk", n/1000)
		var j *journal.Journal
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			if j == nil {
				s := redisstore.NewJournal(c, redisstore.WithPrefix(name+":"))
				fillJournal(b, s, n, 100)
				var err error
				if j, err = journal.New(s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := j.Stuck(ctx, journal.Thresholds{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
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

// fillJournal writes total initiations to s, open of them with an
// outcome unknown and the rest refused and closed.
func fillJournal(b *testing.B, s *redisstore.JournalStore, total, open int) {
	ctx := context.Background()
	t0 := time.Now()
	c := &capture{Store: journal.NewMemoryStore(total, 0)}
	j, err := journal.New(c)
	if err != nil {
		b.Fatal(err)
	}
	var closed []string
	for i := range total {
		info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: fmt.Sprintf("bench-%d", i)}
		cctx, err := j.StartCall(ctx, info)
		if err != nil {
			b.Fatal(err)
		}
		end := &travelrule.CallEnd{Outcome: travelrule.CallOutcomeUnknown, Attempts: 1}
		if i >= open {
			end.Outcome = travelrule.CallNotDone
			closed = append(closed, "o:"+info.CallbackRef)
		}
		j.EndCall(cctx, info, end)
	}
	if err := s.WriteMany(ctx, c.steps); err != nil {
		b.Fatal(err)
	}
	if err := s.CloseMany(ctx, closed, 2); err != nil { // a sent record and its end
		b.Fatal(err)
	}
	b.Logf("%d entries filled in %v", total, time.Since(t0))
	if j.Lost() != 0 || len(c.steps) != 2*total {
		b.Fatalf("%d Steps for %d initiations, %d lost", len(c.steps), total, j.Lost())
	}
}
