package travelrule_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"

	"github.com/vaspkit/travelrule"
)

const h2Success = `{"status":"succes","transferId":"t-1"}`

// The faults after which the service may have acted: each comes after the
// server read the whole request, and none is a GOAWAY below the stream.
// REFUSED_STREAM is one of them: RFC 9113 says it means "not processed",
// but haproxy 2.6 sends it after forwarding a request the upstream stored
// (TestHAProxyResetAfterStoringIsNeverResent). (net/http's HTTP/2 client of
// Go 1.26 sends a request again by itself after a PROTOCOL_ERROR or a
// REFUSED_STREAM when it can rewind the body.)
var h2Faults = []struct {
	name string
	act  h2Action
}{
	{"RST_STREAM REFUSED_STREAM", h2Reset(http2.ErrCodeRefusedStream)},
	{"RST_STREAM PROTOCOL_ERROR", h2Reset(http2.ErrCodeProtocol)},
	{"RST_STREAM INTERNAL_ERROR", h2Reset(http2.ErrCodeInternal)},
	{"RST_STREAM CANCEL", h2Reset(http2.ErrCodeCancel)},
	{"GOAWAY naming the stream, then close", h2Action{goAway: true, last: 1<<31 - 1}},
}

// The ends of a stream that the connection's own peer promises it did not
// take: a GOAWAY whose last stream id is below the stream (RFC 9113,
// section 6.8), graceful or not.
var h2Unprocessed = []struct {
	name string
	act  h2Action
}{
	{"GOAWAY last-stream-id 0", h2Action{goAway: true}},
	{"GOAWAY last-stream-id 0, ENHANCE_YOUR_CALM", h2Action{goAway: true, code: http2.ErrCodeEnhanceYourCalm, debug: "too many requests"}},
}

// firstThen applies first to the first request and answers every later one
// with success.
func firstThen(first h2Action) func(int) h2Action {
	return func(n int) h2Action {
		if n == 1 {
			return first
		}
		return h2Answer(http.StatusOK, h2Success)
	}
}

func h2Client(t *testing.T, s *h2Server, opts ...travelrule.Option) *travelrule.Client {
	t.Helper()
	opts = append([]travelrule.Option{
		travelrule.WithTokenSource(travelrule.StaticToken("tok")),
		travelrule.WithHTTPClient(s.client),
		travelrule.WithRetryWait(0, 0),
	}, opts...)
	c, err := travelrule.NewClient(s.url+"/api", opts...)
	require.NoError(t, err)
	return c
}

func TestHTTP2Works(t *testing.T) {
	s := newH2Server(t, func(int) h2Action { return h2Answer(http.StatusOK, h2Success) })
	res, err := h2Client(t, s).InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.Equal(t, "t-1", res.TransferID)
	assert.Equal(t, 1, res.Attempts)
	assert.EqualValues(t, 1, s.requests.Load())
}

// A reset or GOAWAY after the server read the whole initiation that does
// not declare the stream unprocessed is an ambiguous failure: net/http's
// HTTP/2 client must not send the POST again (it did, up to about 1,450
// times in 8 s, and once followed by a 200 stored two transfers and
// reported one attempt), and neither may the SDK.
func TestHTTP2ResetAfterBodyIsNotReplayed(t *testing.T) {
	for _, f := range h2Faults {
		for _, retryMax := range []int{0, 3} {
			t.Run(f.name+"/retries "+strconv.Itoa(retryMax), func(t *testing.T) {
				s := newH2Server(t, firstThen(f.act))
				_, err := h2Client(t, s, travelrule.WithRetryMax(retryMax)).InitiateTransfer(context.Background(), minimalRequest())
				require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
				var ou *travelrule.OutcomeUnknownError
				require.ErrorAs(t, err, &ou)
				assert.Equal(t, 1, ou.Attempts)
				assert.EqualValues(t, 1, s.requests.Load(), "requests the server read whole")
			})
		}
	}
}

