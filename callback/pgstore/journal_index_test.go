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
// newer), with one record and the name ref:<key>; then it analyzes the
// tables, as autovacuum would after so many rows.
func fill(tb testing.TB, pool *pgxpool.Pool, base string, sp fillSpec) {
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
	_, err = pool.Exec(ctx, `ANALYZE `+strings.Join(tables[:], ", "))
	require.NoError(tb, err)
}

// rowsRead sums, over the plan's nodes that read the table rel, the rows
// they read: those they returned and those their filters removed, in all
// their loops.
func rowsRead(plan map[string]any, rel string) float64 {
	var n float64
	if plan["Relation Name"] == rel {
		num := func(k string) float64 { f, _ := plan[k].(float64); return f }
		n = (num("Actual Rows") + num("Rows Removed by Filter") + num("Rows Removed by Index Recheck")) * num("Actual Loops")
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
		open:  isRare})
	fill(t, pool, base, fillSpec{prefix: "o:legacy:", n: 5, rec: []byte(`{}`), stage: "-1", ref: "''", open: "false"})
	hour := time.Now().Add(-time.Hour)
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
		{"the latest", journal.Query{From: hour.Add((n - 100) * time.Millisecond)}, 0, 1100},
		{"the oldest", journal.Query{To: hour.Add(100 * time.Millisecond)}, 0, 1100},
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
