package pgstore

// queries is the SQL of a store's operations on its table. Durations are
// passed in microseconds, the precision of timestamptz; every time is the
// server's (now(), the start of the statement's transaction), so the
// replicas' clocks do not matter.
type queries struct {
	claim, completeFenced, releaseFenced, complete, release, sweep string
}

// sweepBatch is how many rows a statement of a sweep deletes at most.
const sweepBatch = 1000

// newQueries returns the SQL for the table t, quoted.
func newQueries(t string) queries {
	// claim inserts key's claim, or takes over a row that expired; either
	// way it returns the row as it now is, so the token shows whose it is.
	const expired = `(d.expires_at <= now())`
	return queries{
		claim: `INSERT INTO ` + t + ` AS d (key, token, done, expires_at)
VALUES ($1, $2, false, now() + $3::bigint * interval '1 microsecond')
ON CONFLICT (key) DO UPDATE SET
	token = CASE WHEN ` + expired + ` THEN excluded.token ELSE d.token END,
	done = CASE WHEN ` + expired + ` THEN false ELSE d.done END,
	expires_at = CASE WHEN ` + expired + ` THEN excluded.expires_at ELSE d.expires_at END
RETURNING done, token`,
		// completeFenced records key processed under its token unless
		// a row of another token holds it (a claim in its lease, or a
		// delivery processed within the retention). A row of its own
		// already processed keeps its expiry, so that running the
		// completion again changes nothing; the row keeps the token, so
		// that it can tell a completion run again from another holder's.
		completeFenced: `INSERT INTO ` + t + ` AS d (key, token, done, expires_at)
VALUES ($1, $2, true, now() + $3::bigint * interval '1 microsecond')
ON CONFLICT (key) DO UPDATE SET
	token = excluded.token,
	done = true,
	expires_at = CASE WHEN d.done AND NOT ` + expired + ` THEN d.expires_at ELSE excluded.expires_at END
WHERE d.token = excluded.token OR ` + expired,
		releaseFenced: `DELETE FROM ` + t + ` WHERE key = $1 AND token = $2 AND NOT done`,
		complete: `INSERT INTO ` + t + ` AS d (key, token, done, expires_at)
VALUES ($1, '', true, now() + $2::bigint * interval '1 microsecond')
ON CONFLICT (key) DO UPDATE SET done = true, expires_at = excluded.expires_at`,
		release: `DELETE FROM ` + t + ` WHERE key = $1 AND NOT done`,
		sweep: `DELETE FROM ` + t + ` WHERE key IN (
	SELECT key FROM ` + t + ` WHERE expires_at < now()
	ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
	}
}
