package travelrule_test

import (
	"context"
	"errors"
	"io"
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
				w.WriteHeader(http.StatusTooManyRequests)
			}, travelrule.WithRetryWait(time.Hour, time.Hour))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the rate limit's Retry-After: definite")
			assert.Greater(t, apiErr.RetryAfter, 100*365*24*time.Hour)
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

func TestRetriesRateLimit(t *testing.T) {
	for _, tt := range []struct {
		status int
		opts   []travelrule.Option
	}{
		{http.StatusTooManyRequests, nil},
		{http.StatusServiceUnavailable, []travelrule.Option{travelrule.WithTrust503RetryAfterNotForwarded()}},
	} {
		status := tt.status
		t.Run(http.StatusText(status), func(t *testing.T) {
			var n atomic.Int64
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) <= 2 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(status)
					return
				}
				answer(200, `{"status":"succes"}`)(w, r)
			}, tt.opts...)
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
				w.WriteHeader(http.StatusTooManyRequests)
			}, tt.opts...)
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := c.InitiateTransfer(ctx, minimalRequest())
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 429, apiErr.StatusCode)
			assert.Equal(t, time.Hour, apiErr.RetryAfter)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "a 429 is a definite failure")
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
	// The client logs "retrying" once it has the 429 and has chosen to
	// wait: cancel then, never before the answer arrived.
	waiting := &logEvent{msg: "travelrule: retrying", seen: make(chan struct{})}
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusTooManyRequests)
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
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the only attempt got a 429 with Retry-After: definite")
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
	_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 7*time.Second, apiErr.RetryAfter)
}

// A 503 with Retry-After proves nothing: gateways answer it before
// forwarding and, with the maintenance-page idiom (nginx "error_page 502
// 504 =503" and "add_header Retry-After 1 always"), after the upstream
// stored the transfer and then failed. The server here is such a gateway:
// it counts what reached the "upstream" and answers every request 503 with
// Retry-After after it. An initiation is sent once and ends outcome
// unknown, carrying the Retry-After; a call that may be repeated, an
// initiation with an Idempotency-Key, and a client that declared its
// gateways trustworthy are retried after the Retry-After.
func TestUnavailableWithRetryAfterIsNotProof(t *testing.T) {
	maintenance := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"status":false,"errors":[{"code":"SERVICE_UNAVAILABLE","message":"maintenance"}]}`)
	}
	tests := []struct {
		name      string
		opts      []travelrule.Option
		resolve   bool
		wantSent  int64
		wantUnkwn bool
	}{
		{"initiation", nil, false, 1, true},
		{"initiation, Retry-After above the cap", []travelrule.Option{travelrule.WithRetryAfterMax(0)}, false, 1, true},
		{"initiation with an Idempotency-Key", []travelrule.Option{travelrule.WithIdempotency()}, false, 4, true},
		{"initiation, gateways trusted", []travelrule.Option{travelrule.WithTrust503RetryAfterNotForwarded()}, false, 4, false},
		{"resolution", nil, true, 4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ts := setup(t, maintenance, tt.opts...)
			var err error
			if tt.resolve {
				_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
			} else {
				_, err = c.InitiateTransfer(context.Background(), minimalRequest())
			}
			assert.Equal(t, tt.wantSent, ts.hits.Load(), "requests that reached the gateway")
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
			assert.Equal(t, time.Duration(0), apiErr.RetryAfter)
			assert.True(t, apiErr.Header.Get("Retry-After") == "0", "the answer's Retry-After is at hand")
			if !tt.wantUnkwn {
				assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
				return
			}
			var ou *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &ou)
			assert.EqualValues(t, tt.wantSent, ou.Attempts)
		})
	}
}

// A final 1xx ends the exchange after the server read the request: 101
// Switching Protocols to a POST that asked for no upgrade, with or without
// the headers of an upgrade. The service may have acted: an initiation is
// not sent again and its outcome is unknown; a resolution is retried.
func TestFinalInformationalAnswerIsNotProof(t *testing.T) {
	for name, raw := range map[string]string{
		"with the headers of an upgrade": "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
		"bare":                           "HTTP/1.1 101 Switching Protocols\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, ts := setup(t, rawAnswer(func(w io.Writer, _ *http.Request) { _, _ = io.WriteString(w, raw) }))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			var ou *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &ou, "%v", err)
			assert.Equal(t, 1, ou.Attempts)
			assert.EqualValues(t, 1, ts.hits.Load())
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusSwitchingProtocols, apiErr.StatusCode)

			_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			assert.EqualValues(t, 5, ts.hits.Load(), "the resolution was sent four times: the first attempt and three retries")
		})
	}
}

// A 101 whose connection the server keeps open: its body is the connection
// itself, which no context ends. A call that may be repeated must not wait
// on it before retrying: every call returns within its deadline.
func TestSwitchingProtocolsHeldOpenDoesNotHangTheCall(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	c, _ := setup(t, rawAnswer(func(w io.Writer, _ *http.Request) {
		_, _ = io.WriteString(w, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		_ = w.(interface{ Flush() error }).Flush()
		<-release
	}), travelrule.WithRetryMax(1))
	calls := map[string]func(context.Context) error{
		"initiate": func(ctx context.Context) error {
			_, err := c.InitiateTransfer(ctx, minimalRequest())
			return err
		},
		"resolve": func(ctx context.Context) error {
			_, err := c.ResolveInquiry(ctx, "t-1", &travelrule.InquiryResolution{Approved: "true"})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- call(ctx) }()
			select {
			case err := <-done:
				require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
				assert.NoError(t, ctx.Err(), "the call waited for its deadline instead of ending")
			case <-time.After(2 * time.Minute):
				t.Fatal("the call outlived its deadline: it waits on the 101's connection, which no context ends")
			}
		})
	}
}

// A status below 100, which net/http passes on, ends the exchange after the
// request was read: the outcome is unknown.
func TestStatusBelow100IsNotProof(t *testing.T) {
	for _, code := range []string{"042", "099"} {
		t.Run(code, func(t *testing.T) {
			c, ts := setup(t, hijacked("HTTP/1.1 "+code+" X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}
