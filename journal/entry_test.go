package journal

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// t0 is the time of a test's first record.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// at is m minutes after t0.
func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// since is an Entry's Since with the stages given.
func since(m map[Stage]time.Time) (s [StageConfirmed + 1]time.Time) {
	for st, t := range m {
		s[st] = t
	}
	return s
}

// enc encodes records as a store keeps them.
func enc(t *testing.T, recs ...record) [][]byte {
	t.Helper()
	out := make([][]byte, 0, len(recs))
	for _, r := range recs {
		b, err := r.encode()
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}

// The records a journal writes, as fold reads them.
func sentRec(call string, m int) record {
	return record{Kind: kindSent, At: at(m), Call: call, Op: "InitiateTransfer", Ref: "r1", Digest: "ab12cd34", IdempotencyKey: "idem-" + call}
}

func outcomeRec(kind, call string, m int, tid string) record {
	return record{Kind: kind, At: at(m), Call: call, Op: "InitiateTransfer", TransferID: tid, Attempts: 1}
}

// cbRec is the record of a callback of kind with status, as Delivered
// writes it.
func cbRec(kind travelrule.CallbackKind, m int, delivery, tid, status string) record {
	decision := travelrule.Callback{Kind: kind, Status: status}.Decision()
	return record{Kind: kindCallback, At: at(m), Callback: string(kind), TransferID: tid, Decision: string(decision), Delivery: delivery}
}

// resolvedRec is the record of an INQUIRY_RESOLUTION that decides d, as
// Delivered writes it.
func resolvedRec(d travelrule.Decision, m int, delivery, tid string) record {
	cb, err := travelrule.ParseCallback([]byte(`{"approved":` + strconv.FormatBool(d == travelrule.Approved) + `}`))
	if err != nil {
		panic(err)
	}
	return record{Kind: kindCallback, At: at(m), Callback: string(cb.Kind), TransferID: tid, Decision: string(cb.Decision()), Delivery: delivery}
}

func resolutionRec(m int, tid, decision string) record {
	return record{Kind: kindResolution, At: at(m), Call: "res", Op: "ResolveInquiry", TransferID: tid, Decision: decision, Attempts: 1}
}

func txidRec(m int, tid string) record {
	return record{Kind: kindTxID, At: at(m), Call: "tx", Op: "SubmitTxID", TransferID: tid, Attempts: 1}
}

// foldCases are lists of records and the entry they fold to (Key and
// Timeline aside, which TestFold checks on their own).
var foldCases = []struct {
	name string
	key  string
	recs []record
	want Entry
}{
	{
		name: "sent without outcome",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0)},
		want: Entry{Direction: Outbound, Ref: "r1", Initiation: InitiationSent, Initiations: 1, Stage: StageNone,
			Started: at(0), Updated: at(0), SentAt: at(0)},
	},
	{
		name: "outcome unknown",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindUnknown, "c1", 2, "")},
		want: Entry{Direction: Outbound, Ref: "r1", Initiation: InitiationUnknown, Initiations: 1, Stage: StageNone,
			Started: at(0), Updated: at(2), SentAt: at(0)},
	},
	{
		name: "stored",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-1", Initiation: InitiationStored, Initiations: 1,
			Stage: StageInitiated, Since: since(map[Stage]time.Time{StageInitiated: at(1)}), Started: at(0), Updated: at(1)},
	},
	{
		name: "not stored",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindNotStored, "c1", 1, "")},
		want: Entry{Direction: Outbound, Ref: "r1", Initiation: InitiationNotStored, Initiations: 1, Stage: StageNone,
			Started: at(0), Updated: at(1)},
	},
	{
		name: "outcome unknown, then a callback reconciles it",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindUnknown, "c1", 1, ""), cbRec(travelrule.KindTransferResolution, 30, "d1", "t-7", "received")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-7", Initiation: InitiationStored, Reconciled: true, Initiations: 1,
			Stage: StageInitiated, Since: since(map[Stage]time.Time{StageInitiated: at(30)}), Started: at(0), Updated: at(30)},
	},
	{
		name: "sent without outcome, then a callback reconciles it",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), resolvedRec(travelrule.Approved, 40, "d1", "")},
		want: Entry{Direction: Outbound, Ref: "r1", Initiation: InitiationStored, Reconciled: true, Initiations: 1,
			Stage: StageInquiryAnswered, Since: since(map[Stage]time.Time{StageInitiated: at(40), StageInquiryAnswered: at(40)}),
			Decision: "approved", Decided: at(40), Started: at(0), Updated: at(40)},
	},
	{
		name: "not stored, then a callback: stored after all",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindNotStored, "c1", 1, ""), cbRec(travelrule.KindTransferResolution, 5, "d1", "t-2", "received")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-2", Initiation: InitiationStored, Initiations: 1,
			Stage: StageInitiated, Since: since(map[Stage]time.Time{StageInitiated: at(5)}), Started: at(0), Updated: at(5)},
	},
	{
		name: "reference used again: one stored, one unknown",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), sentRec("c2", 10), outcomeRec(kindUnknown, "c2", 11, "")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-1", Initiation: InitiationStored, Initiations: 2,
			Stage: StageInitiated, Since: since(map[Stage]time.Time{StageInitiated: at(1)}), Started: at(0), Updated: at(11)},
	},
	{
		name: "reference used again: one sent, one unknown",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), sentRec("c2", 10), outcomeRec(kindUnknown, "c2", 11, "")},
		want: Entry{Direction: Outbound, Ref: "r1", Initiation: InitiationUnknown, Initiations: 2, Stage: StageNone,
			Started: at(0), Updated: at(11), SentAt: at(0)},
	},
	{
		name: "reference used again: one refused, one sent",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindNotStored, "c1", 1, ""), sentRec("c2", 10)},
		want: Entry{Direction: Outbound, Ref: "r1", Initiation: InitiationSent, Initiations: 2, Stage: StageNone,
			Started: at(0), Updated: at(10), SentAt: at(10)},
	},
	{
		name: "only callbacks",
		key:  "o:tid.t-5",
		recs: []record{resolvedRec(travelrule.Approved, 3, "d1", "t-5")},
		want: Entry{Direction: Outbound, TransferID: "t-5", Initiation: "", Stage: StageInquiryAnswered,
			Since:    since(map[Stage]time.Time{StageInitiated: at(3), StageInquiryAnswered: at(3)}),
			Decision: "approved", Decided: at(3), Started: at(3), Updated: at(3)},
	},
	{
		name: "outbound to txId submitted",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), resolvedRec(travelrule.Approved, 60, "d1", ""),
			cbRec(travelrule.KindTransferResolution, 120, "d2", "t-1", "APPROVED"), txidRec(180, "t-1")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-1", Initiation: InitiationStored, Initiations: 1,
			Stage: StageTxIDSubmitted, Since: since(map[Stage]time.Time{StageInitiated: at(1), StageInquiryAnswered: at(60),
				StageResolved: at(120), StageTxIDSubmitted: at(180)}),
			Decision: "approved", Decided: at(60), Started: at(0), Updated: at(180)},
	},
	{
		name: "outbound to txId submitted: a confirmation cannot arrive at the originator",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), cbRec(travelrule.KindTransferResolution, 120, "d2", "t-1", "completed"),
			txidRec(180, "t-1"), cbRec(travelrule.KindTransferConfirmation, 200, "d3", "", "")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-1", Initiation: InitiationStored, Initiations: 1,
			Stage: StageTxIDSubmitted, Since: since(map[Stage]time.Time{StageInitiated: at(1), StageResolved: at(120),
				StageTxIDSubmitted: at(180)}),
			Decision: "approved", Decided: at(120), Started: at(0), Updated: at(200)},
	},
	{
		name: "a confirmation is no evidence of an outbound initiation",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindUnknown, "c1", 1, ""), cbRec(travelrule.KindTransferConfirmation, 200, "d3", "", "")},
		want: Entry{Direction: Outbound, Ref: "r1", Initiation: InitiationUnknown, Initiations: 1, SentAt: at(0), Started: at(0), Updated: at(200)},
	},
	{
		name: "an inquiry resolution is no evidence on the inbound side",
		key:  "i:in-1",
		recs: []record{cbRec(travelrule.KindInquiry, 0, "d1", "in-1", ""), resolvedRec(travelrule.Approved, 60, "d2", "")},
		want: Entry{Direction: Inbound, TransferID: "in-1", Stage: StageInitiated,
			Since: since(map[Stage]time.Time{StageInitiated: at(0)}), Started: at(0), Updated: at(60)},
	},
	{
		name: "inbound inquiry",
		key:  "i:in-1",
		recs: []record{cbRec(travelrule.KindInquiry, 0, "d1", "in-1", "")},
		want: Entry{Direction: Inbound, TransferID: "in-1", Stage: StageInitiated,
			Since: since(map[Stage]time.Time{StageInitiated: at(0)}), Started: at(0), Updated: at(0)},
	},
	{
		name: "inbound inquiry answered",
		key:  "i:in-1",
		recs: []record{cbRec(travelrule.KindInquiry, 0, "d1", "in-1", ""), resolutionRec(5, "in-1", "approved")},
		want: Entry{Direction: Inbound, TransferID: "in-1", Stage: StageInquiryAnswered,
			Since:    since(map[Stage]time.Time{StageInitiated: at(0), StageInquiryAnswered: at(5)}),
			Decision: "approved", Decided: at(5), Started: at(0), Updated: at(5)},
	},
	{
		name: "inbound confirmed",
		key:  "i:in-1",
		recs: []record{cbRec(travelrule.KindInquiry, 0, "d1", "in-1", ""), resolutionRec(5, "in-1", "approved"), cbRec(travelrule.KindTransferConfirmation, 50, "d2", "", "")},
		want: Entry{Direction: Inbound, TransferID: "in-1", Stage: StageConfirmed,
			Since:    since(map[Stage]time.Time{StageInitiated: at(0), StageInquiryAnswered: at(5), StageConfirmed: at(50)}),
			Decision: "approved", Decided: at(5), Started: at(0), Updated: at(50)},
	},
	{
		name: "inbound inquiry rejected",
		key:  "i:in-1",
		recs: []record{cbRec(travelrule.KindInquiry, 0, "d1", "in-1", ""), resolutionRec(5, "in-1", "rejected")},
		want: Entry{Direction: Inbound, TransferID: "in-1", Stage: StageInquiryAnswered,
			Since:    since(map[Stage]time.Time{StageInitiated: at(0), StageInquiryAnswered: at(5)}),
			Decision: "rejected", Decided: at(5), Started: at(0), Updated: at(5)},
	},
	{
		name: "approved, then rejected: the rejection stands",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), resolvedRec(travelrule.Approved, 10, "d1", ""),
			cbRec(travelrule.KindTransferResolution, 20, "d2", "t-1", "REJECTED")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-1", Initiation: InitiationStored, Initiations: 1,
			Stage: StageResolved, Since: since(map[Stage]time.Time{StageInitiated: at(1), StageInquiryAnswered: at(10), StageResolved: at(20)}),
			Decision: "rejected", Decided: at(20), Started: at(0), Updated: at(20)},
	},
	{
		name: "rejected, then approved: the rejection stands",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), resolvedRec(travelrule.Rejected, 10, "d1", ""),
			cbRec(travelrule.KindTransferResolution, 20, "d2", "t-1", "APPROVED")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-1", Initiation: InitiationStored, Initiations: 1,
			Stage: StageResolved, Since: since(map[Stage]time.Time{StageInitiated: at(1), StageInquiryAnswered: at(10), StageResolved: at(20)}),
			Decision: "rejected", Decided: at(10), Started: at(0), Updated: at(20)},
	},
	{
		name: "canceled: rejected",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), cbRec(travelrule.KindCanceled, 10, "d1", "", ""),
			resolvedRec(travelrule.Approved, 20, "d2", "")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-1", Initiation: InitiationStored, Initiations: 1,
			Stage: StageInquiryAnswered, Since: since(map[Stage]time.Time{StageInitiated: at(1), StageInquiryAnswered: at(20)}),
			Decision: "rejected", Decided: at(10), Started: at(0), Updated: at(20)},
	},
	{
		name: "a status of no known word decides nothing",
		key:  "o:r1",
		recs: []record{sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), cbRec(travelrule.KindTransferResolution, 10, "d1", "t-1", "ON HOLD")},
		want: Entry{Direction: Outbound, Ref: "r1", TransferID: "t-1", Initiation: InitiationStored, Initiations: 1,
			Stage: StageInitiated, Since: since(map[Stage]time.Time{StageInitiated: at(1)}), Started: at(0), Updated: at(10)},
	},
}

