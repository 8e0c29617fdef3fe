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
// and whether the client sends idempotency keys.
type matrixRow struct {
	name        string
	faults      []travelruletest.Fault
	h2          bool // HTTP/2 over TLS (travelruletest.NewTLSServer), else HTTP/1.1
	idempotency bool

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
	// (send.go, getBody), but a client that did would run out of its
	// 30 s at a third, so the rows keep the rate that measures one without
	// hanging: at 1/16 a call is hit six times in a row with 7e-5 per row.
	resetRate = 1.0 / 16
	// goAwayRate is the share of requests a GOAWAY fault hits. A GOAWAY ends
	// every stream of its connection, which the calls in flight share over
	// HTTP/2, so it cuts several attempts at once.
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
		{"503 + Retry-After", travelruletest.FaultUnavailable, faultRate},
		{"500 after storing", travelruletest.FaultInternal, faultRate},
		{"connection dropped after storing", travelruletest.FaultDrop, faultRate},
		{"held until the client gives up", travelruletest.FaultLatency, faultRate},
	}
	proxy := kind{"proxy's 503 without Retry-After after storing", travelruletest.FaultProxyUnavailable, faultRate}
	h2only := []kind{
		{"RST_STREAM PROTOCOL_ERROR after storing", travelruletest.FaultResetProtocolError, resetRate},
		{"RST_STREAM REFUSED_STREAM after storing", travelruletest.FaultResetRefusedStream, resetRate},
		{"GOAWAY (last-stream-id 0) after storing", travelruletest.FaultGoAway, goAwayRate},
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
		rows = append(rows, row(proxy, false, idem))
		// Over HTTP/2 with TLS: the kinds above (a dropped connection is a
		// RST_STREAM INTERNAL_ERROR of the request's stream there), then
		// the resets and the GOAWAY that net/http's HTTP/2 client may
		// replay by itself.
		for _, k := range append(append(common, proxy), h2only...) {
			rows = append(rows, row(k, true, idem))
		}
	}
	return rows
}

// TestFaultMatrix drives the sandbox's fault injection through the public
// API: 1,200 initiations per row, a third of requests hit by each fault
// kind in turn (resets 1/16 and GOAWAY 1/96: see resetRate and
// goAwayRate), then all kinds mixed, over
// HTTP/1.1 and over HTTP/2 with TLS, with idempotency keys off and on. It
// asserts zero duplicate transfers, every stored transfer accounted for by
// a success or an outcome-unknown error, the requests sent and the calls
// left outcome unknown, and every transient fault recovered within the
// retry budget. go test ./faultmatrix -run TestFaultMatrix
// -update-reliability rewrites docs/reliability.md.
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
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
	ambiguousOnly := true
	for _, f := range row.faults {
		if f.Kind == travelruletest.FaultRateLimit || f.Kind == travelruletest.FaultUnavailable {
			ambiguousOnly = false
		}
	}
	// The answers that prove the service did nothing: 429, and 503 with
	// Retry-After (the proxy's 503 has none). The answers after which it may
	// have acted: 500, the proxy's 503, none at all (a dropped connection,
	// a reset stream, a GOAWAY, an abandoned attempt), and a 2xx whose body
	// a GOAWAY cut after its headers.
	proxy503 := st.ByFault[travelruletest.FaultProxyUnavailable]
	throttled := st.ByStatus[http.StatusTooManyRequests] + st.ByStatus[http.StatusServiceUnavailable] - proxy503
	cut2xx := 0 // the sandbox's GOAWAY no longer cuts an answer
	ambiguous := st.ByStatus[http.StatusInternalServerError] + proxy503 + st.ByStatus[0] + cut2xx
	// No layer resends a request the client does not count: net/http's
	// HTTP/1 and HTTP/2 resends of a written request are refused or
	// impossible, keys or not. A request written to a connection that a
	// GOAWAY is closing can be lost on the way: counted, never received.
	sent := st.Requests + int(tr.unsent.Load())
	if st.ByFault[travelruletest.FaultGoAway] == 0 {
		assert.Equal(t, sent, row.attempts, "attempts = requests the sandbox received + attempts never written")
	} else {
		assert.GreaterOrEqual(t, row.attempts, sent, "attempts >= requests the sandbox received + attempts never written")
	}
	lost := max(row.attempts-sent, 0) // written as a GOAWAY closed the connection, never received
	if !row.idempotency {
		// Without keys an initiation is sent again only after an answer
		// that proves the service did not act, or after an attempt that
		// failed before its request was written (over HTTP/2, a GOAWAY or
		// a PROTOCOL_ERROR reset also ends the connection for requests
		// about to use it), and every answer after which the service may
		// have acted ends its call as outcome unknown: one request per
		// call, plus one per throttling answer or unsent attempt.
		assert.Equal(t, matrixCalls+throttled+int(tr.unsent.Load()), row.attempts,
			"without keys a call is sent again only after a 429, a 503 with Retry-After or an attempt never sent")
		assert.Equal(t, ambiguous+lost, row.unknown,
			"without keys each answer after which the service may have acted, and each request lost on the way, ends one call as outcome unknown")
	}
	switch {
	case row.idempotency:
		// The client does not retry a 2xx whose body was cut, key or not:
		// those calls alone end outcome unknown.
		assert.Equal(t, matrixCalls, row.succeeded+row.unknown)
		assert.LessOrEqual(t, row.unknown, cut2xx,
			"with idempotency keys every fault is recovered within the retry budget, but for a 2xx answer cut short")
	case !ambiguousOnly && len(row.faults) == 1:
		assert.Equal(t, matrixCalls, row.succeeded, "429 and 503 with Retry-After are always recovered within the retry budget")
	default:
		assert.Positive(t, row.unknown, "ambiguous faults without idempotency keys are reported, not retried")
		assert.Equal(t, matrixCalls, row.succeeded+row.unknown)
	}
}

