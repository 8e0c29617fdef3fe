package journal_test

// Hostile cases of settlements and references (from an adversarial review):
// each asserts the safe behaviour.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// advBarrier makes the first n Records calls of key wait for each other:
// two operators who both read the entry before either writes.
type advBarrier struct {
	journal.Store
	key  string
	n    int
	mu   sync.Mutex
	seen int
	all  chan struct{}
}

func (s *advBarrier) Records(ctx context.Context, key string) ([][]byte, error) {
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

func clockJournal(t *testing.T, store journal.Store, at time.Time) *journal.Journal {
	j, err := journal.New(store, journal.WithClock(func() time.Time { return at }))
	require.NoError(t, err)
	return j
}

func startEnd(t *testing.T, j *journal.Journal, ref string, out travelrule.CallOutcome, tid string) {
	t.Helper()
	info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: ref}
	c, err := j.StartCall(context.Background(), info)
	require.NoError(t, err)
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: out, TransferID: tid, Attempts: 1})
}

// TestSettleHostileConcurrentSettlements: two operators settle the same unknown
// entry at once, one "not stored", one "stored as t-2". Both pass Settle's
// read-then-write check; the fold then shows the entry as not stored
// (resend allowed) while its settlement says stored, and the transfer id
// names it: a resend would be a second transfer.
func TestSettleHostileConcurrentSettlements(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	mem := journal.NewMemoryStore(0, 0)
	startOnly(t, clockJournal(t, mem, t0), "pay-cs")
	store := &advBarrier{Store: mem, key: "o:pay-cs", n: 2, all: make(chan struct{})}
	ja := clockJournal(t, store, t0.Add(time.Hour))
	jb := clockJournal(t, store, t0.Add(time.Hour+time.Minute))
	var wg sync.WaitGroup
	var errA, errB error
	wg.Add(2)
	go func() {
		defer wg.Done()
		errA = ja.Settle(ctx, "pay-cs", journal.Settlement{Reason: "ticket 1: no such transfer"})
	}()
	go func() {
		defer wg.Done()
		errB = jb.Settle(ctx, "pay-cs", journal.Settlement{Stored: true, TransferID: "t-2", Reason: "dashboard shows t-2"})
	}()
	wg.Wait()
	j := clockJournal(t, mem, t0.Add(2*time.Hour))
	e, err := j.Entry(ctx, "pay-cs")
	require.NoError(t, err)
	t.Logf("settle A err=%v, settle B err=%v", errA, errB)
	t.Logf("Initiation=%q Stage=%s TransferID=%q Settlement=%+v", e.Initiation, e.Stage, e.TransferID, *e.Settlement)
	byTID, _ := j.Entry(ctx, "t-2")
	if byTID != nil {
		t.Logf("Entry(t-2) -> %s", byTID.Key)
	}
	_, resend := j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-cs"})
	t.Logf("resend under pay-cs: err=%v", resend)
	assert.False(t, errA == nil && errB == nil, "both settlements were accepted")
	if e.Settlement.Stored {
		assert.Equal(t, journal.InitiationStored, e.Initiation, "settlement says stored, initiation says %q", e.Initiation)
		assert.ErrorIs(t, resend, journal.ErrRefInUse, "a resend under a reference whose transfer an operator said is stored")
	}
}

// TestSettleHostileSettleTwiceSequentially: the sequential case is refused.
func TestSettleHostileSettleTwiceSequentially(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	died(t, j, now, "pay-seq")
	require.NoError(t, j.Settle(ctx, "pay-seq", journal.Settlement{Reason: "a"}))
	assert.ErrorIs(t, j.Settle(ctx, "pay-seq", journal.Settlement{Stored: true, TransferID: "t-x", Reason: "b"}), journal.ErrNothingToSettle)
}

