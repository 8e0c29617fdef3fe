package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/journal"
)

// WriteMany makes the Steps as Write does, with the same script and
// arguments, in pipelines of a thousand: for tests and benchmarks that
// fill a journal fast. It reads nothing back, and does not check the
// servers' settings.
func (s *JournalStore) WriteMany(ctx context.Context, steps []journal.Step) error {
	script := redis.NewScript(journalWriteLua)
	return s.pipelined(ctx, script, len(steps), func(i int) ([]string, []any) { return s.writeArgs(steps[i]) })
}

// CloseMany closes the entries keys as Close does, with n records each,
// in pipelines of a thousand.
func (s *JournalStore) CloseMany(ctx context.Context, keys []string, n int) error {
	script := redis.NewScript(journalCloseLua)
	return s.pipelined(ctx, script, len(keys), func(i int) ([]string, []any) { return s.journalKeys(keys[i]), []any{keys[i], n} })
}

func (s *JournalStore) pipelined(ctx context.Context, script *redis.Script, n int, args func(i int) ([]string, []any)) error {
	if err := script.Load(ctx, s.c).Err(); err != nil {
		return err
	}
	for lo := 0; lo < n; lo += 1000 {
		pipe := s.c.Pipeline()
		for i := lo; i < min(lo+1000, n); i++ {
			keys, argv := args(i)
			script.EvalSha(ctx, pipe, keys, argv...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}
