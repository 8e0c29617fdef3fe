package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/callback/pgstore"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal"
)

// The journal commands: list (the transfers a query selects), stuck (the
// transfers that need a person) and show (one transfer's stages and
// timeline), read from the store the
// services' journals write. They print identifiers, stages and times,
// never personal data: the journal holds none.

// journalEnv names the variable that holds the journal store's URL: it may
// carry a password, so it is never a flag.
const journalEnv = "TRAVELRULE_JOURNAL_URL"

var transfersCommands = []struct{ name, summary string }{
	{"list", "list the transfers, newest first, by stage, time, reference prefix or only the open ones"},
	{"stuck", "list the transfers that need a person (outcome unknown, no resolution, no txId, an inquiry not answered)"},
	{"show", "print one transfer's stage and timeline, by reference or transfer id"},
	{"settle", "record what you learnt from the service about an initiation whose outcome is unknown"},
}

// transfers runs a subcommand of "travelrule transfers".
func (c *cli) transfers(ctx context.Context, args []string) int {
	fs := c.newFlagSet("transfers", "<list|stuck|show|settle> [flags]")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), "\nSubcommands:\n")
		for _, sub := range transfersCommands {
			fmt.Fprintf(fs.Output(), "  %-6s %s\n", sub.name, sub.summary)
		}
		fmt.Fprintf(fs.Output(), "\nThe journal's store is read from %s: redis://[user:password@]host:port/db\n"+
			"(rediss:// for TLS) or postgres://user:password@host/db (never a flag: it may hold a password).\n", journalEnv)
	}
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return c.usageError(fs, "name a subcommand: list, stuck, show or settle")
	}
	switch sub, rest := fs.Arg(0), fs.Args()[1:]; sub {
	case "list":
		return c.transfersList(ctx, rest)
	case "stuck":
		return c.transfersStuck(ctx, rest)
	case "show":
		return c.transfersShow(ctx, rest)
	case "settle":
		return c.transfersSettle(ctx, rest)
	default:
		return c.usageError(fs, "unknown subcommand %q", sub)
	}
}

// journalFlags are the flags that name the store's keys or tables.
type journalFlags struct {
	prefix, table *string
	asJSON        *bool
}

func addJournalFlags(fs *flag.FlagSet) journalFlags {
	return journalFlags{
		prefix: fs.String("redis-prefix", redisstore.DefaultJournalPrefix, "the prefix of the journal's Redis keys"),
		table:  fs.String("table", pgstore.DefaultJournalTable, "the journal's PostgreSQL table"),
		asJSON: fs.Bool("json", false, "print JSON lines instead of text"),
	}
}

// errUsage marks an error of openJournal that is the user's setting, not
// the store's.
var errUsage = errors.New("usage")

// openJournal opens the journal on the store TRAVELRULE_JOURNAL_URL names,
// without creating anything there: a journal that is not there (a
// mistyped table) is an error, never an empty journal. close releases its
// connections. An error that wraps errUsage is a bad setting.
func (c *cli) openJournal(ctx context.Context, jf journalFlags) (j *journal.Journal, close func(), err error) {
	raw := c.getenv(journalEnv)
	if raw == "" {
		return nil, nil, fmt.Errorf("%w: set %s to the journal's store (redis://… or postgres://…)", errUsage, journalEnv)
	}
	var store journal.Store
	switch scheme, _, _ := strings.Cut(raw, "://"); scheme {
	case "redis", "rediss":
		opt, err := redis.ParseURL(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s is not a Redis URL", errUsage, journalEnv) // the parser's error may quote the password
		}
		opt.ContextTimeoutEnabled = true
		rdb := redis.NewClient(opt)
		n, err := rdb.Exists(ctx, *jf.prefix+"index").Result()
		if err != nil {
			rdb.Close()
			return nil, nil, fmt.Errorf("reaching Redis: %w", err)
		}
		if n == 0 {
			fmt.Fprintf(c.stderr, "transfers: warning: Redis holds no journal under the prefix %q (a new journal, or a mistyped --redis-prefix)\n", *jf.prefix)
		}
		store, close = redisstore.NewJournal(rdb, redisstore.WithPrefix(*jf.prefix)), func() { rdb.Close() }
	case "postgres", "postgresql":
		pool, err := pgxpool.New(ctx, raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s is not a PostgreSQL URL", errUsage, journalEnv) // the parser's error may quote the password
		}
		// A reader creates nothing: an absent table is a mistyped --table.
		s, err := pgstore.NewJournal(ctx, pool, pgstore.WithTable(*jf.table), pgstore.WithoutCreatingTables())
		if err != nil {
			pool.Close()
			return nil, nil, err
		}
		store, close = s, pool.Close
	default:
		return nil, nil, fmt.Errorf("%w: %s must start with redis://, rediss://, postgres:// or postgresql://", errUsage, journalEnv)
	}
	j, err = journal.New(store)
	if err != nil {
		close()
		return nil, nil, err
	}
	return j, close, nil
}

