package storetest

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// Fault is a real failure of a store's server that makes its writes fail,
// or hang past the store's time-out (Config.Timeout), until it is healed:
// a failover, a paused server, a database made read-only, a lock held on
// the store's table, a proxy restarting.
type Fault struct {
	// Name names the fault's subtest.
	Name string
	// Inject starts the fault; it returns once the store's writes fail.
	Inject func(t *testing.T)
	// Heal ends the fault; it returns once the store's writes work again.
	Heal func(t *testing.T)
}

// faultTimeout is the store's time-out (Config.Timeout) in
// TestCompletionFaults: short, so that a fault that makes writes hang
// fails them quickly, and long enough for a healthy server's answer.
const faultTimeout = time.Second

// faultLease is the lease in TestCompletionFaults: longer than any fault
// is expected to last, since the handler retries a completion for one
// lease; a completion the test waits for comes within bound of Heal.
const faultLease = 2 * bound

// TestCompletionFaults runs, for each fault, a delivery through a
// [callback.Handler] whose function succeeds while the fault is injected
// (the function waits while the suite calls Inject, from the test's
// goroutine), and checks that the sender's answer is 204 at once; that the
// handler, still serving the delivery, retries the completion (it calls
// Heal only once the handler counted a failed attempt in
// [callback.Handler.Stats]); that the completion is recorded after Heal,
// as seen through a second store from open (a redelivery to a handler on
// it is answered 204 without a call); that a redelivery of the same
// callback to the first handler is answered 204 without calling the
// function again; and that nothing was counted lost.
//
// The stores are opened with a lease of a minute and a Timeout of a
// second, so that a fault that makes writes hang fails each attempt after
// a second. A store's Lease method, if it has one (see [callback.Store]),
// should return the lease it was opened with.
func TestCompletionFaults(t *testing.T, open Open, faults ...Fault) {
	require.NotEmpty(t, faults, "TestCompletionFaults needs at least one fault")
	for _, f := range faults {
		t.Run(f.Name, func(t *testing.T) { testCompletionFault(t, open, f) })
	}
}

// testCompletionFault is TestCompletionFaults for one fault: the first
// delivery's function returns once the fault is injected, and its
// completion must wait for the heal.
func testCompletionFault(t *testing.T, open Open, f Fault) {
	require.NotNil(t, f.Inject, "the fault's Inject")
	require.NotNil(t, f.Heal, "the fault's Heal")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // ends the function's wait in a failing test
	d := newFaultDelivery(ctx, t, open)
	url, returned := serveUntilReturned(t, d.h)
	answered := send(ctx, url, d.body)
	timeout := time.NewTimer(bound)
	defer timeout.Stop()
	select {
	case <-d.entered:
	case <-timeout.C:
		t.Fatal("the function was never called")
	}

	faulted := true // from the start of Inject: a fault injected in part is healed too
	t.Cleanup(func() {
		if faulted {
			f.Heal(t)
		}
	})
	f.Inject(t)
	close(d.injected)
	select {
	case code := <-answered:
		require.Equal(t, http.StatusNoContent, code, "the sender's answer, before the completion was recorded (0: no answer)")
	case <-timeout.C:
		t.Fatal("the sender had no answer while the completion waited for the store")
	}
	poll(t, "the handler to count a failed completion", func() bool { return d.h.Stats().CompletionRetries > 0 })
	select {
	case <-returned:
		t.Fatalf("the handler returned before the completion was recorded: %+v", d.h.Stats())
	default:
	}
	f.Heal(t)
	faulted = false

	d.checkRecorded(ctx, t)
	select {
	case <-returned:
	case <-timeout.C:
		t.Fatal("the first delivery's handler never returned")
	}
	st := d.h.Stats()
	t.Logf("the completion was recorded after %d failed attempts", st.CompletionRetries)
	assert.Zero(t, st.CompletionsLost, "completions lost")
	assert.Zero(t, d.observer.Stats().CompletionsLost, "completions lost")
}

// faultDelivery is the callback of a fault's test and the two handlers
// that receive it, on two stores: h, whose completion meets the fault, and
// observer, a replica that sees whether it was recorded.
type faultDelivery struct {
	h, observer *callback.Handler
	body        string
	calls       atomic.Int32
	// entered is closed when the function is first called; the function
	// returns once injected is closed.
	entered, injected chan struct{}
}

// newFaultDelivery returns a callback no test delivered before, and the
// handlers that receive it, on stores from open with the fault's lease
// and timeout. The function's first call waits for injected or for ctx.
func newFaultDelivery(ctx context.Context, t *testing.T, open Open) *faultDelivery {
	d := &faultDelivery{body: newCallbackBody(t), entered: make(chan struct{}), injected: make(chan struct{})}
	fn := func(context.Context, *travelrule.Callback) error {
		if d.calls.Add(1) > 1 {
			return nil
		}
		close(d.entered)
		select {
		case <-d.injected:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	cfg := Config{Lease: faultLease, Retention: long, Timeout: faultTimeout}
	d.h = callback.NewHandler(fn, callback.WithStore(open(t, cfg)), callback.WithoutAuthentication())
	require.NoError(t, d.h.Err())
	d.observer = callback.NewHandler(fn, callback.WithStore(open(t, cfg)), callback.WithoutAuthentication())
	require.NoError(t, d.observer.Err())
	return d
}

// checkRecorded waits until a redelivery to the observer is no longer
// told to come back, and checks that the completion was recorded: the
// observer and h acknowledge redeliveries without calling the function.
func (d *faultDelivery) checkRecorded(ctx context.Context, t *testing.T) {
	deliver := func(h *callback.Handler) int {
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/travelrule/callback", strings.NewReader(d.body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	var code int
	poll(t, "the completion to be recorded", func() bool {
		code = deliver(d.observer)
		return code != http.StatusServiceUnavailable
	})
	assert.Equal(t, http.StatusNoContent, code, "a redelivery to another replica once the completion was recorded")
	assert.Equal(t, int32(1), d.calls.Load(), "calls of the function")
	assert.Equal(t, http.StatusNoContent, deliver(d.h), "a redelivery to the first handler")
	assert.Equal(t, int32(1), d.calls.Load(), "calls of the function")
}

// serveUntilReturned serves h on a real loopback server, so that a test
// sees when the sender has its answer, and returns its URL and a channel
// closed when h first returns. The server's Close, when t ends, does not
// wait for a failing test's handler.
func serveUntilReturned(t *testing.T, h http.Handler) (url string, returned <-chan struct{}) {
	done := make(chan struct{})
	var once sync.Once
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer once.Do(func() { close(done) })
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: bound,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/travelrule/callback", done
}

// send posts body to url as the sender does, and sends the answer's status
// code on the channel it returns (0: no answer).
func send(ctx context.Context, url, body string) <-chan int {
	answered := make(chan int, 1)
	go func() {
		client := &http.Client{Timeout: bound}
		defer client.CloseIdleConnections()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			answered <- 0
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		_ = resp.Body.Close()
		answered <- resp.StatusCode
	}()
	return answered
}
