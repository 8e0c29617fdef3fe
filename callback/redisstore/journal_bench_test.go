package redisstore_test

import (
	"testing"

	"github.com/vaspkit/travelrule/callback/redisstore"
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
