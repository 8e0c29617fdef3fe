package journal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/journal"
)

// capKey is the capability key of the tests' callback URLs.
var capKey = []byte("journal-test-capability-key-0123")

// bearer is the tests' bearer token: a secret, never to be logged.
const bearer = "journal-test-bearer-token-5f3a9c"

// personal are the personal values of request: none may reach a log.
var personal = []string{"Wilhelmina", "Oyelaran-Baptiste", "1984-03-17", "NID-77K-4412-Q", "Rue des Glycines 58",
	"Cornelius", "Vandermeulen", "1979-11-02", "bc1qjournaltestwallet8x7c6v5b4n3m"}

// request is an initiation of personal values, with the capability
// callback URL of ref.
func request(t *testing.T, ref string) *travelrule.TransferRequest {
	t.Helper()
	cbURL, err := travelrule.NewCallbackURL("https://vasp.example/cb", ref, capKey)
	require.NoError(t, err)
	return &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.25", Callback: cbURL,
		Originator: travelrule.Party{PersonType: "natural", FirstName: "Wilhelmina", LastName: "Oyelaran-Baptiste",
			DateOfBirth: "1984-03-17", NationalID: "NID-77K-4412-Q", NationalIDType: "NATIONAL_ID", StreetName: "Rue des Glycines 58",
			Country: "BE", WalletAddress: "bc1qjournaltestwallet8x7c6v5b4n3m"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Cornelius", LastName: "Vandermeulen", DateOfBirth: "1979-11-02"},
	}
}

// service is a server that answers every request with body, and counts
// the requests it received.
type service struct {
	*httptest.Server
	requests atomic.Int64
}

func newService(t *testing.T, body string) *service {
	s := &service{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

// stored is the live service's answer to an initiation it stored.
const stored = `{"status":true,"data":{"transferId":"t-1"}}`

func newClient(t *testing.T, url string, j *journal.Journal) *travelrule.Client {
	t.Helper()
	c, err := travelrule.NewClient(url, travelrule.WithTokenSource(travelrule.StaticToken(bearer)),
		travelrule.WithObserver(j), travelrule.WithRetryMax(0))
	require.NoError(t, err)
	return c
}

// errStore is the error of a failing store.
var errStore = errors.New("store unavailable")

// failingStore is a MemoryStore whose Append fails with errStore when
// fail says so; fail is given how many appends were made before.
type failingStore struct {
	*journal.MemoryStore
	appends atomic.Int64
	fail    func(n int64) bool
}

func (s *failingStore) Write(ctx context.Context, st journal.Step) (journal.Written, error) {
	if s.fail(s.appends.Add(1) - 1) {
		return journal.Written{}, errStore
	}
	return s.MemoryStore.Write(ctx, st)
}

// allEntries collects every entry of j.
func allEntries(ctx context.Context, j *journal.Journal) ([]journal.Entry, error) {
	var all []journal.Entry
	for e, err := range j.Entries(ctx, journal.Query{}) {
		if err != nil {
			return all, err
		}
		all = append(all, e)
	}
	return all, nil
}

// TestStartCallFails: when the journal cannot record an initiation
// before it is sent, nothing is sent and the call fails with the store's
// error.
func TestStartCallFails(t *testing.T) {
	store := &failingStore{MemoryStore: journal.NewMemoryStore(0, 0), fail: func(int64) bool { return true }}
	j, err := journal.New(store)
	require.NoError(t, err)
	svc := newService(t, stored)
	client := newClient(t, svc.URL, j)

	res, err := client.InitiateTransfer(context.Background(), request(t, "pay-a"))
	require.Error(t, err)
	assert.Nil(t, res)
	assert.ErrorIs(t, err, errStore)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "nothing was sent: the outcome is known")
	assert.Zero(t, svc.requests.Load(), "the service received the initiation")
	assert.EqualValues(t, 1, j.Lost(), "the record that it was not sent could not be written either")

	// Other calls are not recorded before they are sent: a failing store
	// does not stop them.
	_, err = client.SubmitTxID(context.Background(), "t-1", "0xfeedbeef")
	require.NoError(t, err)
	assert.EqualValues(t, 1, svc.requests.Load())
}

// TestEndCallLost: an outcome the journal cannot record leaves the
// initiation "sent, outcome unknown", is counted, and is logged once,
// without a personal value.
func TestEndCallLost(t *testing.T) {
	store := &failingStore{MemoryStore: journal.NewMemoryStore(0, 0), fail: func(n int64) bool { return n > 0 }}
	var logs bytes.Buffer
	j, err := journal.New(store, journal.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	require.NoError(t, err)
	svc := newService(t, stored)
	client := newClient(t, svc.URL, j)

	req := request(t, "pay-b")
	res, err := client.InitiateTransfer(context.Background(), req)
	require.NoError(t, err, "a journal that cannot record an outcome does not fail the call")
	assert.Equal(t, "t-1", res.TransferID)
	assert.EqualValues(t, 1, svc.requests.Load())

	e, err := j.Entry(context.Background(), "pay-b")
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, journal.InitiationSent, e.Initiation)
	assert.Empty(t, e.TransferID)
	assert.EqualValues(t, 1, j.Lost())

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 1, "one log line")
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &line))
	assert.Equal(t, "ERROR", line["level"])
	assert.Equal(t, "InitiateTransfer", line["op"])
	for _, p := range append(personal, bearer, req.Callback, string(capKey)) {
		assert.NotContains(t, logs.String(), p, "a personal value or secret was logged")
	}
	tag := req.Callback[strings.LastIndex(req.Callback, "=")+1:]
	assert.NotContains(t, logs.String(), tag, "the capability tag was logged")
}

