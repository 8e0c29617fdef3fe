package journal_test

import (
	"context"
	"strings"
	"sync"
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

// startEnd records an initiation under ref that ended with out.
func startEnd(t *testing.T, j *journal.Journal, ref string, out travelrule.CallOutcome, tid string) {
	t.Helper()
	info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: ref}
	c, err := j.StartCall(context.Background(), info)
	require.NoError(t, err)
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: out, TransferID: tid, Attempts: 1})
}

// clockJournal is a journal on store whose clock stands at at: a replica.
func clockJournal(t *testing.T, store journal.Store, at time.Time) *journal.Journal {
	t.Helper()
	j, err := journal.New(store, journal.WithClock(func() time.Time { return at }))
	require.NoError(t, err)
	return j
}

// resolution is an authenticated TRANSFER_RESOLUTION at ref naming tid.
func resolution(id, ref, tid string) *callback.Delivery {
	return &callback.Delivery{Authenticated: true, ID: id, Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, Ref: ref, TransferID: tid, Status: "APPROVED"}}
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
	startEnd(t, j, "pay-r2", travelrule.CallSucceeded, "t-r2")
	died(t, j, now, "pay-r4")
	require.NoError(t, j.Settle(ctx, "pay-r4", journal.Settlement{Reason: "settled once"}))
	startOnly(t, j, "pay-r5") // its call may still be running
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
		{"a reason with a right-to-left override", "pay-r1", journal.Settlement{Reason: "ticket \u202e4711 gnp.exe"}, journal.ErrInvalidSettlement},
		{"a reason with a line separator", "pay-r1", journal.Settlement{Reason: "one\u2028two"}, journal.ErrInvalidSettlement},
		{"a reason with a paragraph separator", "pay-r1", journal.Settlement{Reason: "one\u2029two"}, journal.ErrInvalidSettlement},
		{"a reason with a zero width space and a BOM", "pay-r1", journal.Settlement{Reason: "zero\u200bwidth\ufeff"}, journal.ErrInvalidSettlement},
		{"a reason with bidi isolates", "pay-r1", journal.Settlement{Reason: "\u2066spoof\u2069"}, journal.ErrInvalidSettlement},
		{"a reason with an ESC sequence", "pay-r1", journal.Settlement{Reason: "\x1b[31mred"}, journal.ErrInvalidSettlement},
		{"a reason with NEL", "pay-r1", journal.Settlement{Reason: "\u0085nel"}, journal.ErrInvalidSettlement},
		{"a reason with tag characters", "pay-r1", journal.Settlement{Reason: "tag \U000E0041"}, journal.ErrInvalidSettlement},
		{"stored under another entry's transfer id", "pay-r1", journal.Settlement{Stored: true, TransferID: "t-r2", Reason: "x"}, journal.ErrInvalidSettlement},
		{"an entry settled already", "pay-r4", journal.Settlement{Stored: true, TransferID: "t-r4", Reason: "x"}, journal.ErrNothingToSettle},
		{"a call that may still be running", "pay-r5", journal.Settlement{Reason: "x"}, journal.ErrNothingToSettle},
		{"a stored entry", "pay-r2", journal.Settlement{Reason: "x"}, journal.ErrNothingToSettle},
		{"an inbound entry", "in-r3", journal.Settlement{Reason: "x"}, journal.ErrNothingToSettle},
		{"no entry", "pay-none", journal.Settlement{Reason: "x"}, journal.ErrNothingToSettle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, j.Settle(ctx, tt.id, tt.s), tt.is)
			for _, ref := range []string{"pay-r1", "pay-r5"} {
				e, err := j.Entry(ctx, ref)
				require.NoError(t, err)
				assert.Nil(t, e.Settlement, ref)
			}
			e, err := j.Entry(ctx, "t-r2")
			require.NoError(t, err)
			assert.Equal(t, "o:pay-r2", e.Key, "the transfer id still names its entry")
			e, err = j.Entry(ctx, "t-r4")
			require.NoError(t, err)
			assert.Nil(t, e, "a refused settlement names nothing")
		})
	}
}

// readsBefore makes the first n Records calls of key wait for each other:
// two operators who both read the entry before either writes.
type readsBefore struct {
	journal.Store
	key  string
	n    int
	mu   sync.Mutex
	seen int
	all  chan struct{}
}

func (s *readsBefore) Records(ctx context.Context, key string) ([][]byte, error) {
	recs, err := s.Store.Records(ctx, key)
	if key != s.key {
		return recs, err
	}
	s.mu.Lock()
	s.seen++
	wait := s.seen <= s.n
	if s.seen == s.n {
		close(s.all)
	}
	s.mu.Unlock()
	if wait {
		<-s.all
	}
	return recs, err
}

