package journal

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// custom are thresholds other than the defaults, each its own.
var custom = Thresholds{OutcomeUnknown: 2 * time.Minute, Resolution: 3 * time.Hour, TxID: 5 * time.Hour, InquiryAnswer: 7 * time.Hour}

// The entries of the rules: each waits from t0.
func unknownEntry(i Initiation) *Entry {
	return &Entry{Direction: Outbound, Initiation: i, Initiations: 1, Stage: StageNone, Started: t0, Updated: t0, SentAt: t0}
}

func storedEntry() *Entry {
	return &Entry{Direction: Outbound, Initiation: InitiationStored, Initiations: 1, Stage: StageInitiated,
		Since: since(map[Stage]time.Time{StageInitiated: t0}), Started: t0.Add(-time.Second), Updated: t0}
}

func approvedEntry() *Entry {
	return &Entry{Direction: Outbound, Initiation: InitiationStored, Initiations: 1, Stage: StageInquiryAnswered,
		Since:    since(map[Stage]time.Time{StageInitiated: t0.Add(-time.Hour), StageInquiryAnswered: t0}),
		Decision: "approved", Decided: t0, Started: t0.Add(-time.Hour), Updated: t0}
}

func inquiryEntry() *Entry {
	return &Entry{Direction: Inbound, Stage: StageInitiated, Since: since(map[Stage]time.Time{StageInitiated: t0}), Started: t0, Updated: t0}
}

// TestStuckThresholds: each rule fires once its threshold has passed
// since its stage began (at t0), exactly at it, and not 1ns before.
func TestStuckThresholds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		e      *Entry
		th     Thresholds
		wait   time.Duration // the threshold
		rule   Rule          // at the threshold
		before Rule          // 1ns before it ("" for none)
	}{
		{"outcome unknown, default", unknownEntry(InitiationUnknown), Thresholds{}, DefaultOutcomeUnknown, RuleOutcomeUnknown, ""},
		{"outcome unknown, custom", unknownEntry(InitiationUnknown), custom, custom.OutcomeUnknown, RuleOutcomeUnknown, ""},
		{"sent without outcome, default", unknownEntry(InitiationSent), Thresholds{}, DefaultOutcomeUnknown, RuleOutcomeUnknown, ""},
		{"sent without outcome, custom", unknownEntry(InitiationSent), custom, custom.OutcomeUnknown, RuleOutcomeUnknown, ""},
		{"no evidence, default", unknownEntry(InitiationUnknown), Thresholds{}, RedeliveryWindow, RuleNoEvidence, RuleOutcomeUnknown},
		{"no evidence, custom", unknownEntry(InitiationUnknown), custom, RedeliveryWindow, RuleNoEvidence, RuleOutcomeUnknown},
		{"no evidence, sent without outcome", unknownEntry(InitiationSent), Thresholds{}, RedeliveryWindow, RuleNoEvidence, RuleOutcomeUnknown},
		{"no resolution, default", storedEntry(), Thresholds{}, DefaultResolution, RuleNoResolution, ""},
		{"no resolution, custom", storedEntry(), custom, custom.Resolution, RuleNoResolution, ""},
		{"no txId, default", approvedEntry(), Thresholds{}, DefaultTxID, RuleNoTxID, ""},
		{"no txId, custom", approvedEntry(), custom, custom.TxID, RuleNoTxID, ""},
		{"inquiry unanswered, default", inquiryEntry(), Thresholds{}, DefaultInquiryAnswer, RuleInquiryUnanswered, ""},
		{"inquiry unanswered, custom", inquiryEntry(), custom, custom.InquiryAnswer, RuleInquiryUnanswered, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule, from, ok := stuck(tc.e, t0.Add(tc.wait), tc.th)
			require.True(t, ok, "fires at its threshold")
			assert.Equal(t, tc.rule, rule)
			assert.Equal(t, t0, from, "measured from the stage's start")

			rule, _, ok = stuck(tc.e, t0.Add(tc.wait-time.Nanosecond), tc.th)
			assert.Equal(t, tc.before != "", ok)
			assert.Equal(t, tc.before, rule, "1ns before its threshold")
		})
	}
}

