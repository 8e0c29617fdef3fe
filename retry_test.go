package travelrule_test

import (
	"context"
	"net/http"
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
