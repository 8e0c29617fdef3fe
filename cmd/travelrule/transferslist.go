package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vaspkit/travelrule/journal"
)

// transfersList lists the journaled transfers a query selects, most
// recently updated first, as the store streams them.
func (c *cli) transfersList(ctx context.Context, args []string) int {
	fs := c.newFlagSet("transfers list", "[flags]")
	jf := addJournalFlags(fs)
	var q journal.Query
	fs.Func("stage", "list only transfers at this stage (none, initiated, inquiry-answered, resolved, txid-submitted, confirmed); repeat for several", func(s string) error {
		st, err := stageNamed(s)
		q.Stages = append(q.Stages, st)
		return err
	})
	fs.Func("since", "list only transfers updated at or after this time (RFC 3339, or a duration ago such as 24h)", func(s string) (err error) {
		q.From, err = timeFlag(s, time.Now())
		return err
	})
	fs.Func("until", "list only transfers updated before this time (RFC 3339, or a duration ago)", func(s string) (err error) {
		q.To, err = timeFlag(s, time.Now())
		return err
	})
	fs.StringVar(&q.RefPrefix, "ref-prefix", "", "list only transfers whose callback reference starts with this")
	fs.BoolVar(&q.Open, "open", false, "list only transfers that may still need a person")
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	j, closeStore, err := c.openJournal(ctx, jf)
	if err != nil {
		return c.journalError(fs, err)
	}
	defer closeStore()
	if !*jf.asJSON {
		fmt.Fprintf(c.stdout, "%-20s  %-9s  %-16s  %-21s  %s\n", "UPDATED", "DIRECTION", "STAGE", "INITIATION", "REFERENCE / TRANSFER")
	}
	n := 0
	for e, err := range j.Entries(ctx, q) {
		if err != nil {
			fmt.Fprintf(c.stderr, "transfers list: reading the journal: %v\n", err)
			return exitFailed
		}
		n++
		if *jf.asJSON {
			if c.writeJSON(entryJSON(&e, false)) != nil {
				return exitFailed
			}
			continue
		}
		fmt.Fprintf(c.stdout, "%-20s  %-9s  %-16s  %-21s  %s / %s\n", e.Updated.UTC().Format(time.RFC3339), e.Direction, e.Stage,
			dash(string(e.Initiation)), dash(printable(e.Ref)), dash(printable(e.TransferID)))
	}
	if !*jf.asJSON {
		fmt.Fprintf(c.stdout, "%d transfer(s).\n", n)
	}
	return exitOK
}

// stageNamed is the stage whose name is s, with hyphens or spaces and in
// any case ("txid-submitted" is "txId submitted").
func stageNamed(s string) (journal.Stage, error) {
	want := strings.ToLower(strings.ReplaceAll(s, "-", " "))
	for st := journal.StageNone; st <= journal.StageConfirmed; st++ {
		if strings.ToLower(st.String()) == want {
			return st, nil
		}
	}
	return 0, fmt.Errorf("unknown stage (one of none, initiated, inquiry-answered, resolved, txid-submitted, confirmed)")
}

// timeFlag reads a time flag: an RFC 3339 time, or a positive duration
// before now.
func timeFlag(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("not an RFC 3339 time (2026-12-01T09:00:00Z) or a positive duration ago (24h)")
}
