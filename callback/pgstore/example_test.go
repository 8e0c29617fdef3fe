package pgstore_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
)

// Every server of a fleet de-duplicates callbacks in one PostgreSQL
// table, so that a delivery calls the function once whichever server it
// reaches.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL")) // e.g. postgres://app@db/app?pool_max_conns=20
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := pgstore.New(ctx, pool, pgstore.WithLease(2*time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		log.Printf("transfer %s is %s", cb.TransferID, cb.Status)
		return nil
	}, callback.WithStore(store), callback.WithCapabilityKey([]byte(os.Getenv("CALLBACK_KEY"))))
	http.Handle("/travelrule/callback", h)
	log.Fatal(http.ListenAndServe(":8080", nil))
}
