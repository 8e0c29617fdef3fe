//go:build unix

package callback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// BenchmarkHandler compares the handler's decode and dispatch of a typical
// status callback with a floor of io.ReadAll, json.Unmarshal and 204, both
// served in-process so that only the handlers' own work is measured. The
// handler runs without de-duplication here, which is not decoding or
// dispatch; BenchmarkHandlerDedup measures the default handler with it.
func BenchmarkHandler(b *testing.B) {
	body := []byte(`{"transferId":"6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11","status":"approved","txId":"0x5c504ed4","timestamp":"2026-11-23T08:00:00Z"}`)
	var sink int
	b.Run("impl=floor", func(b *testing.B) {
		serveCallbacks(b, body, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "bad body", http.StatusBadRequest)
				return
			}
			var cb struct {
				TransferID string `json:"transferId"`
				Status     string `json:"status"`
			}
			if err := json.Unmarshal(data, &cb); err != nil {
				http.Error(w, "bad json", http.StatusBadRequest)
				return
			}
			sink += len(cb.Status)
			w.WriteHeader(http.StatusNoContent)
		}))
	})
	b.Run("impl=sdk", func(b *testing.B) {
		serveCallbacks(b, body, callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error {
			sink += len(cb.Status)
			return nil
		}, callback.WithoutDedup()))
	})
	_ = sink
}

// BenchmarkHandlerDedup is the default handler, with de-duplication in its
// default in-memory store: every delivery has a new webhook-id, so each
// makes a claim and a completion, and the store fills to its bound.
func BenchmarkHandlerDedup(b *testing.B) {
	body := []byte(`{"transferId":"6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11","status":"approved","timestamp":"2026-11-23T08:00:00Z"}`)
	serveCallbacks(b, body, callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil }))
}

// serveCallbacks delivers body to h b.N times in-process, each delivery with
// a new webhook-id, and expects 204. Besides the wall time it reports
// cpu-ns/op, the process's CPU time (user and system, garbage collection
// included) over the loop per delivery.
func serveCallbacks(b *testing.B, body []byte, h http.Handler) {
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = "msg_" + strconv.Itoa(i)
	}
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		rd.Reset(body)
		r := httptest.NewRequest(http.MethodPost, "/travelrule/callback", io.NopCloser(rd))
		r.Header.Set(callback.HeaderID, ids[i])
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusNoContent {
			b.Fatalf("status %d", w.Code)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time, user and system, the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
