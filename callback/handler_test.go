package callback_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
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

const statusBody = `{"transferId":"tr-1","status":"approved","txId":"0xfeed","timestamp":"2025-03-01T12:00:00Z"}`

var capKey = []byte("0123456789abcdef0123456789abcdef")

// noAuth is the option of tests of something else than authentication.
var noAuth = callback.WithoutAuthentication()

// defaultMaxBody is the handler's default body limit, 1 MiB.
const defaultMaxBody = 1 << 20

// recorder is an integrator function that records its calls.
type recorder struct {
	mu    sync.Mutex
	calls []*travelrule.Callback
	ctxOK []bool
	fail  func(n int) error // the answer to call n (1-based); nil means success
}

func (rc *recorder) fn(ctx context.Context, cb *travelrule.Callback) error {
	rc.mu.Lock()
	rc.calls = append(rc.calls, cb)
	rc.ctxOK = append(rc.ctxOK, ctx.Value(http.ServerContextKey) != nil)
	n, fail := len(rc.calls), rc.fail
	rc.mu.Unlock()
	if fail != nil {
		return fail(n)
	}
	return nil
}

func (rc *recorder) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.calls)
}

func (rc *recorder) last(t *testing.T) *travelrule.Callback {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.NotEmpty(t, rc.calls)
	return rc.calls[len(rc.calls)-1]
}

// serve mounts a handler at /cb in a mux with another route, in a real
// HTTP server.
func serve(t *testing.T, fn func(context.Context, *travelrule.Callback) error, opts ...callback.Option) (*httptest.Server, *callback.Handler) {
	t.Helper()
	h := callback.NewHandler(fn, opts...)
	mux := http.NewServeMux()
	mux.Handle("/cb", h)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(testLog{t}, "server: ", 0) // into the test's own log, not stderr
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, h
}

// serveOpen is serve for tests of something else than authentication: its
// handler accepts unauthenticated callbacks.
func serveOpen(t *testing.T, fn func(context.Context, *travelrule.Callback) error, opts ...callback.Option) (*httptest.Server, *callback.Handler) {
	t.Helper()
	return serve(t, fn, append(opts, callback.WithoutAuthentication())...)
}

// testLog writes a server's log lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// patientClient waits as long as it takes for the answer to a request
// sent with "Expect: 100-continue": a body the server refuses by its length
// alone then never goes on the wire, so the answer cannot be lost to a
// connection the server resets while the client is still writing.
var patientClient = &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}

type answer struct {
	code   int
	header http.Header
	body   string
	close  bool // the server closes the connection after it (Connection: close)
}

func send(t *testing.T, method, url, body string, header http.Header) answer {
	t.Helper()
	a, err := trySend(method, url, body, header)
	require.NoError(t, err)
	return a
}

// trySend is send for goroutines other than the test's: it returns its
// error instead of ending the test.
func trySend(method, url, body string, header http.Header) (answer, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := patientClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b), resp.Close}, err
}

func post(t *testing.T, url, body string) answer { return send(t, http.MethodPost, url, body, nil) }

func TestCallbackHandlerAccepts(t *testing.T) {
	rc := &recorder{}
	srv, h := serveOpen(t, rc.fn)
	require.NoError(t, h.Err())
	a := post(t, srv.URL+"/cb", statusBody)
	assert.Equal(t, http.StatusNoContent, a.code)
	assert.Empty(t, a.body)
	require.Equal(t, 1, rc.count())
	cb := rc.last(t)
	assert.Equal(t, travelrule.KindTransferResolution, cb.Kind)
	assert.Equal(t, "tr-1", cb.TransferID)
	assert.Equal(t, "approved", cb.Status)
	assert.Equal(t, "0xfeed", cb.TxID)
	assert.Equal(t, statusBody, string(cb.Raw))
	assert.Empty(t, cb.Ref)
	assert.True(t, rc.ctxOK[0], "fn gets the request's context")

	// The other route of the mux still works.
	assert.Equal(t, "ok", send(t, http.MethodGet, srv.URL+"/healthz", "", nil).body)
}

