package travelrule_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func TestBasePathAndInquiryQuery(t *testing.T) {
	tests := []struct {
		id        string
		wantQuery string
	}{
		{"6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11", "q=6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11"},
		{"a b&c=d/e?f#g", "q=a+b%26c%3Dd%2Fe%3Ff%23g"},
		{"ünï", "q=%C3%BCn%C3%AF"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c, ts := setup(t, answer(200, `{"status":true}`))
			res, err := c.ResolveInquiry(context.Background(), tt.id, &travelrule.InquiryResolution{Approved: "true", Callback: "https://vasp-b.example/cb"})
			require.NoError(t, err)
			assert.True(t, res.Status)
			r := ts.requests()[0]
			assert.Equal(t, "/transfers/inquiryResolution", r.Path)
			assert.Equal(t, tt.wantQuery, r.Query)
			golden(t, "inquiry_request.json", r.Body)
		})
	}
}

func TestResolveInquiryAnswers(t *testing.T) {
	tests := []struct {
		body    string
		wantErr error // nil: applied
	}{
		{`{"status":true}`, nil},
		{`{"status":"true","more":1}`, nil},
		{`{"status":true,"data":{}}`, nil},
		// A false status, bare (the excerpt) or with the live errors, is
		// a decision the service did not apply: an error, never a result.
		{`{"status":false}`, travelrule.ErrNotApplied},
		{`{"status":"false"}`, travelrule.ErrNotApplied},
		{`{"status":false,"errors":[{"code":"TRANSFER_NOT_FOUND","message":"no"}]}`, travelrule.ErrNotApplied},
		{`{"status":"maybe"}`, travelrule.ErrUnexpectedResponse},
		{`{}`, travelrule.ErrUnexpectedResponse},
		{`nope`, travelrule.ErrUnexpectedResponse},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			c, _ := setup(t, answer(200, tt.body))
			res, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "false"})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, res)
				if tt.wantErr == travelrule.ErrNotApplied {
					var apiErr *travelrule.APIError
					require.ErrorAs(t, err, &apiErr)
					assert.Contains(t, err.Error(), "status false, not applied")
					assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "nothing was done: safe to send again")
				}
				return
			}
			require.NoError(t, err)
			assert.True(t, res.Status)
			assert.JSONEq(t, tt.body, string(res.Raw))
		})
	}
}

func TestResolveInquiryValidation(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		r      *travelrule.InquiryResolution
		fields []string
	}{
		{"empty id", "", &travelrule.InquiryResolution{Approved: "true"}, []string{"q"}},
		{"empty approved", "t-1", &travelrule.InquiryResolution{}, []string{"approved"}},
		{"nil resolution", "t-1", nil, []string{"approved"}},
		{"both", "", &travelrule.InquiryResolution{Callback: "ftp://x"}, []string{"q", "approved", "callback"}},
		{"long callback", "t-1", &travelrule.InquiryResolution{Approved: "true", Callback: "https://x.example/" + strings.Repeat("a", 240)}, []string{"callback"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ts := setup(t, answer(200, `{"status":true}`))
			_, err := c.ResolveInquiry(context.Background(), tt.id, tt.r)
			var ve *travelrule.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.ErrorIs(t, err, travelrule.ErrInvalidRequest)
			assert.ElementsMatch(t, tt.fields, fieldPaths(ve))
			assert.Zero(t, ts.hits.Load(), "invalid input must never reach the network")
		})
	}
}

// TestNotAppliedAfterAnAmbiguousAttempt: a status false that follows an
// attempt the service may have acted on (a 502) speaks for itself only: the
// error is ErrOutcomeUnknown and never ErrNotApplied, which would tell the
// caller that sending again is safe.
func TestNotAppliedAfterAnAmbiguousAttempt(t *testing.T) {
	var n atomic.Int32
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			answer(http.StatusBadGateway, `{}`)(w, r)
			return
		}
		answer(http.StatusOK, `{"status":false}`)(w, r)
	})
	_, err := c.ResolveInquiry(context.Background(), "t-1", travelrule.Approve(""))
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.NotErrorIs(t, err, travelrule.ErrNotApplied)
	assert.NotContains(t, err.Error(), "not applied")
	assert.Len(t, ts.requests(), 2)
}

// TestNotAppliedNamesTheLikelyCause: resolving the other way after a
// decision is refused with a bare {"status":false} (A3), which the error
// names as an inquiry likely resolved already; a false that carries the
// service's code, or answers another operation, names no such cause.
func TestNotAppliedNamesTheLikelyCause(t *testing.T) {
	const cause = "200 OK, status false, not applied (likely already resolved: the other way, or this way by an earlier attempt)"
	sandbox := func(t *testing.T) error {
		srv := travelruletest.NewServer()
		t.Cleanup(srv.Close)
		inbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		t.Cleanup(inbox.Close)
		c, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
		require.NoError(t, err)
		id, err := srv.StartInquiry(context.Background(), inbox.URL, minimalRequest())
		require.NoError(t, err)
		_, err = c.ResolveInquiry(context.Background(), id, travelrule.Approve(""))
		require.NoError(t, err)
		_, err = c.ResolveInquiry(context.Background(), id, travelrule.Reject())
		return err
	}
	answering := func(body string, call func(*travelrule.Client) error) func(*testing.T) error {
		return func(t *testing.T) error {
			c, _ := setup(t, answer(http.StatusOK, body))
			return call(c)
		}
	}
	reject := func(c *travelrule.Client) error {
		_, err := c.ResolveInquiry(context.Background(), "t-1", travelrule.Reject())
		return err
	}
	initiate := func(c *travelrule.Client) error {
		_, err := c.InitiateTransfer(context.Background(), minimalRequest())
		return err
	}
	tests := []struct {
		name      string
		run       func(*testing.T) error
		wantCause bool
	}{
		{"the sandbox, resolved the other way", sandbox, true},
		{"a server answering as A3 says", answering(`{"status":false}`, reject), true},
		{"a false with the service's code", answering(`{"status":false,"errors":[{"code":"TRANSFER_NOT_FOUND","message":"no"}]}`, reject), false},
		{"an initiation refused", answering(`{"status":false}`, initiate), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(t)
			require.ErrorIs(t, err, travelrule.ErrNotApplied)
			if tt.wantCause {
				assert.Contains(t, err.Error(), cause)
			} else {
				assert.NotContains(t, err.Error(), "resolved")
			}
		})
	}
}
