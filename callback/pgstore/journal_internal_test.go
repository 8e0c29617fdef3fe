package pgstore

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/vaspkit/travelrule/journal"
)

// TestRefBound checks the upper bound of a reference prefix's range: every
// string that starts with the prefix is below it, and it is valid UTF-8.
func TestRefBound(t *testing.T) {
	for _, tc := range []struct {
		p, want string
		ok      bool
	}{
		{"abc", "abd", true},
		{"ab~", "ab\x7f", true},
		{"ab\x7f", "ac", true},
		{"ab\x7f\x7f", "ac", true},
		{"aé", "b", true},
		{"é", "", false},
		{"\x7f", "", false},
		{"ref-", "ref.", true},
	} {
		got, ok := refBound(tc.p)
		assert.Equal(t, tc.ok, ok, "%q", tc.p)
		assert.Equal(t, tc.want, got, "%q", tc.p)
		if ok {
			for _, s := range []string{tc.p, tc.p + "\x7f", tc.p + "\U0010FFFF", tc.p + "zzz"} {
				assert.Less(t, s, got, "%q starts with %q", s, tc.p)
			}
		}
	}
}

// TestStageList checks that the stages asked for reach the column each
// once, and those no entry can have do not.
func TestStageList(t *testing.T) {
	assert.Equal(t, []int16{3, 0}, stageList([]journal.Stage{3, 0, 3, -1, 1 << 20}))
	assert.Empty(t, stageList([]journal.Stage{-1}))
}

// TestJournalShapeFault checks what a table's columns and indexes make of
// it: fit, unfit (naming why), or of the previous release (a migration
// adds what it lacks).
func TestJournalShapeFault(t *testing.T) {
	entries := journalShapes[1]
	cols := func(drop string, change ...column) map[string]column {
		m := map[string]column{}
		for _, c := range entries.columns {
			m[c.name] = column{name: c.name, typ: c.typ, notNull: true, collation: c.collation}
		}
		delete(m, drop)
		for _, c := range change {
			m[c.name] = c
		}
		return m
	}
	all := []index{{cols: []string{"key"}, unique: true}, {cols: []string{"expires_at"}}, {cols: []string{"updated", "key"}},
		{cols: []string{"stage", "updated", "key", "extra"}}, {cols: []string{"updated", "key"}, pred: "open"}, {cols: []string{"ref"}}}
	but := func(i int, with ...index) []index {
		return append(append(append([]index{}, all[:i]...), all[i+1:]...), with...)
	}
	for _, tc := range []struct {
		name    string
		cols    map[string]column
		indexes []index
		want    string // in the error, "" for none
		migrate bool
	}{
		{"fit", cols(""), all, "", false},
		{"the previous release's", cols("updated"), all[:2], "no column updated", true},
		{"no index on open entries", cols(""), but(4), "no index (updated, key) WHERE open", true},
		{"an index on open entries of another predicate", cols(""), but(4, index{cols: []string{"updated", "key"}, pred: "(open = true)"}), "WHERE open", true},
		{"the index on updated in another order", cols(""), but(2, index{cols: []string{"key", "updated"}}), "no index (updated, key),", true},
		{"no column since", cols("since"), all, "no column since", false},
		{"a stage of another type", cols("", column{name: "stage", typ: "integer", notNull: true}), all, "is integer, not smallint", false},
		{"a ref of another collation", cols("", column{name: "ref", typ: "text", notNull: true, collation: "default"}), all, `not of collation "C"`, false},
		{"unfit before it is old", cols("updated", column{name: "key", typ: "character varying"}), all[:2], "the column key is character varying", false},
		{"no primary key", cols(""), but(0, index{cols: []string{"key"}}), "no primary key on (key)", false},
		{"a partial primary key", cols(""), but(0, index{cols: []string{"key"}, unique: true, pred: "open"}), "no primary key on (key)", false},
		{"no index on expires_at", cols(""), but(1), "no index (expires_at) (valid, not partial)", false},
		{"a partial index on expires_at", cols(""), but(1, index{cols: []string{"expires_at"}, pred: "open"}), "no index (expires_at)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, migrate := entries.fault(tc.cols, tc.indexes)
			assert.Equal(t, tc.migrate, migrate)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, migrate := journalShapes[0].fault(map[string]column{}, nil)
	assert.False(t, migrate, "a records table of no columns is not the previous release's")
}

// TestPageSQL checks the conditions each part of a query adds to the
// statement of a page, so that each reads from the index that serves it.
func TestPageSQL(t *testing.T) {
	jt := newJournalTables(table{schema: "s", rel: "j"})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		q       journal.Query
		c       *cursor
		want    []string // in the statement
		wantNot []string
		args    int
	}{
		{"every entry", journal.Query{}, nil, []string{"WHERE expires_at > now() ORDER BY updated DESC, key DESC LIMIT $1"}, []string{"UNION", "open"}, 1},
		{"the next page", journal.Query{}, &cursor{at, "o:1"}, []string{"(updated, key) < ($1::timestamptz, $2::text)"}, []string{"UNION"}, 3},
		{"the open entries", journal.Query{Open: true}, nil, []string{"AND open ORDER BY"}, []string{"UNION", "stage"}, 1},
		{"open ones of a stage", journal.Query{Open: true, Stages: []journal.Stage{2}}, nil, []string{"open AND (stage = -1 OR stage = ANY($1::smallint[]))"}, []string{"UNION"}, 2},
		{"stages", journal.Query{Stages: []journal.Stage{2, 3}}, nil, []string{"unnest($1::smallint[]) s(stage) CROSS JOIN LATERAL", "stage = s.stage", "UNION ALL", "stage = -1"}, []string{"open"}, 2},
		{"a time range", journal.Query{From: at, To: at.Add(time.Hour)}, nil, []string{"stage >= 0 AND updated >= $1::timestamptz AND updated < $2::timestamptz", "UNION ALL"}, []string{"LATERAL"}, 3},
		{"a prefix", journal.Query{RefPrefix: "ref-"}, nil, []string{"ref >= $1::text AND starts_with(ref, $1::text) AND ref < $2::text"}, nil, 3},
		{"a prefix with no bound", journal.Query{RefPrefix: "é"}, nil, []string{"starts_with(ref, $1::text)"}, []string{"ref <"}, 2},
		{"a prefix no text has", journal.Query{RefPrefix: "\xff"}, nil, []string{"stage >= 0 AND false"}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sql, args := pageSQL(jt, tc.q, tc.c)
			for _, s := range tc.want {
				assert.Contains(t, sql, s)
			}
			for _, s := range tc.wantNot {
				assert.NotContains(t, sql, s)
			}
			assert.Len(t, args, tc.args)
			assert.True(t, strings.HasSuffix(sql, "ORDER BY p.updated DESC, p.key DESC"))
		})
	}
}
