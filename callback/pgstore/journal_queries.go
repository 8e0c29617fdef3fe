package pgstore

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vaspkit/travelrule/journal"
)

// pageSize is how many entries a statement of [JournalStore.Entries]
// reads at most.
const pageSize = 500

// legacyStage is the stage of an entry that has no index data: written
// by the previous release (before the migration, or by one of its
// replicas since, whose rows take the column's default), or by this one
// since. Such entries are yielded for every query.
const legacyStage = -1

// journalQueries is the SQL of a journal store's operations. Retentions
// are passed in microseconds; every time is the server's (now(), the start
// of the transaction), so the replicas' clocks do not matter, but for the
// index's updated, which is the journal's Step.At.
type journalQueries struct {
	lock, write, read, records, lookup, lockEntry, close, sweep string
}

// newJournalQueries returns the SQL for the tables jt.
//
// An entry's row holds since, when it last started anew (its first Write
// after it expired, or ever), expires_at, and the index: updated (the
// latest Step.At), stage (the highest; legacyStage for none), ref (the
// first) and open. A record or a name written by a Write carries the at
// that Write gave the entry, never before its since: so the records and
// names of an entry's life before it expired, which the sweep may not
// have deleted yet, have an at before since and are not read.
func newJournalQueries(jt journalTables) journalQueries {
	live := `e.expires_at > now() AND r.at >= e.since`
	return journalQueries{
		// Every Write takes an advisory lock on its key, on the entry it
		// peeks at and on each of its names, in the order of their hashes
		// (so that two Writes never wait for each other in a circle), all
		// before any row lock. So Writes of one entry, and the Writes
		// that change one name, take turns, and under READ COMMITTED the
		// next statement, which takes a new snapshot, reads what the
		// turns before wrote. It says whether the transaction is READ
		// COMMITTED (see JournalStore.write for the others).
		lock: `SELECT current_setting('transaction_isolation') = 'read committed', count(pg_advisory_xact_lock(hashtext($1), h)) FROM (
	SELECT DISTINCT hashtext(x) AS h FROM unnest($2::text[]) x ORDER BY h) l`,
		write: writeSQL(jt),
		// A Write's read of its entry ($1, "" for none) and of the one
		// it peeks at ($2): two parameters, not an array, whose length
		// the server would not know when it plans the statement once for
		// any values, so that it would plan it anew at every run.
		read: `SELECT e.key, r.rec FROM ` + jt.entries + ` e JOIN ` + jt.records + ` r ON r.key = e.key
WHERE e.key IN ($1::text, $2::text) AND ` + live,
		records: `SELECT r.rec FROM ` + jt.entries + ` e JOIN ` + jt.records + ` r ON r.key = e.key
WHERE e.key = $1 AND ` + live,
		lookup: `SELECT n.key FROM ` + jt.names + ` n WHERE n.name = $1 AND ` + liveName(jt),
		// Close locks the entry's row first, so that a Write under way
		// commits before close counts the records; it says whether the
		// transaction is READ COMMITTED, as lock does.
		lockEntry: `SELECT current_setting('transaction_isolation') = 'read committed',
	(SELECT count(*) FROM (SELECT FROM ` + jt.entries + ` WHERE key = $1 FOR UPDATE) l)`,
		close: `UPDATE ` + jt.entries + ` e SET open = false WHERE e.key = $1 AND e.open
	AND (SELECT count(*) FROM ` + jt.records + ` r WHERE r.key = $1 AND r.at >= e.since) = $2`,
		// The entries are locked and deleted first, so that a Write on
		// one of them waits and then starts it anew; records are deleted
		// by key, and names by key too, locked in the order of their
		// names as Writes lock them (a name that a Write points
		// elsewhere meanwhile is checked again and kept).
		sweep: `WITH gone AS (
	DELETE FROM ` + jt.entries + ` WHERE key IN (
		SELECT key FROM ` + jt.entries + ` WHERE expires_at <= now()
		ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
	RETURNING key
), r AS (
	DELETE FROM ` + jt.records + ` WHERE key IN (SELECT key FROM gone)
), n AS (
	DELETE FROM ` + jt.names + ` WHERE name IN (
		SELECT name FROM ` + jt.names + ` WHERE key IN (SELECT key FROM gone) ORDER BY name FOR UPDATE)
)
SELECT count(*) FROM gone`,
	}
}

