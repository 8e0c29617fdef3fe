package travelrule_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
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

// The attempt limit covers the answer's body, not only its headers: a body
// that drips kept an attempt busy past defaultAttemptTimeout.
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

func TestRequestHeaders(t *testing.T) {
	tests := []struct {
		name    string
		opts    []travelrule.Option
		wantUA  string
		inquiry bool
	}{
		{name: "initiate default UA", wantUA: "travelrule-go/" + travelrule.Version},
		{name: "initiate product UA", opts: []travelrule.Option{travelrule.WithUserAgent("acme-exchange/2.1")}, wantUA: "acme-exchange/2.1 travelrule-go/" + travelrule.Version},
		{name: "inquiry default UA", wantUA: "travelrule-go/" + travelrule.Version, inquiry: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"status":"succes"}`
			if tt.inquiry {
				body = `{"status":true}`
			}
			c, ts := setup(t, answer(200, body), tt.opts...)
			var err error
			if tt.inquiry {
				_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
			} else {
				_, err = c.InitiateTransfer(context.Background(), minimalRequest())
			}
			require.NoError(t, err)
			h := ts.requests()[0].Header
			assert.Equal(t, "Bearer "+testToken, h.Get("Authorization"))
			assert.Equal(t, "application/json", h.Get("Content-Type"))
			assert.Equal(t, tt.wantUA, h.Get("User-Agent"))
			assert.Empty(t, h.Get("Idempotency-Key"), "no idempotency key unless WithIdempotency")
		})
	}
}

func TestErrorBodyReadThroughLimit(t *testing.T) {
	huge := strings.Repeat("x", 4<<10)
	c, _ := setup(t, answer(400, huge), travelrule.WithMaxResponseBytes(1<<10))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.LessOrEqual(t, len(apiErr.Body), 1<<10)
}

// TestContextEndDuringAttemptIsOutcomeUnknown ends the caller's context
// once the server holds the request, never before: the ending is an event,
// not a race between a short deadline and the dial.
func TestContextEndDuringAttemptIsOutcomeUnknown(t *testing.T) {
	for _, tt := range []struct {
		name string
		want error
	}{
		{"cancelled", context.Canceled},
		{"deadline", context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			arrived := make(chan struct{})
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				close(arrived)
				<-r.Context().Done() // the client gives up on the request
			})
			ctx := endsOn(arrived, tt.want)
			_, err := c.InitiateTransfer(ctx, minimalRequest())
			require.ErrorIs(t, err, tt.want)
			assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the request was written before the context ended")
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

func TestContextAlreadyDoneSendsNothing(t *testing.T) {
	c, ts := setup(t, answer(200, `{"status":"succes"}`))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.InitiateTransfer(ctx, minimalRequest())
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Zero(t, ts.hits.Load())
}

func TestDroppedConnectionAfterSendIsOutcomeUnknown(t *testing.T) {
	c, ts := setup(t, dropAfterRead)
	req := minimalRequest()
	req.TxID = "0xfeed"
	ref := "pay-123"
	cb, err := travelrule.NewCallbackURL("https://vasp-a.example/cb", ref, []byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	req.Callback = cb
	_, err = c.InitiateTransfer(context.Background(), req)
	require.Error(t, err)
	assert.EqualValues(t, 1, ts.hits.Load(), "never resent once written")
	var unknown *travelrule.OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)
	assert.Equal(t, "0xfeed", unknown.TxID)
	assert.Equal(t, ref, unknown.CallbackRef)
	assert.Equal(t, "InitiateTransfer", unknown.Op)
	assert.NotContains(t, err.Error(), "tr_tag", "the capability URL stays out of the error string")
}

func TestSuccessBodyTooLargeIsOutcomeUnknown(t *testing.T) {
	c, _ := setup(t, answer(200, `{"status":"succes","pad":"`+strings.Repeat("x", 2048)+`"}`), travelrule.WithMaxResponseBytes(512))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.ErrorIs(t, err, travelrule.ErrUnexpectedResponse)
}

func TestChunkedBodyTooLargeIsCut(t *testing.T) {
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		for i := 0; i < 64; i++ { // no Content-Length: chunked, 64 KiB
			_, _ = w.Write(bytes.Repeat([]byte("y"), 1024))
			w.(http.Flusher).Flush()
		}
	}, travelrule.WithMaxResponseBytes(4096))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.LessOrEqual(t, len(apiErr.Body), 4096)
}

func TestTransportWithoutTracesCountsAsSent(t *testing.T) {
	// Without trace events the client cannot prove that nothing was sent:
	// a dropped connection must not be retried as "never sent".
	c, ts := setup(t, dropAfterRead, travelrule.WithHTTPClient(&http.Client{Transport: opaqueTransport{http.DefaultTransport}}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.EqualValues(t, 1, ts.hits.Load())
}

// net/http's HTTP/2 client, given a request on a connection its pool
// already holds, reports GotConn and no GetConn: a connection dialed for
// another request can be taken over this way. When the connection turns
// out unusable before anything is written (a GOAWAY came meanwhile),
// net/http fails with "cannot rewind body". The attempt reported its start
// and wrote nothing: it is retried. It counted as written, and so ended
// outcome unknown, in 1 of 40 runs of TestHTTP2GracefulGoAwayStreamsAreRetried.
// A start is believed only of a transport that has reported a write
// before (net/http's own always has: TestTransportReportingNoWrites).
func TestRoundTripStartedByGotConnAlone(t *testing.T) {
	errRewind := errors.New("net/http: cannot rewind body after connection loss")
	for _, tt := range []struct {
		name    string
		before  bool // a call went through first, its write reported
		wrote   bool
		unknown bool
	}{
		{"nothing written", true, false, false},
		{"headers written", true, true, true},
		{"no write reported yet", false, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := &failArmed{fail: func(r *http.Request) (*http.Response, error) {
				trace := httptrace.ContextClientTrace(r.Context())
				require.NotNil(t, trace)
				trace.GotConn(httptrace.GotConnInfo{Reused: true})
				if tt.wrote {
					trace.WroteHeaders()
				}
				r.Body.Close()
				return nil, errRewind
			}}
			c, ts := setup(t, answer(http.StatusOK, `{"status":"succes"}`), travelrule.WithHTTPClient(&http.Client{Transport: tr}))
			if tt.before {
				_, err := c.InitiateTransfer(context.Background(), minimalRequest())
				require.NoError(t, err)
			}
			hits := ts.hits.Load()
			tr.armed.Store(true)
			res, err := c.InitiateTransfer(context.Background(), minimalRequest())
			if tt.unknown {
				require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
				assert.Equal(t, hits, ts.hits.Load())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 2, res.Attempts)
			assert.Equal(t, hits+1, ts.hits.Load())
		})
	}
}

// failArmed is a transport whose next round trip once armed is fail; the
// others go to http.DefaultTransport.
type failArmed struct {
	fail  func(*http.Request) (*http.Response, error)
	armed atomic.Bool
}

func (f *failArmed) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.armed.Swap(false) {
		return f.fail(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A transport that passes on the start of a round trip (GetConn, GotConn)
// but not the writes, as a bridge from another HTTP client to httptrace
// may: the request reached the service and the answer was lost, so the
// call's outcome is unknown, however many calls went through before. (With
// GotConn counted as a start whatever the transport, such a call was sent
// twice.)
func TestTransportReportingNoWrites(t *testing.T) {
	var lose atomic.Bool
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if trace := httptrace.ContextClientTrace(r.Context()); trace != nil {
			trace.GetConn(r.URL.Host)
			trace.GotConn(httptrace.GotConnInfo{})
		}
		resp, err := http.DefaultTransport.RoundTrip(r.Clone(context.Background())) // the writes go unreported
		if err != nil || !lose.Load() {
			return resp, err
		}
		resp.Body.Close()
		return nil, errors.New("read: connection reset by peer")
	})
	c, ts := setup(t, answer(http.StatusOK, `{"status":"succes"}`), travelrule.WithHTTPClient(&http.Client{Transport: tr}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	lose.Store(true)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.EqualValues(t, 2, ts.hits.Load(), "each call reached the service once")
}

// The 1xx answers a call that may be repeated accepts are bounded, as
// net/http bounds them for a client that does not look at them (the
// client looks: a 1xx is no answer, see got1xx), by their header bytes:
// many small ones then a final answer succeed; a flood of empty ones, or
// large ones, end the attempt.
func TestInformationalAnswersAreBounded(t *testing.T) {
	for _, tt := range []struct {
		name string
		hint string
		n    int
		ok   bool
	}{
		{"5 small", "HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n", 5, true},
		{"200 small", "HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n", 200, true},
		{"10,000 empty", "HTTP/1.1 103 Early Hints\r\n\r\n", 10000, false},
		{"20 of 4 KiB", "HTTP/1.1 103 Early Hints\r\nLink: " + strings.Repeat("a", 4<<10) + "\r\n\r\n", 20, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := strings.Repeat(tt.hint, tt.n) +
				"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":true}"
			c, ts := setup(t, hijacked(raw), travelrule.WithRetryMax(0))
			res, err := c.ResolveInquiry(context.Background(), "tr-1", &travelrule.InquiryResolution{Approved: "true"})
			assert.EqualValues(t, 1, ts.hits.Load())
			if tt.ok {
				require.NoError(t, err)
				assert.True(t, res.Status)
				return
			}
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the request was read")
			assert.Contains(t, err.Error(), "1xx informational answers", "the cause, in the client's words")
		})
	}
}

// TestHTTPSAgainstPlainHTTPSaysSo: an https:// base URL pointed at a plain
// HTTP server fails with the cause named, and nothing sent.
func TestHTTPSAgainstPlainHTTPSaysSo(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	c, err := travelrule.NewClient("https://"+srv.Listener.Addr().String(), travelrule.WithTokenSource(travelrule.StaticToken(testToken)))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the server answered plain HTTP to a TLS request: use http:// or the server's TLS port")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Zero(t, hits.Load())
}

// An attempt that outlasts the attempt time-out ends, and a call that may
// be repeated starts the next attempt in a context of its own: the ended
// attempt's context must not end the backoff wait or the next attempt.
func TestAttemptTimeOutIsRetriedWhenRepeatable(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var answered atomic.Bool
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if answered.CompareAndSwap(false, true) {
			<-release // never answers: the attempt times out
			return
		}
		answer(200, `{"status":true}`)(w, r)
	}, travelrule.WithHTTPClient(&http.Client{Timeout: 200 * time.Millisecond}),
		travelrule.WithRetryWait(time.Millisecond, time.Millisecond))
	res, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	assert.EqualValues(t, 2, ts.hits.Load())
}

// A timed-out attempt is a time-out: the error matches
// context.DeadlineExceeded and says so, whatever kind of context the caller
// gave (one that cannot end takes the shared deadline of timeout.go).
func TestAttemptTimeOutIsATimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) { <-release },
		travelrule.WithHTTPClient(&http.Client{Timeout: 100 * time.Millisecond}))
	cancelable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ctx := range []context.Context{context.Background(), cancelable} {
		_, err := c.InitiateTransfer(ctx, minimalRequest())
		require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "timed out")
	}
}

// Each attempt has the whole attempt time-out to itself: draining the
// previous answer and the wait before the next attempt run outside it. The
// first answer is a 429 with Retry-After whose body takes 1.2 s; the
// second takes 1.2 s of its 2 s. With the drain inside the next attempt's
// time-out that attempt has 0.8 s and fails; the margins are 0.8 s either
// way (TestRetryGetsTheWholeTimeOut checks the same without a clock).
func TestDrainAndWaitDoNotEatTheNextAttempt(t *testing.T) {
	var n atomic.Int32
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Length", "1200")
			w.WriteHeader(http.StatusTooManyRequests)
			for range 12 {
				_, _ = w.Write([]byte(strings.Repeat("x", 100)))
				http.NewResponseController(w).Flush()
				<-time.After(100 * time.Millisecond) // a slow server, not the test waiting
			}
			return
		}
		<-time.After(1200 * time.Millisecond)
		answer(200, `{"status":"succes"}`)(w, r)
	}, travelrule.WithHTTPClient(&http.Client{Timeout: 2 * time.Second}))
	res, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	assert.EqualValues(t, 2, ts.hits.Load())
}
