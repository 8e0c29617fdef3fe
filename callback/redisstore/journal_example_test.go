package redisstore_test

import (
	"context"
	"log"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal"
)

// Every replica of a service gives its journal a store on the same Redis,
// with the same prefix and retention, and hands the journal to its client
// and its callback handler: a transfer one replica started is reconciled
// by a callback that reaches another.
func ExampleNewJournal() {
	opts, err := redis.ParseURL(os.Getenv("TRAVELRULE_REDIS_URL")) // redis://user:password@host:6379/0
	if err != nil {
		log.Fatal("TRAVELRULE_REDIS_URL is not a redis:// or rediss:// URL") // its error may quote the password
	}
	opts.ContextTimeoutEnabled = true // so that a caller's deadline bounds each call
	rdb := redis.NewClient(opts)
	defer rdb.Close()

	store := redisstore.NewJournal(rdb)
	if err := store.Err(); err != nil { // a misconfiguration, or a Redis that evicts
		log.Fatal(err)
	}
	j, err := journal.New(store)
	if err != nil {
		log.Fatal(err)
	}
	client, err := travelrule.NewClient("https://trp.example.com",
		travelrule.WithAPIKey(os.Getenv("TRAVELRULE_API_KEY")), travelrule.WithObserver(j))
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := callback.NewDataIntegrityVerifier(os.Getenv("TRAVELRULE_SIGNING_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	handler := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(verifier), callback.WithObserver(j))
	_, _ = client, handler // initiate with client; mount handler in the service's mux
}

// In a Redis Cluster, the journal's prefix holds a hash tag, which puts
// all of the journal on one node.
func ExampleNewJournal_cluster() {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 []string{"redis-0:6379", "redis-1:6379", "redis-2:6379"},
		ContextTimeoutEnabled: true,
	})
	defer rdb.Close()
	store := redisstore.NewJournal(rdb, redisstore.WithPrefix("{travelrule:journal}:"))
	if err := store.Err(); err != nil {
		log.Fatal(err)
	}
}