func TestCallbackHandlerMethodNotAllowed(t *testing.T) {
	rc := &recorder{}
	srv, _ := serveOpen(t, rc.fn)
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		t.Run(m, func(t *testing.T) {
			a := send(t, m, srv.URL+"/cb", statusBody, nil)
			assert.Equal(t, http.StatusMethodNotAllowed, a.code)
			assert.Equal(t, "POST", a.header.Get("Allow"))
		})
	}
	assert.Zero(t, rc.count())
}

// TestCallbackHandlerBodyTooLarge serves the handler in-process: what is
// tested is where the limit falls, and a real connection would add only a
// race between the client still writing an oversized body and the server
// closing the connection after its 413.
// TestCallbackHandlerBodyTooLargeOverHTTP covers the network path.
func TestCallbackHandlerBodyTooLarge(t *testing.T) {
	padded := func(n int) string { // a valid callback of exactly n bytes
		s := `{"transferId":"t","status":"received","pad":""}`
		return s[:len(s)-2] + strings.Repeat("x", n-len(s)) + `"}`
	}
	tests := []struct {
		name    string
		opts    []callback.Option
		body    string
		chunked bool
		claimed int64 // a Content-Length other than the body's, when not 0
		want    int
	}{
		{"default limit, 1 MiB", []callback.Option{noAuth}, padded(defaultMaxBody), false, 0, http.StatusNoContent},
		{"default limit, 1 MiB + 1", []callback.Option{noAuth}, padded(defaultMaxBody + 1), false, 0, http.StatusRequestEntityTooLarge},
		{"default limit, chunked", []callback.Option{noAuth}, padded(defaultMaxBody + 1), true, 0, http.StatusRequestEntityTooLarge},
		{"small limit, at limit", []callback.Option{noAuth, callback.WithMaxBodyBytes(100)}, padded(100), false, 0, http.StatusNoContent},
		{"small limit, over", []callback.Option{noAuth, callback.WithMaxBodyBytes(100)}, padded(101), false, 0, http.StatusRequestEntityTooLarge},
		{"small limit, over, chunked", []callback.Option{noAuth, callback.WithMaxBodyBytes(100)}, padded(5000), true, 0, http.StatusRequestEntityTooLarge},
		{"small limit, at limit, chunked", []callback.Option{noAuth, callback.WithMaxBodyBytes(100)}, padded(100), true, 0, http.StatusNoContent},
		{"small limit, one over, chunked", []callback.Option{noAuth, callback.WithMaxBodyBytes(100)}, padded(101), true, 0, http.StatusRequestEntityTooLarge},
		{"small limit, longer than declared", []callback.Option{noAuth, callback.WithMaxBodyBytes(100)}, padded(101), false, 50, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &recorder{}
			h := callback.NewHandler(rc.fn, tt.opts...)
			require.NoError(t, h.Err())
			req := httptest.NewRequest(http.MethodPost, "/cb", strings.NewReader(tt.body))
			if tt.chunked {
				req.ContentLength = -1 // the length is unknown until the body is read
				req.TransferEncoding = []string{"chunked"}
			}
			if tt.claimed != 0 {
				req.ContentLength = tt.claimed
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			assert.Equal(t, tt.want, w.Code)
			if tt.want == http.StatusNoContent {
				assert.Equal(t, 1, rc.count())
			} else {
				assert.Zero(t, rc.count(), "an oversized body is never passed on")
				assert.NotContains(t, w.Body.String(), "xxxx")
			}
		})
	}
}

// TestCallbackHandlerBodyTooLargeOverHTTP sends a body over the limit
// through a real server: a declared length over the limit is refused before
// the body is sent (the client waits for "100 Continue", which never
// comes), and the handler stays usable.
func TestCallbackHandlerBodyTooLargeOverHTTP(t *testing.T) {
	rc := &recorder{}
	srv, _ := serveOpen(t, rc.fn, callback.WithMaxBodyBytes(1000))
	big := strings.Repeat("x", 4<<20)
	a := send(t, http.MethodPost, srv.URL+"/cb", big, http.Header{"Expect": {"100-continue"}})
	assert.Equal(t, http.StatusRequestEntityTooLarge, a.code)
	assert.NotContains(t, a.body, "xxxx")
	assert.Zero(t, rc.count())
	assert.Equal(t, http.StatusNoContent, post(t, srv.URL+"/cb", statusBody).code)
	assert.Equal(t, 1, rc.count())
}

