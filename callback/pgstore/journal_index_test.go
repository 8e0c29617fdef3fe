//go:build unix

package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/journal"
)

// fillSpec is what fill writes of each entry i, from 1 to n: SQL
// expressions of i for its stage, reference and whether it is open.
type fillSpec struct {
	prefix           string // the keys are prefix || i
	n                int
	stage, ref, open string
	rec              []byte // its one record
}

// fill inserts entries into the journal tables of base, in the public
// schema, as Writes would leave them, in one statement: entry i last
// written at an hour ago plus i milliseconds (so the greater i, the
// newer), with one record and the name ref:<key>; then, if analyze, it
// analyzes the tables, as autovacuum would after so many rows.
func fill(tb testing.TB, pool *pgxpool.Pool, base string, sp fillSpec, analyze bool) {
	tb.Helper()
	tables := journalTables("public", base)
	ctx := context.Background()
	_, err := pool.Exec(ctx, fmt.Sprintf(`WITH e AS (
	INSERT INTO %[1]s (key, since, expires_at, updated, stage, ref, open)
	SELECT $1 || i, now(), now() + interval '1 hour', now() - interval '1 hour' + i * interval '1 millisecond', %[4]s, %[5]s, %[6]s
	FROM generate_series(1, $2::int) i
	RETURNING key
), r AS (
	INSERT INTO %[2]s (key, id, rec, at) SELECT key, 'r', $3, now() FROM e
)
INSERT INTO %[3]s (name, key, at) SELECT 'ref:' || key, key, now() FROM e`, tables[1], tables[0], tables[2], sp.stage, sp.ref, sp.open),
		sp.prefix, sp.n, sp.rec)
	require.NoError(tb, err)
	if analyze {
		_, err = pool.Exec(ctx, `ANALYZE `+strings.Join(tables[:], ", "))
		require.NoError(tb, err)
	}
}

// rowsRead sums, over the plan's nodes that read the table rel, the rows
// they read: those they returned and those their filters removed, in all
// their loops, and the rows that the bitmap scans of its indexes (whose
// names start with rel's) found.
func rowsRead(plan map[string]any, rel string) float64 {
	var n float64
	num := func(k string) float64 { f, _ := plan[k].(float64); return f }
	index, _ := plan["Index Name"].(string)
	switch {
	case plan["Relation Name"] == rel:
		n = (num("Actual Rows") + num("Rows Removed by Filter") + num("Rows Removed by Index Recheck")) * num("Actual Loops")
	case plan["Node Type"] == "Bitmap Index Scan" && strings.HasPrefix(index, rel+"_"):
		n = num("Actual Rows") * num("Actual Loops")
	}
	subs, _ := plan["Plans"].([]any)
	for _, p := range subs {
		sub, _ := p.(map[string]any)
		n += rowsRead(sub, rel)
	}
	return n
}

// explain runs sql with args under EXPLAIN ANALYZE, with the session's
// plan_cache_mode set to mode (the store's statements are prepared, and
// the server may plan one for any values after five runs), and returns
// the plan it ran.
func explain(t *testing.T, pool *pgxpool.Pool, mode, sql string, args []any) map[string]any {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SET plan_cache_mode = "+mode)
	require.NoError(t, err)
	defer func() { _, _ = conn.Exec(ctx, "RESET plan_cache_mode") }()
	var out []byte
	require.NoError(t, conn.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+sql, args...).Scan(&out))
	var plans []struct{ Plan map[string]any }
	require.NoError(t, json.Unmarshal(out, &plans))
	return plans[0].Plan
}

