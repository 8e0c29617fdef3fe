//go:build unix

package pgstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/journal"
)

// previousRelease is a journal store of the previous release, as far as
// its tables go: its DDL and its Append, copied from the code of that
// release (git show <release>:callback/pgstore/journal.go), so that tests
// can make a journal as it wrote one, and go on writing as one of its
// replicas still running during a rolling deploy does.
type previousRelease struct {
	pool      *pgxpool.Pool
	tables    [3]string // records, entries, names; quoted
	retention time.Duration
}

// newPreviousRelease creates the tables of the base table base in the
// public schema as the previous release did, and returns a store of that
// release on them.
func newPreviousRelease(t testing.TB, pool *pgxpool.Pool, base string, retention time.Duration) *previousRelease {
	t.Helper()
	p := &previousRelease{pool: pool, tables: journalTables("public", base), retention: retention}
	records, entries, names := p.tables[0], p.tables[1], p.tables[2]
	for _, ddl := range []string{`CREATE TABLE ` + records + ` (
	key text NOT NULL,
	id text NOT NULL,
	rec bytea NOT NULL,
	at timestamptz NOT NULL,
	PRIMARY KEY (key, id)
)`, `CREATE TABLE ` + entries + ` (
	key text PRIMARY KEY,
	since timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
)`, `CREATE INDEX ` + pgx.Identifier{base + "_entries_expires_at_idx"}.Sanitize() + ` ON ` + entries + ` (expires_at)`,
		`CREATE TABLE ` + names + ` (
	name text PRIMARY KEY,
	key text NOT NULL,
	at timestamptz NOT NULL
)`, `CREATE INDEX ` + pgx.Identifier{base + "_names_key_idx"}.Sanitize() + ` ON ` + names + ` (key)`} {
		_, err := pool.Exec(context.Background(), ddl)
		require.NoError(t, err)
	}
	return p
}

// Append is the previous release's JournalStore.Append.
func (p *previousRelease) Append(t testing.TB, key, id string, rec []byte, names ...string) {
	t.Helper()
	records, entries, tnames := p.tables[0], p.tables[1], p.tables[2]
	if names == nil {
		names = []string{}
	}
	_, err := p.pool.Exec(context.Background(), `WITH e AS (
	INSERT INTO `+entries+` AS e (key, since, expires_at)
	VALUES ($1, now(), now() + $5::bigint * interval '1 microsecond')
	ON CONFLICT (key) DO UPDATE SET
		since = CASE WHEN e.expires_at <= now() THEN now() ELSE e.since END,
		expires_at = greatest(e.expires_at, excluded.expires_at)
	RETURNING since, greatest(since, now()) AS at
), r AS (
	INSERT INTO `+records+` AS r (key, id, rec, at)
	SELECT $1, $2, $3, e.at FROM e
	ON CONFLICT (key, id) DO UPDATE SET rec = excluded.rec, at = excluded.at
	WHERE r.at < (SELECT since FROM e)
)
INSERT INTO `+tnames+` AS n (name, key, at)
SELECT x.name, $1, e.at FROM e, (SELECT DISTINCT unnest($4::text[]) AS name) x ORDER BY x.name
ON CONFLICT (name) DO UPDATE SET key = excluded.key, at = excluded.at`, key, id, rec, names, p.retention.Microseconds())
	require.NoError(t, err)
}

// initiation appends, as the previous release's journal did, the records
// of an initiation under the reference ref, call id, sent at sent: its
// write-ahead record, and, unless outcome is "", the outcome's (stored,
// with the transfer id tid, unknown, or not-stored).
func (p *previousRelease) initiation(t testing.TB, ref, id string, sent time.Time, outcome, tid string) {
	t.Helper()
	key := "o:" + ref
	rec := func(fields map[string]any) []byte {
		fields["call"], fields["op"] = id, "InitiateTransfer"
		b, err := json.Marshal(fields)
		require.NoError(t, err)
		return b
	}
	p.Append(t, key, "sent:"+id, rec(map[string]any{"kind": "sent", "at": sent, "ref": ref,
		"digest": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}), "ref:"+ref)
	switch outcome {
	case "":
	case "stored":
		p.Append(t, key, "end:"+id, rec(map[string]any{"kind": outcome, "at": sent.Add(time.Second), "attempts": 1, "transferId": tid}), "tid:"+tid)
	default:
		p.Append(t, key, "end:"+id, rec(map[string]any{"kind": outcome, "at": sent.Add(time.Second), "attempts": 1}))
	}
}

