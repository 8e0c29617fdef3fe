package travelrule_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// TestCallOptionsRefused: an invalid option fails the call with a
// *ValidationError that names it, and nothing is sent; the header value is
// never shown.
func TestCallOptionsRefused(t *testing.T) {
	tests := []struct {
		name string
		opt  travelrule.CallOption
		want string
	}{
		{"negative budget", travelrule.WithCallRetryMax(-1), "WithCallRetryMax: negative count"},
		{"zero time-out", travelrule.WithCallAttemptTimeout(0), "WithCallAttemptTimeout: need a positive duration"},
		{"the client's header", travelrule.WithCallHeader("authorization", "Bearer other-secret-value"), "WithCallHeader: Authorization is set by the client"},
		{"the idempotency key as a header", travelrule.WithCallHeader("Idempotency-Key", "k-secret-value"), "WithCallHeader: Idempotency-Key is set by the client"},
		{"a framing header", travelrule.WithCallHeader("Transfer-Encoding", "chunked"), "WithCallHeader: Transfer-Encoding shapes the connection"},
		{"Expect", travelrule.WithCallHeader("Expect", "100-continue"), "WithCallHeader: Expect shapes the connection"},
		{"a bad name", travelrule.WithCallHeader("X Bad", "v"), "WithCallHeader: the key is not a valid header name"},
		{"a bad value", travelrule.WithCallHeader("X-Tenant", "a\r\nX-Evil: other-secret-value"), "WithCallHeader: the value of X-Tenant is not a valid header value"},
		{"a bad key", travelrule.WithCallIdempotencyKey("k\r\nX-Evil"), "WithCallIdempotencyKey: must be 1..255"},
		{"an empty key", travelrule.WithCallIdempotencyKey(""), "WithCallIdempotencyKey: must be 1..255"},
		{"nil", nil, "CallOption: nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ts := setup(t, answer(200, `{"status":true}`))
			_, err := c.ResolveInquiry(context.Background(), "tr-1", travelrule.Reject(), tt.opt)
			require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
			var ve *travelrule.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "secret-value")
			assert.Zero(t, ts.hits.Load(), "nothing was sent")
		})
	}
}

// TestWithCallHeader: the header goes on every attempt, and an observer
// does not replace it.
func TestWithCallHeader(t *testing.T) {
	var n atomic.Int32
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		answer(200, `{"status":true}`)(w, r)
	}, travelrule.WithObserver(headerSetter{"X-Tenant": {"from-observer"}, "X-Trace": {"t"}}))
	_, err := c.ResolveInquiry(context.Background(), "tr-1", travelrule.Reject(), travelrule.WithCallHeader("x-tenant", "acme"))
	require.NoError(t, err)
	reqs := ts.requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, []string{"acme"}, r.Header.Values("X-Tenant"), "the call's header, on every attempt")
		assert.Equal(t, "t", r.Header.Get("X-Trace"))
		assert.Equal(t, "Bearer "+testToken, r.Header.Get("Authorization"))
	}
}

// headerSetter is an AttemptObserver that adds its headers to each attempt.
type headerSetter http.Header

func (headerSetter) StartCall(ctx context.Context, _ *travelrule.CallInfo) (context.Context, error) {
	return ctx, nil
}
func (headerSetter) EndCall(context.Context, *travelrule.CallInfo, *travelrule.CallEnd) {}
func (h headerSetter) StartAttempt(ctx context.Context, _ *travelrule.CallInfo, a *travelrule.AttemptInfo) context.Context {
	for k, v := range h {
		a.Header[k] = v
	}
	return ctx
}
func (headerSetter) EndAttempt(context.Context, *travelrule.CallInfo, *travelrule.AttemptInfo, *travelrule.AttemptEnd) {
}

// TestWithCallRetryMax: the call's budget replaces the client's, in both
// directions, and never makes an initiation repeatable.
func TestWithCallRetryMax(t *testing.T) {
	tests := []struct {
		name      string
		client    int
		call      int
		initiate  bool
		wantHits  int64
		wantOK    bool
		wantUnkno bool
	}{
		{"fewer retries than the client's", 3, 0, false, 1, false, true},
		{"more retries than the client's", 0, 4, false, 5, true, false},
		{"an initiation is never sent again after a 502", 0, 5, true, 1, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) <= 4 {
					w.WriteHeader(http.StatusBadGateway)
					return
				}
				answer(200, `{"status":true,"transferId":"tr-1"}`)(w, r)
			}, travelrule.WithRetryMax(tt.client), travelrule.WithRetryWait(0, 0))
			var err error
			if tt.initiate {
				_, err = c.InitiateTransfer(context.Background(), minimalRequest(), travelrule.WithCallRetryMax(tt.call))
			} else {
				_, err = c.ResolveInquiry(context.Background(), "tr-1", travelrule.Reject(), travelrule.WithCallRetryMax(tt.call))
			}
			assert.Equal(t, tt.wantHits, ts.hits.Load())
			if tt.wantOK {
				assert.NoError(t, err)
			}
			assert.Equal(t, tt.wantUnkno, errors.Is(err, travelrule.ErrOutcomeUnknown))
		})
	}
}