// abandoning is a transport that gives up on an attempt the moment the
// sandbox reports holding it, as an attempt time-out would: each attempt
// carries an X-Request-Id, and abandoning is also the slog.Handler of the
// sandbox's log, where "travelruletest: holding request" names that id.
// It also counts the answers by protocol, and the attempts that failed
// before their request was written (which the client may send again).
type abandoning struct {
	rt           http.RoundTripper // set before the first request
	next         atomic.Uint64
	cancels      sync.Map // request id -> context.CancelFunc of the attempt
	abandoned    atomic.Int64
	http1, http2 atomic.Int64 // answers
	unsent       atomic.Int64
}

func newAbandoning() *abandoning { return &abandoning{} }

func (a *abandoning) RoundTrip(r *http.Request) (*http.Response, error) {
	id := "attempt-" + strconv.FormatUint(a.next.Add(1), 10)
	ctx, cancel := context.WithCancel(r.Context())
	a.cancels.Store(id, cancel)
	var wrote atomic.Bool
	// Composed with the client's own trace, which tells it the same.
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
	r = r.Clone(ctx)
	r.Header.Set("X-Request-Id", id)
	resp, err := a.rt.RoundTrip(r)
	if err != nil {
		if !wrote.Load() {
			a.unsent.Add(1)
		}
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

The kinds: 429 and 503 with Retry-After come before the sandbox acts. All
the others strike after it stored the transfer, the case a client must never
retry blindly: a 500; a dropped connection (over HTTP/2, a RST_STREAM
INTERNAL_ERROR of the request's stream); a proxy's 503 without Retry-After
(an upstream reset before headers); and over HTTP/2 a RST_STREAM
PROTOCOL_ERROR or REFUSED_STREAM, or a GOAWAY with last-stream-id 0, each of
which claims the request was not processed, and after which net/http's
HTTP/2 client resends the request by itself if it can rewind the body (the
client never lets it). A GOAWAY ends every stream of its connection: one
fault cuts the answers of the calls in flight on it, hence its lower rate.
The resets are at 1/16 so that a client that let net/http resend, which
waits 1 s, 2 s, 4 s... between its own resends, would fail the row rather
than hang it. The latency fault
holds a request without answer until the client gives up on the attempt,
which the client does the moment the sandbox reports holding it (as an
attempt time-out would, without racing a short time-out against answers
slowed by a loaded machine).

Columns: calls that **succeeded**; **definite** failures (nothing was
created); **outcome unknown** failures (` + "`ErrOutcomeUnknown`" + `: the caller must
reconcile); transfers the sandbox **stored**; **duplicates** (a payment stored
more than once); **attempts** (requests the client sent, each counted once
however often net/http resent it underneath); **faults** injected.

| transport | faults | idempotency key | calls | succeeded | definite | outcome unknown | stored | duplicates | attempts | faults |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
`)
	dupRows, keyedShort := 0, map[string]int{}
	for _, r := range rows {
		idem := "off"
		if r.idempotency {
			idem = "on"
			if r.succeeded < r.calls {
				keyedShort[r.transport()+" "+r.name] += r.calls - r.succeeded
			}
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
  succeeded + outcome unknown only where the service had not acted: attempts
  abandoned while held, and requests that reached a connection after its
  GOAWAY.
`)
	} else {
		fmt.Fprintf(&b, "- **DUPLICATES in %d rows**: the client sent an initiation again after the service may have acted on it.\n", dupRows)
	}
	b.WriteString(`- **429 and 503 with Retry-After are always recovered** within the retry
  budget, keys or not: they are answered before the service acts.
- **Without keys, every fault after storing ends its call as outcome
  unknown**, never as a definite failure and never resent: 500, a dropped
  connection or reset stream, a proxy's 503 without Retry-After (which does
  not prove the service did nothing), a GOAWAY, an abandoned attempt. Every
  stored transfer is accounted for by a success or one of these.
`)
	if len(keyedShort) == 0 {
		b.WriteString(`- **With idempotency keys every row succeeds in full**: the client retries
  ambiguous failures with the same key and the sandbox replays the stored
  answer instead of storing a second transfer.
`)
	} else {
		var short []string
		for name, n := range keyedShort {
			short = append(short, fmt.Sprintf("%s (%d calls)", name, n))
		}
		slices.Sort(short)
		b.WriteString(`- **With idempotency keys every row succeeds in full but ` + strings.Join(short, ", ") + `**:
  the client retries ambiguous failures with the same key and the sandbox
  replays the stored answer instead of storing a second transfer. The calls
  short are those whose 2xx answer a GOAWAY cut after its headers: the
  client does not send a call again after a 2xx, key or not, and reports it
  as outcome unknown.
`)
	}
	b.WriteString(`- Attempts count every request that left the client: in every row they
  equal the requests the sandbox received plus the attempts that failed
  before their request was written (in the GOAWAY rows, add the few written
  to a connection as it closed, which never arrived). net/http resends nothing underneath:
  without a key it has no body to rewind, and with one the client refuses
  its resend and retries through its own policy, with backoff and budget.
`)
	return b.String()
}