// TestJournalOfThePreviousRelease makes a journal as the previous
// release did, then opens this release's store on it (which migrates its
// tables) while a replica of the previous release goes on writing, as in
// a rolling deploy: the entries keep their records and names, Entries
// yields them, newest first, for any query (they have no index data: the
// journal checks them), Stuck finds those that need a person and closes
// those that cannot, and an entry that the old replica starts is open.
// An old replica's record on an entry that a new one closed does not open
// it again (the package doc says so).
func TestJournalOfThePreviousRelease(t *testing.T) {
	pool := newPool(t, sharedServer(t), 4)
	ctx := context.Background()
	base := newTableName(t)
	old := newPreviousRelease(t, pool, base, journal.DefaultRetention)
	sent := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	old.initiation(t, "unknown-1", "c1", sent, "unknown", "")
	old.initiation(t, "stored-1", "c2", sent, "stored", "tr-1")
	old.initiation(t, "refused-1", "c3", sent, "not-stored", "")

	s := newJournal(t, pool, pgstore.WithTable(base))
	j, err := journal.New(s)
	require.NoError(t, err)
	recs, err := s.Records(ctx, "o:stored-1")
	require.NoError(t, err)
	assert.Len(t, recs, 2)
	for name, want := range map[string]string{"ref:unknown-1": "o:unknown-1", "tid:tr-1": "o:stored-1"} {
		got, err := s.Lookup(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
	all := []string{"o:refused-1", "o:stored-1", "o:unknown-1"} // newest first: as appended
	for _, q := range []journal.Query{{}, {Open: true}, {Stages: []journal.Stage{journal.StageConfirmed}}, {RefPrefix: "nothing"},
		{From: time.Now().Add(time.Hour)}, {Open: true, Stages: []journal.Stage{journal.StageResolved}}} {
		assert.Equal(t, all, keys(t, s, q), "the store yields entries without index data for any query: %+v", q)
	}
	var stored []string
	for e, err := range j.Entries(ctx, journal.Query{Stages: []journal.Stage{journal.StageInitiated}}) {
		require.NoError(t, err)
		stored = append(stored, e.Key)
	}
	assert.Equal(t, []string{"o:stored-1"}, stored, "the journal checks what the store yields")

	th := journal.Thresholds{OutcomeUnknown: time.Nanosecond, Resolution: time.Nanosecond}
	found := stuckKeys(t, j, th)
	assert.Equal(t, map[string]journal.Rule{"o:unknown-1": journal.RuleOutcomeUnknown, "o:stored-1": journal.RuleNoResolution}, found)
	assert.Equal(t, []string{"o:stored-1", "o:unknown-1"}, keys(t, s, journal.Query{Open: true}), "Stuck closed the refused initiation")

	// An old replica, still running, starts an entry and writes to the
	// closed one.
	old.initiation(t, "unknown-2", "c4", sent, "unknown", "")
	old.Append(t, "o:refused-1", "late", []byte(`{"kind":"refused","at":"2026-01-01T00:00:00Z","refused":"kind","callback":"transfer_confirmation"}`))
	found = stuckKeys(t, j, th)
	assert.Equal(t, journal.RuleOutcomeUnknown, found["o:unknown-2"], "an old replica's new entry is open")
	assert.Len(t, found, 3)
	assert.NotContains(t, keys(t, s, journal.Query{Open: true}), "o:refused-1")
	e, err := j.Entry(ctx, "unknown-2")
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation)
}

// stuckKeys is what j.Stuck finds, by entry.
func stuckKeys(t *testing.T, j *journal.Journal, th journal.Thresholds) map[string]journal.Rule {
	t.Helper()
	found, err := j.Stuck(context.Background(), th)
	require.NoError(t, err)
	out := map[string]journal.Rule{}
	for _, f := range found {
		out[f.Entry.Key] = f.Rule
	}
	return out
}