// TestSettleHostileLateCallbackOfTheOriginal: settled "not stored", resent (stored
// as t-new); then the service's TRANSFER_RESOLUTION for the ORIGINAL
// transfer t-old arrives (it was stored after all: two transfers now
// exist). Nothing is flagged, because contradiction only compares times.
func TestSettleHostileLateCallbackOfTheOriginal(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	died(t, j, now, "pay-late")
	*now = now.Add(time.Minute)
	require.NoError(t, j.Settle(ctx, "pay-late", journal.Settlement{Reason: "support: no such transfer"}))
	*now = now.Add(time.Minute)
	startEnd(t, j, "pay-late", travelrule.CallSucceeded, "t-new")
	*now = now.Add(time.Hour)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-old", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, Ref: "pay-late", TransferID: "t-old", Status: "APPROVED"}}))
	e, err := j.Entry(ctx, "pay-late")
	require.NoError(t, err)
	t.Logf("TransferID=%q Contradicted=%v\n%s", e.TransferID, e.Contradicted, timeline(e))
	assert.False(t, e.Contradicted.IsZero(), "a callback naming a transfer id that is neither the resend's nor the settlement's is not flagged")
	assert.Equal(t, "t-new", e.TransferID, "the entry's transfer id is taken over by the callback's")
}

// TestSettleHostileClockSkewFalseContradiction: replica A resends after a
// not-stored settlement; replica B, its clock 2 s behind, receives the
// resend's own callback a moment later. The callback's time is before the
// resend's, so it is reported as contradicting the settlement.
func TestSettleHostileClockSkewFalseContradiction(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	mem := journal.NewMemoryStore(0, 0)
	startOnly(t, clockJournal(t, mem, t0), "pay-skew")
	require.NoError(t, clockJournal(t, mem, t0.Add(time.Hour)).Settle(ctx, "pay-skew", journal.Settlement{Reason: "ticket: none"}))
	a := clockJournal(t, mem, t0.Add(2*time.Hour))
	startEnd(t, a, "pay-skew", travelrule.CallSucceeded, "t-skew")
	b := clockJournal(t, mem, t0.Add(2*time.Hour-2*time.Second)) // 2 s behind
	require.NoError(t, b.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-skew", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, Ref: "pay-skew", TransferID: "t-skew", Status: "APPROVED"}}))
	e, err := a.Entry(ctx, "pay-skew")
	require.NoError(t, err)
	assert.True(t, e.Contradicted.IsZero(), "the resend's own callback (same transfer id as the resend's answer) is reported as a contradiction")
}

// TestSettleHostileSettleInFlight: an operator settles "not stored" a resend that is
// still in flight (sent a second ago); the journal then lets a third
// initiation under the reference through while the second may be stored.
func TestSettleHostileSettleInFlight(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-fly"}
	c, err := j.StartCall(ctx, info) // in flight: no outcome yet
	require.NoError(t, err)
	*now = now.Add(time.Second)
	settleErr := j.Settle(ctx, "pay-fly", journal.Settlement{Reason: "looked in the dashboard, nothing yet"})
	_, third := j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-fly"})
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "t-fly", Attempts: 1})
	t.Logf("settle of a call 1 s in flight: %v; a further initiation under the ref: %v", settleErr, third)
	assert.Error(t, settleErr, "a call still in flight (younger than Thresholds.OutcomeUnknown) was settled")
}

// TestSettleHostileSettleStoredStealsName: an operator settles entry A as stored
// under a transfer id (a typo, a paste of the wrong row) that already
// names entry B. The name moves to A silently; B is no longer found by
// its transfer id.
func TestSettleHostileSettleStoredStealsName(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	startEnd(t, j, "pay-B", travelrule.CallSucceeded, "t-B")
	died(t, j, now, "pay-A")
	err := j.Settle(ctx, "pay-A", journal.Settlement{Stored: true, TransferID: "t-B", Reason: "copied from the dashboard"})
	e, _ := j.Entry(ctx, "t-B")
	t.Logf("Settle: %v; Entry(t-B) -> %s", err, e.Key)
	assert.Error(t, err, "settling as stored under a transfer id that names another entry")
	assert.Equal(t, "o:pay-B", e.Key)
}