// A stream above a GOAWAY's last stream id is sent again, whatever the
// call, by the client's retry loop: within its budget, counted in
// Attempts, never by net/http on its own. When the budget runs out the
// error is definite: the service never had the transfer.
func TestHTTP2UnprocessedStreamIsRetried(t *testing.T) {
	for _, f := range h2Unprocessed {
		t.Run(f.name, func(t *testing.T) {
			s := newH2Server(t, firstThen(f.act))
			res, err := h2Client(t, s, travelrule.WithRetryMax(3)).InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err)
			assert.Equal(t, 2, res.Attempts)
			assert.EqualValues(t, 2, s.requests.Load(), "requests the server read whole")
		})
		t.Run(f.name+"/no retries", func(t *testing.T) {
			s := newH2Server(t, firstThen(f.act))
			_, err := h2Client(t, s, travelrule.WithRetryMax(0)).InitiateTransfer(context.Background(), minimalRequest())
			require.Error(t, err)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the server declared it did nothing")
			assert.EqualValues(t, 1, s.requests.Load())
		})
		t.Run(f.name+"/budget", func(t *testing.T) {
			s := newH2Server(t, func(int) h2Action { return f.act })
			_, err := h2Client(t, s, travelrule.WithRetryMax(2)).InitiateTransfer(context.Background(), minimalRequest())
			require.Error(t, err)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			assert.EqualValues(t, 3, s.requests.Load(), "the first attempt and two retries, no more")
		})
	}
}

// Behind nginx with keepalive_requests 3 over HTTP/2, ten calls in flight:
// each connection answers three requests and then sends GOAWAY naming the
// third; the streams the client opened meanwhile are above it and were
// never processed (RFC 9113, section 6.8). They are sent again by the
// client's own retry loop, counted in Attempts, and every call succeeds
// with its transfer received once. (Before, 7-12 of 60 calls ended outcome
// unknown with nothing received.)
func TestHTTP2GracefulGoAwayStreamsAreRetried(t *testing.T) {
	s := newH2Server(t, func(int) h2Action { return h2Answer(http.StatusOK, h2Success) })
	s.keepalive = 3
	c := h2Client(t, s, travelrule.WithRetryMax(50))
	const calls, inFlight = 60, 10
	var mu sync.Mutex
	var ok, unknown, failed, attempts int
	var wg sync.WaitGroup
	sem := make(chan struct{}, inFlight)
	for i := range calls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			req := minimalRequest()
			req.Amount = strconv.Itoa(i + 1) // a body of its own
			res, err := c.InitiateTransfer(context.Background(), req)
			mu.Lock()
			defer mu.Unlock()
			var ou *travelrule.OutcomeUnknownError
			switch {
			case err == nil:
				ok++
				attempts += res.Attempts
			case errors.As(err, &ou):
				unknown++
				attempts += ou.Attempts
				t.Logf("call %d: %v", i, err)
			default:
				failed++
				t.Logf("call %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	requests, distinct, repeated := s.counts()
	t.Logf("%d calls, %d in flight: %d succeeded, %d outcome unknown, %d failed; %d attempts; the server read %d requests whole, %d distinct",
		calls, inFlight, ok, unknown, failed, attempts, requests, distinct)
	assert.Equal(t, calls, ok, "every call succeeds")
	assert.Zero(t, unknown, "no call ends outcome unknown")
	assert.Equal(t, calls, distinct, "every transfer reached the server")
	assert.Zero(t, repeated, "none twice")
	assert.Greater(t, attempts, calls, "streams above a GOAWAY's last stream id were sent again")
}

// A request parked on an HTTP/2 connection net/http already holds, waiting
// for a stream (the server allows one at a time, and the client waits for
// it: StrictMaxConcurrentRequests), when a GOAWAY comes: nothing of it was
// written, and net/http fails with "cannot rewind body after connection
// loss". The call is retried and the transfer received once; the request
// the GOAWAY named as processed gets its answer. (When the connection was
// dialed for another request, net/http reports no GetConn for this one:
// TestRoundTripStartedByGotConnAlone.)
func TestHTTP2CachedConnectionGoneBeforeWritingIsRetried(t *testing.T) {
	held, gotConn := make(chan struct{}), make(chan struct{})
	s := newH2Server(t, func(n int) h2Action {
		if n == 2 { // the second call: go away once the third has the connection
			close(held)
			<-gotConn
			return h2Action{goAwayFirst: true, status: http.StatusOK, body: h2Success}
		}
		return h2Answer(http.StatusOK, h2Success)
	})
	s.maxStreams = 1
	tr := s.client.Transport.(*http.Transport).Clone()
	tr.HTTP2 = &http.HTTP2Config{StrictMaxConcurrentRequests: true}
	var armed atomic.Bool
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if armed.Load() {
			r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
				GotConn: func(httptrace.GotConnInfo) { once.Do(func() { close(gotConn) }) },
			}))
		}
		return tr.RoundTrip(r)
	})}
	t.Cleanup(tr.CloseIdleConnections)
	c := h2Client(t, s, travelrule.WithHTTPClient(hc), travelrule.WithRetryMax(1))

	// The first call's answer tells that the client has the server's
	// SETTINGS (they came before it on the connection).
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)

	second := make(chan error, 1)
	go func() {
		req := minimalRequest()
		req.Amount = "2"
		_, err := c.InitiateTransfer(context.Background(), req)
		second <- err
	}()
	<-held
	armed.Store(true)
	req := minimalRequest()
	req.Amount = "3"
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err, "nothing was written on the connection that went away")
	assert.Equal(t, 2, res.Attempts)
	require.NoError(t, <-second, "named by the GOAWAY as processed")
	requests, distinct, repeated := s.counts()
	assert.Equal(t, 3, requests)
	assert.Equal(t, 3, distinct)
	assert.Zero(t, repeated)
}

