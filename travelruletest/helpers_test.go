package travelruletest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// Personal values of the sample request; error answers must never carry
// them.
var personalValues = []string{"Ada", "Lovelace", "1815-12-10", "Baker Street", "221B", "NW1 6XE", "London",
	"Alan", "Turing", "1912-06-23", "X1234567", "0xfeedbeef", "ada@example.com"}

// validRequest returns a request that passes every check, with its status
// callbacks going to callback.
func validRequest(callback string) *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Email:    "ada@example.com",
		TxID:     "0xabc123",
		Asset:    "BTC",
		Amount:   "0.25",
		Callback: callback,
		Originator: travelrule.Party{
			PersonType:     "natural",
			FirstName:      "Ada",
			LastName:       "Lovelace",
			DateOfBirth:    "1815-12-10",
			AddressType:    "HOME",
			StreetName:     "Baker Street",
			BuildingNumber: "221B",
			PostCode:       "NW1 6XE",
			TownName:       "London",
			Country:        "GB",
		},
		Beneficiary: travelrule.Party{
			PersonType:     "natural",
			FirstName:      "Alan",
			LastName:       "Turing",
			DateOfBirth:    "1912-06-23",
			Country:        "GB",
			NationalID:     "X1234567",
			NationalIDType: "CCPT",
			WalletAddress:  "0xfeedbeef",
		},
	}
}

// wire returns req's JSON form as a generic map, to be changed by a test.
func wire(t *testing.T, req *travelrule.TransferRequest) map[string]any {
	t.Helper()
	b, err := json.Marshal(req)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// newServer starts a server with fast callback retries, closed when the
// test ends.
func newServer(t testing.TB, opts ...travelruletest.Option) *travelruletest.Server {
	t.Helper()
	return startServer(t, travelruletest.NewServer, opts)
}

// newTLSServer starts a TLS server (HTTP/2 or HTTP/1.1) with fast callback
// retries, closed when the test ends.
func newTLSServer(t testing.TB, opts ...travelruletest.Option) *travelruletest.Server {
	t.Helper()
	return startServer(t, travelruletest.NewTLSServer, opts)
}

// startServer starts a server with start, fast callback retries and opts,
// and closes it when the test ends.
func startServer(t testing.TB, start func(...travelruletest.Option) *travelruletest.Server, opts []travelruletest.Option) *travelruletest.Server {
	t.Helper()
	srv := start(append([]travelruletest.Option{travelruletest.WithCallbackRetry(3, time.Millisecond, 5*time.Millisecond)}, opts...)...)
	t.Cleanup(srv.Close)
	return srv
}

// concurrently calls do n times in all from 16 goroutines and returns when
// they are done; a goroutine stops early when do reports false.
func concurrently(n int, do func() bool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if !do() {
					return
				}
			}
		})
	}
	wg.Wait()
}

// http1Client returns a client of srv that offers only HTTP/1.1.
func http1Client(srv *travelruletest.Server) *http.Client {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = false
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP1(true)
	return &http.Client{Transport: tr}
}

// newClient returns an SDK client of srv with fast retries.
func newClient(t testing.TB, srv *travelruletest.Server, opts ...travelrule.Option) *travelrule.Client {
	t.Helper()
	opts = append([]travelrule.Option{
		travelrule.WithTokenSource(srv.TokenSource()),
		travelrule.WithRetryWait(time.Millisecond, 10*time.Millisecond),
	}, opts...)
	c, err := travelrule.NewClient(srv.URL, opts...)
	require.NoError(t, err)
	return c
}

// rawAnswer is an answer to a raw request.
type rawAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// errorEntry is one entry of the live service's "errors" array, with the
// sandbox's "field".
type errorEntry struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

