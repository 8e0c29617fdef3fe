package faultmatrix_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

var updateReliability = flag.Bool("update-reliability", false, "rewrite docs/reliability.md from the fault matrix")

// matrixRow is one row of the fault matrix: a fault mix, the transport,
// whether the client sends idempotency keys, and whether it trusts a 503
// with Retry-After (travelrule.WithTrust503RetryAfterNotForwarded).
type matrixRow struct {
	name        string
	faults      []travelruletest.Fault
	h2          bool // HTTP/2 over TLS (travelruletest.NewTLSServer), else HTTP/1.1
	idempotency bool
	trust503    bool

	calls, succeeded, definite, unknown int
	stored, duplicates, attempts        int
	injected                            int
}

// transport names the row's transport in test names and the report.
func (r *matrixRow) transport() string {
	if r.h2 {
		return "HTTP/2"
	}
	return "HTTP/1.1"
}

// declines reports whether a fault of kind k is an answer by which the
// service declares it did not act on the request, for the client of row r:
// a 429, a GOAWAY (to the streams above its last-stream-id), and a 503
// with Retry-After for a client that trusts it. Not a REFUSED_STREAM: a
// proxy sends it after forwarding too (haproxy 2.6), so it proves nothing.
func (r *matrixRow) declines(k travelruletest.FaultKind) bool {
	switch k {
	case travelruletest.FaultRateLimit, travelruletest.FaultGoAway:
		return true
	case travelruletest.FaultUnavailable:
		return r.trust503
	}
	return false
}

const (
	// 1,200 calls with a third of the requests faulted inject as many
	// faults per row as 2,000 calls at 20% did (388 to 649 a row in
	// docs/reliability.md, against 383 to 533), for 40% less work.
	matrixCalls   = 1200
	matrixWorkers = 32 // calls in flight at once
	faultRate     = 1.0 / 3
	// The latency fault holds a request far longer than any test runs; the
	// client abandons the attempt as soon as the sandbox reports holding it
	// (see abandoning), which is what an attempt time-out does, without a
	// race between a short time-out and an answer slowed by a loaded
	// machine.
	latency = time.Hour
	// attemptLimit only bounds a failing run: no answer comes near it.
	attemptLimit = 30 * time.Second
)

const (
	// resetRate is the share of requests a RST_STREAM PROTOCOL_ERROR or
	// REFUSED_STREAM hits. net/http's HTTP/2 client resends a request after
	// these by itself when it can rewind the body, waiting 1 s, 2 s, 4 s...
	// from the second resend on; the client lets it for none of its calls
	// (guard.go, getBody) and retries a reset only for a call that may be
	// repeated, but a client that let net/http resend would run out of its
	// 30 s at a third, so the rows keep the rate that measures one without
	// hanging: at 1/16 a call is hit six times in a row with 7e-5 per row.
	resetRate = 1.0 / 16
	// goAwayRate is the share of requests a GOAWAY fault hits. A GOAWAY
	// declares unprocessed the faulted request's stream and every stream
	// the calls in flight open on its connection (which they share over
	// HTTP/2) before they see it: one fault sends several attempts again.
	goAwayRate = faultRate / matrixWorkers
)