func TestFold(t *testing.T) {
	for _, tc := range foldCases {
		t.Run(tc.name, func(t *testing.T) {
			got := foldRaw(tc.key, enc(t, tc.recs...))
			assert.Equal(t, tc.key, got.Key)
			require.Len(t, got.Timeline, len(tc.recs))
			assert.True(t, slices.IsSortedFunc(got.Timeline, func(a, b Event) int { return a.At.Compare(b.At) }), "timeline oldest first")
			for _, ev := range got.Timeline {
				assert.NotEmpty(t, ev.What)
			}
			view := *got
			view.Key, view.Timeline = "", nil
			assert.Equal(t, tc.want, view)
		})
	}
}

// TestFoldOrder folds each case's records in many orders: the entry, its
// timeline included, is the same whatever order the store returns them in.
func TestFoldOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range foldCases {
		t.Run(tc.name, func(t *testing.T) {
			raw := enc(t, tc.recs...)
			want := foldRaw(tc.key, raw)
			for range 50 {
				shuffled := slices.Clone(raw)
				rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				require.Equal(t, want, foldRaw(tc.key, shuffled))
			}
		})
	}
}

// TestFoldSkipsUndecodable: records that do not read (damaged, or without
// a kind or a time) change nothing.
func TestFoldSkipsUndecodable(t *testing.T) {
	clean := enc(t, sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), resolvedRec(travelrule.Approved, 60, "d1", ""))
	junk := [][]byte{
		nil,
		[]byte("not json"),
		[]byte("null"),
		[]byte("[]"),
		[]byte(`{"kind":"callback","callback":"rejected","decision":"rejected"}`),       // no time
		[]byte(`{"kind":"","at":"2025-03-01T13:30:00Z","callback":"rejected"}`),         // no kind
		[]byte(`{"kind":"callback","at":"yesterday","callback":"rejected"}`),            // a time that does not read
		[]byte(`{"kind":"callback","at":"2025-03-01T13:30:00Z","callback":"rejected",`), // cut short
	}
	want := foldRaw("o:r1", clean)
	require.Equal(t, travelrule.Approved, want.Decision)
	got := foldRaw("o:r1", append(slices.Clone(junk[:4]), append(clean, junk[4:]...)...))
	assert.Equal(t, want, got)

	none := foldRaw("o:r1", junk)
	assert.Empty(t, none.Timeline)
	assert.True(t, none.Started.IsZero(), "an entry of undecodable records only has no start")
}

