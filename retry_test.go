package travelrule_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vaspkit/travelrule"
)

// A 503 without Retry-After may be a proxy's answer after the service
// received the request (Envoy's "upstream reset before headers"): a call
// that may not be repeated is not retried and its outcome is unknown; a
// call that may be repeated is retried. (A 429 is the live service's rate
// limit, refused before acting: TestRateLimitIsRetriedWithoutRetryAfter.)
func TestThrottlingWithoutRetryAfterIsNotProof(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable} {
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

func TestRetriesRateLimitAndUnavailable(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var n atomic.Int64
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) <= 2 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(status)
					return
				}
				answer(200, `{"status":"succes"}`)(w, r)
			})
			res, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err)
			assert.Equal(t, 3, res.Attempts)
			assert.EqualValues(t, 3, ts.hits.Load())
			reqs := ts.requests()
			assert.Equal(t, reqs[0].Body, reqs[2].Body, "the same body on every attempt")
		})
	}
}

func TestRetryAfterAboveBackoffMaxIsHonoured(t *testing.T) {
	var first time.Time
	var gap time.Duration
	var n atomic.Int64
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		gap = time.Since(first)
		answer(200, `{"status":"succes"}`)(w, r)
	}) // backoff max is 5ms in setup
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, gap, 900*time.Millisecond, "Retry-After: 1 must be honoured above the 5ms backoff maximum")
}

func TestRetryAfterBeyondCapOrDeadlineIsNotWaited(t *testing.T) {
	tests := []struct {
		name string
		opts []travelrule.Option
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"above cap", []travelrule.Option{travelrule.WithRetryAfterMax(time.Second)}, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}},
		// An hour asked, a minute left: far apart, so that no stall of
		// the machine decides the case.
		{"past deadline", []travelrule.Option{travelrule.WithRetryAfterMax(2 * time.Hour)}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusServiceUnavailable)
			}, tt.opts...)
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := c.InitiateTransfer(ctx, minimalRequest())
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 503, apiErr.StatusCode)
			assert.Equal(t, time.Hour, apiErr.RetryAfter)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "a 503 is a definite failure")
			assert.EqualValues(t, 1, ts.hits.Load())
			assert.NoError(t, ctx.Err(), "the call returned before the deadline instead of waiting for it")
		})
	}
}

func TestInitiateTransferNeverResentAfterServerError(t *testing.T) {
	for _, status := range []int{500, 502, 504, 520, 524, 599} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			c, ts := setup(t, answer(status, `{"message":"boom"}`))
			req := minimalRequest()
			req.TxID = "0xabc"
			_, err := c.InitiateTransfer(context.Background(), req)
			require.Error(t, err)
			assert.EqualValues(t, 1, ts.hits.Load(), "a %d may have created the transfer: never resend", status)
			assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			assert.ErrorIs(t, err, travelrule.ErrServer)
			var unknown *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, "0xabc", unknown.TxID)
			assert.Equal(t, 1, unknown.Attempts)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.StatusCode)
		})
	}
}

func TestResolveInquiryRetriesServerErrors(t *testing.T) {
	var n atomic.Int64
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		answer(200, `{"status":true}`)(w, r)
	})
	res, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	require.NoError(t, err)
	assert.True(t, res.Status)
	assert.EqualValues(t, 2, ts.hits.Load())
}

func TestContextEndsBackoffWait(t *testing.T) {
	// The client logs "retrying" once it has the 503 and has chosen to
	// wait: cancel then, never before the answer arrived.
	waiting := &logEvent{msg: "travelrule: retrying", seen: make(chan struct{})}
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusServiceUnavailable)
	}, travelrule.WithRetryAfterMax(time.Hour), travelrule.WithRetryMax(5),
		travelrule.WithLogger(slog.New(waiting)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-waiting.seen
		cancel()
	}()
	_, err := c.InitiateTransfer(ctx, minimalRequest())
	require.ErrorIs(t, err, context.Canceled, "cancellation during a one-minute Retry-After wait ends the call")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the only attempt got a 503 with Retry-After: definite")
	assert.EqualValues(t, 1, ts.hits.Load())
}

func TestConnectionRefusedIsRetriedAndDefinite(t *testing.T) {
	// Every dial is refused by the dialer itself: a port closed by a test
	// could be taken by another process's listener before the client dials.
	var dials atomic.Int64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	c, err := travelrule.NewClient("http://127.0.0.1:9/api", travelrule.WithTokenSource(travelrule.StaticToken("t")),
		travelrule.WithHTTPClient(&http.Client{Transport: tr}),
		travelrule.WithRetryWait(time.Millisecond, 2*time.Millisecond), travelrule.WithRetryMax(2))
	require.NoError(t, err)
	_, err = c.ResolveInquiry(context.Background(), "secret-transfer-id", &travelrule.InquiryResolution{Approved: "true"})
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.EqualValues(t, 3, dials.Load(), "the first attempt and two retries")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "nothing was sent")
	assert.NotContains(t, err.Error(), "secret-transfer-id", "query strings stay out of error text")
	assert.False(t, errors.Is(err, context.Canceled))
}

func TestRetryAfterReportedWhenTheBudgetRunsOut(t *testing.T) {
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
	}, travelrule.WithRetryMax(1))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, time.Duration(0), apiErr.RetryAfter)
	c, _ = setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
	}, travelrule.WithRetryAfterMax(time.Second))
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 7*time.Second, apiErr.RetryAfter)
}