func matrixRows() []*matrixRow {
	type kind struct {
		name string
		kind travelruletest.FaultKind
		rate float64
	}
	common := []kind{
		{"429 + Retry-After", travelruletest.FaultRateLimit, faultRate},
		{"503 + Retry-After before storing", travelruletest.FaultUnavailable, faultRate},
		{"500 after storing", travelruletest.FaultInternal, faultRate},
		{"connection dropped after storing", travelruletest.FaultDrop, faultRate},
		{"held until the client gives up", travelruletest.FaultLatency, faultRate},
	}
	gateways := []kind{
		{"proxy's 503 without Retry-After after storing", travelruletest.FaultProxyUnavailable, faultRate},
		{"gateway's 503 + Retry-After after storing", travelruletest.FaultGatewayUnavailable, faultRate},
	}
	h2only := []kind{
		{"RST_STREAM PROTOCOL_ERROR after storing", travelruletest.FaultResetProtocolError, resetRate},
		{"RST_STREAM REFUSED_STREAM before storing", travelruletest.FaultResetRefusedStream, resetRate},
		{"GOAWAY (graceful shutdown) as the request arrives", travelruletest.FaultGoAway, goAwayRate},
	}
	row := func(k kind, h2, idem bool) *matrixRow {
		f := travelruletest.Fault{Kind: k.kind, Rate: k.rate, Ops: travelruletest.OpInitiate, Latency: latency}
		return &matrixRow{name: k.name, faults: []travelruletest.Fault{f}, h2: h2, idempotency: idem}
	}
	var rows []*matrixRow
	for _, idem := range []bool{false, true} {
		var mixed []travelruletest.Fault
		for _, k := range common {
			rows = append(rows, row(k, false, idem))
			f := row(k, false, idem).faults[0]
			f.Rate = faultRate / float64(len(common))
			mixed = append(mixed, f)
		}
		rows = append(rows, &matrixRow{name: "all kinds mixed (6.7% each)", faults: mixed, idempotency: idem})
		for _, k := range gateways {
			rows = append(rows, row(k, false, idem))
		}
		// Over HTTP/2 with TLS: the kinds above (a dropped connection is a
		// RST_STREAM INTERNAL_ERROR of the request's stream there), then
		// the resets and the GOAWAY, after which net/http's HTTP/2 client
		// may resend a request by itself.
		for _, k := range append(append(common, gateways...), h2only...) {
			rows = append(rows, row(k, true, idem))
		}
	}
	// A deployment whose gateways answer 503 only before forwarding may
	// say so: such a 503 is then retried as a 429 is.
	trusted := row(common[1], false, false)
	trusted.name += ", trusted (WithTrust503RetryAfterNotForwarded)"
	trusted.trust503 = true
	return append(rows, trusted)
}

// TestFaultMatrix drives the sandbox's fault injection through the public
// API: 1,200 initiations per row, a third of requests hit by each fault
// kind in turn (resets 1/16 and GOAWAY 1/96: see resetRate and
// goAwayRate), then all kinds mixed, over HTTP/1.1 and over HTTP/2 with
// TLS, with idempotency keys off and on, and one row that trusts a 503
// with Retry-After. It asserts zero duplicate transfers, every stored
// transfer accounted for by a success or an outcome-unknown error, the
// requests sent, the calls sent again and the calls left outcome unknown,
// and every fault recovered within the retry budget when the sandbox
// declared it did not act, or when the client has keys. go test
// ./faultmatrix -run TestFaultMatrix -update-reliability rewrites
// docs/reliability.md.
func TestFaultMatrix(t *testing.T) {
	rows := matrixRows()
	if testing.Short() {
		t.Skipf("the fault matrix makes %d initiations", len(rows)*matrixCalls)
	}
	for _, row := range rows {
		t.Run(fmt.Sprintf("%s/%s/idempotency=%t", row.transport(), row.name, row.idempotency), func(t *testing.T) {
			runMatrixRow(t, row, rowSeed(row))
		})
	}
	if *updateReliability {
		require.NoError(t, os.WriteFile(filepath.Join("..", "docs", "reliability.md"), []byte(reliabilityReport(rows)), 0o644))
	}
}

// rowSeed is the seed of a row's faults, from what the row is, so that
// adding a row changes no other row's faults.
func rowSeed(row *matrixRow) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%t", row.transport(), row.name, row.idempotency)
	return h.Sum64()
}