// writeSQL is a Write's statement: $1 key, $2 id, $3 record, $4 names,
// $5 retention, $6 Step.At, $7 stage, $8 ref, $9 Exclusive. It returns
// the key of the live entry one of the names points at when Exclusive
// (and then writes nothing), else NULL.
//
// The entry's upsert comes first (the others read what it returns), so
// that it waits for the row lock of a concurrent Write of the previous
// release or of a sweep on the same entry, and computes since, expires_at
// and the index from the row as it is then. An entry that expired starts
// anew, its index too; one without index data keeps none (see
// legacyStage). The index's time moves only with a record written (a Step
// of an id the entry holds writes none). A record whose id the entry held
// in an earlier life is replaced. Names are written in their order, so that two Writes with the
// same names do not deadlock.
func writeSQL(jt journalTables) string {
	const anew = `e.expires_at <= now()`
	return `WITH taken AS (
	SELECT n.key FROM ` + jt.names + ` n
	WHERE $9::boolean AND n.name = ANY($4::text[]) AND n.key <> $1 AND ` + liveName(jt) + `
	LIMIT 1
), e AS (
	INSERT INTO ` + jt.entries + ` AS e (key, since, expires_at, updated, stage, ref, open)
	SELECT $1, now(), now() + $5::bigint * interval '1 microsecond', $6, $7, $8, true
	WHERE NOT EXISTS (SELECT FROM taken)
	ON CONFLICT (key) DO UPDATE SET
		since = CASE WHEN ` + anew + ` THEN now() ELSE e.since END,
		expires_at = greatest(e.expires_at, excluded.expires_at),
		updated = CASE WHEN ` + anew + ` THEN excluded.updated
			WHEN EXISTS (SELECT FROM ` + jt.records + ` r WHERE r.key = e.key AND r.id = $2 AND r.at >= e.since) THEN e.updated
			ELSE greatest(e.updated, excluded.updated) END,
		stage = CASE WHEN ` + anew + ` THEN excluded.stage WHEN e.stage = ` + strconv.Itoa(legacyStage) + ` THEN e.stage
			ELSE greatest(e.stage, excluded.stage) END,
		ref = CASE WHEN ` + anew + ` OR e.ref = '' THEN excluded.ref ELSE e.ref END,
		open = true
	RETURNING since, greatest(since, now()) AS at
), r AS (
	INSERT INTO ` + jt.records + ` AS r (key, id, rec, at)
	SELECT $1, $2, $3, e.at FROM e
	ON CONFLICT (key, id) DO UPDATE SET rec = excluded.rec, at = excluded.at
	WHERE r.at < (SELECT since FROM e)
), n AS (
	INSERT INTO ` + jt.names + ` AS n (name, key, at)
	SELECT x.name, $1, e.at FROM e, (SELECT DISTINCT unnest($4::text[]) AS name) x ORDER BY x.name
	ON CONFLICT (name) DO UPDATE SET key = excluded.key, at = excluded.at
)
SELECT (SELECT key FROM taken)`
}

// liveName is the condition that the name row n points at a live entry
// (not expired, and the name written since the entry last started anew),
// as a subquery run for each name on the entries' primary key. A join
// would do, but a plan made once for any values (the store's statements
// are prepared) may join through every live entry, found by expires_at,
// when the table was small when it was planned.
func liveName(jt journalTables) string {
	return `n.at >= (SELECT e.since FROM ` + jt.entries + ` e WHERE e.key = n.key AND e.expires_at > now())`
}

// lockNames are the advisory locks a Write of st takes (see
// journalQueries.lock): its key, the entry it peeks at, and its names,
// each in a space of its own.
func lockNames(st journal.Step) []string {
	out := make([]string, 0, 2+len(st.Names))
	out = append(out, "k:"+st.Key)
	if st.Peek != "" {
		out = append(out, "k:"+st.Peek)
	}
	for _, n := range st.Names {
		out = append(out, "n:"+n)
	}
	return out
}

// cursor is where a page of Entries ends: the last entry's updated and
// key, in the order newest first, then by key descending.
type cursor struct {
	updated time.Time
	key     string
}

// sqlArgs are a statement's arguments as it is built.
type sqlArgs []any