// foldRaw folds stored records, as the journal reads them.
func foldRaw(key string, raw [][]byte) *Entry { return fold(key, decodeAll(raw)) }

// TestUpgradeCallback: the callback kinds of older journals read as the
// kinds they are now; an older approval or rejection without a decision
// gets the one its kind said; today's kinds and the unknown pass.
func TestUpgradeCallback(t *testing.T) {
	tests := []struct{ kind, decision, wantKind, wantDecision string }{
		{"approved", "", "inquiry_resolution", "approved"},
		{"approved", "approved", "inquiry_resolution", "approved"},
		{"rejected", "", "inquiry_resolution", "rejected"},
		{"status", "approved", "transfer_resolution", "approved"},
		{"status", "", "transfer_resolution", ""},
		{"txid", "", "transfer_confirmation", ""},
		{"inquiry", "", "inquiry", ""},
		{"canceled", "", "canceled", ""},
		{"inquiry_resolution", "rejected", "inquiry_resolution", "rejected"},
		{"transfer_resolution", "", "transfer_resolution", ""},
		{"something new", "", "something new", ""},
	}
	for _, tt := range tests {
		k, d := upgradeCallback(tt.kind, tt.decision)
		assert.Equal(t, tt.wantKind, k, tt.kind)
		assert.Equal(t, tt.wantDecision, d, tt.kind)
	}
	// The kinds it upgrades to are the ones ParseCallback gives.
	for _, body := range []string{`{"approved":true}`, `{"transferId":"t","status":"APPROVED"}`, `{"txid":"0x1"}`} {
		cb, err := travelrule.ParseCallback([]byte(body))
		require.NoError(t, err)
		assert.Contains(t, slices.Collect(maps.Values(legacyCallbacks)), cb.Kind, body)
	}
}

