// Package pgstore is a [callback.FencedStore] in PostgreSQL, for a fleet
// of servers that receive callbacks and share a database: each delivery
// calls the function once whichever server it reaches. Give the store to
// every server's handler with [callback.WithStore]:
//
//	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//	...
//	store, err := pgstore.New(ctx, pool)
//	...
//	h := callback.NewHandler(fn, callback.WithStore(store), callback.WithCapabilityKey(key))
//
// # The table
//
// [New] creates its table, "travelrule_callback_deliveries" unless set
// with [WithTable], and an index on its expires_at column, if they are
// absent; replicas starting at once take turns on an advisory lock, so
// none fails. It never alters a table that exists: it checks its shape
// instead (these columns and types, key the primary key, and a valid,
// non-partial index whose first column is expires_at, under any name) and
// refuses one that differs, so a migration can create them, the
// service's role needs only SELECT, INSERT, UPDATE and DELETE on the
// table, and starting a replica takes no lock on a table in use:
//
//	CREATE TABLE travelrule_callback_deliveries (
//		key text PRIMARY KEY,
//		token text NOT NULL,
//		done boolean NOT NULL,
//		expires_at timestamptz NOT NULL
//	);
//	CREATE INDEX ON travelrule_callback_deliveries (expires_at);
//
// A row is a key (a hash of the delivery's webhook-id, or of its
// reference and body: never personal data), the token of its claim (kept
// once the delivery is processed), whether it was processed, and when it
// expires.
//
// A table named without a schema is looked up once, by New, through the
// search_path of the session New runs on: the schema of the table found
// there, or, when none is, the first schema of the search_path that
// exists, where New creates it. Every statement of the store then names
// that schema, so that the sessions of a pool shared with other code,
// which may set their own search_path later, never lead it to a table of
// the same name in another schema.
//
// # Leases, fencing and retention
//
// A claim is one INSERT ... ON CONFLICT statement on the server's clock,
// so of concurrent claims of one delivery, on any number of servers,
// exactly one is new, and the servers' clocks do not matter. A claim holds
// for the lease ([WithLease], default [callback.DefaultLease], 10
// minutes): if its holder dies, the delivery can be claimed again once the
// lease lapsed. Each claim has a token of its own, and completing or
// releasing a claim checks the token in the same statement, so a holder
// whose lease lapsed and whose delivery was claimed again gets
// [callback.ErrClaimLost] and changes nothing. A completion whose lease
// lapsed with no claim since (whether or not the sweep deleted the row)
// still records the delivery, since the function ran once; a completion
// run again after its answer was lost succeeds and changes nothing. A
// processed delivery is
// remembered for the retention ([WithRetention], default
// [callback.DefaultRetention], 7 days, longer than any sender's
// redelivery window), then it is a new delivery again.
//
// # Sweeping
//
// Expired rows are claimable as soon as they expire, but stay in the table
// until they are swept. A claim starts a sweep in the background, at most
// one at a time per Store, when a minute ([WithSweepInterval]) has passed
// since the last; it deletes expired rows in batches of 1000. To sweep
// from a scheduled job instead, set WithSweepInterval(0) and call
// [Store.Sweep]. A sweep ends by itself, so a Store needs no Close; one
// still running when the pool closes fails and is dropped.
//
// # Timeouts and the pool
//
// Every call is bounded by its context and by the timeout ([WithTimeout],
// default 5 seconds), which also bounds Complete and Release: the handler
// calls them with a context that is never cancelled, so that a sender
// hanging up leaves no claim behind. An error, such as the database being
// unreachable, makes the handler answer 500, and the sender delivers
// again later. The pool's own limits apply too: a call waits for a free
// connection when all of pool_max_conns are busy, and the pool's connect
// timeout bounds opening one. A call that timed out may still take effect
// on the server (its answer is what was lost): a claim then holds its
// delivery, answered 503, until its lease lapses, and a completion still
// completes. Errors never show a key or the connection string.
//
// The statements run in the session's default isolation level. Under
// REPEATABLE READ or SERIALIZABLE, a statement that meets a concurrent
// change of its row fails with a serialization failure: a claim is then
// answered busy (the handler answers 503, and the sender comes back), and
// a completion or release, which must not be lost, is run again.
//
// # Outages at completion time
//
// A completion fails, changing nothing, with the database's own error
// when the database cannot take it: unreachable, read-only for a moment
// (a failover; SQLSTATE 25006), a statement cancelled by statement_timeout
// while a migration holds a lock on the table (57014), PgBouncer paused, a
// pooled connection whose session was terminated (57P01). Such an error is
// never [callback.ErrClaimLost], which means that another holder has the
// delivery, so the handler tries the completion again, with growing
// pauses, until it is recorded or one lease after the function returned;
// a completion run again after its answer was lost succeeds. While the
// database cannot take writes, no redelivery can claim the delivery
// either. So an outage that ends before the claim's lease lapses (the
// lease, [WithLease], 10 minutes by default, counts from the claim, so
// the function's call uses part of it) is ridden out: the delivery is
// recorded once and never calls the function again. One that ends later
// is ridden out too unless a redelivery claims the delivery between the
// end of the outage and the completion's next attempt, which calls the
// function again; and the handler stops trying one lease after the
// function returned. Choose a lease longer than the function's longest
// call plus the longest database outage (a failover, a migration's lock)
// to ride out.
//
// After a restart or failover of the server, every pooled connection
// that the pool hands out without a ping (one used within the last
// second) fails its next statement: the store then runs the statement
// again on another connection, within its timeout, since each of its
// statements does the same run twice (a claim keeps its token).
//
// Each call of the store is one statement, one round trip once the
// connection has prepared it. A pgxpool pings a connection that was idle
// for more than a second before it hands it out, a second round trip for
// a claim after a quiet second; the store needs no ping, so a pool of its
// own may go without (pgxpool.Config's ShouldPing returning false): a
// statement that meets an ended session runs again as above.
//
// Give the store's role a statement_timeout shorter than the store's
// timeout ([WithTimeout]), as in ALTER ROLE app SET statement_timeout =
// '2s': the server then ends a statement that waits for a lock, and the
// pooled connection is kept. A statement that the store's timeout ends
// instead costs its connection (pgx asks the server to cancel the
// statement and closes the connection), and the next call opens another.
//
// Behind PgBouncer in transaction mode, give the pool a query execution
// mode that does not cache prepared statements across transactions
// (default_query_exec_mode=exec in the connection string, say), unless
// PgBouncer is 1.21 or later with max_prepared_statements set. A PAUSE
// holds every statement until RESUME: a statement that the store's
// timeout ends meanwhile is cancelled, and PgBouncer drops it unrun.
//
// # The journal store
//
// [NewJournal] returns a [journal.Store] on the same pool, for the
// journals of a fleet: an entry written by one replica is read by all. It
// takes this package's options but [WithLease], which it refuses (a
// journal holds no claims); its retention defaults to
// [journal.DefaultRetention], 30 days after an entry's last Write. It
// keeps records in the base table ("travelrule_journal" unless set with
// [WithTable]) and entries and names in two more, named after it, in the
// same schema, found and created as [New] finds and creates its table (a
// name over 63 bytes is shortened with a hash):
//
//	CREATE TABLE travelrule_journal (
//		key text NOT NULL,
//		id text NOT NULL,
//		rec bytea NOT NULL,
//		at timestamptz NOT NULL,
//		PRIMARY KEY (key, id)
//	);
//	CREATE TABLE travelrule_journal_entries (
//		key text PRIMARY KEY,
//		since timestamptz NOT NULL,
//		expires_at timestamptz NOT NULL,
//		updated timestamptz NOT NULL DEFAULT now(),
//		stage smallint NOT NULL DEFAULT -1,
//		ref text COLLATE "C" NOT NULL DEFAULT '',
//		open boolean NOT NULL DEFAULT true
//	);
//	CREATE INDEX ON travelrule_journal_entries (expires_at);
//	CREATE INDEX ON travelrule_journal_entries (updated, key);
//	CREATE INDEX ON travelrule_journal_entries (stage, updated, key);
//	CREATE INDEX ON travelrule_journal_entries (updated, key) WHERE open;
//	CREATE INDEX ON travelrule_journal_entries (ref);
//	CREATE TABLE travelrule_journal_names (
//		name text PRIMARY KEY,
//		key text NOT NULL,
//		at timestamptz NOT NULL
//	);
//	CREATE INDEX ON travelrule_journal_names (key);
//
// An entry's updated, stage, ref and open are the index that Entries
// queries: its latest Step.At (the journal's clock), its highest stage,
// its first reference, and whether it is open. Each query reads from an
// index that serves it, newest first, 500 entries a statement; the open
// entries from their partial index, so that a Stuck costs what the open
// entries do, whatever the retention holds.
//
// Each method is one round trip. A Write is a pipeline of statements in
// one transaction: it takes transaction-scoped advisory locks on the
// entry's key, on the entry it peeks at and on its names, then checks an
// Exclusive Step's names, writes the record, the names and the index, and
// reads, each statement with a snapshot taken after the locks, so that of
// Writes at once each reads what those before it wrote. A Close locks the
// entry's row, then counts its records. A session that defaults to
// REPEATABLE READ or SERIALIZABLE has one snapshot a transaction: the
// first Write or Close to find its session so may fail with a
// serialization failure and run again, and a Write of it that peeks reads
// again, in one more round trip; the store's pipelines then begin READ
// COMMITTED transactions of their own (two statements more). Reads skip an
// entry that expired, and the records and names of its life before it
// expired, whether or not the sweep deleted them yet; the sweep,
// automatic or [JournalStore.Sweep], deletes expired entries with their
// records and names, 1000 entries a statement.
//
// # The journal of the previous release
//
// The previous release's entries table had key, since and expires_at
// alone. NewJournal adds the rest, in one transaction, under the advisory
// lock that replicas starting at once take turns on (the UPDATE with the
// store's retention, so that an entry's updated is when it was last
// appended to):
//
//	ALTER TABLE travelrule_journal_entries
//		ADD COLUMN IF NOT EXISTS updated timestamptz,
//		ADD COLUMN IF NOT EXISTS stage smallint NOT NULL DEFAULT -1,
//		ADD COLUMN IF NOT EXISTS ref text COLLATE "C" NOT NULL DEFAULT '',
//		ADD COLUMN IF NOT EXISTS open boolean NOT NULL DEFAULT true;
//	UPDATE travelrule_journal_entries SET updated = expires_at - interval '30 days' WHERE updated IS NULL;
//	ALTER TABLE travelrule_journal_entries ALTER COLUMN updated SET DEFAULT now(), ALTER COLUMN updated SET NOT NULL;
//
// and the four indexes on updated, stage, open and ref above (CREATE
// INDEX IF NOT EXISTS). The migration holds an exclusive lock on the
// table until it commits (the previous release's appends wait), and must
// end within the store's timeout ([WithTimeout], 5 seconds), or it changes
// nothing: it took about a second per 100,000 entries on a test server.
// On a larger journal, run it beforehand (the UPDATE in batches and the
// indexes CONCURRENTLY, while the previous release runs), or start one
// replica with a longer timeout. It needs a role that may alter the table
// (its owner). With [WithoutCreatingTables], NewJournal refuses such
// tables with [ErrMigrationNeeded].
//
// The previous release's entries, and those that its replicas still start
// during a rolling deploy, have no index data (stage -1): Entries yields
// them for every query (the journal checks each against its own), Stuck
// reads them until it closes them, and they keep no index data until
// they expire. An Append of the previous release moves neither an
// entry's updated nor its stage, and does not open an entry that this
// release closed: a callback that an old replica records on a closed
// entry brings it back into Stuck only with this release's next Write.
package pgstore