func TestCallbackHandlerMalformed(t *testing.T) {
	rc := &recorder{}
	srv, _ := serveOpen(t, rc.fn)
	for _, body := range []string{``, `null`, `[]`, `"Ada Lovelace"`, `{"transferId":"Ada Lovelace"`, `{"a":1} {"b":2}`, `<xml/>`} {
		t.Run(body, func(t *testing.T) {
			a := post(t, srv.URL+"/cb", body)
			assert.Equal(t, http.StatusBadRequest, a.code)
			assert.Equal(t, "Bad Request\n", a.body, "the answer never echoes the body")
		})
	}
	assert.Zero(t, rc.count())
}

// A body that gives a name twice in one object, at any depth and in any
// case or spelling encoding/json matches, is answered 400 and never reaches
// the function; the log names neither the member nor its values.
func TestCallbackHandlerRefusesNameTwice(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	rc := &recorder{}
	srv, _ := serve(t, rc.fn, callback.WithCapabilityKey(capKey), callback.WithLogger(logger))
	url, err := travelrule.NewCallbackURL(srv.URL+"/cb", "p-40", capKey)
	require.NoError(t, err)
	for _, body := range []string{
		`{"transferId":"tr-40","status":"rejected","Status":"approved"}`,
		`{"transferId":"tr-40","status":"rejected","\u0073tatus":"approved"}`,
		`{"transferId":"tr-40","status":"rejected","ſtatus":"approved"}`,
		`{"asset":"BTC","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Lovelace","primaryIDENTIFIER":"Turing"}]}}}]}}}`,
	} {
		a := post(t, url, body)
		assert.Equal(t, http.StatusBadRequest, a.code, body)
		assert.Equal(t, "Bad Request\n", a.body, "the answer never echoes the body")
	}
	assert.Zero(t, rc.count())
	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	assert.Contains(t, logs, "twice")
	for _, s := range []string{"Status", "tatus", "approved", "Lovelace", "Turing", "IDENTIFIER"} {
		assert.NotContains(t, logs, s)
	}
	// The same body with the name once is delivered.
	assert.Equal(t, http.StatusNoContent, post(t, url, `{"transferId":"tr-40","status":"rejected"}`).code)
	assert.Equal(t, 1, rc.count())
}

func TestCallbackHandlerFunctionError(t *testing.T) {
	rc := &recorder{fail: func(n int) error {
		if n == 1 {
			return errors.New("database down")
		}
		return nil
	}}
	srv, _ := serveOpen(t, rc.fn)
	a := post(t, srv.URL+"/cb", statusBody)
	assert.Equal(t, http.StatusInternalServerError, a.code)
	assert.NotContains(t, a.body, "database")
	// The failed delivery was not marked processed: the redelivery reaches
	// the function, and only then is the delivery a duplicate.
	assert.Equal(t, http.StatusNoContent, post(t, srv.URL+"/cb", statusBody).code)
	assert.Equal(t, http.StatusNoContent, post(t, srv.URL+"/cb", statusBody).code)
	assert.Equal(t, 2, rc.count())
}

func TestCallbackHandlerPanic(t *testing.T) {
	var calls atomic.Int32
	srv, _ := serveOpen(t, func(context.Context, *travelrule.Callback) error {
		if calls.Add(1) == 1 {
			panic("integrator bug")
		}
		return nil
	})
	a := post(t, srv.URL+"/cb", statusBody)
	assert.Equal(t, http.StatusInternalServerError, a.code)
	// The server is alive and the delivery was not marked processed.
	assert.Equal(t, http.StatusNoContent, post(t, srv.URL+"/cb", statusBody).code)
	assert.Equal(t, int32(2), calls.Load())
}