func runMatrixRow(t *testing.T, row *matrixRow, seed uint64) {
	tr := newAbandoning()
	newServer := travelruletest.NewServer
	if row.h2 {
		newServer = travelruletest.NewTLSServer
	}
	srv := newServer(
		travelruletest.WithFaults(row.faults...),
		travelruletest.WithSeed(seed),
		travelruletest.WithoutCallbacks(), // the matrix is about initiations
		travelruletest.WithLogger(slog.New(tr)),
	)
	defer srv.Close()
	tr.rt = tunedTransport(srv)
	opts := []travelrule.Option{
		travelrule.WithTokenSource(srv.TokenSource()),
		// A call fails for good only if all 22 attempts are hit, a third of
		// them each: 1200 * 3^-22, about 4e-8 per row. (With 8 retries at
		// 20% it was 1e-3 per row: one failed run in 125.)
		travelrule.WithRetryMax(21),
		travelrule.WithRetryWait(time.Millisecond, 5*time.Millisecond),
		travelrule.WithHTTPClient(&http.Client{Timeout: attemptLimit, Transport: tr}),
	}
	if row.idempotency {
		opts = append(opts, travelrule.WithIdempotency())
	}
	if row.trust503 {
		opts = append(opts, travelrule.WithTrust503RetryAfterNotForwarded())
	}
	client, err := travelrule.NewClient(srv.URL, opts...)
	require.NoError(t, err)

	type outcome struct {
		txID    string
		err     error
		attempt int
	}
	results := make([]outcome, matrixCalls)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < matrixWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				req := &travelrule.TransferRequest{
					Asset: "BTC", Amount: "0.5", Callback: "https://vasp-a.example/cb",
					TxID:        fmt.Sprintf("tx-%d-%05d", seed, i),
					Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
					Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
				}
				ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), callKey{}, i), 30*time.Second)
				res, err := client.InitiateTransfer(ctx, req)
				cancel()
				results[i] = outcome{txID: req.TxID, err: err}
				if res != nil {
					results[i].attempt = res.Attempts
				}
				var unknown *travelrule.OutcomeUnknownError
				if errors.As(err, &unknown) {
					results[i].attempt = unknown.Attempts
				}
			}
		}()
	}
	for i := 0; i < matrixCalls; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	// A client that abandoned its attempt has moved on before the sandbox
	// recorded the request; Close waits for every request being served, so
	// the records read below are complete.
	srv.Close()

	outcomes := map[string]string{}
	for _, r := range results {
		row.calls++
		row.attempts += r.attempt
		switch {
		case r.err == nil:
			row.succeeded++
			outcomes[r.txID] = "success"
		case errors.Is(r.err, travelrule.ErrOutcomeUnknown):
			row.unknown++
			outcomes[r.txID] = "unknown"
		default:
			row.definite++
			outcomes[r.txID] = "definite: " + r.err.Error()
		}
	}
	perTx := map[string]int{}
	for _, tr := range srv.Transfers() {
		row.stored++
		perTx[tr.Request.TxID]++
		if o := outcomes[tr.Request.TxID]; o != "success" && o != "unknown" {
			t.Errorf("stored transfer %s not accounted for by a success or an outcome-unknown error (%s)", tr.Request.TxID, o)
		}
	}
	var twice []string
	for txID, n := range perTx {
		if n > 1 {
			row.duplicates += n - 1
			twice = append(twice, fmt.Sprintf("%s %d times", txID, n))
		}
	}
	if len(twice) > 0 {
		slices.Sort(twice)
		t.Errorf("%d transfers stored more than once (%d duplicates), such as %s",
			len(twice), row.duplicates, strings.Join(twice[:min(len(twice), 5)], ", "))
	}
	for txID, o := range outcomes {
		if o == "success" && perTx[txID] != 1 {
			t.Errorf("success for %s but %d transfers stored", txID, perTx[txID])
		}
	}
	st := srv.Stats()
	row.injected = st.Faults
	require.Equal(t, st.Requests, len(srv.Requests()), "every request record kept")
	require.Equal(t, st.Initiated, row.stored, "every transfer kept")
	t.Logf("%s: %d calls, %d succeeded, %d definite, %d outcome unknown, %d stored, %d duplicates, %d attempts, %d faults",
		row.transport(), row.calls, row.succeeded, row.definite, row.unknown, row.stored, row.duplicates, row.attempts, row.injected)
	if row.h2 {
		assert.Zero(t, tr.http1.Load(), "every answer came over HTTP/2")
		assert.Positive(t, tr.http2.Load())
	} else {
		assert.Zero(t, tr.http2.Load(), "every answer came over HTTP/1.1")
	}
	held := 0
	for _, f := range row.faults {
		if f.Kind == travelruletest.FaultLatency {
			held++
		}
	}
	switch {
	case held == 0:
		assert.Zero(t, tr.abandoned.Load(), "no attempt is abandoned without a latency fault")
	case held == len(row.faults):
		assert.EqualValues(t, row.injected, tr.abandoned.Load(), "every held request was abandoned by its client")
	default:
		assert.Positive(t, tr.abandoned.Load())
	}

	assert.Zero(t, row.duplicates, "duplicates")
	assert.Equal(t, matrixCalls, row.calls)
	assert.Zero(t, row.definite, "every transient fault is recovered or reported as outcome unknown, never as a definite failure")
	assert.Positive(t, row.injected, "faults were injected")

	// Every attempt, by the X-Request-Id the sandbox recorded: what became
	// of it decides whether the client may send its call again.
	received := map[string]travelruletest.Request{}
	for _, r := range srv.Requests() {
		id := r.Header.Get("X-Request-Id")
		_, twice := received[id]
		require.False(t, twice, "%s received twice: a layer under the client resent it", id)
		received[id] = r
	}
	fates := map[fate]int{}
	goAway := st.ByFault[travelruletest.FaultGoAway] > 0
	for i, res := range results {
		attempts := tr.attemptsOf(i)
		require.Len(t, attempts, res.attempt, "call %d: the client counts every attempt its transport saw", i)
		for j, a := range attempts {
			f := row.fateOf(a, received)
			fates[f]++
			final := j == len(attempts)-1
			switch {
			case f == lost:
				require.True(t, goAway, "%s written and never received", a.id)
				require.False(t, final, "%s: a request lost on the way was above the GOAWAY's last-stream-id: sent again", a.id)
			case !final:
				if !row.idempotency {
					require.Contains(t, []fate{declined, unsent, silent}, f,
						"%s: without keys a call is sent again only after the service declared it did not act, or after an attempt not sent", a.id)
				}
			case res.err == nil:
				require.Equal(t, answered, f, "%s: the success is the answer of the last attempt", a.id)
			default:
				// Outcome unknown: the service may have acted, or the
				// attempt failed before it was written without the
				// transport saying so (see abandoning).
				require.Contains(t, []fate{ambiguous, unproven, silent}, f, "%s ended its call as outcome unknown", a.id)
				require.False(t, row.idempotency, "%s: with keys every fault is recovered", a.id)
			}
		}
	}
	// Every attempt left the client as a request the sandbox received, or
	// failed before it was written, or (in the GOAWAY rows) was written to
	// a connection as it was closing and lost on the way.
	assert.Equal(t, row.attempts, st.Requests+fates[unsent]+fates[silent]+fates[lost])
	assert.Equal(t, matrixCalls, row.succeeded+row.unknown)
	declinesOnly := true
	for _, f := range row.faults {
		declinesOnly = declinesOnly && row.declines(f.Kind)
	}
	switch {
	case row.idempotency:
		assert.Equal(t, matrixCalls, row.succeeded, "with idempotency keys every fault is recovered within the retry budget")
		assert.Equal(t, matrixCalls, row.stored, "one transfer per call")
	case declinesOnly:
		assert.Equal(t, matrixCalls, row.succeeded, "a fault by which the service declares it did not act is always recovered within the retry budget")
		assert.Equal(t, matrixCalls, row.stored, "one transfer per call")
	default:
		assert.Positive(t, row.unknown, "faults after which the service may have acted are reported, not retried, without idempotency keys")
	}
}

