package travelruletest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// TestLiveScheduleAndRetryWait: the live service's schedule, as waited:
// each delay as documented, a receiver's Retry-After lengthening a wait up
// to the schedule's next delay and no further.
func TestLiveScheduleAndRetryWait(t *testing.T) {
	m := time.Minute
	live := liveSchedule(m)
	assert.Equal(t, []time.Duration{1 * m, 5 * m, 15 * m, 30 * m, 60 * m, 180 * m, 360 * m, 720 * m, 1440 * m}, live)
	tests := []struct {
		name       string
		i          int
		retryAfter time.Duration
		want       time.Duration
	}{
		{"the first wait", 0, 0, 1 * m},
		{"the seventh wait", 6, 0, 360 * m},
		{"a shorter Retry-After changes nothing", 2, time.Minute, 15 * m},
		{"a longer one lengthens the wait", 0, 3 * m, 3 * m},
		{"up to the next delay", 0, time.Hour, 5 * m},
		{"the last wait is its own bound", 8, 48 * time.Hour, 1440 * m},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retryWait(live, tt.i, tt.retryAfter))
		})
	}
	assert.Equal(t, []time.Duration{time.Millisecond, 5 * time.Millisecond}, liveSchedule(time.Millisecond)[:2], "scaled")
}

// TestTxIDRefusedOnceRejected: the sandbox's decision, not the callbacks
// that announce it, makes a transfer rejected for a txId: one whose state
// has not moved yet is refused too.
func TestTxIDRefusedOnceRejected(t *testing.T) {
	rs := newRecords(10, time.Hour, newCallbackQueue())
	rs.add(&transferRec{Transfer: Transfer{ID: "rejected", State: StateReceived}, decision: StateRejected})
	rs.add(&transferRec{Transfer: Transfer{ID: "approved", State: StateReceived}, decision: StateApproved})
	assert.Equal(t, txIDRejected, rs.submitTxID("rejected", "0xabc"))
	assert.Equal(t, txIDRecorded, rs.submitTxID("approved", "0xabc"))
	tr := rs.transfers["rejected"]
	assert.False(t, tr.Confirmed)
	assert.Empty(t, tr.TxID)
}

// TestRejectionCallbacks: a transfer the sandbox rejects gets exactly one
// callback, the INQUIRY_RESOLUTION {"approved":false}, as the live docs
// promise no TRANSFER_RESOLUTION for a rejection; WithRejectionResolution
// adds the TRANSFER_RESOLUTION "REJECTED" after it. "Exactly" is read off
// the transfer's count of callbacks still queued once those expected
// finished: nothing else is on its way.
func TestRejectionCallbacks(t *testing.T) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(rc.Close)
	for _, tt := range []struct {
		name  string
		opts  []Option
		kinds []CallbackKind
	}{
		{"default", nil, []CallbackKind{KindInquiryResolution}},
		{"WithRejectionResolution", []Option{WithRejectionResolution()}, []CallbackKind{KindInquiryResolution, KindTransferResolution}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(append(tt.opts, WithApproval(func(travelrule.TransferRequest) bool { return false }))...)
			t.Cleanup(srv.Close)
			c, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
			require.NoError(t, err)
			req := &travelrule.TransferRequest{Asset: "BTC", Amount: "0.25", Callback: rc.URL + "/cb",
				Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", Country: "GB"},
				Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23", Country: "GB"}}
			res, err := c.InitiateTransfer(context.Background(), req)
			require.NoError(t, err)

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ds, err := srv.WaitCallbacks(ctx, len(tt.kinds))
			require.NoError(t, err)
			var kinds []CallbackKind
			for _, d := range ds {
				kinds = append(kinds, d.Kind)
			}
			assert.Equal(t, tt.kinds, kinds)
			assert.JSONEq(t, `{"approved":false,"callback":"`+req.Callback+`"}`, string(ds[0].Body))
			srv.records.mu.Lock()
			queued := srv.records.transfers[res.TransferID].callbacks
			srv.records.mu.Unlock()
			assert.Zero(t, queued, "a callback is still queued")
			tr, _ := srv.Transfer(res.TransferID)
			assert.Equal(t, StateRejected, tr.State)
		})
	}
}

// The callbacks' bodies as encoding/json writes them, with the field names
// and order of the live service's examples: the oracle of the bodies
// written by hand.
type (
	wantApproval struct {
		Address  string `json:"address,omitempty"`
		Callback string `json:"callback"`
	}
	wantInquiryResolution struct {
		Approved any    `json:"approved"`
		Callback string `json:"callback"`
	}
	wantTransferResolution struct {
		TransferID    string `json:"transferId"`
		Status        string `json:"status"`
		StatusComment string `json:"statusComment"`
		Callback      string `json:"callback"`
	}
	wantTransferConfirmation struct {
		TxID string `json:"txid"`
	}
)

// bodyStrings are values that need no escape, and every kind that does.
var bodyStrings = []string{
	"", "https://vasp-a.example/cb?t=1&u=2", "0xabc", `a"b`, `a\b`, "a\nb\tc\x00d\x1f", "<script>&amp;</script>",
	"Zürich 世界 😀", "\u2028\u2029", "bad \xff\xfe utf-8", "\x7f",
}

func TestHandWrittenBodies(t *testing.T) {
	for _, s := range bodyStrings {
		assertBodiesAlike(t, s)
	}
}

// FuzzHandWrittenBodies checks the bodies written by hand against
// encoding/json for any string in every field.
func FuzzHandWrittenBodies(f *testing.F) {
	for _, s := range bodyStrings {
		f.Add(s)
	}
	f.Fuzz(assertBodiesAlike)
}

func assertBodiesAlike(t *testing.T, s string) {
	t.Helper()
	for _, a := range []*approval{nil, {Address: s, Callback: s}, {Callback: s}} {
		var want any = false
		if a != nil {
			want = wantApproval(*a)
		}
		ir := inquiryResolution{Approved: a, Callback: s}
		assert.Equal(t, string(encodeBody(wantInquiryResolution{Approved: want, Callback: s})), string(ir.body()))
	}
	tr := transferResolution{TransferID: s, Status: s + "1", StatusComment: s + "2", Callback: s + "3"}
	assert.Equal(t, string(encodeBody(wantTransferResolution(tr))), string(tr.body()))
	tc := transferConfirmation{TxID: s}
	assert.Equal(t, string(encodeBody(wantTransferConfirmation(tc))), string(tc.body()))
}

// TestHandWrittenBodiesSized checks that a body needing no escape is written
// into a buffer made once, of about its size.
func TestHandWrittenBodiesSized(t *testing.T) {
	cb, id := "https://vasp-a.example/travelrule/callback?ref=pay-1", "019ac452-8660-7061-9b93-8d72eaa11a89"
	for name, body := range map[string]func() []byte{
		"approval":     (&inquiryResolution{Approved: &approval{Address: "0xabc", Callback: cb + "&tx=1"}, Callback: cb}).body,
		"rejection":    (&inquiryResolution{Callback: cb}).body,
		"resolution":   (&transferResolution{TransferID: id, Status: "APPROVED", StatusComment: commentApproved, Callback: cb}).body,
		"confirmation": (&transferConfirmation{TxID: "0x" + id}).body,
	} {
		assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { body() }), name)
		b := body()
		assert.LessOrEqual(t, cap(b), len(b)+64, name)
	}
}