// TestDeliveredFails: a callback the journal cannot record is answered
// 500 and not handed to the handler's function, so that the service
// delivers it again; the redelivery, once the store is back, is recorded
// and answered 204.
func TestDeliveredFails(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	store := &failingStore{MemoryStore: journal.NewMemoryStore(0, 0), fail: func(int64) bool { return broken.Load() }}
	j, err := journal.New(store)
	require.NoError(t, err)
	var calls atomic.Int64
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { calls.Add(1); return nil },
		callback.WithCapabilityKey(capKey), callback.WithObserver(j))
	require.NoError(t, h.Err())

	cbURL, err := travelrule.NewCallbackURL("https://vasp.example/cb", "pay-c", capKey)
	require.NoError(t, err)
	deliver := func() int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, cbURL, strings.NewReader(`{"transferId":"t-3","status":"APPROVED","statusComment":"ok"}`)))
		return rec.Code
	}

	assert.Equal(t, http.StatusInternalServerError, deliver())
	assert.Zero(t, calls.Load(), "the function was called for a delivery the journal did not record")
	e, err := j.Entry(context.Background(), "pay-c")
	require.NoError(t, err)
	assert.Nil(t, e)

	broken.Store(false)
	assert.Equal(t, http.StatusNoContent, deliver())
	assert.EqualValues(t, 1, calls.Load())
	e, err = j.Entry(context.Background(), "pay-c")
	require.NoError(t, err)
	require.NotNil(t, e, "the redelivery was recorded")
	assert.Equal(t, "t-3", e.TransferID)
	assert.Equal(t, travelrule.Approved, e.Decision)
	assert.Equal(t, journal.StageResolved, e.Stage)
}

