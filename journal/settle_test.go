package journal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/journal"
)

// startOnly records an initiation under ref and no outcome: a sender
// killed between the write-ahead record and its answer.
func startOnly(t *testing.T, j *journal.Journal, ref string) {
	t.Helper()
	_, err := j.StartCall(context.Background(), &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: ref})
	require.NoError(t, err)
}

// died is startOnly an hour before *now: long enough ago to be settled.
func died(t *testing.T, j *journal.Journal, now *time.Time, ref string) {
	t.Helper()
	saved := *now
	*now = saved.Add(-time.Hour)
	startOnly(t, j, ref)
	*now = saved
}

func timeline(e *journal.Entry) string {
	var b strings.Builder
	for _, ev := range e.Timeline {
		b.WriteString(ev.What + "\n")
	}
	return b.String()
}

// TestSettleNotStored: an entry left "sent, outcome unknown" blocks a
// resend, which the timeline shows as refused by the journal, not by the
// service; an operator's settlement as not stored lets the resend through
// and keeps the history.
func TestSettleNotStored(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	died(t, j, now, "pay-k1")
	*now = now.Add(time.Minute)
	_, err := j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-k1"})
	require.ErrorIs(t, err, journal.ErrRefInUse)
	e, err := j.Entry(ctx, "pay-k1")
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationSent, e.Initiation)
	assert.Contains(t, timeline(e), "not sent: the journal refused it (ErrRefInUse")
	assert.NotContains(t, timeline(e), "the service refused it")

	*now = now.Add(time.Minute)
	require.NoError(t, j.Settle(ctx, "pay-k1", journal.Settlement{Reason: "service support ticket 4711: no such transfer"}))
	e, err = j.Entry(ctx, "pay-k1")
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationNotStored, e.Initiation)
	require.NotNil(t, e.Settlement)
	assert.Equal(t, journal.Settlement{Reason: "service support ticket 4711: no such transfer", At: *now}, *e.Settlement)
	require.Len(t, e.Timeline, 4, "the history stays")
	assert.Equal(t, "settled by an operator: not stored, the reference may be used again (reason: service support ticket 4711: no such transfer)", e.Timeline[3].What)
	found, err := j.Stuck(ctx, journal.Thresholds{OutcomeUnknown: time.Nanosecond})
	require.NoError(t, err)
	assert.Empty(t, found)

	*now = now.Add(time.Minute)
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-k1"})
	assert.NoError(t, err, "the resend is let through")
	e, err = j.Entry(ctx, "pay-k1")
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationSent, e.Initiation, "the resend's outcome is its own")
}

// TestSettleContradicted: a callback that a settlement cannot explain is
// reported; one it explains is not.
func TestSettleContradicted(t *testing.T) {
	tests := []struct {
		name      string
		settle    journal.Settlement
		resend    bool   // a resend under the reference after the settlement
		tid       string // the callback's transfer id
		want      bool
		initiated journal.Initiation
	}{
		{"not stored, then a callback", journal.Settlement{Reason: "checked"}, false, "t-9", true, journal.InitiationStored},
		{"not stored, resent, then a callback", journal.Settlement{Reason: "checked"}, true, "t-9", false, journal.InitiationStored},
		{"stored, a callback naming it", journal.Settlement{Stored: true, TransferID: "t-9", Reason: "checked"}, false, "t-9", false, journal.InitiationStored},
		{"stored, a callback naming another", journal.Settlement{Stored: true, TransferID: "t-8", Reason: "checked"}, false, "t-9", true, journal.InitiationStored},
		{"stored, a callback naming none", journal.Settlement{Stored: true, TransferID: "t-8", Reason: "checked"}, false, "", false, journal.InitiationStored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
			died(t, j, now, "pay-c1")
			*now = now.Add(time.Minute)
			require.NoError(t, j.Settle(ctx, "pay-c1", tt.settle))
			if tt.resend {
				*now = now.Add(time.Minute)
				startOnly(t, j, "pay-c1")
			}
			*now = now.Add(time.Minute)
			require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-c1", Callback: &travelrule.Callback{
				Kind: travelrule.KindTransferResolution, Ref: "pay-c1", TransferID: tt.tid, Status: "APPROVED"}}))
			e, err := j.Entry(ctx, "pay-c1")
			require.NoError(t, err)
			assert.Equal(t, tt.initiated, e.Initiation)
			found, err := j.Stuck(ctx, journal.Thresholds{})
			require.NoError(t, err)
			if !tt.want {
				assert.True(t, e.Contradicted.IsZero())
				for _, f := range found {
					assert.NotEqual(t, journal.RuleContradicted, f.Rule)
				}
				return
			}
			assert.Equal(t, *now, e.Contradicted)
			require.Len(t, found, 1)
			assert.Equal(t, journal.RuleContradicted, found[0].Rule)
		})
	}
}