// TestSettleConcurrently: of two operators who read the entry and settle
// it at once, one "not stored" and one "stored as t-2", exactly one is
// recorded, the other fails, and the entry is what the one recorded says:
// never stored by its settlement and open to a resend.
func TestSettleConcurrently(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	mem := journal.NewMemoryStore(0, 0)
	startOnly(t, clockJournal(t, mem, t0), "pay-cs")
	store := &readsBefore{Store: mem, key: "o:pay-cs", n: 2, all: make(chan struct{})}
	settlements := []journal.Settlement{{Reason: "ticket 1: no such transfer"}, {Stored: true, TransferID: "t-2", Reason: "dashboard shows t-2"}}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range settlements {
		j := clockJournal(t, store, t0.Add(time.Hour+time.Duration(i)*time.Minute))
		wg.Go(func() { errs[i] = j.Settle(ctx, "pay-cs", s) })
	}
	wg.Wait()
	require.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one settlement is recorded: %v", errs)
	won := 0
	if errs[0] != nil {
		won = 1
	}
	assert.ErrorIs(t, errs[1-won], journal.ErrNothingToSettle)

	j := clockJournal(t, mem, t0.Add(2*time.Hour))
	e, err := j.Entry(ctx, "pay-cs")
	require.NoError(t, err)
	require.NotNil(t, e.Settlement)
	assert.Equal(t, settlements[won].Stored, e.Settlement.Stored)
	byTID, err := j.Entry(ctx, "t-2")
	require.NoError(t, err)
	_, resend := j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-cs"})
	if settlements[won].Stored {
		assert.Equal(t, journal.InitiationStored, e.Initiation)
		require.NotNil(t, byTID)
		assert.Equal(t, e.Key, byTID.Key)
		assert.ErrorIs(t, resend, journal.ErrRefInUse)
	} else {
		assert.Equal(t, journal.InitiationNotStored, e.Initiation)
		assert.Nil(t, byTID, "the losing settlement named no transfer")
		assert.NoError(t, resend)
	}
}

// TestSettleAgainstLaterCallbacks: which callbacks after a settlement
// contradict it, across resends, a second settlement and replicas' clocks.
func TestSettleAgainstLaterCallbacks(t *testing.T) {
	t.Run("the original's callback after a stored resend", func(t *testing.T) {
		ctx := context.Background()
		j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
		died(t, j, now, "pay-late")
		require.NoError(t, j.Settle(ctx, "pay-late", journal.Settlement{Reason: "support: no such transfer"}))
		*now = now.Add(time.Minute)
		startEnd(t, j, "pay-late", travelrule.CallSucceeded, "t-new")
		*now = now.Add(time.Hour)
		require.NoError(t, j.Delivered(ctx, resolution("d-old", "pay-late", "t-old")))
		e, err := j.Entry(ctx, "pay-late")
		require.NoError(t, err)
		assert.Equal(t, *now, e.Contradicted, "it names neither the resend's transfer nor the settlement's")
		assert.Equal(t, "t-new", e.TransferID, "and does not rename the entry")
	})
	t.Run("a callback after a second settlement, before any resend", func(t *testing.T) {
		ctx := context.Background()
		j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
		died(t, j, now, "pay-2s")
		require.NoError(t, j.Settle(ctx, "pay-2s", journal.Settlement{Reason: "first check"}))
		*now = now.Add(time.Minute)
		startEnd(t, j, "pay-2s", travelrule.CallOutcomeUnknown, "")
		*now = now.Add(time.Hour)
		require.NoError(t, j.Settle(ctx, "pay-2s", journal.Settlement{Reason: "second check"}))
		*now = now.Add(time.Minute)
		require.NoError(t, j.Delivered(ctx, resolution("d-2s", "pay-2s", "t-2s")))
		e, err := j.Entry(ctx, "pay-2s")
		require.NoError(t, err)
		assert.Equal(t, *now, e.Contradicted)
	})
	t.Run("the resend's own callback on a replica whose clock is behind", func(t *testing.T) {
		ctx := context.Background()
		t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		mem := journal.NewMemoryStore(0, 0)
		startOnly(t, clockJournal(t, mem, t0), "pay-skew")
		require.NoError(t, clockJournal(t, mem, t0.Add(time.Hour)).Settle(ctx, "pay-skew", journal.Settlement{Reason: "ticket: none"}))
		a := clockJournal(t, mem, t0.Add(2*time.Hour))
		startEnd(t, a, "pay-skew", travelrule.CallSucceeded, "t-skew")
		b := clockJournal(t, mem, t0.Add(2*time.Hour-2*time.Second))
		require.NoError(t, b.Delivered(ctx, resolution("d-skew", "pay-skew", "t-skew")))
		e, err := a.Entry(ctx, "pay-skew")
		require.NoError(t, err)
		assert.True(t, e.Contradicted.IsZero(), "a callback naming the resend's transfer id is explained, whatever the clocks")
	})
}