func TestCallbackHandlerKinds(t *testing.T) {
	tests := []struct {
		body string
		kind travelrule.CallbackKind
	}{
		{statusBody, travelrule.KindTransferResolution},
		{`{"transferId":"t","status":"inquiry","asset":"BTC","amount":"1","originator":{"firstName":"A"},"beneficiary":{}}`, travelrule.KindInquiry},
		{`{"approved":{"address":"bc1q","callback":"https://x.example/cb"}}`, travelrule.KindInquiryResolution},
		{`{"rejected":"no"}`, travelrule.KindInquiryResolution},
		{`{"txid":"0x1"}`, travelrule.KindTransferConfirmation},
		{`{"canceled":"gone"}`, travelrule.KindCanceled},
		{`{"something":"else"}`, travelrule.KindUnknown},
	}
	rc := &recorder{}
	srv, _ := serveOpen(t, rc.fn)
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			require.Equal(t, http.StatusNoContent, post(t, srv.URL+"/cb", tt.body).code)
			cb := rc.last(t)
			assert.Equal(t, tt.kind, cb.Kind)
			assert.Equal(t, tt.body, string(cb.Raw))
			assert.Equal(t, tt.kind == travelrule.KindInquiry, cb.Inquiry != nil)
		})
	}
}

func TestCallbackHandlerRawKept(t *testing.T) {
	body := "{ \"transferId\" : \"t\",\n \"status\":\"received\", \"vendorExt\": {\"a\": [1, 2.50, null]}, \"é\":\"\\u00e9\" }"
	rc := &recorder{}
	srv, _ := serveOpen(t, rc.fn)
	require.Equal(t, http.StatusNoContent, post(t, srv.URL+"/cb", body).code)
	assert.Equal(t, body, string(rc.last(t).Raw), "Raw is the body byte for byte")
}

func TestCallbackHandlerCapability(t *testing.T) {
	rc := &recorder{}
	srv, _ := serve(t, rc.fn, callback.WithCapabilityKey(capKey))
	good, err := travelrule.NewCallbackURL(srv.URL+"/cb", "payment-42", capKey)
	require.NoError(t, err)
	otherKey, err := travelrule.NewCallbackURL(srv.URL+"/cb", "payment-42", []byte("another key of 16+ bytes"))
	require.NoError(t, err)
	otherRef, err := travelrule.NewCallbackURL(srv.URL+"/cb", "payment-43", capKey)
	require.NoError(t, err)
	tag := otherRef[strings.Index(otherRef, "tr_tag=")+len("tr_tag="):]

	tests := []struct {
		name string
		url  string
		want int
	}{
		{"valid", good, http.StatusNoContent},
		{"missing", srv.URL + "/cb", http.StatusUnauthorized},
		{"ref only", srv.URL + "/cb?tr_ref=payment-42", http.StatusUnauthorized},
		{"tag of another key", otherKey, http.StatusUnauthorized},
		{"tag of another ref", srv.URL + "/cb?tr_ref=payment-42&tr_tag=" + tag, http.StatusUnauthorized},
		{"tampered tag", good[:len(good)-1] + "A", http.StatusUnauthorized},
		{"duplicated ref", good + "&tr_ref=payment-43", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rc.count()
			a := post(t, tt.url, statusBody)
			assert.Equal(t, tt.want, a.code)
			if tt.want == http.StatusNoContent {
				require.Equal(t, before+1, rc.count())
				assert.Equal(t, "payment-42", rc.last(t).Ref)
			} else {
				assert.Equal(t, before, rc.count(), "a refused request never reaches fn")
			}
		})
	}
}