// A call that may be repeated is repeated after a reset, but by the
// client's retry policy, which counts it, never by the transport on its
// own.
func TestHTTP2ResetRepeatableCallIsRetriedAndCounted(t *testing.T) {
	for i, f := range append(h2Faults[:len(h2Faults):len(h2Faults)], h2Unprocessed...) {
		t.Run(f.name+"/idempotency key", func(t *testing.T) {
			s := newH2Server(t, firstThen(f.act))
			res, err := h2Client(t, s, travelrule.WithIdempotency()).InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err)
			assert.Equal(t, 2, res.Attempts)
			assert.EqualValues(t, 2, s.requests.Load())
		})
		t.Run(f.name+"/resolve", func(t *testing.T) {
			s := newH2Server(t, func(n int) h2Action {
				if n == 1 {
					return f.act
				}
				return h2Answer(http.StatusOK, `{"status":true}`)
			})
			res, err := h2Client(t, s).ResolveInquiry(context.Background(), "tr-1", &travelrule.InquiryResolution{Approved: "true"})
			require.NoError(t, err)
			assert.Equal(t, 2, res.Attempts)
			assert.EqualValues(t, 2, s.requests.Load())
		})
		t.Run(f.name+"/budget", func(t *testing.T) {
			s := newH2Server(t, func(int) h2Action { return f.act })
			_, err := h2Client(t, s, travelrule.WithIdempotency(), travelrule.WithRetryMax(2)).InitiateTransfer(context.Background(), minimalRequest())
			require.Error(t, err)
			assert.EqualValues(t, 3, s.requests.Load(), "the first attempt and two retries, no more")
			if i < len(h2Faults) {
				var ou *travelrule.OutcomeUnknownError
				require.ErrorAs(t, err, &ou)
				assert.Equal(t, 3, ou.Attempts)
			}
			// After a stream declared unprocessed the error of a call
			// that may be repeated may still say outcome unknown: the
			// transport asked for its body again, and the text that
			// would tell is lost (guard.go, getBody). Such a call is
			// retried either way.
		})
		if i >= len(h2Faults) {
			continue // a stream answered 103 was processed
		}
		// A 103 before the reset is no answer: Go 1.26's client, which
		// resends after PROTOCOL_ERROR, got the body back and the server
		// read the request twice with WithRetryMax(0).
		t.Run(f.name+"/budget after 103", func(t *testing.T) {
			act := f.act
			act.hints = 1
			s := newH2Server(t, func(int) h2Action { return act })
			_, err := h2Client(t, s, travelrule.WithIdempotency(), travelrule.WithRetryMax(0)).InitiateTransfer(context.Background(), minimalRequest())
			var ou *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &ou)
			assert.Equal(t, 1, ou.Attempts)
			assert.EqualValues(t, 1, s.requests.Load(), "sent once: no retry was allowed")
		})
	}
}

// A 103 on the stream shows the server took it: a GOAWAY below the stream
// after it proves nothing, and the initiation is not sent again.
func TestHTTP2HintThenGoAwayBelowIsNotResent(t *testing.T) {
	for _, f := range h2Unprocessed {
		t.Run(f.name, func(t *testing.T) {
			act := f.act
			act.hints = 1
			s := newH2Server(t, firstThen(act))
			_, err := h2Client(t, s, travelrule.WithRetryMax(3)).InitiateTransfer(context.Background(), minimalRequest())
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			requests, _, repeated := s.counts()
			assert.Equal(t, 1, requests, "requests the server read whole")
			assert.Zero(t, repeated)
		})
	}
}
