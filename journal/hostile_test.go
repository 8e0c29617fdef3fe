package journal_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/journal"
)

func hostileJournal(t *testing.T, store journal.Store) (*journal.Journal, *time.Time) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	j, err := journal.New(store, journal.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	return j, &now
}

// TestRefInUse: an initiation under a reference whose earlier transfer was
// stored, or whose outcome is unknown, is refused before it is sent (its
// outcome would hide behind the earlier transfer's evidence, or it would
// be the same transfer twice); one whose earlier initiations were not
// stored is sent.
func TestRefInUse(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	info := func() *travelrule.CallInfo {
		return &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-r"}
	}
	// First transfer: stored, then rejected by the beneficiary.
	i1 := info()
	c1, err := j.StartCall(ctx, i1)
	require.NoError(t, err)
	j.EndCall(c1, i1, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "t-1", Attempts: 1})
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d1", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, Ref: "pay-r", TransferID: "t-1", Status: "REJECTED"}}))
	// The payment is sent again, corrected, under the same reference:
	// refused before anything is sent.
	*now = now.Add(time.Hour)
	_, err = j.StartCall(ctx, info())
	require.ErrorIs(t, err, journal.ErrRefInUse)

	// A reference whose initiations were all not stored may be used again.
	i3 := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-q"}
	c3, err := j.StartCall(ctx, i3)
	require.NoError(t, err)
	j.EndCall(c3, i3, &travelrule.CallEnd{Outcome: travelrule.CallNotDone, Attempts: 1})
	c4, err := j.StartCall(ctx, i3)
	require.NoError(t, err)
	j.EndCall(c4, i3, &travelrule.CallEnd{Outcome: travelrule.CallOutcomeUnknown, Attempts: 1})
	*now = now.Add(journal.RedeliveryWindow)
	e, err := j.Entry(ctx, "pay-q")
	require.NoError(t, err)
	assert.Equal(t, 2, e.Initiations)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation)
	_, err = j.StartCall(ctx, i3)
	require.ErrorIs(t, err, journal.ErrRefInUse, "nor while an outcome is unknown")
}

// TestBodyRefIsNotEvidence: without a capability key, the reference in
// the body's "callback" URL, which the sender wrote, names nothing: an
// inbound inquiry carrying tr_ref=<our ref> does not reconcile our
// outcome-unknown initiation, and gets its own inbound entry.
func TestBodyRefIsNotEvidence(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	i := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-x"}
	c, err := j.StartCall(ctx, i)
	require.NoError(t, err)
	j.EndCall(c, i, &travelrule.CallEnd{Outcome: travelrule.CallOutcomeUnknown, Attempts: 1})

	secret := "whsec-review-signing-secret-0123456789"
	v, err := callback.NewDataIntegrityVerifier(secret)
	require.NoError(t, err)
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(v), callback.WithObserver(j))
	require.NoError(t, h.Err())
	body := `{"transferId":"in-77","status":"inquiry","asset":"BTC","amount":"1","callback":"https://peer.example/cb?tr_ref=pay-x"}`
	req := httptest.NewRequest(http.MethodPost, "/transfers/inquiry/abc", strings.NewReader(body))
	req.Header.Set(callback.HeaderDataIntegrity, callback.SignDataIntegrity([]byte(secret), []byte(body)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNoContent, rec.Code)

	*now = now.Add(time.Hour)
	e, err := j.Entry(ctx, "pay-x")
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation, "an inbound inquiry about another transfer reconciled our initiation")
	in, err := j.Entry(ctx, "in-77")
	require.NoError(t, err)
	require.NotNil(t, in)
	assert.Equal(t, journal.Inbound, in.Direction, "the inbound inquiry has no inbound entry")
}

// TestInboundTransferIDOfAnOutbound: an inbound inquiry whose transfer id
// is also an outbound entry's (a transfer between two customers of this
// VASP) gets its own inbound entry, flagged while unanswered.
func TestInboundTransferIDOfAnOutbound(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	i := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-s"}
	c, err := j.StartCall(ctx, i)
	require.NoError(t, err)
	j.EndCall(c, i, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "t-s", Attempts: 1})
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-inq", Callback: &travelrule.Callback{
		Kind: travelrule.KindInquiry, TransferID: "t-s", CallbackURL: "https://trp.example/transfers/inquiryResolution?q=t-s"}}))
	*now = now.Add(journal.DefaultInquiryAnswer)
	found, err := j.Stuck(ctx, journal.Thresholds{})
	require.NoError(t, err)
	var rules []journal.Rule
	for _, f := range found {
		rules = append(rules, f.Rule)
	}
	assert.Contains(t, rules, journal.RuleInquiryUnanswered, "the unanswered inbound inquiry is not reported")
}