// TestStoredKindIsThePreviousReleases: a callback record stores the word
// the journal used before the kinds were renamed, so that a node of the
// previous release sharing the store reads it; reading it back gives
// today's kind and decision.
func TestStoredKindIsThePreviousReleases(t *testing.T) {
	for _, tt := range []struct {
		body, stored string
	}{
		{`{"approved":true}`, "approved"},
		{`{"approved":"false"}`, "rejected"},
		{`{"rejected":"no"}`, "rejected"},
		{`{"transferId":"t","status":"APPROVED"}`, "status"},
		{`{"transferId":"t","status":"pending"}`, "status"},
		{`{"txid":"0x1"}`, "txid"},
		{`{"canceled":"x"}`, "canceled"},
		{`{"foo":1}`, "unknown"},
	} {
		cb, err := travelrule.ParseCallback([]byte(tt.body))
		require.NoError(t, err)
		stored := storedKind(cb.Kind, cb.Decision())
		assert.Equal(t, tt.stored, stored, tt.body)
		k, d := upgradeCallback(stored, string(cb.Decision()))
		assert.Equal(t, string(cb.Kind), k, tt.body)
		assert.Equal(t, string(cb.Decision()), d, tt.body)
	}
}

// TestFoldReadsOlderJournals: the records an older journal stored, with
// the kinds named "approved", "rejected", "status" and "txid" (and an
// approval without a decision, as before decisions were stored), fold to
// the entry today's records of the same callbacks fold to.
func TestFoldReadsOlderJournals(t *testing.T) {
	old := func(kind, decision string, m int, delivery, tid string) []byte {
		b, err := (&record{Kind: kindCallback, At: at(m), Callback: kind, Decision: decision, TransferID: tid, Delivery: delivery}).encode()
		require.NoError(t, err)
		return b
	}
	base := enc(t, sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"))
	older := append(slices.Clone(base), old("approved", "", 60, "d1", ""), old("status", "approved", 120, "d2", "t-1"), old("txid", "", 200, "d3", ""))
	today := append(slices.Clone(base), enc(t, resolvedRec(travelrule.Approved, 60, "d1", ""),
		cbRec(travelrule.KindTransferResolution, 120, "d2", "t-1", "APPROVED"), cbRec(travelrule.KindTransferConfirmation, 200, "d3", "", ""))...)
	want := foldRaw("o:r1", today)
	require.Equal(t, StageResolved, want.Stage, "an older journal's confirmation at the originator is not believed either")
	require.Equal(t, travelrule.Approved, want.Decision)
	assert.Equal(t, want, foldRaw("o:r1", older))

	rejected := append(slices.Clone(base), old("rejected", "", 60, "d1", ""))
	assert.Equal(t, travelrule.Rejected, foldRaw("o:r1", rejected).Decision)
}

// TestRecordStageIsFoldsStage: the stage a store's index keeps for an
// entry (the highest recordStage of its records, as Journal.write declares
// it) is the stage fold gives, for every case and for random mixes of
// records on either side. A settlement that fold does not apply is the
// one exception: the index may then be ahead (a superset, which the
// journal checks again).
func TestRecordStageIsFoldsStage(t *testing.T) {
	indexStage := func(key string, recs []record) Stage {
		s := StageNone
		for _, r := range recs {
			s = max(s, recordStage(r, key))
		}
		return s
	}
	for _, tc := range foldCases {
		t.Run(tc.name, func(t *testing.T) {
			recs := decodeAll(enc(t, tc.recs...))
			assert.LessOrEqual(t, fold(tc.key, slices.Clone(recs)).Stage, indexStage(tc.key, recs))
			if !slices.ContainsFunc(recs, func(r record) bool { return r.Kind == kindSettled }) {
				assert.Equal(t, fold(tc.key, slices.Clone(recs)).Stage, indexStage(tc.key, recs))
			}
		})
	}
	pool := []record{
		sentRec("c1", 0), outcomeRec(kindStored, "c1", 1, "t-1"), outcomeRec(kindUnknown, "c1", 1, ""),
		outcomeRec(kindNotStored, "c2", 2, ""), resolutionRec(3, "t-1", "approved"), txidRec(4, "t-1"),
		cbRec(travelrule.KindInquiry, 1, "d1", "t-1", ""), cbRec(travelrule.KindTransferResolution, 5, "d2", "t-1", "APPROVED"),
		cbRec(travelrule.KindTransferResolution, 5, "d3", "t-1", ""), cbRec(travelrule.KindTransferConfirmation, 6, "d4", "t-1", ""),
		cbRec(travelrule.KindCanceled, 7, "d5", "t-1", ""), resolvedRec(travelrule.Rejected, 3, "d6", "t-1"),
		{Kind: kindRefused, At: at(8), Callback: "transfer_confirmation", Refused: refusedKind},
		{Kind: kindJoined, At: at(9), Joined: "u:t-1"},
	}
	rng := rand.New(rand.NewPCG(4, 2))
	for range 2000 {
		key := []string{"o:r1", "i:t-1", "u:t-1"}[rng.IntN(3)]
		var recs []record
		for _, r := range pool {
			if rng.IntN(3) == 0 {
				recs = append(recs, r)
			}
		}
		recs = decodeAll(enc(t, recs...))
		require.Equal(t, fold(key, slices.Clone(recs)).Stage, indexStage(key, recs), "%s: %+v", key, recs)
	}
}