// fate is what became of an attempt.
type fate string

const (
	answered  fate = "answered 2xx"
	declined  fate = "declined: the service said it did not act"
	unproven  fate = "not acted on, said by a reset, which proves nothing"
	ambiguous fate = "the service may have acted"
	unsent    fate = "failed before it was written"
	silent    fate = "failed before it was written, unseen by the client"
	lost      fate = "written and never received"
)

// fateOf tells what became of attempt a, from the requests the sandbox
// received by X-Request-Id. Declined are a 429, a 503 with Retry-After for
// a client that trusts it, and a request recorded without answer and
// without a transfer, not held: a stream above a GOAWAY's last-stream-id.
// A REFUSED_STREAM is unproven: the sandbox did not act, but a proxy sends
// the same after forwarding. The others are ambiguous: 500, 503, and no
// answer otherwise (a dropped connection, a PROTOCOL_ERROR reset, an
// abandoned attempt).
func (r *matrixRow) fateOf(a attemptRecord, received map[string]travelruletest.Request) fate {
	req, ok := received[a.id]
	switch {
	case !ok && a.wrote:
		return lost
	case !ok && a.looked:
		return unsent
	case !ok:
		return silent
	case req.Status/100 == 2:
		return answered
	case slices.Contains(req.Faults, travelruletest.FaultResetRefusedStream):
		return unproven
	case req.Status == http.StatusTooManyRequests,
		req.Status == http.StatusServiceUnavailable && r.trust503,
		req.Status == 0 && req.TransferID == "" && !slices.Contains(req.Faults, travelruletest.FaultLatency):
		return declined
	}
	return ambiguous
}