// racyStore runs hook once, after it answered the first Lookup of name
// and before the answer reaches the caller: the caller acts on a stale
// answer, as it would if hook had run between its two store calls.
type racyStore struct {
	*journal.MemoryStore
	name  string
	armed atomic.Bool
	hook  func()
}

func (s *racyStore) Lookup(ctx context.Context, name string) (string, error) {
	k, err := s.MemoryStore.Lookup(ctx, name)
	if name == s.name && s.armed.CompareAndSwap(true, false) {
		s.hook()
	}
	return k, err
}

// TestJoinRace: a callback that names only a transfer id looks it up, the
// initiation's outcome then gives the id its entry (and finds no early
// callback to join), and the callback is filed as unattached: it joins
// the entry all the same, and nothing is lost from Entries or Stuck.
func TestJoinRace(t *testing.T) {
	ctx := context.Background()
	store := &racyStore{MemoryStore: journal.NewMemoryStore(0, 0), name: "tid:t-9"}
	j, now := hostileJournal(t, store)
	i := &travelrule.CallInfo{Op: "InitiateTransfer"} // no capability URL
	c, err := j.StartCall(ctx, i)
	require.NoError(t, err)
	store.hook = func() {
		j.EndCall(c, i, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "t-9", Attempts: 1})
	}
	store.armed.Store(true)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-early", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, TransferID: "t-9", Status: "APPROVED"}}))
	require.False(t, store.armed.Load(), "the race ran")
	require.Zero(t, j.Lost())

	*now = now.Add(journal.DefaultResolution)
	all, err := allEntries(ctx, j)
	require.NoError(t, err)
	require.Len(t, all, 1, "one transfer")
	assert.Equal(t, travelrule.Approved, all[0].Decision, "the approval is the initiation's")
	assert.Equal(t, journal.StageResolved, all[0].Stage)
	found, err := j.Stuck(ctx, journal.Thresholds{})
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, journal.RuleNoTxID, found[0].Rule, "approved (not 'no resolution'), and waiting for its txId")
	e, err := j.Entry(ctx, "t-9")
	require.NoError(t, err)
	assert.Equal(t, all[0].Key, e.Key)
	assert.Equal(t, travelrule.Approved, e.Decision)
}

// TestPersonalTransferIDIsNotStored: a transfer id a sender wrote that
// repeats a personal value of the callback (the originator's wallet) is
// not kept.
func TestPersonalTransferIDIsNotStored(t *testing.T) {
	ctx := context.Background()
	store := journal.NewMemoryStore(0, 0)
	j, _ := hostileJournal(t, store)
	secret := "whsec-review-signing-secret-0123456789"
	v, err := callback.NewDataIntegrityVerifier(secret)
	require.NoError(t, err)
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(v), callback.WithObserver(j))
	wallet := "bc1qjournaltestwallet8x7c6v5b4n3m"
	body := `{"transferId":"` + wallet + `","status":"inquiry","asset":"BTC","amount":"1",` +
		`"originator":{"firstName":"Wilhelmina","lastName":"Oyelaran-Baptiste","walletAddress":"` + wallet + `"}}`
	req := httptest.NewRequest(http.MethodPost, "/transfers/inquiry/abc", strings.NewReader(body))
	req.Header.Set(callback.HeaderDataIntegrity, callback.SignDataIntegrity([]byte(secret), []byte(body)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNoContent, rec.Code)
	var all strings.Builder
	for e, err := range store.Entries(ctx, journal.Query{}) {
		require.NoError(t, err)
		all.WriteString(e.Key)
		for _, r := range e.Records {
			all.Write(r)
		}
	}
	assert.NotContains(t, all.String(), wallet, "a personal value is stored")
}

// TestRefInUseConcurrently: many initiations under one reference at
// once: exactly one is let through (the Step that writes the record ahead
// reads the entry back atomically, so each later one sees an earlier
// one's record), and the others are recorded as not sent.
func TestRefInUseConcurrently(t *testing.T) {
	ctx := context.Background()
	j, _ := hostileJournal(t, journal.NewMemoryStore(0, 0))
	const n = 20
	var wg sync.WaitGroup
	var sent atomic.Int32
	for range n {
		wg.Go(func() {
			if _, err := j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-c"}); err == nil {
				sent.Add(1)
			} else {
				assert.ErrorIs(t, err, journal.ErrRefInUse)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), sent.Load(), "initiations under one reference let through")
	e, err := j.Entry(ctx, "pay-c")
	require.NoError(t, err)
	assert.Equal(t, n, e.Initiations)
	assert.Equal(t, journal.InitiationSent, e.Initiation, "the one let through")
	assert.Equal(t, n-1, strings.Count(timeline(e), "not sent: the journal refused it"))
}

// TestRefOfAResolution: a reference that a resolution's callback URL took
// names an inbound transfer: an initiation under it is refused.
func TestRefOfAResolution(t *testing.T) {
	ctx := context.Background()
	j, _ := hostileJournal(t, journal.NewMemoryStore(0, 0))
	info := &travelrule.CallInfo{Op: "ResolveInquiry", TransferID: "in-4", CallbackRef: "conf-4", Decision: "approved"}
	c, err := j.StartCall(ctx, info)
	require.NoError(t, err)
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "in-4", Attempts: 1})
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "conf-4"})
	require.ErrorIs(t, err, journal.ErrRefInUse)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-conf", Callback: &travelrule.Callback{Kind: travelrule.KindTransferConfirmation, Ref: "conf-4"}}))
	e, err := j.Entry(ctx, "in-4")
	require.NoError(t, err)
	assert.Equal(t, journal.StageConfirmed, e.Stage, "the confirmation is the inbound transfer's")
}

