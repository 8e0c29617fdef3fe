package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/redisstore"
)

// The variables that name a shared de-duplication store; set one on every
// replica.
const (
	envRedisURL    = "TRAVELRULE_REDIS_URL"    // redis://user:password@host:6379/0
	envDatabaseURL = "TRAVELRULE_DATABASE_URL" // postgres://user:password@host:5432/db
)

// sharedStore returns the store that getenv names, where it is and a
// function that closes its client, or the handler's default store, in
// this process, when neither variable is set. It reaches the server
// before it returns, so that a wrong address fails at start-up. Neither
// its errors nor where names a password.
func sharedStore(ctx context.Context, getenv func(string) string) (store callback.Store, where string, closeFn func(), err error) {
	redisURL, databaseURL := getenv(envRedisURL), getenv(envDatabaseURL)
	switch {
	case redisURL != "" && databaseURL != "":
		return nil, "", nil, errors.New(envRedisURL + " and " + envDatabaseURL + " are both set: set one")
	case redisURL != "":
		return redisStore(ctx, redisURL)
	case databaseURL != "":
		return postgresStore(ctx, databaseURL)
	}
	return callback.NewMemoryStore(0), "this process only (set " + envRedisURL + " or " + envDatabaseURL + " to share it across replicas)", func() {}, nil
}

func redisStore(ctx context.Context, url string) (callback.Store, string, func(), error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		// go-redis's error quotes the URL, password and all.
		return nil, "", nil, errors.New(envRedisURL + " is not a redis:// or rediss:// URL")
	}
	opts.ContextTimeoutEnabled = true
	c := redis.NewClient(opts)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, "", nil, fmt.Errorf("%s: cannot reach Redis at %s: %w", envRedisURL, opts.Addr, err)
	}
	s := redisstore.New(c)
	return s, "Redis at " + opts.Addr, func() { _ = c.Close() }, s.Err()
}

func postgresStore(ctx context.Context, url string) (callback.Store, string, func(), error) {
	pool, err := pgxpool.New(ctx, url) // pgx's errors show the password as xxxxx
	if err != nil {
		return nil, "", nil, fmt.Errorf("%s: %w", envDatabaseURL, err)
	}
	s, err := pgstore.New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, "", nil, fmt.Errorf("%s: %w", envDatabaseURL, err)
	}
	cc := pool.Config().ConnConfig
	where := "PostgreSQL at " + net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))) + ", database " + cc.Database
	return s, where, pool.Close, nil
}