// callKey is the context key of a call's index in the row, which the
// transport reads.
type callKey struct{}

// attemptRecord is what the transport saw of one attempt.
type attemptRecord struct {
	id            string // its X-Request-Id
	looked, wrote bool   // the transport reported looking for a connection, writing the request's headers
}

// abandoning is a transport that gives up on an attempt the moment the
// sandbox reports holding it, as an attempt time-out would: each attempt
// carries an X-Request-Id, and abandoning is also the slog.Handler of the
// sandbox's log, where "travelruletest: holding request" names that id.
// It also counts the answers by protocol, and records each call's
// attempts with what the transport reported of them through httptrace:
// whether it looked for a connection (GetConn) and wrote the request's
// headers (WroteHeaders). The client learns what is written from the same
// hooks. An attempt that failed before it was written, but after the
// transport looked for a connection, is one the client knows was not
// sent; net/http's HTTP/2 client can also fail one without reporting
// either (a request given to a cached connection that has just become
// unusable, after a PROTOCOL_ERROR reset say, finds no other cached one,
// and net/http, which closed its body, cannot send it on a new one:
// "cannot rewind body after connection loss"), which the client takes as
// one that may have been sent.
type abandoning struct {
	rt           http.RoundTripper // set before the first request
	next         atomic.Uint64
	cancels      sync.Map // request id -> context.CancelFunc of the attempt
	abandoned    atomic.Int64
	http1, http2 atomic.Int64 // answers
	mu           sync.Mutex
	calls        map[int][]attemptRecord // call index -> its attempts, in order
}

func newAbandoning() *abandoning { return &abandoning{calls: map[int][]attemptRecord{}} }

// attemptsOf returns the attempts of call i.
func (a *abandoning) attemptsOf(i int) []attemptRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[i]
}

func (a *abandoning) RoundTrip(r *http.Request) (*http.Response, error) {
	id := "attempt-" + strconv.FormatUint(a.next.Add(1), 10)
	ctx, cancel := context.WithCancel(r.Context())
	a.cancels.Store(id, cancel)
	var looked, wrote atomic.Bool
	// Composed with the client's own trace, which tells it the same.
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn:      func(string) { looked.Store(true) },
		WroteHeaders: func() { wrote.Store(true) },
	})
	r = r.Clone(ctx)
	r.Header.Set("X-Request-Id", id)
	resp, err := a.rt.RoundTrip(r)
	if call, ok := r.Context().Value(callKey{}).(int); ok {
		a.mu.Lock()
		a.calls[call] = append(a.calls[call], attemptRecord{id: id, looked: looked.Load(), wrote: wrote.Load()})
		a.mu.Unlock()
	}
	if err != nil {
		a.cancels.Delete(id)
		cancel()
		return nil, err
	}
	if resp.ProtoMajor == 2 {
		a.http2.Add(1)
	} else {
		a.http1.Add(1)
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: func() {
		a.cancels.Delete(id)
		cancel()
	}}
	return resp, nil
}

// releasingBody ends its attempt's context when the body is closed.
type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

func (a *abandoning) Enabled(context.Context, slog.Level) bool { return true }

func (a *abandoning) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "travelruletest: holding request" {
		return nil
	}
	r.Attrs(func(at slog.Attr) bool {
		if at.Key != "request_id" {
			return true
		}
		if cancel, ok := a.cancels.Load(at.Value.String()); ok {
			a.abandoned.Add(1)
			cancel.(context.CancelFunc)()
		}
		return false
	})
	return nil
}

func (a *abandoning) WithAttrs([]slog.Attr) slog.Handler { return a }
func (a *abandoning) WithGroup(string) slog.Handler      { return a }

