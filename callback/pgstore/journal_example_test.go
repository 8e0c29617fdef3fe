package pgstore_test

import (
	"context"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule/callback/pgstore"
)

// Every replica of a service keeps its journal in the same PostgreSQL
// tables: an entry appended to by one is read by all.
func ExampleNewJournal() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL")) // e.g. postgres://app@db/app?pool_max_conns=20
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := pgstore.NewJournal(ctx, pool) // tables travelrule_journal, _entries and _names; 30 days' retention
	if err != nil {
		log.Fatal(err)
	}
	// A record is written once per id, however often it is appended; the
	// names point at the entry.
	err = store.Append(ctx, "o:tr_123", "sent", []byte(`{"k":"sent"}`), "ref:abc")
	if err != nil {
		log.Fatal(err)
	}
	key, err := store.Lookup(ctx, "ref:abc") // "o:tr_123"
	if err != nil {
		log.Fatal(err)
	}
	recs, err := store.Records(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%d records", len(recs))
}
