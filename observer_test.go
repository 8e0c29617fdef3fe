package travelrule_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// recorder is an Observer that records what it is told, and can refuse.
type recorder struct {
	name   string
	refuse error
	log    *[]string
	mu     sync.Mutex
	starts []travelrule.CallInfo
	ends   []travelrule.CallEnd
	ctxOK  bool // EndCall got the context StartCall returned
}

type ctxKey string

func (r *recorder) StartCall(ctx context.Context, info *travelrule.CallInfo) (context.Context, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, "start "+r.name)
	r.starts = append(r.starts, *info)
	if r.refuse != nil {
		return ctx, r.refuse
	}
	return context.WithValue(ctx, ctxKey(r.name), true), nil
}

func (r *recorder) EndCall(ctx context.Context, info *travelrule.CallInfo, end *travelrule.CallEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, "end "+r.name)
	r.ends = append(r.ends, *end)
	r.ctxOK = ctx.Value(ctxKey(r.name)) == true
}

// observedServer answers each request with status and body, and keeps the
// bodies it received.
type observedServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	n      atomic.Int64
}

func newObservedServer(t *testing.T, status int, body string) *observedServer {
	s := &observedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, b)
		s.mu.Unlock()
		s.n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func observedClient(t *testing.T, url string, obs ...travelrule.Observer) *travelrule.Client {
	opts := []travelrule.Option{travelrule.WithTokenSource(travelrule.StaticToken("observer-bearer-token")), travelrule.WithRetryMax(0)}
	for _, o := range obs {
		opts = append(opts, travelrule.WithObserver(o))
	}
	c, err := travelrule.NewClient(url, opts...)
	require.NoError(t, err)
	return c
}