// TestSettleStoredNamesTheTransfer: a settlement as stored names the
// entry by its transfer id, as an answer would.
func TestSettleStoredNamesTheTransfer(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	died(t, j, now, "pay-s1")
	require.NoError(t, j.Settle(ctx, "pay-s1", journal.Settlement{Stored: true, TransferID: "t-s1", Reason: "seen in the dashboard"}))
	e, err := j.Entry(ctx, "t-s1")
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, "o:pay-s1", e.Key)
	assert.Equal(t, journal.InitiationStored, e.Initiation)
	assert.False(t, e.Reconciled, "a person settled it, no callback reconciled it")
	assert.Equal(t, journal.StageInitiated, e.Stage)
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-s1"})
	assert.ErrorIs(t, err, journal.ErrRefInUse)
}

// TestSettleRefuses: a settlement that says too little or too much, or of
// an entry with no unknown outcome, changes nothing.
func TestSettleRefuses(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	died(t, j, now, "pay-r1")
	info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-r2"}
	c, err := j.StartCall(ctx, info)
	require.NoError(t, err)
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "t-r2", Attempts: 1})
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-in", Callback: &travelrule.Callback{
		Kind: travelrule.KindInquiry, CallbackURL: "https://trp.example/x?q=in-r3", TransferID: "in-r3"}}))
	tests := []struct {
		name string
		id   string
		s    journal.Settlement
		is   error
	}{
		{"stored without a transfer id", "pay-r1", journal.Settlement{Stored: true, Reason: "x"}, journal.ErrInvalidSettlement},
		{"stored with a transfer id that is not an id", "pay-r1", journal.Settlement{Stored: true, TransferID: "t 1", Reason: "x"}, journal.ErrInvalidSettlement},
		{"not stored with a transfer id", "pay-r1", journal.Settlement{TransferID: "t-1", Reason: "x"}, journal.ErrInvalidSettlement},
		{"no reason", "pay-r1", journal.Settlement{}, journal.ErrInvalidSettlement},
		{"a reason of two lines", "pay-r1", journal.Settlement{Reason: "a\nb"}, journal.ErrInvalidSettlement},
		{"a reason too long", "pay-r1", journal.Settlement{Reason: strings.Repeat("x", 201)}, journal.ErrInvalidSettlement},
		{"a reason not UTF-8", "pay-r1", journal.Settlement{Reason: "\xff"}, journal.ErrInvalidSettlement},
		{"a stored entry", "pay-r2", journal.Settlement{Reason: "x"}, journal.ErrNothingToSettle},
		{"an inbound entry", "in-r3", journal.Settlement{Reason: "x"}, journal.ErrNothingToSettle},
		{"no entry", "pay-none", journal.Settlement{Reason: "x"}, journal.ErrNothingToSettle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, j.Settle(ctx, tt.id, tt.s), tt.is)
			e, err := j.Entry(ctx, "pay-r1")
			require.NoError(t, err)
			assert.Nil(t, e.Settlement)
		})
	}
}