// journalError reports openJournal's error: a bad setting is a usage
// error (2), a store that cannot be read a failure (1).
func (c *cli) journalError(fs *flag.FlagSet, err error) int {
	if errors.Is(err, errUsage) {
		return c.usageError(fs, "%s", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
	}
	fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
	return exitFailed
}

// transfersStuck lists the transfers that need a person. Its status is 0,
// or with --exit-code 1 when one does (for a scheduled check).
func (c *cli) transfersStuck(ctx context.Context, args []string) int {
	fs := c.newFlagSet("transfers stuck", "[flags]")
	jf := addJournalFlags(fs)
	unknown := fs.Duration("outcome-unknown", journal.DefaultOutcomeUnknown, "report an initiation whose outcome is unknown after")
	resolution := fs.Duration("resolution", journal.DefaultResolution, "report a stored initiation with no decision after")
	txid := fs.Duration("txid", journal.DefaultTxID, "report an approved transfer with no txId after")
	inquiry := fs.Duration("inquiry", journal.DefaultInquiryAnswer, "report an inbound inquiry not answered after")
	exitCode := fs.Bool("exit-code", false, "exit 1 when a transfer needs a person")
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	for _, d := range []*time.Duration{unknown, resolution, txid, inquiry} {
		if *d <= 0 {
			return c.usageError(fs, "thresholds must be positive")
		}
	}
	j, closeStore, err := c.openJournal(ctx, jf)
	if err != nil {
		return c.journalError(fs, err)
	}
	defer closeStore()
	found, err := j.Stuck(ctx, journal.Thresholds{OutcomeUnknown: *unknown, Resolution: *resolution, TxID: *txid, InquiryAnswer: *inquiry})
	if err != nil {
		fmt.Fprintf(c.stderr, "transfers stuck: reading the journal: %v\n", err)
		return exitFailed
	}
	now := time.Now()
	if *jf.asJSON {
		for _, f := range found {
			if err := c.writeJSON(map[string]any{
				"rule": f.Rule, "since": f.Since.UTC(), "waiting": now.Sub(f.Since).Round(time.Second).String(),
				"entry": entryJSON(f.Entry, false),
			}); err != nil {
				return exitFailed
			}
		}
	} else {
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RULE\tWAITING\tDIRECTION\tREFERENCE\tTRANSFER\tSTAGE\tINITIATION")
		for _, f := range found {
			e := f.Entry
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Rule, now.Sub(f.Since).Round(time.Second), e.Direction,
				dash(printable(e.Ref)), dash(printable(e.TransferID)), e.Stage, dash(string(e.Initiation)))
		}
		tw.Flush()
		fmt.Fprintf(c.stdout, "%d transfer(s) need a person.\n", len(found))
	}
	if *exitCode && len(found) > 0 {
		return exitFailed
	}
	return exitOK
}

// transfersShow prints one transfer.
func (c *cli) transfersShow(ctx context.Context, args []string) int {
	fs := c.newFlagSet("transfers show", "[flags] REFERENCE|TRANSFER_ID")
	jf := addJournalFlags(fs)
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return c.usageError(fs, "name one transfer: its callback reference or its transfer id")
	}
	j, closeStore, err := c.openJournal(ctx, jf)
	if err != nil {
		return c.journalError(fs, err)
	}
	defer closeStore()
	e, err := j.Entry(ctx, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(c.stderr, "transfers show: reading the journal: %v\n", err)
		return exitFailed
	}
	if e == nil {
		fmt.Fprintf(c.stderr, "transfers show: the journal holds no transfer %q\n", fs.Arg(0))
		return exitFailed
	}
	return c.printEntry(e, *jf.asJSON)
}

