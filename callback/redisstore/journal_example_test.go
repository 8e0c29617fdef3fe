package redisstore_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal"
)

// Every replica of a service gives its journal a store on the same Redis,
// with the same prefix and retention, so that a transfer one replica
// started is followed by all of them.
func ExampleNewJournal() {
	opts, err := redis.ParseURL(os.Getenv("TRAVELRULE_REDIS_URL")) // redis://user:password@host:6379/0
	if err != nil {
		log.Fatal("TRAVELRULE_REDIS_URL is not a redis:// or rediss:// URL") // its error may quote the password
	}
	opts.ContextTimeoutEnabled = true // so that a caller's deadline bounds each call
	rdb := redis.NewClient(opts)
	defer rdb.Close()

	store := redisstore.NewJournal(rdb, redisstore.WithRetention(90*24*time.Hour))
	if err := store.Err(); err != nil { // a misconfiguration, or a Redis that evicts
		log.Fatal(err)
	}
	var _ journal.Store = store // what the journal keeps its entries in

	// An operator's tool counts the entries the journal keeps.
	entries := 0
	err = store.Scan(context.Background(), func(string, [][]byte) error {
		entries++
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("the journal keeps %d entries", entries)
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