// TestAdoptEarlyCallback: a callback that names only a transfer id and
// arrives before the initiation's outcome is recorded joins the
// initiation's entry once the outcome names that transfer id; the
// unattached entry it was first recorded in is listed no more.
func TestAdoptEarlyCallback(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	j, err := journal.New(journal.NewMemoryStore(0, 0), journal.WithClock(func() time.Time { return now }))
	require.NoError(t, err)

	info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-d", IdempotencyKey: "idem-d"}
	callCtx, err := j.StartCall(ctx, info)
	require.NoError(t, err)

	now = now.Add(time.Minute)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "delivery-1",
		Callback: &travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "t-9", Status: "APPROVED"}}))
	early, err := j.Entry(ctx, "t-9")
	require.NoError(t, err)
	require.NotNil(t, early, "the early callback was recorded")
	unattached := early.Key

	now = now.Add(time.Minute)
	j.EndCall(callCtx, info, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "t-9", Attempts: 1})
	require.Zero(t, j.Lost())

	e, err := j.Entry(ctx, "pay-d")
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.NotEqual(t, unattached, e.Key)
	assert.Equal(t, journal.InitiationStored, e.Initiation)
	assert.Equal(t, "t-9", e.TransferID)
	assert.Equal(t, travelrule.Approved, e.Decision, "the early callback joined the entry")
	assert.Equal(t, journal.StageResolved, e.Stage)
	byID, err := j.Entry(ctx, "t-9")
	require.NoError(t, err)
	require.NotNil(t, byID)
	assert.Equal(t, e.Key, byID.Key, "the transfer id names the initiation's entry")

	all, err := allEntries(ctx, j)
	require.NoError(t, err)
	var keys []string
	for _, x := range all {
		keys = append(keys, x.Key)
	}
	assert.Equal(t, []string{e.Key}, keys, "Entries lists the adopted unattached entry")

	now = now.Add(journal.DefaultTxID) // approved, no txId: both entries would be stuck
	found, err := j.Stuck(ctx, journal.Thresholds{})
	require.NoError(t, err)
	require.Len(t, found, 1, "Stuck lists the adopted unattached entry")
	assert.Equal(t, journal.RuleNoTxID, found[0].Rule)
	assert.Equal(t, e.Key, found[0].Entry.Key)
}

// TestResolveInquiryNotApplied: the excerpt's bare {"status":false} (the
// sandbox's answer, without the live service's errors) means the
// resolution was not applied: the inbound entry is not answered.
func TestResolveInquiryNotApplied(t *testing.T) {
	for _, tc := range []struct {
		answer string
		stage  journal.Stage
		dec    travelrule.Decision
	}{
		{`{"status":false}`, journal.StageInitiated, ""},
		{`{"status":true}`, journal.StageInquiryAnswered, travelrule.Approved},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			ctx := context.Background()
			j, err := journal.New(journal.NewMemoryStore(0, 0))
			require.NoError(t, err)
			require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "delivery-inq", Callback: &travelrule.Callback{
				Kind: travelrule.KindInquiry, TransferID: "in-1", CallbackURL: "https://trp.example/transfers/inquiryResolution?q=in-1"}}))
			svc := newService(t, tc.answer)
			client := newClient(t, svc.URL, j)

			_, err = client.ResolveInquiry(ctx, "in-1", &travelrule.InquiryResolution{Approved: "true"})
			if tc.dec == "" {
				require.ErrorIs(t, err, travelrule.ErrNotApplied)
			} else {
				require.NoError(t, err)
			}

			e, err := j.Entry(ctx, "in-1")
			require.NoError(t, err)
			require.NotNil(t, e)
			assert.Equal(t, journal.Inbound, e.Direction)
			assert.Equal(t, tc.stage, e.Stage)
			assert.Equal(t, tc.dec, e.Decision)
			assert.Zero(t, j.Lost())
		})
	}
}

// faultyStore is a store that reports a fault through Err, as the Redis
// store does on a Redis that keeps no persistence.
type faultyStore struct {
	journal.Store
	err error
}

func (s faultyStore) Err() error { return s.err }

