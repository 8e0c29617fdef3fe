//go:build unix

package storetest_test

import (
	"fmt"
	"testing"

	"github.com/vaspkit/travelrule/journal"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// BenchmarkInitiateJournal/impl=floor is an initiation without a
// journal; impl=sdk adds a journal in this process's memory.
func BenchmarkInitiateJournal(b *testing.B) {
	b.Run("impl=floor", func(b *testing.B) { storetest.BenchmarkInitiate(b, nil) })
	b.Run("impl=sdk", func(b *testing.B) { storetest.BenchmarkInitiate(b, journal.NewMemoryStore(0, 0)) })
}

// BenchmarkStuck is the growth series on the memory store: 1k, 10k and
// 100k entries, of which 100 open.
func BenchmarkStuck(b *testing.B) {
	store := journal.NewMemoryStore(200_000, 0)
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("entries=%dk", n/1000), func(b *testing.B) { storetest.BenchmarkStuck(b, store, n, storetest.Bulk{}) })
	}
}