// add appends v and returns its placeholder.
func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// pageSQL returns the statement that reads the next page, after c (nil:
// the first), of at most pageSize entries that q selects, newest first,
// and their records: a row for each record, or one with a NULL record for
// an entry without any. Each part of q that is set adds a condition on an
// index: the open entries are read from their partial index, filtering
// them (their number is what Stuck costs), the others from the index on
// updated (a time range), on the stage and updated (one range per stage
// asked for), or on the reference (a prefix), as the planner finds
// cheapest. Entries without index data are read too, whatever q asks.
func pageSQL(jt journalTables, q journal.Query, c *cursor) (string, []any) {
	var a sqlArgs
	base := []string{"expires_at > now()"}
	if c != nil {
		base = append(base, "(updated, key) < ("+a.add(c.updated)+"::timestamptz, "+a.add(c.key)+"::text)")
	}
	filters := filterConds(&a, q)
	var stages string
	if len(q.Stages) > 0 {
		stages = a.add(stageList(q.Stages)) + "::smallint[]"
	}
	n := a.add(pageSize)
	sel := func(conds ...[]string) string {
		return `SELECT key, updated, since FROM ` + jt.entries + ` WHERE ` + strings.Join(slices.Concat(conds...), " AND ") +
			` ORDER BY updated DESC, key DESC LIMIT ` + n
	}
	var page string
	switch {
	case q.Open && (stages != "" || len(filters) > 0):
		if stages != "" {
			filters = append(filters, "stage = ANY("+stages+")")
		}
		page = sel(base, []string{"open", "(stage = " + strconv.Itoa(legacyStage) + " OR " + strings.Join(filters, " AND ") + ")"})
	case q.Open:
		page = sel(base, []string{"open"})
	case stages == "" && len(filters) == 0:
		page = sel(base)
	default:
		indexed := sel(base, []string{"stage >= 0"}, filters)
		if stages != "" {
			indexed = `SELECT e.key, e.updated, e.since FROM unnest(` + stages + `) s(stage) CROSS JOIN LATERAL (` +
				sel(base, []string{"stage = s.stage"}, filters) + `) e`
		}
		legacy := sel(base, []string{"stage = " + strconv.Itoa(legacyStage)})
		page = `SELECT key, updated, since FROM ((` + indexed + `) UNION ALL (` + legacy + `)) u
ORDER BY updated DESC, key DESC LIMIT ` + n
	}
	return `SELECT p.key, p.updated, r.rec FROM (` + page + `) p
LEFT JOIN ` + jt.records + ` r ON r.key = p.key AND r.at >= p.since
ORDER BY p.updated DESC, p.key DESC`, a
}

// filterConds are the conditions of q's time range and reference prefix.
// A prefix is a range of the column ref, which sorts bytewise (COLLATE
// "C"), from the prefix to refBound(prefix), and starts_with checks it.
func filterConds(a *sqlArgs, q journal.Query) []string {
	var out []string
	if !q.From.IsZero() {
		out = append(out, "updated >= "+a.add(q.From)+"::timestamptz")
	}
	if !q.To.IsZero() {
		out = append(out, "updated < "+a.add(q.To)+"::timestamptz")
	}
	switch p := q.RefPrefix; {
	case p == "":
	case !utf8.ValidString(p) || strings.IndexByte(p, 0) >= 0:
		out = append(out, "false") // no text in the column is so
	default:
		lo := a.add(p) + "::text"
		out = append(out, "ref >= "+lo, "starts_with(ref, "+lo+")")
		if hi, ok := refBound(p); ok {
			out = append(out, "ref < "+a.add(hi)+"::text")
		}
	}
	return out
}

// refBound returns the least string, in byte order, greater than every
// string that starts with p: p cut after its last ASCII byte below U+007F,
// that byte incremented (so the bound is valid UTF-8 when p is). There is
// none when p has no such byte.
func refBound(p string) (string, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] < 0x7f {
			return p[:i] + string(rune(p[i]+1)), true
		}
	}
	return "", false
}

// stageList is the stages asked for, each once, as the column holds them:
// stages outside the column's range are dropped, since no entry has one.
func stageList(stages []journal.Stage) []int16 {
	out := make([]int16, 0, len(stages))
	for _, s := range stages {
		if s >= 0 && s <= 1<<15-1 && !slices.Contains(out, int16(s)) {
			out = append(out, int16(s))
		}
	}
	return out
}
