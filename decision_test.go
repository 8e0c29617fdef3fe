package travelrule_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// TestResolutionRefusesOtherDecisions: only "true" and "false", exactly,
// are decisions; any other value is a field fault on "approved", found by
// Validate and by ResolveInquiry before anything goes on the wire.
func TestResolutionRefusesOtherDecisions(t *testing.T) {
	for _, v := range []string{"yes", "no", "TRUE", "False", "1", "0", "approved", " true", "true "} {
		t.Run(v, func(t *testing.T) {
			r := &travelrule.InquiryResolution{Approved: v}
			var ve *travelrule.ValidationError
			require.ErrorAs(t, r.Validate(), &ve)
			require.Len(t, ve.Fields, 1)
			assert.Equal(t, travelrule.FieldError{Field: "approved", Reason: `must be "true" or "false"`}, ve.Fields[0])

			c, ts := setup(t, answer(200, `{"status":true}`))
			res, err := c.ResolveInquiry(context.Background(), "t-1", r)
			require.ErrorAs(t, err, &ve)
			assert.ErrorIs(t, err, travelrule.ErrInvalidRequest)
			assert.Nil(t, res)
			assert.Equal(t, []string{"approved"}, fieldPaths(ve))
			assert.Zero(t, ts.hits.Load(), "nothing on the wire")
		})
	}
	for _, v := range []string{"true", "false"} {
		assert.NoError(t, (&travelrule.InquiryResolution{Approved: v}).Validate(), v)
	}
}

// TestApproveAndReject: the constructors send the wire's values.
func TestApproveAndReject(t *testing.T) {
	tests := []struct {
		name string
		r    *travelrule.InquiryResolution
		want string
	}{
		{"approve", travelrule.Approve("https://vasp-b.example/confirm"), `{"approved":"true","callback":"https://vasp-b.example/confirm"}`},
		{"approve without callback", travelrule.Approve(""), `{"approved":"true"}`},
		{"reject", travelrule.Reject(), `{"approved":"false"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ts := setup(t, answer(200, `{"status":true}`))
			res, err := c.ResolveInquiry(context.Background(), "t-1", tt.r)
			require.NoError(t, err)
			assert.True(t, res.OK())
			require.Len(t, ts.requests(), 1)
			assert.JSONEq(t, tt.want, string(ts.requests()[0].Body))
		})
	}
}

// TestResultsOK: each result says OK for every spelling of success the
// service answers, and a nil or empty result is not OK.
func TestResultsOK(t *testing.T) {
	t.Run("TransferResult", func(t *testing.T) {
		for _, body := range []string{`{"status":"succes"}`, `{"status":"success"}`, `{"status":"SUCCESS"}`, `{"status":true,"data":{"transferId":"t-1"}}`,
			`{"status":"true"}`, `{"transferId":"t-1"}`} {
			c, _ := setup(t, answer(200, body))
			res, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err, body)
			assert.True(t, res.OK(), body)
		}
		assert.False(t, (*travelrule.TransferResult)(nil).OK())
		assert.False(t, (&travelrule.TransferResult{}).OK())
		assert.False(t, (&travelrule.TransferResult{Status: "false"}).OK())
		assert.False(t, (&travelrule.TransferResult{Status: "pending"}).OK())
	})
	t.Run("InquiryResult", func(t *testing.T) {
		for _, body := range []string{`{"status":true}`, `{"status":"true"}`} {
			c, _ := setup(t, answer(200, body))
			res, err := c.ResolveInquiry(context.Background(), "t-1", travelrule.Reject())
			require.NoError(t, err, body)
			assert.True(t, res.OK(), body)
		}
		assert.False(t, (*travelrule.InquiryResult)(nil).OK())
		assert.False(t, (&travelrule.InquiryResult{}).OK())
	})
	t.Run("TxIDResult", func(t *testing.T) {
		for _, body := range []string{``, `{}`, `{"status":true}`, `{"status":"success","data":{}}`, `{"status":"Succes"}`} {
			c, _ := setup(t, answer(200, body))
			res, err := c.SubmitTxID(context.Background(), "t-1", "0xabc")
			require.NoError(t, err, body)
			assert.True(t, res.OK(), body)
		}
		assert.False(t, (*travelrule.TxIDResult)(nil).OK())
		assert.False(t, (&travelrule.TxIDResult{}).OK())
		assert.False(t, (&travelrule.TxIDResult{Status: "false"}).OK())
	})
}

// TestCallbackDecisionInLogs: a callback's fmt and log/slog forms show its
// decision, so that an INQUIRY_RESOLUTION's logs still say yes or no.
func TestCallbackDecisionInLogs(t *testing.T) {
	cb, err := travelrule.ParseCallback([]byte(`{"approved":false,"callback":"https://vasp.example/cb"}`))
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprint(cb), "{Kind:inquiry_resolution ")
	assert.Contains(t, fmt.Sprint(cb), " Decision:rejected ")
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("callback", "cb", cb)
	assert.Contains(t, buf.String(), `"kind":"inquiry_resolution"`)
	assert.Contains(t, buf.String(), `"decision":"rejected"`)
}