// TestNewRefuses: New fails without a store, with a store whose Err
// reports a fault, and on an option that is nil or refuses its value.
func TestNewRefuses(t *testing.T) {
	store := journal.NewMemoryStore(0, 0)
	fault := errors.New("the store keeps no persistence")
	for _, tc := range []struct {
		name  string
		store journal.Store
		opts  []journal.Option
	}{
		{"nil store", nil, nil},
		{"a store whose Err reports a fault", faultyStore{store, fault}, nil},
		{"nil option", store, []journal.Option{nil}},
		{"nil option after a good one", store, []journal.Option{journal.WithTimeout(time.Second), nil}},
		{"nil clock", store, []journal.Option{journal.WithClock(nil)}},
		{"zero timeout", store, []journal.Option{journal.WithTimeout(0)}},
		{"negative timeout", store, []journal.Option{journal.WithTimeout(-time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := journal.New(tc.store, tc.opts...)
			assert.Error(t, err)
			assert.Nil(t, j)
		})
	}
	_, err := journal.New(faultyStore{store, fault})
	assert.ErrorIs(t, err, fault, "New says why")
	j, err := journal.New(faultyStore{store, nil})
	require.NoError(t, err, "a store whose Err is nil")
	assert.NotNil(t, j)
	j, err = journal.New(store, journal.WithTimeout(time.Second), journal.WithClock(time.Now), journal.WithLogger(nil))
	require.NoError(t, err)
	assert.NotNil(t, j)
}

// countingStore counts the entries its store's Entries yields and the
// Close calls.
type countingStore struct {
	*journal.MemoryStore
	yielded, closed atomic.Int64
	ignoreQuery     bool // yield every entry, as a store's index from an earlier release may
}

func (s *countingStore) Entries(ctx context.Context, q journal.Query) iter.Seq2[journal.Stored, error] {
	if s.ignoreQuery {
		q = journal.Query{}
	}
	return func(yield func(journal.Stored, error) bool) {
		for e, err := range s.MemoryStore.Entries(ctx, q) {
			s.yielded.Add(1)
			if !yield(e, err) {
				return
			}
		}
	}
}

func (s *countingStore) Close(ctx context.Context, key string, n int) error {
	s.closed.Add(1)
	return s.MemoryStore.Close(ctx, key, n)
}

// scenario journals, on store, one transfer in each state that the
// index tells apart, an hour apart from base: a refused initiation
// ("pay-refused", not open), one stored and approved by an early callback
// that joined it ("pay-approved"), one whose outcome is unknown
// ("pay-unknown"), one stored, approved and its txId submitted
// ("pay-done"), and an inbound inquiry answered (transfer "in-1"). The
// journal's clock is *now, which scenario moves on.
func scenario(t *testing.T, store journal.Store, now *time.Time) *journal.Journal {
	ctx := context.Background()
	j, err := journal.New(store, journal.WithClock(func() time.Time { return *now }))
	require.NoError(t, err)
	initiate := func(ref string, outcome travelrule.CallOutcome, tid string) {
		info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: ref}
		c, err := j.StartCall(ctx, info)
		require.NoError(t, err)
		j.EndCall(c, info, &travelrule.CallEnd{Outcome: outcome, TransferID: tid, Attempts: 1})
		*now = now.Add(time.Hour)
	}
	initiate("pay-refused", travelrule.CallNotDone, "")
	early, err := travelrule.ParseCallback([]byte(`{"transferId":"t-approved","approved":true}`))
	require.NoError(t, err)
	require.Equal(t, travelrule.KindInquiryResolution, early.Kind)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-early", Callback: early}))
	initiate("pay-approved", travelrule.CallSucceeded, "t-approved")
	initiate("pay-unknown", travelrule.CallOutcomeUnknown, "")
	initiate("pay-done", travelrule.CallSucceeded, "t-done")
	tx := &travelrule.CallInfo{Op: "SubmitTxID", TransferID: "t-done"}
	c, err := j.StartCall(ctx, tx)
	require.NoError(t, err)
	j.EndCall(c, tx, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, Attempts: 1})
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "d-inq", Callback: &travelrule.Callback{
		Kind: travelrule.KindInquiry, TransferID: "in-1"}}))
	res := &travelrule.CallInfo{Op: "ResolveInquiry", TransferID: "in-1", CallbackRef: "conf-1", Decision: travelrule.Approved}
	c, err = j.StartCall(ctx, res)
	require.NoError(t, err)
	j.EndCall(c, res, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, Attempts: 1})
	require.Zero(t, j.Lost())
	return j
}

// refs lists the references of the entries q selects, in order.
func refs(t *testing.T, j *journal.Journal, q journal.Query) []string {
	t.Helper()
	var out []string
	for e, err := range j.Entries(context.Background(), q) {
		require.NoError(t, err)
		out = append(out, e.Ref)
	}
	return out
}

