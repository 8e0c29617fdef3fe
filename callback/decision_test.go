package callback_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// TestDecisionThroughHandler: the live service's two messages that carry
// a decision, signed as it signs them and delivered to a real handler,
// read the same through Decision: a TRANSFER_RESOLUTION's "APPROVED" and
// an INQUIRY_RESOLUTION's true are both Approved, and so for rejections;
// so one switch on Decision serves both.
func TestDecisionThroughHandler(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind travelrule.CallbackKind
		want travelrule.Decision
	}{
		{"TRANSFER_RESOLUTION APPROVED", `{"transferId":"t-1","status":"APPROVED","statusComment":"ok","callback":"https://vasp.example/cb"}`,
			travelrule.KindTransferResolution, travelrule.Approved},
		{"INQUIRY_RESOLUTION true", `{"approved":true,"callback":"https://vasp.example/cb"}`,
			travelrule.KindInquiryResolution, travelrule.Approved},
		{"TRANSFER_RESOLUTION REJECTED", `{"transferId":"t-1","status":"REJECTED","statusComment":"no","callback":"https://vasp.example/cb"}`,
			travelrule.KindTransferResolution, travelrule.Rejected},
		{"INQUIRY_RESOLUTION false", `{"approved":false,"callback":"https://vasp.example/cb"}`,
			travelrule.KindInquiryResolution, travelrule.Rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rc recorder
			srv := liveMux(t, &rc, liveSecret)
			sig := callback.SignDataIntegrity([]byte(liveSecret), []byte(tt.body))
			require.Equal(t, http.StatusNoContent, postSigned(t, srv.URL+"/travelrule/callback", tt.body, sig))
			cb := rc.last(t)
			assert.Equal(t, tt.kind, cb.Kind)
			assert.Equal(t, tt.want, cb.Decision())
		})
	}
}

// TestDecisionOfTheLiveVector: the live docs' own signed
// TRANSFER_RESOLUTION (its body and header exactly as live-service.md gives
// them, computed with the docs' Node.js verifier) is Approved.
func TestDecisionOfTheLiveVector(t *testing.T) {
	var rc recorder
	srv := liveMux(t, &rc, liveSecret)
	require.Equal(t, http.StatusNoContent, postSigned(t, srv.URL+"/travelrule/callback", liveBody, liveHeader))
	cb := rc.last(t)
	assert.Equal(t, travelrule.KindTransferResolution, cb.Kind)
	assert.Equal(t, travelrule.Approved, cb.Decision())
}
