//go:build unix

package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/journal"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// BenchmarkInitiateJournal/impl={floor,sdk}: an initiation through
// a client without a journal, and with one on a PostgreSQL this binary
// started.
func BenchmarkInitiateJournal(b *testing.B) {
	b.Run("impl=floor", func(b *testing.B) { storetest.BenchmarkInitiate(b, nil) })
	b.Run("impl=sdk", func(b *testing.B) {
		s, err := pgstore.NewJournal(context.Background(), newPool(b, sharedServer(b), 4), pgstore.WithTable(newTableName(b)))
		if err != nil {
			b.Fatal(err)
		}
		storetest.BenchmarkInitiate(b, s)
	})
}

// stuckOpen is how many open entries BenchmarkStuck's journals hold.
const stuckOpen = 100

// BenchmarkStuck/entries={1k,10k,100k} is one Journal.Stuck on a journal
// of that many entries, of which 100 are open (initiations whose outcome
// is unknown, made through a client and the journal, each found stuck),
// the others closed, as Write and Close leave them (written in one
// statement, for speed). Its cost follows the open entries, so it is flat
// across the three. Besides the wall time it reports cpu-ns/op, this
// process's CPU time (not the server's) per Stuck.
func BenchmarkStuck(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("entries=%dk", n/1000), func(b *testing.B) {
			ctx := context.Background()
			pool := newPool(b, sharedServer(b), 4)
			base := newTableName(b)
			s, err := pgstore.NewJournal(ctx, pool, pgstore.WithTable(base))
			if err != nil {
				b.Fatal(err)
			}
			j, err := journal.New(s)
			if err != nil {
				b.Fatal(err)
			}
			initiateUnknown(b, j, stuckOpen)
			fill(b, pool, base, fillSpec{prefix: "o:done-", n: n - stuckOpen, stage: "1 + i % 5", ref: "'done-' || i", open: "false",
				rec: []byte(`{"kind":"stored","at":"2026-11-26T10:00:00.000000Z","call":"0123456789abcdef","op":"InitiateTransfer","transferId":"tr_01JD7ZQ6B6W3N8Y4X2K9V5M1C0","attempts":1}`)}, true)
			th := journal.Thresholds{OutcomeUnknown: time.Nanosecond}
			if found, err := j.Stuck(ctx, th); err != nil || len(found) != stuckOpen {
				b.Fatalf("Stuck found %d, not %d: %v", len(found), stuckOpen, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			for range b.N {
				if _, err := j.Stuck(ctx, th); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// initiateUnknown makes n initiations through a client whose journal is
// j, against a server that reads each and drops the connection: each
// ends with its outcome unknown, an open entry of two records.
func initiateUnknown(b *testing.B, j *journal.Journal, n int) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	b.Cleanup(srv.Close)
	c, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(travelrule.StaticToken("bench-token")),
		travelrule.WithObserver(j), travelrule.WithRetryMax(0))
	if err != nil {
		b.Fatal(err)
	}
	prefix := newTableName(b)
	for i := range n {
		cb, err := travelrule.NewCallbackURL("https://vasp.example/cb", fmt.Sprintf("%s-%d", prefix, i), []byte("bench-capability-key-0123456789"))
		if err != nil {
			b.Fatal(err)
		}
		_, err = c.InitiateTransfer(context.Background(), &travelrule.TransferRequest{
			TravelAddress: "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN",
			Asset:         "BTC", Amount: "0.25", Callback: cb,
			Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
			Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
		})
		if !errors.Is(err, travelrule.ErrOutcomeUnknown) {
			b.Fatalf("initiation %d: %v, not an unknown outcome", i, err)
		}
	}
}