// TestSettleHostileReasonFormatting: unicode.IsControl is Cc only; bidi overrides,
// the line/paragraph separators, zero-width and BOM pass (categories Cf,
// Zl, Zp).
func TestSettleHostileReasonFormatting(t *testing.T) {
	for _, reason := range []string{
		"ticket \u202e4711 gnp.exe",      // RIGHT-TO-LEFT OVERRIDE
		"line one\u2028line two",         // LINE SEPARATOR: "no line breaks"
		"para\u2029graph",                // PARAGRAPH SEPARATOR
		"zero\u200bwidth\ufeffbom",       // ZWSP, BOM
		"isolate \u2066spoof\u2069",      // LRI ... PDI
		"\x1b[31mred",                    // ESC: refused (Cc)
		"\u0085nel",                      // NEL: refused (Cc)
		"\u200f\u200e marks",             // RLM/LRM
		"tag chars \U000E0041\U000E0042", // TAG LATIN CAPITAL LETTER A, B (Cf)
	} {
		t.Run(fmt.Sprintf("%+q", reason), func(t *testing.T) {
			ctx := context.Background()
			j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
			died(t, j, now, "pay-rsn")
			err := j.Settle(ctx, "pay-rsn", journal.Settlement{Reason: reason})
			assert.ErrorIs(t, err, journal.ErrInvalidSettlement, "accepted a reason with invisible/format characters")
		})
	}
}

// TestSettleHostilePhantomOutboundFromResolutionAtConfirmationURL: this VASP, as
// beneficiary, resolves inquiry in-9 naming its confirmation URL conf-9.
// While the call is in flight (or if its EndCall record was lost), an
// authenticated TRANSFER_RESOLUTION arrives at conf-9 (a counterparty
// that learnt the URL from the relayed resolution). The journal makes an
// outbound entry o:conf-9 of it and points tid:in-9 at it.
func TestSettleHostilePhantomOutboundFromResolutionAtConfirmationURL(t *testing.T) {
	ctx := context.Background()
	j, _ := hostileJournal(t, journal.NewMemoryStore(0, 0))
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-inq9", Callback: &travelrule.Callback{
		Kind: travelrule.KindInquiry, TransferID: "in-9"}}))
	info := &travelrule.CallInfo{Op: "ResolveInquiry", TransferID: "in-9", CallbackRef: "conf-9", Decision: "approved"}
	c, err := j.StartCall(ctx, info)
	require.NoError(t, err)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-r9", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, Ref: "conf-9", TransferID: "in-9", Status: "APPROVED"}}))
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "in-9", Attempts: 1})
	e, err := j.Entry(ctx, "in-9")
	require.NoError(t, err)
	all, err := j.Entries(ctx)
	require.NoError(t, err)
	var keys []string
	for _, x := range all {
		keys = append(keys, fmt.Sprintf("%s(%s,%s,%s)", x.Key, x.Direction, x.Stage, x.Decision))
	}
	t.Logf("Entry(in-9) -> %s; entries: %v", e.Key, keys)
	assert.Equal(t, "i:in-9", e.Key, "the inbound transfer's id names a phantom outbound entry")
	assert.Len(t, all, 1, "a resolution at the beneficiary's confirmation URL made an outbound entry")
}