// lossyStore applies an Append and then reports it failed, once.
type lossyStore struct {
	*journal.MemoryStore
	lose atomic.Bool
}

func (s *lossyStore) Write(ctx context.Context, st journal.Step) (journal.Written, error) {
	w, err := s.MemoryStore.Write(ctx, st)
	if err == nil && s.lose.CompareAndSwap(true, false) {
		return journal.Written{}, errors.New("i/o timeout (the write landed)")
	}
	return w, err
}

// TestStartCallWriteLanded: a record written whose answer was lost fails
// the call, nothing is sent, and the reference is not left "sent".
func TestStartCallWriteLanded(t *testing.T) {
	ctx := context.Background()
	store := &lossyStore{MemoryStore: journal.NewMemoryStore(0, 0)}
	j, _ := hostileJournal(t, store)
	store.lose.Store(true)
	_, err := j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-l"})
	require.Error(t, err)
	e, err := j.Entry(ctx, "pay-l")
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationNotStored, e.Initiation)
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-l"})
	assert.NoError(t, err, "the reference may be used")
}

// TestRefLikeAnUnattachedKey: a reference shaped like an unattached
// entry's key is not reconciled by another transfer's callbacks.
func TestRefLikeAnUnattachedKey(t *testing.T) {
	ctx := context.Background()
	j, _ := hostileJournal(t, journal.NewMemoryStore(0, 0))
	info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "tid.t-5"}
	c, err := j.StartCall(ctx, info)
	require.NoError(t, err)
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: travelrule.CallOutcomeUnknown, Attempts: 1})
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-5", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, TransferID: "t-5", Status: "APPROVED"}}))
	e, err := j.Entry(ctx, "tid.t-5")
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation)
}

// failJoins fails the Steps that join an unattached entry while armed.
type failJoins struct {
	*journal.MemoryStore
	armed atomic.Bool
}

func (s *failJoins) Write(ctx context.Context, st journal.Step) (journal.Written, error) {
	if strings.HasPrefix(st.ID, "join:") && s.armed.Load() {
		return journal.Written{}, errors.New("connection reset")
	}
	return s.MemoryStore.Write(ctx, st)
}

// TestJoinNotWritten: an outcome whose join of early callbacks failed
// leaves the early callback listed on its own, never hidden.
func TestJoinNotWritten(t *testing.T) {
	ctx := context.Background()
	store := &failJoins{MemoryStore: journal.NewMemoryStore(0, 0)}
	j, _ := hostileJournal(t, store)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-6", Callback: &travelrule.Callback{
		Kind: travelrule.KindTransferResolution, TransferID: "t-6", Status: "APPROVED"}}))
	info := &travelrule.CallInfo{Op: "InitiateTransfer"}
	c, err := j.StartCall(ctx, info)
	require.NoError(t, err)
	store.armed.Store(true)
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "t-6", Attempts: 1})
	store.armed.Store(false)
	assert.EqualValues(t, 1, j.Lost())
	all, err := allEntries(ctx, j)
	require.NoError(t, err)
	approved := false
	for _, e := range all {
		approved = approved || e.Decision == "approved"
	}
	assert.True(t, approved, "the early approval is listed")
}

// TestConfirmationAfterAnUnknownResolution: a resolution whose outcome is
// unknown may have been applied; the confirmation that follows comes to
// its callback URL, naming no transfer, and is filed on the inbound
// entry, whose decision stays unrecorded.
func TestConfirmationAfterAnUnknownResolution(t *testing.T) {
	ctx := context.Background()
	j, _ := hostileJournal(t, journal.NewMemoryStore(0, 0))
	info := &travelrule.CallInfo{Op: "ResolveInquiry", TransferID: "in-5", CallbackRef: "conf-5", Decision: "approved"}
	c, err := j.StartCall(ctx, info)
	require.NoError(t, err)
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: travelrule.CallOutcomeUnknown, TransferID: "in-5", Attempts: 2})
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-conf-5", Callback: &travelrule.Callback{Kind: travelrule.KindTransferConfirmation, Ref: "conf-5"}}))
	e, err := j.Entry(ctx, "in-5")
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, journal.StageConfirmed, e.Stage)
	assert.Empty(t, e.Decision, "an unknown outcome records no decision")
	var told []string
	for _, ev := range e.Timeline {
		told = append(told, ev.What)
	}
	assert.Contains(t, strings.Join(told, "\n"), "ResolveInquiry's outcome unknown")
}

