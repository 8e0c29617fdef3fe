package storetest_test

import (
	"testing"

	"github.com/vaspkit/travelrule/journal"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// BenchmarkInitiate/journal=none is the floor; journal=memory adds a
// journal in this process's memory.
func BenchmarkInitiate(b *testing.B) {
	b.Run("journal=none", func(b *testing.B) { storetest.BenchmarkInitiate(b, nil) })
	b.Run("journal=memory", func(b *testing.B) { storetest.BenchmarkInitiate(b, journal.NewMemoryStore(0, 0)) })
}