// TestWithCallIdempotencyKey: the key goes on every attempt; with a client
// made WithIdempotency it replaces the context's, and without one it makes
// nothing repeatable (neither the client's retries nor net/http's own
// resend of a request that carries an Idempotency-Key).
func TestWithCallIdempotencyKey(t *testing.T) {
	t.Run("with WithIdempotency: the call's key, on every attempt", func(t *testing.T) {
		var n atomic.Int32
		c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			answer(200, `{"status":true,"transferId":"tr-1"}`)(w, r)
		}, travelrule.WithIdempotency(), travelrule.WithRetryWait(0, 0))
		ctx := travelrule.ContextWithIdempotencyKey(context.Background(), "from-context")
		res, err := c.InitiateTransfer(ctx, minimalRequest(), travelrule.WithCallIdempotencyKey("payment-42"))
		require.NoError(t, err)
		assert.Equal(t, "payment-42", res.IdempotencyKey)
		reqs := ts.requests()
		require.Len(t, reqs, 2)
		for _, r := range reqs {
			assert.Equal(t, "payment-42", r.Header.Get("Idempotency-Key"))
		}
	})
	t.Run("without WithIdempotency: sent, never repeated", func(t *testing.T) {
		c, ts := setup(t, answer(http.StatusBadGateway, ``), travelrule.WithRetryWait(0, 0))
		_, err := c.InitiateTransfer(context.Background(), minimalRequest(), travelrule.WithCallIdempotencyKey("payment-43"))
		var ou *travelrule.OutcomeUnknownError
		require.ErrorAs(t, err, &ou)
		assert.Equal(t, "payment-43", ou.IdempotencyKey)
		assert.EqualValues(t, 1, ts.hits.Load())
		assert.Equal(t, "payment-43", ts.requests()[0].Header.Get("Idempotency-Key"))
	})
	t.Run("without WithIdempotency: no resend by net/http on a reused connection", func(t *testing.T) {
		var n atomic.Int32
		c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 2 {
				rawAnswer(func(io.Writer, *http.Request) {})(w, r) // read whole, closed unanswered
				return
			}
			answer(200, `{"status":"succes"}`)(w, r)
		}, travelrule.WithRetryWait(0, 0))
		_, err := c.InitiateTransfer(context.Background(), minimalRequest()) // primes a kept-alive connection
		require.NoError(t, err)
		_, err = c.InitiateTransfer(context.Background(), minimalRequest(), travelrule.WithCallIdempotencyKey("payment-44"))
		var ou *travelrule.OutcomeUnknownError
		require.ErrorAs(t, err, &ou)
		assert.Equal(t, 1, ou.Attempts)
		assert.EqualValues(t, 2, ts.hits.Load())
	})
}

// TestWithCallAttemptTimeout: each attempt ends after the call's
// time-out. The server holds each request until the client gives it up.
func TestWithCallAttemptTimeout(t *testing.T) {
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // the client ended the attempt
	}, travelrule.WithRetryWait(0, 0), travelrule.WithRetryMax(0))
	for i, op := range []string{"resolve", "initiate"} {
		t.Run(op, func(t *testing.T) {
			// A deadline far beyond the call's time-out: were the option
			// ignored, the first attempt would last until it, and no retry
			// would follow.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var err error
			if op == "resolve" {
				_, err = c.ResolveInquiry(ctx, "tr-1", travelrule.Reject(),
					travelrule.WithCallAttemptTimeout(20*time.Millisecond), travelrule.WithCallRetryMax(1))
			} else {
				_, err = c.InitiateTransfer(ctx, minimalRequest(), travelrule.WithCallAttemptTimeout(20*time.Millisecond))
			}
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the request was written: the service may have acted")
			want := []int64{2, 3}[i]
			assert.Equal(t, want, ts.hits.Load(), "hits after "+op+": "+strconv.Itoa(int(want)))
		})
	}
}