// TestSettleHostileUnauthenticatedFlood: under WithoutAuthentication, anyone can
// append one record per distinct body to an entry that a transfer id
// names (a stored outbound transfer whose id is known), without bound;
// no entry is created for unknown ids.
func TestSettleHostileUnauthenticatedFlood(t *testing.T) {
	ctx := context.Background()
	mem := journal.NewMemoryStore(0, 0)
	j, _ := hostileJournal(t, mem)
	startEnd(t, j, "pay-fl", travelrule.CallSucceeded, "t-fl")
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithoutAuthentication(), callback.WithObserver(j), callback.WithoutDedup())
	require.NoError(t, h.Err())
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(body string) int {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := 0; i < 500; i++ {
		post(fmt.Sprintf(`{"transferId":"t-fl","status":"APPROVED","statusComment":"%d","callback":"https://x"}`, i))
		post(fmt.Sprintf(`{"transferId":"new-%d","status":"APPROVED","statusComment":"x","callback":"https://x"}`, i))
		post(fmt.Sprintf(`{"asset":"BTC","amount":"1","callback":"https://x","transferId":"inq-%d","IVMS101":{}}`, i))
	}
	recs, err := mem.Records(ctx, "o:pay-fl")
	require.NoError(t, err)
	all, err := j.Entries(ctx)
	require.NoError(t, err)
	e, _ := j.Entry(ctx, "pay-fl")
	t.Logf("records on o:pay-fl after 500 forged deliveries: %d; entries: %d; Stage=%s Decision=%q", len(recs), len(all), e.Stage, e.Decision)
	assert.Equal(t, 1, len(all), "forged deliveries created entries")
	assert.Empty(t, e.Decision)
	assert.LessOrEqual(t, len(recs), 10, "forged deliveries append without bound")
}

// TestSettleHostileSecondSettlementWindow: settled "not stored", resent (R2, outcome
// unknown), settled "not stored" again; a callback arrives before any
// third send. Nothing the second settlement allows explains it, yet it is
// not flagged: the resend time is taken after the FIRST settlement only.
func TestSettleHostileSecondSettlementWindow(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	died(t, j, now, "pay-2s")
	*now = now.Add(time.Minute)
	require.NoError(t, j.Settle(ctx, "pay-2s", journal.Settlement{Reason: "first check"}))
	*now = now.Add(time.Minute)
	startEnd(t, j, "pay-2s", travelrule.CallOutcomeUnknown, "")
	*now = now.Add(time.Hour)
	require.NoError(t, j.Settle(ctx, "pay-2s", journal.Settlement{Reason: "second check"}))
	*now = now.Add(time.Minute)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-2s", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, Ref: "pay-2s", TransferID: "t-2s", Status: "APPROVED"}}))
	e, err := j.Entry(ctx, "pay-2s")
	require.NoError(t, err)
	assert.False(t, e.Contradicted.IsZero(), "a callback after the second not-stored settlement, before any resend, is not flagged")
}

// TestSettleHostileRefRaceAcrossDirections: a ResolveInquiry naming confirmation
// ref X and an initiation under X start concurrently: both pass refFree
// (no name yet); the resolution's EndCall then points ref:X at the
// inbound entry, and the initiation's own resolutions are refused.
func TestSettleHostileRefRaceAcrossDirections(t *testing.T) {
	ctx := context.Background()
	j, _ := hostileJournal(t, journal.NewMemoryStore(0, 0))
	rinfo := &travelrule.CallInfo{Op: "ResolveInquiry", TransferID: "in-x", CallbackRef: "ref-x", Decision: "approved"}
	rc, err := j.StartCall(ctx, rinfo)
	require.NoError(t, err)
	iinfo := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "ref-x"}
	ic, err := j.StartCall(ctx, iinfo)
	t.Logf("initiation under a ref a resolution in flight is using: %v", err)
	if err != nil {
		return
	}
	j.EndCall(rc, rinfo, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "in-x", Attempts: 1})
	j.EndCall(ic, iinfo, &travelrule.CallEnd{Outcome: travelrule.CallOutcomeUnknown, Attempts: 1})
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-x", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, Ref: "ref-x", TransferID: "t-x", Status: "APPROVED"}}))
	e, err := j.Entry(ctx, "o:ref-x")
	require.NoError(t, err)
	t.Logf("outbound: Initiation=%q Stage=%s\n%s", e.Initiation, e.Stage, timeline(e))
	assert.Equal(t, journal.InitiationStored, e.Initiation, "the outbound transfer's own resolution was refused")
}
