package pgstore_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/journal"
)

// Every replica of a service keeps its journal in the same PostgreSQL
// tables and hands the journal to its client (and to its callback
// handler, with callback.WithObserver); an operator's job lists the
// transfers that need a person.
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
	j, err := journal.New(store)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := travelrule.NewClient("https://trp.example.com",
		travelrule.WithAPIKey(os.Getenv("TRAVELRULE_API_KEY")), travelrule.WithObserver(j)); err != nil {
		log.Fatal(err)
	}
	stuck, err := j.Stuck(ctx, journal.Thresholds{})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range stuck {
		fmt.Println(f.Rule, f.Entry.Ref, f.Entry.TransferID) // identifiers only: the journal holds no personal data
	}
}
