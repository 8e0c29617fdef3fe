//go:build unix

package callback_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/storetest"
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
		serveCallbacks(b, body, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		serveCallbacks(b, body, nil, callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error {
			sink += len(cb.Status)
			return nil
		}, callback.WithoutDedup(), callback.WithoutAuthentication()))
	})
	_ = sink
}

// BenchmarkHandlerObserved is BenchmarkHandler's handler with observers:
// none, a plain Observer (as package journal's), which the request path
// must not pay for beyond its Delivered, and a DeliveryObserver that does
// nothing, which measures the hooks' own cost.
func BenchmarkHandlerObserved(b *testing.B) {
	body := []byte(`{"transferId":"6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11","status":"approved","txId":"0x5c504ed4","timestamp":"2026-11-23T08:00:00Z"}`)
	var sink int
	fn := func(_ context.Context, cb *travelrule.Callback) error {
		sink += len(cb.Status)
		return nil
	}
	for _, bc := range []struct {
		name string
		opts []callback.Option
	}{
		{"observer=none", nil},
		{"observer=plain", []callback.Option{callback.WithObserver(idleObserver{})}},
		{"observer=delivery", []callback.Option{callback.WithObserver(idleDeliveryObserver{})}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			serveCallbacks(b, body, nil, callback.NewHandler(fn, append(bc.opts, callback.WithoutDedup(), callback.WithoutAuthentication())...))
		})
	}
	_ = sink
}

// idleObserver is an Observer that does nothing.
type idleObserver struct{}

func (idleObserver) Delivered(context.Context, *callback.Delivery) error { return nil }

// idleDeliveryObserver is a DeliveryObserver that does nothing.
type idleDeliveryObserver struct{ idleObserver }

func (idleDeliveryObserver) StartDelivery(ctx context.Context) context.Context  { return ctx }
func (idleDeliveryObserver) EndDelivery(context.Context, *callback.DeliveryEnd) {}

// BenchmarkHandlerLive compares the handler verifying and decoding the live
// service's TRANSFER_RESOLUTION, signed with x-data-integrity, with a floor
// that does the same work by hand: read the body, HMAC-SHA512 its base64,
// compare with the header's hex, json.Unmarshal the fields, answer 204.
// Neither de-duplicates.
func BenchmarkHandlerLive(b *testing.B) {
	secret := []byte("whsec-live-signing-secret-0123456789abcdef")
	body := []byte(`{"transferId":"6f1c2b9e-4d1a-4c8e-9a57-2f0d8b3e7c11","status":"APPROVED","statusComment":"ok","callback":"https://vasp.example/travelrule/callback"}`)
	signed := http.Header{}
	signed.Set(callback.HeaderDataIntegrity, callback.SignDataIntegrity(secret, body))
	var sink int
	b.Run("impl=floor", func(b *testing.B) {
		serveCallbacks(b, body, signed, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "bad body", http.StatusBadRequest)
				return
			}
			got, err := hex.DecodeString(r.Header.Get(callback.HeaderDataIntegrity))
			m := hmac.New(sha512.New, secret)
			m.Write([]byte(base64.StdEncoding.EncodeToString(data)))
			if err != nil || !hmac.Equal(got, m.Sum(nil)) {
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
			var cb struct {
				TransferID    string `json:"transferId"`
				Status        string `json:"status"`
				StatusComment string `json:"statusComment"`
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
		v, err := callback.NewDataIntegrityVerifier(string(secret))
		if err != nil {
			b.Fatal(err)
		}
		serveCallbacks(b, body, signed, callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error {
			sink += len(cb.Status)
			return nil
		}, callback.WithVerifier(v), callback.WithoutDedup()))
	})
	_ = sink
}

// BenchmarkHandlerDedup is a delivery through the handler with
// de-duplication in its default in-memory store, against the same handler
// without (see storetest.BenchmarkDelivery).
func BenchmarkHandlerDedup(b *testing.B) {
	b.Run("impl=floor", func(b *testing.B) { storetest.BenchmarkDelivery(b, nil) })
	b.Run("impl=sdk", func(b *testing.B) { storetest.BenchmarkDelivery(b, callback.NewMemoryStore(0)) })
}

// BenchmarkHandlerDedupInterleaved is BenchmarkHandlerDedup's floor and
// store alternated by batches in one process (see
// storetest.BenchmarkDeliveryInterleaved).
func BenchmarkHandlerDedupInterleaved(b *testing.B) {
	storetest.BenchmarkDeliveryInterleaved(b, callback.NewMemoryStore(0), nil)
}

// serveCallbacks delivers body, with the header's fields, to h b.N times
// in-process and expects 204.
// Besides the wall time it reports cpu-ns/op, the process's CPU time (user
// and system, garbage collection included) over the loop per delivery.
func serveCallbacks(b *testing.B, body []byte, header http.Header, h http.Handler) {
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		rd.Reset(body)
		r := httptest.NewRequest(http.MethodPost, "/travelrule/callback", io.NopCloser(rd))
		maps.Copy(r.Header, header)
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