// TestJournalQueriesReadWhatTheySelect fills a journal of 20,000 entries
// (20 of them open, of a rare stage and reference; a few without index
// data, as the previous release left them) and checks, from the plan the
// server ran, that the first page of each query reads about the entries it
// yields, never all of them: each is served by an index, whether the
// server plans it for the values given or for any.
func TestJournalQueriesReadWhatTheySelect(t *testing.T) {
	const n, rare = 20_000, 1000 // every rare-th entry is open, of stage 2, and of the reference rare-<i>
	pool := newPool(t, sharedServer(t), 4)
	ctx := context.Background()
	base := newTableName(t)
	s := newJournal(t, pool, pgstore.WithTable(base))
	isRare := fmt.Sprintf("i %% %d = 0", rare)
	fill(t, pool, base, fillSpec{prefix: "o:", n: n, rec: []byte(`{}`),
		stage: "CASE WHEN " + isRare + " THEN 2 ELSE 5 END",
		ref:   "CASE WHEN " + isRare + " THEN 'rare-' ELSE 'bulk-' END || i",
		open:  isRare}, true)
	fill(t, pool, base, fillSpec{prefix: "o:legacy:", n: 5, rec: []byte(`{}`), stage: "-1", ref: "''", open: "false"}, true)
	var oldest, newest time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT min(updated), max(updated) FROM `+journalTables("public", base)[1]).Scan(&oldest, &newest))
	for _, tc := range []struct {
		name        string
		q           journal.Query
		yields, max int
	}{
		{"the open entries", journal.Query{Open: true}, n / rare, 50},
		{"a rare stage", journal.Query{Stages: []journal.Stage{2}}, n/rare + 5, 50},
		{"a common stage", journal.Query{Stages: []journal.Stage{5, 4}}, 500, 1100},
		{"a rare prefix", journal.Query{RefPrefix: "rare-"}, n/rare + 5, 50},
		{"a common prefix", journal.Query{RefPrefix: "bulk-"}, 500, 1100},
		{"the latest", journal.Query{From: newest.Add(-99 * time.Millisecond)}, 0, 200},
		{"the oldest", journal.Query{To: oldest.Add(100 * time.Millisecond)}, 0, 200},
		{"all", journal.Query{}, 500, 1100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			for e, err := range s.Entries(ctx, tc.q) {
				require.NoError(t, err)
				if got++; got == 500 {
					break
				}
				require.NotEmpty(t, e.Records)
			}
			if tc.yields > 0 {
				assert.Equal(t, tc.yields, got, "entries the first page yields")
			}
			sql, args := pgstore.PageSQL(s, tc.q)
			for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
				plan := explain(t, pool, mode, sql, args)
				assert.LessOrEqual(t, rowsRead(plan, base+"_entries"), float64(tc.max), "entries read of %d with %s", n, mode)
			}
		})
	}
}

// planQueries are the queries whose pages TestJournalPlansMadeSmallServeLarge
// plans small and runs large, and how many entries each may read of
// 20,000 (the first page, of 500, or the few that are open, of a rare
// stage or reference).
var planQueries = []struct {
	q   journal.Query
	max float64
}{
	{journal.Query{Open: true}, 100},
	{journal.Query{}, 1100},
	{journal.Query{Stages: []journal.Stage{2}}, 100},
	{journal.Query{RefPrefix: "rare-"}, 100},
	{journal.Query{Open: true, Stages: []journal.Stage{2}}, 100},
}

// literal is v as an SQL literal, for EXECUTE.
func literal(v any) string {
	switch v := v.(type) {
	case int:
		return fmt.Sprint(v)
	case []int16:
		return fmt.Sprintf("'{%s}'::smallint[]", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ","), "[]"))
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	panic(fmt.Sprintf("no literal for %T", v))
}

// TestJournalPlansMadeSmallServeLarge runs the store's statements on a
// small journal, more than five times, so that the server keeps plans of
// them made for any values (a pool's connection prepares each statement
// once; the statements of one entry or name must be planned so, not at
// each run, which would cost more than running them), then grows the journal to 20,000 live entries without the
// statistics that would make the server plan again: each plan still reads
// a few entries, or a page, never all the live ones (a join of names and
// entries, say, could be planned to read every entry through expires_at).
// A page whose statement the server plans at each run, with the
// statistics of the time, is left to TestJournalQueriesReadWhatTheySelect.
func TestJournalPlansMadeSmallServeLarge(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t, sharedServer(t), 1)
	base := newTableName(t)
	s := newJournal(t, pool, pgstore.WithTable(base), pgstore.WithSweepInterval(0))
	for _, tb := range journalTables("public", base) {
		_, err := pool.Exec(ctx, `ALTER TABLE `+tb+` SET (autovacuum_enabled = false)`)
		require.NoError(t, err)
	}
	for i := range 10 {
		key := fmt.Sprint("o:small-", i)
		_, err := s.Write(ctx, journal.Step{Key: key, ID: "a", Record: []byte(`{}`), Names: []string{"ref:" + key}, Exclusive: true,
			Read: true, Peek: "u:" + key, At: time.Now(), Stage: 2, Ref: "rare-small"})
		require.NoError(t, err)
		_, err = s.Lookup(ctx, "ref:"+key)
		require.NoError(t, err)
		_, err = s.Records(ctx, key)
		require.NoError(t, err)
		require.NoError(t, s.Close(ctx, key, 0))
		for _, pq := range planQueries {
			for _, err := range s.Entries(ctx, pq.q) {
				require.NoError(t, err)
			}
		}
	}
	isRare := "i % 1000 = 0"
	fill(t, pool, base, fillSpec{prefix: "o:", n: 20_000, rec: []byte(`{}`), open: isRare,
		stage: "CASE WHEN " + isRare + " THEN 2 ELSE 5 END", ref: "CASE WHEN " + isRare + " THEN 'rare-' ELSE 'bulk-' END || i"}, false)

	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	run := func(what, sql, args string, max float64, generic bool) {
		t.Helper()
		var name string
		var generics int64
		require.NoError(t, conn.QueryRow(ctx, `SELECT name, generic_plans FROM pg_prepared_statements WHERE statement = $1`, sql).Scan(&name, &generics), what)
		switch {
		case generic:
			require.NotZero(t, generics, "%s runs a plan made for any values, not one made at each run", what)
		case generics == 0:
			return // planned at each run, with the statistics of the time (see TestJournalQueriesReadWhatTheySelect)
		}
		var out []byte
		require.NoError(t, conn.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE `+name+args).Scan(&out), what)
		var plans []struct{ Plan map[string]any }
		require.NoError(t, json.Unmarshal(out, &plans))
		assert.LessOrEqual(t, rowsRead(plans[0].Plan, base+"_entries"), max, "entries %s reads of 20,000: %s", what, out)
	}
	args := map[string]string{
		"lock":      `('t', ARRAY['k:o:1', 'n:ref:1'])`,
		"write":     `('o:x', 'a', '\x00'::bytea, ARRAY['ref:o:1', 'ref:o:2'], 3600000000, now(), 0::int2, '', true)`,
		"read":      `('o:1', 'u:o:1')`,
		"lookup":    `('ref:o:1')`,
		"records":   `('o:1')`,
		"lockEntry": `('o:1')`,
		"close":     `('o:1', 1)`,
	}
	for what, sql := range pgstore.Statements(s) {
		run(what, sql, args[what], 5, true)
	}
	for _, pq := range planQueries {
		sql, a := pgstore.PageSQL(s, pq.q)
		var lits []string
		for _, v := range a {
			lits = append(lits, literal(v))
		}
		run(fmt.Sprintf("the page of %+v", pq.q), sql, "("+strings.Join(lits, ", ")+")", pq.max, false)
	}
}
