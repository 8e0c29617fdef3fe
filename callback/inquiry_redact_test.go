package callback_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// An inbound inquiry's txId, asset and the parties' codes are the sender's
// text: the handler's "callback: delivered" debug line never shows them
// unless they have their own shapes.
func TestInquiryTextStaysOutOfHandlerLogs(t *testing.T) {
	const name = "Zebulon Quaxworth"
	var logs bytes.Buffer
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		callback.WithoutDedup())
	body := `{"status":"inquiry","transferId":"t-1","txId":"` + name + `","asset":"` + name + `","amount":"1",` +
		`"originator":{"personType":"` + name + `","country":"` + name + `"}}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/cb", strings.NewReader(body)))
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Contains(t, logs.String(), "callback: delivered")
	assert.NotContains(t, logs.String(), "Quaxworth")
}
