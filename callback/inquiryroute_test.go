package callback_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// TestCapabilityHandlerOnTheInquiryRoute: the originator's handler (a
// capability key and the service's verifier) copied to the inquiry route
// refuses a signed INQUIRY, as it must, and its log line says why and which
// handler fits: the path a travel address encodes carries no tag.
// The line shows the route's shape, never the beneficiary's id or the
// body. A tagless request elsewhere, and a bad tag on the inquiry route,
// keep the plain refusal; the handler the line names accepts the inquiry.
func TestCapabilityHandlerOnTheInquiryRoute(t *testing.T) {
	const secret = "whsec-inquiry-route-secret-0123456789"
	const hint = "/transfers/inquiry/{id} is the path a travel address encodes, whose inbound endpoint takes no bearer token and trusts x-data-integrity (live docs): " +
		"serve that route with its own handler, made with WithVerifier (a callback.NewDataIntegrityVerifier of the signing secret) and no WithCapabilityKey"
	v, err := callback.NewDataIntegrityVerifier(secret)
	require.NoError(t, err)
	var mu sync.Mutex
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	rc := &recorder{}
	originators := callback.NewHandler(rc.fn, callback.WithVerifier(v), callback.WithCapabilityKey(capKey), callback.WithLogger(logger))
	inquiries := callback.NewHandler(rc.fn, callback.WithVerifier(v), callback.WithLogger(logger))
	require.NoError(t, originators.Err())
	mux := http.NewServeMux()
	mux.Handle("POST /transfers/inquiry/{beneficiaryId}", originators)
	mux.Handle("POST /fixed/transfers/inquiry/{beneficiaryId}", inquiries)
	mux.Handle("/travelrule/callback", originators)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	signature := callback.SignDataIntegrity([]byte(secret), []byte(liveInquiry))

	tests := []struct {
		name     string
		path     string
		want     int
		wantLine string // the log line's message
		hinted   bool
	}{
		{"the inquiry route", "/transfers/inquiry/019ac452-beneficiary-7", http.StatusUnauthorized,
			"callback: refused a request to the inquiry route without a capability tag: inquiries carry none", true},
		{"a tagless request elsewhere", "/travelrule/callback", http.StatusUnauthorized, "callback: refused request without a valid capability", false},
		{"a bad tag on the inquiry route", "/transfers/inquiry/019ac452-beneficiary-7?tr_ref=p-1&tr_tag=AAAAAAAAAAAAAAAAAAAAAA", http.StatusUnauthorized,
			"callback: refused request without a valid capability", false},
		{"the handler that fits", "/fixed/transfers/inquiry/019ac452-beneficiary-7", http.StatusNoContent, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			logs.Reset()
			mu.Unlock()
			assert.Equal(t, tt.want, postSigned(t, srv.URL+tt.path, liveInquiry, signature))
			mu.Lock()
			line := logs.String()
			mu.Unlock()
			if tt.wantLine != "" {
				assert.Contains(t, line, `"msg":"`+tt.wantLine+`"`)
			}
			if tt.hinted {
				assert.Contains(t, line, hint)
				assert.Contains(t, line, travelrule.ErrCallbackUnsigned.Error())
			} else {
				assert.NotContains(t, line, "NewDataIntegrityVerifier")
			}
			if tt.wantLine != "" && tt.path != "/travelrule/callback" {
				assert.Contains(t, line, `"path":"/transfers/inquiry/{id}"`, "the route's shape, not the beneficiary's id")
			}
			for _, s := range []string{"019ac452", "Zebulon", "Quaxworth", "bc1q", "FR-ID-7781", secret} {
				assert.NotContains(t, line, s)
			}
		})
	}
	assert.Equal(t, 1, rc.count(), "only the handler that fits called the function")
	assert.Equal(t, travelrule.KindInquiry, rc.last(t).Kind)
}
