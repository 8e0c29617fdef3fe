package redisstore_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
)

// Every replica of the service that receives callbacks gives its handler a
// store on the same Redis: a callback delivered to two replicas calls the
// function once.
func Example() {
	opts, err := redis.ParseURL(os.Getenv("TRAVELRULE_REDIS_URL")) // redis://user:password@host:6379/0
	if err != nil {
		log.Fatal("TRAVELRULE_REDIS_URL is not a redis:// or rediss:// URL") // its error may quote the password
	}
	opts.ContextTimeoutEnabled = true // so that a request's deadline bounds its claim
	rdb := redis.NewClient(opts)
	defer rdb.Close()

	store := redisstore.New(rdb)
	if err := store.Err(); err != nil {
		log.Fatal(err)
	}
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		log.Printf("payment %s: %s", cb.Ref, cb.Status)
		return nil
	}, callback.WithCapabilityKey([]byte(os.Getenv("TRAVELRULE_CALLBACK_KEY"))), callback.WithStore(store))
	if err := h.Err(); err != nil {
		log.Fatal(err)
	}
	http.Handle("/travelrule/callback", h)
}
