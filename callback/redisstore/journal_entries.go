package redisstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/vaspkit/travelrule/journal"
)

// Of Entries' pages.
const (
	// entriesPage is how many entries a page holds at most: about 400 KB
	// with entries of five 400-byte records.
	entriesPage = 200
	// entriesLook is how many entries of the index a page's script looks
	// at, at most, for a query whose filters select few: the script runs
	// for at most a few milliseconds, as Redis runs nothing else then.
	entriesLook = 2000
	// migrateBatch is how many members of the expiry index a script
	// migrates at most (see journalMigrate).
	migrateBatch = 1000
)

// Entries implements [journal.Store]: one script per page, each bounded
// by the store's timeout. A page's script walks the sorted set of the
// entries by time, or of the open ones, newest first, from the cursor
// the page before left (a score and a member, so that entries that leave
// the set meanwhile, as Journal.Stuck closes them, move no other), and
// applies q's filters. The first page's script also migrates what the
// previous release wrote since the last migration (see [JournalStore]):
// a thousand entries per round trip, so that the first query after an
// upgrade takes a round trip more per thousand entries of the previous
// release.
func (s *JournalStore) Entries(ctx context.Context, q journal.Query) iter.Seq2[journal.Stored, error] {
	return func(yield func(journal.Stored, error) bool) {
		args := s.pageArgs(q)
		for {
			p, err := s.page(ctx, args)
			if err != nil {
				yield(journal.Stored{}, fmt.Errorf("redisstore: journal entries: %w", err))
				return
			}
			for _, e := range p.entries {
				if !yield(e, nil) {
					return
				}
			}
			switch p.status {
			case pageDone:
				return
			case pageMore:
				args[4], args[5], args[10] = p.score, p.member, "" // the cursor; migrated
			}
		}
	}
}

// What a page's script says of the pages after it.
const (
	pageMore      = 0
	pageDone      = 1
	pageMigrating = 2
)

// page is one page's reply.
type page struct {
	status        int64
	score, member string
	entries       []journal.Stored
}

// page reads the page args ask for, in one round trip.
func (s *JournalStore) page(ctx context.Context, args []any) (page, error) {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return page{}, err
	}
	defer cancel()
	reply, err := s.c.Eval(ctx, journalPageLua, s.journalKeys("")[:4], args...).Slice()
	if err != nil {
		return page{}, err
	}
	p, ok := readPage(reply)
	if !ok {
		return page{}, errors.New("the script's reply has another shape")
	}
	return p, nil
}

// readPage reads journalPageLua's reply: {done, score, member, {key,
// records...}...}.
func readPage(reply []any) (page, bool) {
	if len(reply) < 3 {
		return page{}, false
	}
	status, ok1 := reply[0].(int64)
	score, ok2 := reply[1].(string)
	member, ok3 := reply[2].(string)
	p := page{status: status, score: score, member: member}
	for _, v := range reply[3:] {
		recs, ok := bytesOf(v)
		if !ok || len(recs) == 0 {
			return page{}, false
		}
		p.entries = append(p.entries, journal.Stored{Key: string(recs[0]), Records: recs[1:]})
	}
	return p, ok1 && ok2 && ok3
}

// pageArgs are the arguments of journalPageLua for the first page of q
// (the cursor goes in args[4] and args[5]).
func (s *JournalStore) pageArgs(q journal.Query) []any {
	from, to := scoreRange(q.From, q.To)
	stages := make([]string, len(q.Stages))
	for i, st := range q.Stages {
		stages[i] = strconv.Itoa(int(st))
	}
	return []any{s.cfg.prefix, flag(q.Open), entriesPage, entriesLook, "", "", from, to, q.RefPrefix,
		strings.Join(stages, ","), strconv.Itoa(migrateBatch), s.cfg.retention.Milliseconds()}
}

// scoreRange returns the lowest and highest scores (milliseconds) of the
// entries the times from and to select (at or after from, before to; ""
// for no bound): every entry whose time falls in [from, to), and, when
// from or to is not a whole millisecond, the entries of its millisecond
// (the journal checks every entry against its query).
func scoreRange(from, to time.Time) (lo, hi string) {
	if !from.IsZero() {
		lo = strconv.FormatInt(from.UnixMilli(), 10)
	}
	if !to.IsZero() {
		hi = strconv.FormatInt(to.Add(-time.Nanosecond).UnixMilli(), 10)
	}
	return lo, hi
}