// TestEntriesQuery: Entries selects by stage, time, reference prefix and
// openness, newest first, whether the store's index selects (a store of
// this release) or yields everything (an index an earlier release left
// without the data): the journal checks each entry itself.
func TestEntriesQuery(t *testing.T) {
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, ignore := range []bool{false, true} {
		store := &countingStore{MemoryStore: journal.NewMemoryStore(0, 0), ignoreQuery: ignore}
		now := base
		j := scenario(t, store, &now)
		for _, tc := range []struct {
			name string
			q    journal.Query
			want []string
		}{
			{"all", journal.Query{}, []string{"conf-1", "pay-done", "pay-unknown", "pay-approved", "pay-refused"}},
			{"stage", journal.Query{Stages: []journal.Stage{journal.StageInquiryAnswered}}, []string{"conf-1", "pay-approved"}},
			{"stages", journal.Query{Stages: []journal.Stage{journal.StageNone, journal.StageTxIDSubmitted}}, []string{"pay-done", "pay-unknown", "pay-refused"}},
			{"from", journal.Query{From: base.Add(2 * time.Hour)}, []string{"conf-1", "pay-done", "pay-unknown"}},
			{"to", journal.Query{To: base.Add(2 * time.Hour)}, []string{"pay-approved", "pay-refused"}},
			{"ref prefix", journal.Query{RefPrefix: "pay-"}, []string{"pay-done", "pay-unknown", "pay-approved", "pay-refused"}},
			{"open", journal.Query{Open: true}, []string{"pay-unknown", "pay-approved"}},
		} {
			t.Run(fmt.Sprintf("%s, store ignores the query %v", tc.name, ignore), func(t *testing.T) {
				assert.Equal(t, tc.want, refs(t, j, tc.q))
			})
		}
	}
}

// TestStuckReadsOpenEntries: Stuck closes the entries that can need a
// person no more, so that the next reads only the open ones, and a new
// record opens an entry again.
func TestStuckReadsOpenEntries(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{MemoryStore: journal.NewMemoryStore(0, 0)}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	j := scenario(t, store, &now)
	now = now.Add(72 * time.Hour)
	found, err := j.Stuck(ctx, journal.Thresholds{})
	require.NoError(t, err)
	require.Len(t, found, 2)
	assert.Equal(t, journal.RuleNoTxID, found[0].Rule, "approved first, then waiting for its txId")
	assert.Equal(t, journal.RuleNoEvidence, found[1].Rule)
	assert.EqualValues(t, 6, store.yielded.Load(), "five entries and the unattached one joined")
	assert.EqualValues(t, 4, store.closed.Load(), "refused, done, answered, and the joined unattached entry")

	store.yielded.Store(0)
	again, err := j.Stuck(ctx, journal.Thresholds{})
	require.NoError(t, err)
	assert.Equal(t, found, again)
	assert.EqualValues(t, 2, store.yielded.Load(), "only the open entries are read")

	// A second initiation under the refused one's reference opens it.
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-refused"})
	require.NoError(t, err)
	store.yielded.Store(0)
	_, err = j.Stuck(ctx, journal.Thresholds{})
	require.NoError(t, err)
	assert.EqualValues(t, 3, store.yielded.Load())
}

// TestEntriesToKeepsARedeliveredEntry: the service delivers a callback
// again (the handler answered 500 once, or the acknowledgement was lost):
// the journal writes no second record (the delivery's id is the same), so
// the entry's Updated stays at the first delivery. An Entries query
// whose To is after that Updated must still yield the entry; the store's
// index moved the entry's time to the redelivery's, and the entry is
// dropped.
func TestEntriesToKeepsARedeliveredEntry(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
	now := base
	j, err := journal.New(journal.NewMemoryStore(0, 0), journal.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	startEnd(t, j, "pay-re", travelrule.CallSucceeded, "t-re")
	cb, err := travelrule.ParseCallback([]byte(`{"transferId":"t-re","approved":true}`))
	require.NoError(t, err)
	cb.Ref = "pay-re"
	d := &callback.Delivery{Authenticated: true, ID: "d-1", Callback: cb}
	now = base.Add(time.Hour)
	require.NoError(t, j.Delivered(ctx, d))
	now = base.Add(5 * time.Hour) // the same delivery, again
	require.NoError(t, j.Delivered(ctx, d))

	e, err := j.Entry(ctx, "pay-re")
	require.NoError(t, err)
	require.Equal(t, base.Add(time.Hour), e.Updated, "the redelivery wrote no record")

	var got []string
	for e, err := range j.Entries(ctx, journal.Query{To: base.Add(2 * time.Hour)}) {
		require.NoError(t, err)
		got = append(got, e.Ref)
	}
	assert.Equal(t, []string{"pay-re"}, got, "an entry last updated before To, by its own Updated")
}