// tunedTransport is a transport for srv with an idle connection per worker;
// for a TLS server it trusts the server's certificate and attempts HTTP/2
// (as http.DefaultTransport does).
func tunedTransport(srv *travelruletest.Server) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = matrixWorkers
	if base, ok := srv.Client().Transport.(*http.Transport); ok && base.TLSClientConfig != nil {
		tr.TLSClientConfig = base.TLSClientConfig.Clone()
	}
	return tr
}

func reliabilityReport(rows []*matrixRow) string {
	var b strings.Builder
	b.WriteString(`# Reliability: the fault matrix

Generated by ` + "`TestFaultMatrix`" + ` (faultmatrix/faultmatrix_test.go); rewrite with

    go test ./faultmatrix -run TestFaultMatrix -update-reliability

Each row makes 1,200 transfer initiations through the public API against the
sandbox (` + "`travelruletest`" + `), 32 at a time, over HTTP/1.1 (` + "`NewServer`" + `) or over
HTTP/2 with TLS (` + "`NewTLSServer`" + `, the 32 calls sharing connections), with one
fault kind hitting a third of the initiation requests (the mixed row: five
kinds, 6.7% each; the HTTP/2 resets 1/16 and GOAWAY 1/96, see below). The
client retries at most 21 times and waits 1-5 ms between attempts.

The kinds, as the sandbox plays them:

- **Before it acts, and saying so**: a 429 with Retry-After (a rate
  limiter).
- **Before it acts, saying so in a way that proves nothing**: over HTTP/2 a
  RST_STREAM REFUSED_STREAM, which RFC 9113 (section 8.7) reserves for a
  stream not processed, but which haproxy 2.6 sends after it forwarded a
  request the upstream stored (` + "`TestHAProxyResetAfterStoringIsNeverResent`" + `):
  the client sends it again only for a call that may be repeated.
- **Before it acts, saying nothing**: a 503 with Retry-After in the
  service's envelope (a gateway with no healthy upstream).
- **After it stored the transfer**, the case a client must never retry
  blindly: a 500; a dropped connection (over HTTP/2, a RST_STREAM
  INTERNAL_ERROR of the request's stream); a proxy's 503 without
  Retry-After (an upstream reset before headers); a gateway's 503 with
  Retry-After and a maintenance page (nginx's ` + "`error_page 502 504 =503`" + ` with
  ` + "`add_header Retry-After 1 always`" + `), which a client cannot tell from the
  503 before acting; and over HTTP/2 a RST_STREAM PROTOCOL_ERROR.
- **A GOAWAY**, over HTTP/2, is a graceful shutdown as nginx's at
  ` + "`keepalive_requests`" + ` or on a reload: as the faulted request arrives the
  sandbox sends GOAWAY (NO_ERROR) whose last-stream-id is the highest stream
  it had taken; the streams above it (the faulted request's, unless a
  higher stream was taken before it, and those the calls in flight open on
  the connection before they see the GOAWAY) are not acted on and get
  nothing, the others are answered in full, then the connection closes. RFC 9113 (section 6.8) guarantees a client that the
  streams above the last-stream-id were not processed. One fault sends
  several attempts again, hence its lower rate.
- **Held**: the latency fault holds a request, before acting, without
  answer until the client gives up on the attempt, which the client does
  the moment the sandbox reports holding it (as an attempt time-out would,
  without racing a short time-out against answers slowed by a loaded
  machine).

After a REFUSED_STREAM, a PROTOCOL_ERROR or a GOAWAY, net/http's HTTP/2
client resends a request by itself if it can rewind the body; the client
never lets it, and sends a stream above a GOAWAY's last-stream-id again
through its own retry loop, with backoff and budget. The resets are at 1/16 so that a client
that let net/http resend, which waits 1 s, 2 s, 4 s... between its own
resends, would fail the row rather than hang it. The last row trusts a 503
with Retry-After as "not forwarded" (` + "`WithTrust503RetryAfterNotForwarded`" + `):
right for that fault, which comes before the sandbox acts, and wrong behind a
gateway with a maintenance page, where it would send a stored transfer
again.

Columns: calls that **succeeded**; **definite** failures (nothing was
created); **outcome unknown** failures (` + "`ErrOutcomeUnknown`" + `: the caller must
reconcile); transfers the sandbox **stored**; **duplicates** (a payment stored
more than once); **attempts** (requests the client sent, each counted once
however often net/http resent it underneath); **faults** injected.

| transport | faults | idempotency key | calls | succeeded | definite | outcome unknown | stored | duplicates | attempts | faults |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
`)
	dupRows := 0
	var keyedShort, declinedShort []string
	for _, r := range rows {
		idem := "off"
		if r.idempotency {
			idem = "on"
		}
		short := fmt.Sprintf("%s %s, keys %s (%d calls)", r.transport(), r.name, idem, r.calls-r.succeeded)
		declinesOnly := true
		for _, f := range r.faults {
			declinesOnly = declinesOnly && r.declines(f.Kind)
		}
		switch {
		case r.succeeded == r.calls:
		case r.idempotency:
			keyedShort = append(keyedShort, short)
		case declinesOnly:
			declinedShort = append(declinedShort, short)
		}
		if r.duplicates > 0 {
			dupRows++
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %d |\n",
			r.transport(), r.name, idem, r.calls, r.succeeded, r.definite, r.unknown, r.stored, r.duplicates, r.attempts, r.injected)
	}
	b.WriteString("\nWhat the rows show:\n\n")
	if dupRows == 0 {
		b.WriteString(`- **Zero duplicates in every row.** Without idempotency keys the client never
  sends an initiation again once the service may have acted on it, and never
  lets net/http resend it underneath; the sandbox stores fewer transfers than
  succeeded + outcome unknown only where it had not acted: a 503 before
  acting, a REFUSED_STREAM, attempts abandoned while held, and (rarely) an attempt that
  net/http failed unseen before writing it (see the attempts below).
`)
	} else {
		fmt.Fprintf(&b, "- **DUPLICATES in %d rows**: the client sent an initiation again after the service may have acted on it.\n", dupRows)
	}
	if len(declinedShort) == 0 {
		b.WriteString(`- **What the service declares it did not act on is always recovered**
  within the retry budget, keys or not, one transfer stored per call: a 429,
  a GOAWAY (every stream above its last-stream-id is sent again, and none
  was acted on), and a 503 with Retry-After for a client that trusts it.
`)
	} else {
		b.WriteString("- **What the service declares it did not act on is recovered but in " + strings.Join(declinedShort, ", ") + "**.\n")
	}
	b.WriteString(`- **Without keys, every answer after which the service may have acted ends
  its call as outcome unknown**, never as a definite failure and never
  resent: a 503 with Retry-After, from a gateway with no upstream (nothing
  stored) or from its maintenance page (stored), since the client cannot
  tell them apart; a 500; a proxy's 503 without Retry-After; a dropped
  connection, a PROTOCOL_ERROR reset, a REFUSED_STREAM (the sandbox sends
  it before storing, but haproxy sends it after forwarding, and the client
  cannot tell them apart), an abandoned attempt. Every stored
  transfer is accounted for by a success or one of these.
`)
	if len(keyedShort) == 0 {
		b.WriteString(`- **With idempotency keys every row succeeds in full**: the client retries
  ambiguous failures with the same key and the sandbox replays the stored
  answer instead of storing a second transfer.
`)
	} else {
		b.WriteString("- **With idempotency keys every row succeeds in full but " + strings.Join(keyedShort, ", ") + "**.\n")
	}
	b.WriteString(`- Attempts count every request that left the client: in every row they
  equal the requests the sandbox received plus the attempts that failed
  before their request was written, plus, in the GOAWAY rows, the few
  written to a connection as it was closing, which never arrived (each
  above the last-stream-id, and sent again). The matrix follows each call
  attempt by attempt, by the X-Request-Id the sandbox records: without keys
  a call is sent again only after the service declared it did not act or
  after an attempt that failed before it was written, and an outcome-unknown
  call's last attempt is one after which the service may have acted, or one
  that net/http's HTTP/2 client failed before writing it without reporting
  even that it looked for a connection (a request given to a cached
  connection that a PROTOCOL_ERROR reset has just made unusable: "cannot
  rewind body after connection loss"), which the client cannot tell from one
  that was sent. net/http resends nothing underneath: without a key it has
  no body to rewind, and with one the client refuses its resend and retries
  through its own policy.
`)
	return b.String()
}