// TestUnauthenticatedDeliveryMovesNothing: a delivery the handler did not
// authenticate is recorded on the entry it names as not acted on, and
// neither reconciles nor decides it, even with a reference.
func TestUnauthenticatedDeliveryMovesNothing(t *testing.T) {
	ctx := context.Background()
	j, now := hostileJournal(t, journal.NewMemoryStore(0, 0))
	startEnd(t, j, "pay-u1", travelrule.CallOutcomeUnknown, "")
	*now = now.Add(time.Minute)
	d := resolution("d-u1", "pay-u1", "t-u1")
	d.Authenticated = false
	require.NoError(t, j.Delivered(ctx, d))
	e, err := j.Entry(ctx, "pay-u1")
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation)
	assert.False(t, e.Reconciled)
	assert.Empty(t, e.Decision)
	assert.Empty(t, e.TransferID)
	require.Len(t, e.Timeline, 3)
	assert.Equal(t, "callback not acted on: transfer_resolution, not authenticated", e.Timeline[2].What)
}

// TestUnauthenticatedFloodIsBounded: forged deliveries through a handler
// made WithoutAuthentication, each body new, add at most one record per
// reason and kind to an entry their transfer id names, and open none.
func TestUnauthenticatedFloodIsBounded(t *testing.T) {
	ctx := context.Background()
	mem := journal.NewMemoryStore(0, 0)
	j, _ := hostileJournal(t, mem)
	startEnd(t, j, "pay-fl", travelrule.CallSucceeded, "t-fl")
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithoutAuthentication(), callback.WithObserver(j), callback.WithoutDedup())
	require.NoError(t, h.Err())
	for i := range 200 {
		for _, body := range []string{
			fmt.Sprintf(`{"transferId":"t-fl","status":"APPROVED","statusComment":"%d","callback":"https://x"}`, i),
			fmt.Sprintf(`{"transferId":"new-%d","status":"APPROVED","callback":"https://x"}`, i),
			fmt.Sprintf(`{"asset":"BTC","amount":"1","callback":"https://x","transferId":"inq-%d","IVMS101":{}}`, i),
		} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/cb", strings.NewReader(body)))
			require.Equal(t, http.StatusNoContent, w.Code)
		}
	}
	recs, err := mem.Records(ctx, "o:pay-fl")
	require.NoError(t, err)
	assert.Len(t, recs, 3, "sent, stored, and one refused delivery")
	all, err := allEntries(ctx, j)
	require.NoError(t, err)
	assert.Len(t, all, 1, "no forged delivery opened an entry")
	assert.Empty(t, all[0].Decision)
}

// TestResolutionTakesItsRefBeforeSending: a resolution's reference names
// the inbound entry from before the call is sent, so a TRANSFER_RESOLUTION
// at its URL while the call runs is refused there (no outbound entry is
// made of it), and an initiation under that reference is refused.
func TestResolutionTakesItsRefBeforeSending(t *testing.T) {
	ctx := context.Background()
	j, _ := hostileJournal(t, journal.NewMemoryStore(0, 0))
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-inq9", Callback: &travelrule.Callback{
		Kind: travelrule.KindInquiry, TransferID: "in-9"}}))
	info := &travelrule.CallInfo{Op: "ResolveInquiry", TransferID: "in-9", CallbackRef: "conf-9", Decision: "approved"}
	c, err := j.StartCall(ctx, info)
	require.NoError(t, err)
	require.NoError(t, j.Delivered(ctx, resolution("d-r9", "conf-9", "in-9")))
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "conf-9"})
	assert.ErrorIs(t, err, journal.ErrRefInUse)
	j.EndCall(c, info, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "in-9", Attempts: 1})

	all, err := allEntries(ctx, j)
	require.NoError(t, err)
	require.Len(t, all, 1, "the resolution at the confirmation URL made no outbound entry")
	e := all[0]
	assert.Equal(t, "i:in-9", e.Key)
	assert.Equal(t, "conf-9", e.Ref)
	assert.Equal(t, journal.StageInquiryAnswered, e.Stage)
	assert.Contains(t, timeline(&e), "callback refused: a transfer_resolution cannot arrive at the beneficiary")
}
