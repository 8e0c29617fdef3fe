package travelruletest_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestNoGoroutineLeak closes a server with callbacks delivered, one
// waiting an hour for its retry, and a request held by a latency fault:
// when Close returns, no goroutine of the server's is left (no stack runs
// its code) and its connections are closed.
func TestNoGoroutineLeak(t *testing.T) {
	rc := newReceiver(t, nil)
	events := newLogEvents()
	srv := travelruletest.NewServer(
		travelruletest.WithLogger(slog.New(events)),
		travelruletest.WithCallbackRetry(5, time.Hour, time.Hour), // a callback waiting to be retried
		travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultLatency, Rate: 1, Ops: travelruletest.OpResolve, Latency: time.Hour}),
	)
	defer srv.Close()
	c := newClient(t, srv)
	for range 20 {
		_, err := c.InitiateTransfer(context.Background(), validRequest(rc.URL))
		require.NoError(t, err)
	}
	_, err := c.InitiateTransfer(context.Background(), validRequest(closedURL(t)))
	require.NoError(t, err)
	waitCallbacks(t, srv, 40) // 20 transfers' two callbacks; the last one's first attempt failed

	// A request held by a latency fault while the server closes.
	held := make(chan struct{})
	go func() {
		defer close(held)
		_, _ = c.ResolveInquiry(context.Background(), "x", &travelrule.InquiryResolution{Approved: "true"})
	}()
	events.wait(t, "travelruletest: holding request", 1)
	require.Positive(t, travelruletest.OpenConns(srv))
	srv.Close()
	assert.Zero(t, travelruletest.OpenConns(srv), "Close waits for the connections to end")
	if leaked := serverGoroutines(); leaked != "" {
		t.Fatalf("goroutines of the server left after Close:\n%s", leaked)
	}
	<-held
	srv.Close() // twice is fine
}

// serverGoroutines returns the stacks of the goroutines of the server's
// code (package travelruletest, not its tests) that have not left. A
// goroutine that is running or runnable outside any waiting call is on its
// way out: Close waits for the WaitGroup that each goroutine leaves in a
// deferred call, after which the goroutine still has to return. One that
// is runnable inside a waiting call was woken and has not left.
func serverGoroutines() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/vaspkit/travelrule/travelruletest.") && !leaving(g) {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// waitingCalls are the frames of a goroutine that waits for something.
var waitingCalls = []string{
	"sync.(*Cond).Wait", "runtime_Semacquire", "runtime.selectgo", "runtime.chanrecv",
	"runtime.chansend", "time.Sleep", "runtime_pollWait",
}

// leaving reports whether the goroutine of stack g is on its way out:
// running or runnable, and in none of the waitingCalls.
func leaving(g string) bool {
	header, frames, _ := strings.Cut(g, "\n")
	if !strings.Contains(header, "[running") && !strings.Contains(header, "[runnable") {
		return false
	}
	for _, c := range waitingCalls {
		if strings.Contains(frames, c) {
			return false
		}
	}
	return true
}

func TestManyInitiations(t *testing.T) {
	const n = 2_000
	srv := newServer(t, travelruletest.WithoutCallbacks())
	c := newClient(t, srv)
	start := time.Now()
	var failed atomic.Int64
	concurrently(n, func() bool {
		if _, err := c.InitiateTransfer(context.Background(), validRequest("https://vasp.example/cb")); err != nil {
			failed.Add(1)
		}
		return true
	})
	t.Logf("%d initiations in %v", n, time.Since(start))
	require.Zero(t, failed.Load())

	st := srv.Stats()
	assert.Equal(t, n, st.Initiated)
	assert.Equal(t, n, st.ByStatus[http.StatusOK])
	ts := srv.Transfers()
	assert.Len(t, ts, n)
	ids := make(map[string]bool, n)
	for _, tr := range ts {
		ids[tr.ID] = true
	}
	assert.Len(t, ids, n, "transfer ids are unique")
	ds := waitCallbacks(t, srv, 2*n)
	assert.Zero(t, srv.Stats().CallbackAttempts, "no callback was sent")
	assert.False(t, ds[0].Delivered)
	assert.Equal(t, travelruletest.StateCompleted, srv.Transfers()[n-1].State, "states move on without callbacks")
}

func TestManyTransfersWithCallbacks(t *testing.T) {
	const n = 500
	rc := newReceiver(t, nil)
	srv := newServer(t)
	c := newClient(t, srv)
	concurrently(n, func() bool {
		_, err := c.InitiateTransfer(context.Background(), validRequest(rc.URL))
		assert.NoError(t, err)
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ds, err := srv.WaitCallbacks(ctx, 2*n)
	require.NoError(t, err)
	groups := byTransfer(ds)
	require.Len(t, groups, n)
	for id, g := range groups {
		assert.Equal(t, resolutionKinds, kinds(g), id)
		assert.Equal(t, "approved,completed", statuses(g), id)
	}
	assert.Len(t, rc.Hits(), 2*n)
}

func TestWithAddr(t *testing.T) {
	srv := newServer(t, travelruletest.WithAddr(":0"))
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, srv.URL)
	res, err := newClient(t, srv).InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	assert.Equal(t, "true", res.Status)
	assert.Panics(t, func() { travelruletest.NewServer(travelruletest.WithAddr("256.0.0.1:0")) })
	assert.Panics(t, func() { travelruletest.NewServer(travelruletest.WithTokenLifetime(time.Millisecond)) })
}

func TestLoggerCarriesNoPersonalData(t *testing.T) {
	var buf safeBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rc := newReceiver(t, nil)
	srv := newServer(t, travelruletest.WithLogger(logger))
	c := newClient(t, srv)
	_, err := c.InitiateTransfer(context.Background(), validRequest(rc.URL+"/cb?tr_ref=secret-ref"))
	require.NoError(t, err)
	bad := validRequest(rc.URL)
	bad.Originator.Country = "GBR"
	tok := token(t, srv)
	post(t, srv.URL+"/transfers/initiate", tok, bad)
	waitCallbacks(t, srv, 2)
	srv.Close()

	out := buf.String()
	assert.Contains(t, out, "/transfers/initiate")
	assert.Contains(t, out, "status=400")
	assert.Contains(t, out, "kind=INQUIRY_RESOLUTION")
	for _, v := range append(personalValues, tok, "secret-ref", "GBR") {
		assert.NotContains(t, out, v)
	}
}

// safeBuffer is a bytes.Buffer safe for concurrent writes.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestMalformedBodyIsAnswered sends a chunked body whose chunk size is not
// hex: the sandbox answers 400, as a service would, never net/http's empty
// 200 for a handler that wrote nothing.
func TestMalformedBodyIsAnswered(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST "+u.Path+"/transfers/initiate HTTP/1.1\r\nHost: "+u.Host+
		"\r\nAuthorization: Bearer "+token(t, srv)+"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(body), `"code":"INVALID_REQUEST"`)
	assert.Empty(t, srv.Transfers())
}