func TestCallbackHandlerMisconfigured(t *testing.T) {
	ok := (&recorder{}).fn
	tests := []struct {
		name string
		fn   func(context.Context, *travelrule.Callback) error
		opts []callback.Option
	}{
		{"nil function", nil, []callback.Option{noAuth}},
		{"no authentication", ok, nil},
		{"capability key given twice", ok, []callback.Option{callback.WithCapabilityKey(capKey), callback.WithCapabilityKey([]byte("another-key-of-16-bytes"))}},
		{"a short previous capability key", ok, []callback.Option{callback.WithCapabilityKey(capKey, []byte("short"))}},
		{"WithoutAuthentication beside a key", ok, []callback.Option{callback.WithCapabilityKey(capKey), noAuth}},
		{"short capability key", ok, []callback.Option{callback.WithCapabilityKey([]byte("short"))}},
		{"empty capability key", ok, []callback.Option{callback.WithCapabilityKey(nil)}},
		{"nil verifier", ok, []callback.Option{callback.WithVerifier(nil)}},
		{"verifier without secret", ok, []callback.Option{callback.WithVerifier(&callback.WebhookVerifier{})}},
		{"verifier with empty secret", ok, []callback.Option{callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{[]byte("whsec-test-secret-1"), {}}})}},
		{"verifier with a 15-byte secret", ok, []callback.Option{callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{[]byte("whsec-test-secret-1"), []byte("fifteen-bytes!!")}})}},
		{"negative tolerance", ok, []callback.Option{callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{[]byte("whsec-test-secret-1")}, Tolerance: -time.Second})}},
		{"zero body limit", ok, []callback.Option{noAuth, callback.WithMaxBodyBytes(0)}},
		{"nil store", ok, []callback.Option{noAuth, callback.WithStore(nil)}},
		{"store that reports a fault", ok, []callback.Option{noAuth, callback.WithStore(faultedStore{callback.NewMemoryStore(10)})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			fn := tt.fn
			if fn != nil {
				fn = func(context.Context, *travelrule.Callback) error { calls.Add(1); return nil }
			}
			srv, h := serve(t, fn, tt.opts...)
			require.Error(t, h.Err())
			url := srv.URL + "/cb"
			if u, err := travelrule.NewCallbackURL(url, "r1", []byte("short-but-16-bytes!")); err == nil {
				url = u
			}
			assert.Equal(t, http.StatusInternalServerError, post(t, url, statusBody).code)
			assert.Zero(t, calls.Load(), "a misconfigured handler never fails open")
		})
	}
}

func TestCallbackHandlerLogsNoPersonalData(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fail := true
	srv, _ := serve(t, func(_ context.Context, cb *travelrule.Callback) error {
		if cb.Decision() == travelrule.Rejected {
			panic("boom")
		}
		if fail && cb.Decision() == travelrule.Approved {
			fail = false
			return errors.New("try later")
		}
		return nil
	}, callback.WithCapabilityKey(capKey), callback.WithLogger(logger))
	url, err := travelrule.NewCallbackURL(srv.URL+"/cb", "p-1", capKey)
	require.NoError(t, err)
	tag := url[strings.Index(url, "tr_tag=")+len("tr_tag="):]

	inquiry := `{"transferId":"tr-9","status":"inquiry","asset":"BTC","amount":"1","originator":{"firstName":"Ada","lastName":"Lovelace","walletAddress":"bc1qSECRETWALLET"},"beneficiary":{"firstName":"Alan"}}`
	approved := `{"transferId":"tr-8","approved":{"address":"bc1qAPPROVEDADDR","callback":"https://b.example/x?tr_tag=OTHERTAG"}}`
	rejected := `{"transferId":"tr-7","rejected":"Alan Turing is on a list"}`
	for _, body := range []string{inquiry, approved, approved, approved, rejected, `{"transferId":"Ada Lovelace"`} {
		post(t, url, body)
	}
	post(t, srv.URL+"/cb?tr_ref=p-1&tr_tag=WRONGTAGWRONGTAGWRONGT", inquiry)
	send(t, http.MethodPost, url, strings.Repeat(" ", 2<<20), http.Header{"Expect": {"100-continue"}}) // refused by its length, never sent

	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	for _, s := range []string{"Ada", "Lovelace", "Alan", "Turing", "bc1q", "OTHERTAG", tag, "WRONGTAG", "tr_tag", "boom"} {
		assert.NotContains(t, logs, s)
	}
	for _, s := range []string{`"transferId":"tr-9"`, `"kind":"inquiry"`, `"ref":"p-1"`, "try later", "panicked", "duplicate", "capability"} {
		assert.Contains(t, logs, s)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// faultedStore is a store that reports, through Err, that it cannot keep
// the promise (as a redisstore on an evicting Redis does).
type faultedStore struct{ *callback.MemoryStore }

func (faultedStore) Err() error { return errors.New("store: evicts processed deliveries") }