// entries decodes the answer as the live service's error envelope,
// {"status":false,"errors":[...]}, and checks its shape: status false, at
// least one entry, each with a code in upper snake case and a message.
func (a rawAnswer) entries(t *testing.T) []errorEntry {
	t.Helper()
	var eb struct {
		Status *bool        `json:"status"`
		Errors []errorEntry `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(a.Body, &eb), "body %s", a.Body)
	require.NotNil(t, eb.Status, "body %s", a.Body)
	require.False(t, *eb.Status, "body %s", a.Body)
	require.NotEmpty(t, eb.Errors, "body %s", a.Body)
	for _, e := range eb.Errors {
		assert.Regexp(t, `^[A-Z][A-Z_]*[A-Z]$`, e.Code)
		assert.NotEmpty(t, e.Message)
	}
	return eb.Errors
}

// errorBody decodes the answer as the sandbox's error envelope: the code
// and message of its first entry, and the field faults of its entries
// (each message is "<field>: <reason>").
func (a rawAnswer) errorBody(t *testing.T) (code, message string, fields []travelrule.FieldError) {
	t.Helper()
	es := a.entries(t)
	for _, e := range es {
		if e.Field != "" {
			require.True(t, strings.HasPrefix(e.Message, e.Field+": "), "the message %q names its field %q", e.Message, e.Field)
			fields = append(fields, travelrule.FieldError{Field: e.Field, Reason: strings.TrimPrefix(e.Message, e.Field+": ")})
		}
	}
	return es[0].Code, es[0].Message, fields
}

// documentedAsset is the live docs' one example of an error entry, the
// answer to an empty asset, as the sandbox answers it: no "field".
var documentedAsset = errorEntry{Code: "INVALID_REQUEST", Message: "Asset is required"}

// badRequestFields asserts that the answer is the sandbox's 400 naming
// exactly the fields want, each in an entry of its own with a reason, with
// the code VALIDATION_ERROR (INVALID_TRAVEL_ADDRESS for a travel address
// that is none), but for an empty asset, named by the live docs' entry
// (documentedAsset).
func (a rawAnswer) badRequestFields(t *testing.T, want []string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, a.Status, "body %s", a.Body)
	var got []string
	for _, e := range a.entries(t) {
		if e == documentedAsset {
			got = append(got, "asset")
			continue
		}
		got = append(got, e.Field)
		if e.Field == "travelAddress" && strings.Contains(e.Message, "not a travel address") {
			assert.Equal(t, "INVALID_TRAVEL_ADDRESS", e.Code)
		} else {
			assert.Equal(t, "VALIDATION_ERROR", e.Code)
		}
		assert.NotEqual(t, e.Field+": ", e.Message, "a reason")
	}
	assert.ElementsMatch(t, want, got)
}

// post sends body (a string, []byte or a value to encode) to url with the
// bearer token (none if empty), Content-Type application/json, and headers
// given as name/value pairs (an empty value removes the header).
func post(t *testing.T, url, token string, body any, header ...string) rawAnswer {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		var err error
		b, err = json.Marshal(v)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawAnswer{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// token returns a valid bearer token of srv.
func token(t testing.TB, srv *travelruletest.Server) string {
	t.Helper()
	tok, err := srv.TokenSource().Token()
	require.NoError(t, err)
	return tok.AccessToken
}

// hit is one request a receiver got.
type hit struct {
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	Status int // what the receiver answered
	Time   time.Time
}

// liveCallback holds the fields of the live service's four callback
// bodies: an INQUIRY {asset, amount, callback, IVMS101}, an
// INQUIRY_RESOLUTION {approved, callback}, a TRANSFER_RESOLUTION
// {transferId, status, statusComment, callback} and a
// TRANSFER_CONFIRMATION {txid}.
type liveCallback struct {
	Asset         string          `json:"asset"`
	Amount        string          `json:"amount"`
	IVMS101       json.RawMessage `json:"IVMS101"`
	Approved      json.RawMessage `json:"approved"`
	TransferID    string          `json:"transferId"`
	Status        string          `json:"status"`
	StatusComment string          `json:"statusComment"`
	Callback      string          `json:"callback"`
	TxID          string          `json:"txid"`
}

// decodeLive decodes a callback body.
func decodeLive(t *testing.T, body []byte) liveCallback {
	t.Helper()
	var cb liveCallback
	require.NoError(t, json.Unmarshal(body, &cb), "body %s", body)
	return cb
}

func (h hit) callback(t *testing.T) liveCallback {
	t.Helper()
	return decodeLive(t, h.Body)
}

// q is the transfer id in the q query parameter of the URL u.
func q(t *testing.T, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	require.NoError(t, err)
	return parsed.Query().Get("q")
}

// receiver is a callback receiver that records every request and answers
// what its answer function says (204 by default). prior is how many earlier
// requests were the same delivery: the same webhook-id, or, without one
// (the live service's callbacks carry none), the same URL and body.
type receiver struct {
	*httptest.Server
	answer func(r *http.Request, body []byte, prior int) int

	mu   sync.Mutex
	hits []hit
	seen map[string]int
}

func newReceiver(t testing.TB, answer func(r *http.Request, body []byte, prior int) int) *receiver {
	t.Helper()
	rc := &receiver{answer: answer, seen: make(map[string]int)}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id := r.Header.Get("webhook-id")
	if id == "" {
		id = r.URL.RequestURI() + "\x00" + string(body)
	}
	rc.mu.Lock()
	prior := rc.seen[id]
	rc.seen[id]++
	rc.mu.Unlock()
	status := http.StatusNoContent
	if rc.answer != nil {
		status = rc.answer(r, body, prior)
	}
	rc.mu.Lock()
	rc.hits = append(rc.hits, hit{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, Status: status, Time: time.Now()})
	rc.mu.Unlock()
	w.WriteHeader(status)
}

func (rc *receiver) Hits() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// closedURL returns an http URL on a loopback port where every connection
// is closed unanswered, until the test ends. (A port merely closed could be
// taken by another listener before the callback is sent.)
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return "http://" + ln.Addr().String() + "/callback"
}

// logEvents is a slog.Handler that counts the messages a server logs, so
// that a test waits for an event inside the server instead of polling its
// state.
type logEvents struct {
	mu      sync.Mutex
	counts  map[string]int
	changed chan struct{} // closed and replaced on every record
}

func newLogEvents() *logEvents {
	return &logEvents{counts: map[string]int{}, changed: make(chan struct{})}
}

func (h *logEvents) Enabled(context.Context, slog.Level) bool { return true }

func (h *logEvents) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[r.Message]++
	close(h.changed)
	h.changed = make(chan struct{})
	return nil
}

func (h *logEvents) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logEvents) WithGroup(string) slog.Handler      { return h }

// wait blocks until msg was logged n times in all.
func (h *logEvents) wait(t testing.TB, msg string, n int) {
	t.Helper()
	if err := h.waitErr(msg, n); err != nil {
		t.Fatal(err)
	}
}

// waitErr is wait for goroutines other than the test's. The 30-second
// bound only ends a test whose event never comes.
func (h *logEvents) waitErr(msg string, n int) error {
	bound := time.NewTimer(30 * time.Second)
	defer bound.Stop()
	for {
		h.mu.Lock()
		got, changed := h.counts[msg], h.changed
		h.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-bound.C:
			return fmt.Errorf("%q logged %d times, want %d", msg, got, n)
		}
	}
}

// waitCallbacks waits for n finished callbacks; the 30-second bound only
// ends a test whose callbacks never come.
func waitCallbacks(t *testing.T, srv *travelruletest.Server, n int) []travelruletest.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ds, err := srv.WaitCallbacks(ctx, n)
	require.NoError(t, err, "only %d of %d callbacks finished", len(ds), n)
	return ds
}

// noPersonalData fails if body carries a personal value of the sample.
func noPersonalData(t *testing.T, body []byte) {
	t.Helper()
	for _, v := range personalValues {
		require.NotContains(t, string(body), v)
	}
}

// byTransfer groups deliveries by transfer, in order.
func byTransfer(ds []travelruletest.Delivery) map[string][]travelruletest.Delivery {
	out := make(map[string][]travelruletest.Delivery)
	for _, d := range ds {
		out[d.TransferID] = append(out[d.TransferID], d)
	}
	return out
}

func statuses(ds []travelruletest.Delivery) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = string(d.Status)
	}
	return strings.Join(s, ",")
}

// kinds lists the kinds of ds, in order.
func kinds(ds []travelruletest.Delivery) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = string(d.Kind)
	}
	return strings.Join(s, ",")
}

// The kinds of a transfer the sandbox decides, in order.
const resolutionKinds = "INQUIRY_RESOLUTION,TRANSFER_RESOLUTION"

// rewrite is a transport that edits request bodies before sending them.
type rewrite struct{ r *strings.Replacer }

func (rw rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		b = []byte(rw.r.Replace(string(b)))
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
		req.GetBody = nil
	}
	return http.DefaultTransport.RoundTrip(req)
}