// TestObserverSeesInitiations checks what an observer is told of an
// initiation, for each way it can end.
func TestObserverSeesInitiations(t *testing.T) {
	key := []byte("observer-capability-key-0123")
	cbURL, err := travelrule.NewCallbackURL("https://vasp-a.example/cb", "pay-42", key)
	require.NoError(t, err)
	tests := []struct {
		name       string
		status     int
		body       string
		outcome    travelrule.CallOutcome
		transferID string
	}{
		{"stored", 200, `{"status":true,"data":{"transferId":"tr-9"}}`, travelrule.CallSucceeded, "tr-9"},
		{"refused", 400, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"bad"}]}`, travelrule.CallNotDone, ""},
		{"refused in a 200", 200, `{"status":false,"errors":[{"code":"INVALID_TRAVEL_ADDRESS"}]}`, travelrule.CallNotDone, ""},
		{"a 502: the service may have acted", 502, `bad gateway`, travelrule.CallOutcomeUnknown, ""},
		{"a 2xx not understood, naming a transfer", 200, `{"status":"maybe","transferId":"tr-10"}`, travelrule.CallOutcomeUnknown, "tr-10"},
		{"an echoed personal value is no transfer id", 200, `{"status":true,"data":{"transferId":"Ødegård-Müller"}}`, travelrule.CallSucceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newObservedServer(t, tt.status, tt.body)
			var log []string
			obs := &recorder{name: "a", log: &log}
			req := fullRequest()
			req.Callback = cbURL
			_, err := observedClient(t, srv.URL, obs).InitiateTransfer(context.Background(), req)
			require.Len(t, obs.starts, 1)
			require.Len(t, obs.ends, 1)
			info, end := obs.starts[0], obs.ends[0]
			assert.Equal(t, "InitiateTransfer", info.Op)
			assert.Equal(t, "pay-42", info.CallbackRef)
			assert.Empty(t, info.TransferID)
			require.Len(t, srv.bodies, 1)
			assert.Equal(t, sha256.Sum256(srv.bodies[0]), info.Digest, "the digest is of the body as sent")
			assert.Equal(t, tt.outcome, end.Outcome)
			assert.Equal(t, tt.transferID, end.TransferID)
			assert.Equal(t, 1, end.Attempts)
			assert.Equal(t, err, end.Err)
			assert.True(t, obs.ctxOK, "EndCall gets the context StartCall returned")
			if tt.outcome == travelrule.CallOutcomeUnknown {
				assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			}
			// Nothing personal in what the observer was told.
			told := fmt.Sprintf("%+v %+v %v", info, end, end.Err)
			for _, v := range []string{"Zoë", "Ødegård", "1984-02-29", "123456789", "0x742d35Cc", "山田", "observer-bearer-token", cbURL[len(cbURL)-10:]} {
				assert.NotContains(t, told, v)
			}
		})
	}
}

// TestObserverRefusalSendsNothing checks that a StartCall error ends the
// call before anything is sent, and ends the observers started before.
func TestObserverRefusalSendsNothing(t *testing.T) {
	srv := newObservedServer(t, 200, `{"status":true,"data":{"transferId":"tr-1"}}`)
	var log []string
	full := errors.New("journal store is down")
	first := &recorder{name: "first", log: &log}
	second := &recorder{name: "second", log: &log, refuse: full}
	third := &recorder{name: "third", log: &log}
	_, err := observedClient(t, srv.URL, first, second, third).InitiateTransfer(context.Background(), fullRequest())
	require.ErrorIs(t, err, full)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Contains(t, err.Error(), "nothing was sent")
	assert.Zero(t, srv.n.Load(), "no request reached the server")
	assert.Equal(t, []string{"start first", "start second", "end first"}, log)
	require.Len(t, first.ends, 1)
	assert.Equal(t, travelrule.CallNotDone, first.ends[0].Outcome)
	assert.ErrorIs(t, first.ends[0].Err, full)
}

// TestObserversOrder checks that observers start in the order given and
// end in the reverse order, and that an invalid request is not observed.
func TestObserversOrder(t *testing.T) {
	srv := newObservedServer(t, 200, `{"status":true,"data":{"transferId":"tr-1"}}`)
	var log []string
	a, b := &recorder{name: "a", log: &log}, &recorder{name: "b", log: &log}
	c := observedClient(t, srv.URL, a, b)
	_, err := c.InitiateTransfer(context.Background(), fullRequest())
	require.NoError(t, err)
	assert.Equal(t, []string{"start a", "start b", "end b", "end a"}, log)
	assert.True(t, a.ctxOK && b.ctxOK)

	log = nil
	_, err = c.InitiateTransfer(context.Background(), &travelrule.TransferRequest{})
	require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	assert.Empty(t, log, "a request refused before sending is not observed")

	_, err = travelrule.NewClient(srv.URL, travelrule.WithTokenSource(travelrule.StaticToken("x")), travelrule.WithObserver(nil))
	assert.Error(t, err)
}

// TestObserverSeesResolutionsAndTxIDs checks the transfer id and decision
// of the calls about a transfer, and that a resolution the service
// answered with a bare status false is not done.
func TestObserverSeesResolutionsAndTxIDs(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		approved string
		call     func(c *travelrule.Client) error
		op       string
		decision travelrule.Decision
		outcome  travelrule.CallOutcome
	}{
		{name: "approved", body: `{"status":true}`, approved: "true", op: "ResolveInquiry", decision: "approved", outcome: travelrule.CallSucceeded},
		{name: "rejected", body: `{"status":true}`, approved: "false", op: "ResolveInquiry", decision: "rejected", outcome: travelrule.CallSucceeded},
		{name: "not applied", body: `{"status":false}`, approved: "true", op: "ResolveInquiry", decision: "approved", outcome: travelrule.CallNotDone},
		{name: "txid", body: `{"status":true}`, op: "SubmitTxID", outcome: travelrule.CallSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newObservedServer(t, 200, tt.body)
			var log []string
			obs := &recorder{name: "a", log: &log}
			c := observedClient(t, srv.URL, obs)
			var err error
			if tt.op == "SubmitTxID" {
				_, err = c.SubmitTxID(context.Background(), "tr-77", "0xabc")
			} else {
				_, err = c.ResolveInquiry(context.Background(), "tr-77", &travelrule.InquiryResolution{Approved: tt.approved})
			}
			if tt.outcome == travelrule.CallNotDone {
				require.ErrorIs(t, err, travelrule.ErrNotApplied)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, obs.ends, 1)
			assert.Equal(t, err, obs.ends[0].Err)
			assert.Equal(t, tt.op, obs.starts[0].Op)
			assert.Equal(t, "tr-77", obs.starts[0].TransferID)
			assert.Equal(t, tt.decision, obs.starts[0].Decision)
			assert.Equal(t, tt.outcome, obs.ends[0].Outcome)
			assert.Equal(t, "tr-77", obs.ends[0].TransferID)
		})
	}
}
