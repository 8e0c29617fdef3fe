//go:build unix

package redisstore_test

import (
	"fmt"
	"testing"

	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// BenchmarkInitiateJournal/impl={floor,sdk}: an initiation through a
// client without a journal, and with one on a Redis this binary started.
func BenchmarkInitiateJournal(b *testing.B) {
	b.Run("impl=floor", func(b *testing.B) { storetest.BenchmarkInitiate(b, nil) })
	b.Run("impl=sdk", func(b *testing.B) {
		storetest.BenchmarkInitiate(b, redisstore.NewJournal(startRedis(b).Client(b, nil)))
	})
}

// BenchmarkStuck/entries={1k,10k,100k}: one Journal.Stuck on a journal
// on a Redis this binary started (storetest.BenchmarkStuck), filled with
// the store's own scripts in pipelines.
func BenchmarkStuck(b *testing.B) {
	s := redisstore.NewJournal(startRedis(b).Client(b, nil))
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("entries=%dk", n/1000), func(b *testing.B) {
			storetest.BenchmarkStuck(b, s, n, storetest.Bulk{Write: s.WriteMany, Close: s.CloseMany})
		})
	}
}