// TestStuckNever: entries that need nobody never fire, however long they
// wait.
func TestStuckNever(t *testing.T) {
	later := t0.Add(10 * RedeliveryWindow)
	for _, tc := range []struct {
		name string
		e    *Entry
	}{
		// Not stored, whatever times it holds (fold gives such an entry
		// neither, but a refused initiation needs nobody).
		{"not stored", &Entry{Direction: Outbound, Initiation: InitiationNotStored, Initiations: 1, Started: t0, Updated: t0,
			SentAt: t0, Since: since(map[Stage]time.Time{StageInitiated: t0})}},
		{"rejected", &Entry{Direction: Outbound, Initiation: InitiationStored, Initiations: 1, Stage: StageInquiryAnswered,
			Since:    since(map[Stage]time.Time{StageInitiated: t0, StageInquiryAnswered: t0}),
			Decision: "rejected", Decided: t0, Started: t0, Updated: t0}},
		{"rejected by the service's resolution", &Entry{Direction: Outbound, Initiation: InitiationStored, Initiations: 1, Stage: StageResolved,
			Since:    since(map[Stage]time.Time{StageInitiated: t0, StageResolved: t0}),
			Decision: "rejected", Decided: t0, Started: t0, Updated: t0}},
		{"approved, txId submitted", &Entry{Direction: Outbound, Initiation: InitiationStored, Initiations: 1, Stage: StageTxIDSubmitted,
			Since:    since(map[Stage]time.Time{StageInitiated: t0, StageInquiryAnswered: t0, StageTxIDSubmitted: t0}),
			Decision: "approved", Decided: t0, Started: t0, Updated: t0}},
		{"approved, confirmed", &Entry{Direction: Outbound, Initiation: InitiationStored, Initiations: 1, Stage: StageConfirmed,
			Since:    since(map[Stage]time.Time{StageInitiated: t0, StageResolved: t0, StageTxIDSubmitted: t0, StageConfirmed: t0}),
			Decision: "approved", Decided: t0, Started: t0, Updated: t0}},
		{"inbound answered", &Entry{Direction: Inbound, Stage: StageInquiryAnswered,
			Since:    since(map[Stage]time.Time{StageInitiated: t0, StageInquiryAnswered: t0}),
			Decision: "approved", Decided: t0, Started: t0, Updated: t0}},
		{"inbound answered, rejected", &Entry{Direction: Inbound, Stage: StageInquiryAnswered,
			Since:    since(map[Stage]time.Time{StageInitiated: t0, StageInquiryAnswered: t0}),
			Decision: "rejected", Decided: t0, Started: t0, Updated: t0}},
		{"inbound canceled", &Entry{Direction: Inbound, Stage: StageInitiated,
			Since:    since(map[Stage]time.Time{StageInitiated: t0}),
			Decision: "rejected", Decided: t0, Started: t0, Updated: t0}},
		{"inbound confirmed, its answer not recorded", &Entry{Direction: Inbound, Stage: StageConfirmed,
			Since:   since(map[Stage]time.Time{StageInitiated: t0, StageConfirmed: t0}),
			Started: t0, Updated: t0}},
		{"inbound confirmed", &Entry{Direction: Inbound, Stage: StageConfirmed,
			Since:    since(map[Stage]time.Time{StageInitiated: t0, StageInquiryAnswered: t0, StageConfirmed: t0}),
			Decision: "approved", Decided: t0, Started: t0, Updated: t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, th := range []Thresholds{{}, custom} {
				rule, _, ok := stuck(tc.e, later, th)
				assert.False(t, ok, "fired %q", rule)
			}
		})
	}
}

