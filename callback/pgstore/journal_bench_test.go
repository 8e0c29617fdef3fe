package pgstore_test

import (
	"context"
	"testing"

	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// BenchmarkInitiateJournal/journal={none,postgres}: an initiation through
// a client without a journal, and with one on a PostgreSQL this binary
// started.
func BenchmarkInitiateJournal(b *testing.B) {
	b.Run("journal=none", func(b *testing.B) { storetest.BenchmarkInitiate(b, nil) })
	b.Run("journal=postgres", func(b *testing.B) {
		s, err := pgstore.NewJournal(context.Background(), newPool(b, sharedServer(b), 4), pgstore.WithTable(newTableName(b)))
		if err != nil {
			b.Fatal(err)
		}
		storetest.BenchmarkInitiate(b, s)
	})
}
