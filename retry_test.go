package travelrule_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// A 429 or 503 without Retry-After may be a proxy's answer after the
// service received the request (Envoy's "upstream reset before headers"):
// a call that may not be repeated is not retried and its outcome is
// unknown; a call that may be repeated is retried.
func TestThrottlingWithoutRetryAfterIsNotProof(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		firstThen := func(first func(http.ResponseWriter)) http.HandlerFunc {
			var n atomic.Int64
			return func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					first(w)
					return
				}
				if strings.HasSuffix(r.URL.Path, "/transfers/initiate") {
					answer(200, `{"status":"succes"}`)(w, r)
					return
				}
				answer(200, `{"status":true}`)(w, r)
			}
		}
		bare := func(w http.ResponseWriter) { w.WriteHeader(status) }
		t.Run(strconv.Itoa(status)+"/initiate", func(t *testing.T) {
			c, ts := setup(t, firstThen(bare))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.StatusCode)
			assert.Zero(t, apiErr.RetryAfter)
			assert.EqualValues(t, 1, ts.hits.Load(), "never resent")
		})
		t.Run(strconv.Itoa(status)+"/initiate with idempotency", func(t *testing.T) {
			c, ts := setup(t, firstThen(bare), travelrule.WithIdempotency())
			res, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err)
			assert.Equal(t, 2, res.Attempts)
			assert.EqualValues(t, 2, ts.hits.Load())
		})
		t.Run(strconv.Itoa(status)+"/resolve", func(t *testing.T) {
			c, ts := setup(t, firstThen(bare))
			res, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
			require.NoError(t, err)
			assert.Equal(t, 2, res.Attempts)
			assert.EqualValues(t, 2, ts.hits.Load())
		})
		t.Run(strconv.Itoa(status)+"/unparseable Retry-After", func(t *testing.T) {
			c, ts := setup(t, firstThen(func(w http.ResponseWriter) {
				w.Header().Set("Retry-After", "soon")
				w.WriteHeader(status)
			}))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

// A Retry-After beyond a Duration (centuries) is above any cap: never
// waited for, never retried, and reported as a positive wait. It was
// retried three times in 2 ms with a negative RetryAfter, or waited 290 ms.
func TestRetryAfterOverflowIsNotWaited(t *testing.T) {
	for _, v := range []string{"9223372037", "18446744074", "99999999999999999999999"} {
		t.Run(v, func(t *testing.T) {
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", v)
				w.WriteHeader(http.StatusServiceUnavailable)
			}, travelrule.WithRetryWait(time.Hour, time.Hour))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the service's own Retry-After: definite")
			assert.Greater(t, apiErr.RetryAfter, 100*365*24*time.Hour)
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

// allocated runs f and returns the bytes the process allocated meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A declared Content-Length refuses a too-large answer but never sizes a
// buffer before the bytes arrive: 512 MiB declared and 10 bytes sent
// allocated 512 MiB.
func TestDeclaredLengthDoesNotSizeTheBuffer(t *testing.T) {
	c, _ := setup(t, hijacked("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 536870912\r\n\r\n{\"status\":"),
		travelrule.WithMaxResponseBytes(1<<30))
	var err error
	n := allocated(func() { _, err = c.InitiateTransfer(context.Background(), minimalRequest()) })
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "a 2xx whose body broke off: the service acted")
	assert.Less(t, n, uint64(16<<20), "bytes allocated")
}

// hugeHeader answers status with a header of size bytes.
func hugeHeader(status, size int) http.HandlerFunc {
	return hijacked("HTTP/1.1 " + strconv.Itoa(status) + " X\r\nX-Big: " + strings.Repeat("a", size) + "\r\nContent-Length: 2\r\n\r\n{}")
}

// The default transport reads at most 64 KiB of answer headers: a 9 MiB
// header allocated 67 MiB with WithMaxResponseBytes(1024).
func TestHugeHeaderIsRefused(t *testing.T) {
	c, _ := setup(t, hugeHeader(400, 9<<20), travelrule.WithMaxResponseBytes(1024))
	var err error
	n := allocated(func() { _, err = c.InitiateTransfer(context.Background(), minimalRequest()) })
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Less(t, n, uint64(4<<20), "bytes allocated")
}

// An error keeps a bounded copy of the answer's headers, whatever the
// transport let through (APIError.Header kept 9 MiB).
func TestAPIErrorKeepsBoundedHeaders(t *testing.T) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxResponseHeaderBytes = 16 << 20
	c, _ := setup(t, hugeHeader(400, 9<<20), travelrule.WithHTTPClient(&http.Client{Transport: tr}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	size := 0
	for k, vs := range apiErr.Header {
		for _, v := range vs {
			size += len(k) + len(v)
		}
	}
	assert.LessOrEqual(t, size, 64<<10)
	assert.Equal(t, "2", apiErr.Header.Get("Content-Length"), "what fits is kept")
}

// The attempt limit covers the answer's body, not only its headers: a body
// that drips kept an attempt busy past DefaultAttemptTimeout.
func TestAttemptLimitCoversTheBody(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"status":`)
		http.NewResponseController(w).Flush()
		<-release // drips nothing more until the test ends
	}, travelrule.WithHTTPClient(&http.Client{Timeout: 100 * time.Millisecond}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.EqualValues(t, 1, ts.hits.Load())
}