// clock is a test's clock, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// TestJournalStuckClock: a client initiates through the journal; with the
// journal's clock moved by hand, RuleNoResolution fires at its threshold
// after the initiation was stored, and not before.
func TestJournalStuckClock(t *testing.T) {
	ctx := context.Background()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":true,"data":{"transferId":"t-1"}}`)
	}))
	t.Cleanup(srv.Close)

	clk := &clock{now: t0}
	j, err := New(NewMemoryStore(0, 0), WithClock(clk.Now))
	require.NoError(t, err)
	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(travelrule.StaticToken("x")), travelrule.WithObserver(j))
	require.NoError(t, err)

	cbURL, err := travelrule.NewCallbackURL("https://vasp.example/cb", "pay-1", []byte("a-capability-key-of-32-bytes-xx"))
	require.NoError(t, err)
	res, err := client.InitiateTransfer(ctx, &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.25", Callback: cbURL,
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	})
	require.NoError(t, err)
	require.Equal(t, "t-1", res.TransferID)
	require.EqualValues(t, 1, requests.Load())

	e, err := j.Entry(ctx, "pay-1")
	require.NoError(t, err)
	require.NotNil(t, e)
	require.Equal(t, InitiationStored, e.Initiation)
	require.Equal(t, t0, e.Since[StageInitiated])

	for _, tc := range []struct {
		name string
		at   time.Time
		want []Rule
	}{
		{"at once", t0, nil},
		{"past the outcome's threshold", t0.Add(DefaultOutcomeUnknown), nil},
		{"1ns before the resolution's threshold", t0.Add(DefaultResolution - time.Nanosecond), nil},
		{"at the resolution's threshold", t0.Add(DefaultResolution), []Rule{RuleNoResolution}},
	} {
		clk.Set(tc.at)
		found, err := j.Stuck(ctx, Thresholds{})
		require.NoError(t, err, tc.name)
		var rules []Rule
		for _, f := range found {
			rules = append(rules, f.Rule)
			assert.Equal(t, t0, f.Since, tc.name)
			assert.Equal(t, "t-1", f.Entry.TransferID, tc.name)
		}
		assert.Equal(t, tc.want, rules, tc.name)
	}
	assert.Zero(t, j.Lost())
}

// TestOpen: an entry is open while a rule of Stuck may fire for it at
// some time, and not once none can without a new record.
func TestOpen(t *testing.T) {
	contradicted := storedEntry()
	contradicted.Contradicted = t0
	for _, tc := range []struct {
		name string
		e    *Entry
		open bool
	}{
		{"sent, outcome unknown", unknownEntry(InitiationSent), true},
		{"outcome unknown", unknownEntry(InitiationUnknown), true},
		{"stored, no decision", storedEntry(), true},
		{"approved, no txId", approvedEntry(), true},
		{"inbound, not answered", inquiryEntry(), true},
		{"a settlement contradicted", contradicted, true},
		{"not stored", &Entry{Direction: Outbound, Initiation: InitiationNotStored, Initiations: 1, Started: t0, Updated: t0}, false},
		{"rejected", &Entry{Direction: Outbound, Initiation: InitiationStored, Initiations: 1, Stage: StageInquiryAnswered,
			Since: since(map[Stage]time.Time{StageInitiated: t0, StageInquiryAnswered: t0}), Decision: "rejected", Decided: t0}, false},
		{"txId submitted", &Entry{Direction: Outbound, Initiation: InitiationStored, Initiations: 1, Stage: StageTxIDSubmitted,
			Since: since(map[Stage]time.Time{StageInitiated: t0, StageTxIDSubmitted: t0}), Decision: "approved", Decided: t0}, false},
		{"inbound answered", &Entry{Direction: Inbound, Stage: StageInquiryAnswered,
			Since: since(map[Stage]time.Time{StageInitiated: t0, StageInquiryAnswered: t0}), Decision: "approved", Decided: t0}, false},
		{"a callback, no initiation, no decision", &Entry{Direction: Outbound, Stage: StageInitiated,
			Since: since(map[Stage]time.Time{StageInitiated: t0}), Started: t0, Updated: t0}, true},
		{"callbacks to the confirmation, no initiation", &Entry{Direction: Outbound, Stage: StageConfirmed,
			Since: since(map[Stage]time.Time{StageInitiated: t0, StageConfirmed: t0}), Started: t0, Updated: t0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.open, open(tc.e))
		})
	}
}