// printEntry prints one transfer, with its timeline.
func (c *cli) printEntry(e *journal.Entry, asJSON bool) int {
	if asJSON {
		return c.printJSON(entryJSON(e, true))
	}
	fmt.Fprintf(c.stdout, "Direction:   %s\nReference:   %s\nTransfer:    %s\nStage:       %s\n",
		e.Direction, dash(printable(e.Ref)), dash(printable(e.TransferID)), e.Stage)
	if e.Direction == journal.Outbound {
		init := string(e.Initiation)
		if e.Reconciled {
			init += " (reconciled: the outcome was unknown, a callback named it later)"
		}
		fmt.Fprintf(c.stdout, "Initiation:  %s\n", dash(init))
	}
	if !e.Contradicted.IsZero() {
		fmt.Fprintf(c.stdout, "Attention:   a callback contradicts the settlement (%s)\n", e.Contradicted.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(c.stdout, "Decision:    %s\nTimeline:\n", dash(string(e.Decision)))
	for _, ev := range e.Timeline {
		fmt.Fprintf(c.stdout, "  %s  %s\n", ev.At.UTC().Format(time.RFC3339), printable(ev.What))
	}
	return exitOK
}

// transfersSettle records an operator's settlement of an initiation whose
// outcome is unknown (journal.Journal.Settle).
func (c *cli) transfersSettle(ctx context.Context, args []string) int {
	fs := c.newFlagSet("transfers settle", "(--stored TRANSFER_ID | --not-stored) --reason TEXT [flags] REFERENCE|TRANSFER_ID")
	jf := addJournalFlags(fs)
	stored := fs.String("stored", "", "the service holds the transfer, under this transfer id")
	notStored := fs.Bool("not-stored", false, "the service holds no such transfer: a resend under the reference is allowed")
	reason := fs.String("reason", "", "how you know (a support ticket, the dashboard); kept with the entry, so no personal data")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() != 1:
		return c.usageError(fs, "name one transfer: its callback reference or its transfer id")
	case (*stored == "") == !*notStored:
		return c.usageError(fs, "give --stored TRANSFER_ID or --not-stored")
	}
	j, closeStore, err := c.openJournal(ctx, jf)
	if err != nil {
		return c.journalError(fs, err)
	}
	defer closeStore()
	err = j.Settle(ctx, fs.Arg(0), journal.Settlement{Stored: *stored != "", TransferID: *stored, Reason: *reason})
	switch {
	case errors.Is(err, journal.ErrInvalidSettlement):
		return c.usageError(fs, "%s", strings.TrimPrefix(err.Error(), journal.ErrInvalidSettlement.Error()+": "))
	case err != nil:
		fmt.Fprintf(c.stderr, "transfers settle: %v\n", err)
		return exitFailed
	}
	e, err := j.Entry(ctx, fs.Arg(0))
	if err != nil || e == nil {
		fmt.Fprintf(c.stderr, "transfers settle: settled; reading it back: %v\n", err)
		return exitFailed
	}
	return c.printEntry(e, *jf.asJSON)
}

// entryJSON is an entry as the commands print it in JSON.
func entryJSON(e *journal.Entry, timeline bool) map[string]any {
	m := map[string]any{
		"key": e.Key, "direction": e.Direction, "ref": e.Ref, "transferId": e.TransferID,
		"stage": e.Stage.String(), "initiation": e.Initiation, "reconciled": e.Reconciled,
		"decision": e.Decision, "started": e.Started.UTC(), "updated": e.Updated.UTC(),
	}
	if s := e.Settlement; s != nil {
		m["settlement"] = map[string]any{"stored": s.Stored, "transferId": s.TransferID, "reason": s.Reason, "at": s.At.UTC()}
	}
	if !e.Contradicted.IsZero() {
		m["contradicted"] = e.Contradicted.UTC()
	}
	if timeline {
		events := make([]map[string]any, len(e.Timeline))
		for i, ev := range e.Timeline {
			events[i] = map[string]any{"at": ev.At.UTC(), "what": ev.What}
		}
		m["timeline"] = events
	}
	return m
}

// printable is s with every rune a terminal would act on or hide (control
// and format characters, line separators) written as \uXXXX: what the
// store holds may have been written by anyone who can write to it.
func printable(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// dash is s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
