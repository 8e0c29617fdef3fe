package travelrule_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// basePath is where the test server mounts the service, so that a client
// that drops the base URL's path fails every test.
const basePath = "/api/v3"

const testToken = "test-token-not-a-secret"

// recorded is one request as the test server saw it.
type recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// testServer is an httptest server mounted under basePath that records
// every request and answers with handler.
type testServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
	hits atomic.Int64
}

func (s *testServer) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// setup starts a server whose mux serves handler under basePath and returns
// it with a client for it. Each test is three lines.
func setup(t *testing.T, handler http.HandlerFunc, opts ...travelrule.Option) (*travelrule.Client, *testServer) {
	t.Helper()
	ts := &testServer{}
	mux := http.NewServeMux()
	mux.HandleFunc(basePath+"/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts.mu.Lock()
		ts.reqs = append(ts.reqs, recorded{r.Method, strings.TrimPrefix(r.URL.Path, basePath), r.URL.RawQuery, r.Header.Clone(), body})
		ts.mu.Unlock()
		ts.hits.Add(1)
		handler(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the base path: %s %s", r.Method, r.URL.Path)
		http.Error(w, "outside base path", http.StatusTeapot)
	})
	ts.Server = httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	all := append([]travelrule.Option{
		travelrule.WithTokenSource(travelrule.StaticToken(testToken)),
		travelrule.WithRetryWait(time.Millisecond, 5*time.Millisecond),
	}, opts...)
	c, err := travelrule.NewClient(ts.URL+basePath, all...)
	require.NoError(t, err)
	return c, ts
}

// answer returns a handler that answers status with body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// golden compares got with testdata/name byte for byte, or rewrites the file
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(p, got, 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "golden file %s (run go test -update to rewrite)", p)
}

// fullRequest is a valid request with every field set and non-ASCII names.
func fullRequest() *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		TravelAddress: "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv",
		Email:         "compliance@vasp-a.example",
		TxID:          "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
		Asset:         "ETH",
		Amount:        "1.25",
		Callback:      "https://vasp-a.example/travelrule/callback?tenant=7&env=prod",
		Originator: travelrule.Party{
			PersonType:     "natural",
			FirstName:      "Zoë",
			LastName:       "Ødegård-Müller",
			DateOfBirth:    "1984-02-29",
			AddressType:    "HOME",
			StreetName:     "Straße des 17. Juni",
			BuildingNumber: "135",
			PostCode:       "10623",
			TownName:       "Berlin",
			Country:        "DE",
			NationalID:     "123456789",
			NationalIDType: "IDCD",
			AccountNumber:  "ACC-0001",
			WalletAddress:  "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
		},
		Beneficiary: travelrule.Party{
			PersonType:     "natural",
			FirstName:      "美咲",
			LastName:       "山田",
			DateOfBirth:    "1990-07-01",
			AddressType:    "HOME",
			StreetName:     "千代田",
			BuildingNumber: "1",
			PostCode:       "100-0001",
			TownName:       "東京",
			Country:        "JP",
			AccountNumber:  "ACC-0002",
			WalletAddress:  "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
		},
	}
}

// minimalRequest has only the required fields.
func minimalRequest() *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Asset:       "BTC",
		Amount:      "0.5",
		Callback:    "https://vasp-a.example/cb",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBaseURLTrailingSlash(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v3/transfers/initiate", r.URL.Path)
		answer(200, `{"status":"succes"}`)(w, r)
	}))
	defer ts.Close()
	c, err := travelrule.NewClient(ts.URL+"/api/v3/", travelrule.WithTokenSource(travelrule.StaticToken("t")))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
}

func fieldPaths(ve *travelrule.ValidationError) []string {
	var out []string
	for _, f := range ve.Fields {
		out = append(out, f.Field)
	}
	return out
}

// endsOn returns a context that ends with err (context.Canceled or
// context.DeadlineExceeded) when event is closed: a deadline that passes
// at a chosen moment instead of a chosen time.
func endsOn(event <-chan struct{}, err error) context.Context {
	return eventContext{Context: context.Background(), event: event, err: err}
}

type eventContext struct {
	context.Context
	event <-chan struct{}
	err   error
}

func (c eventContext) Done() <-chan struct{} { return c.event }

func (c eventContext) Err() error {
	select {
	case <-c.event:
		return c.err
	default:
		return nil
	}
}

// TestBaseURLWithoutScheme: a base URL without a scheme is refused with
// the URL it most likely meant, http:// only for a loopback host.
func TestBaseURLWithoutScheme(t *testing.T) {
	ts := travelrule.WithTokenSource(travelrule.StaticToken("t"))
	for raw, want := range map[string]string{
		"127.0.0.1:18080":        "did you mean http://127.0.0.1:18080?",
		"localhost:8080/sandbox": "did you mean http://localhost:8080?", // never the path
		"trp.example.com/api":    "did you mean https://trp.example.com?",
		"[::1]:8080":             "did you mean http://[::1]:8080?",
		"10.0.0.7:8443":          "did you mean https://10.0.0.7:8443?",
		// A token or a key in the base URL's place is not echoed.
		"eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ2YXNwIn0.c2lnbmF0dXJlLXNlY3JldA": "must be absolute",
		"trk_live.9f8e7d6c5b4a":                "must be absolute",
		"trp.example.com/t/8c1f0e7a2b9d4c3e/":  "did you mean https://trp.example.com?",
		"127.0.0.1:99999":                      "base URL has no scheme",
		"https://trp.example.com:9f8e7d6c5b4a": "base URL does not parse: check its host, its port",
		"user:pw@trp.example":                  "must be absolute",
		"trp.example:99999":                    "must be absolute",
		"transfers":                            "must be absolute",
		"ftp://trp.example":                    "must be absolute",
	} {
		_, err := travelrule.NewClient(raw, ts)
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), want, raw)
		assert.NotContains(t, err.Error(), "pw", raw)
		assert.NotContains(t, err.Error(), "first path segment", raw)
		for _, secret := range []string{"eyJ", "9f8e", "8c1f"} {
			assert.NotContains(t, err.Error(), secret, raw)
		}
	}
}

func TestNewClientRefusals(t *testing.T) {
	ts := travelrule.WithTokenSource(travelrule.StaticToken("t"))
	tests := []struct {
		name string
		url  string
		opts []travelrule.Option
		ok   bool
	}{
		{"https", "https://travelrule.example/api/v3", []travelrule.Option{ts}, true},
		{"http loopback ip", "http://127.0.0.1:8080", []travelrule.Option{ts}, true},
		{"http localhost", "http://localhost:8080/x", []travelrule.Option{ts}, true},
		{"http ipv6 loopback", "http://[::1]:8080", []travelrule.Option{ts}, true},
		{"no token source", "https://travelrule.example", nil, false},
		{"nil token source", "https://travelrule.example", []travelrule.Option{travelrule.WithTokenSource(nil)}, false},
		{"relative", "/api/v3", []travelrule.Option{ts}, false},
		{"no scheme", "travelrule.example/api", []travelrule.Option{ts}, false},
		{"ftp", "ftp://travelrule.example", []travelrule.Option{ts}, false},
		{"plain http remote", "http://travelrule.example", []travelrule.Option{ts}, false},
		{"plain http private ip", "http://10.0.0.1", []travelrule.Option{ts}, false},
		{"credentials", "https://user:pw@travelrule.example", []travelrule.Option{ts}, false},
		{"query", "https://travelrule.example?x=1", []travelrule.Option{ts}, false},
		{"bad retry wait", "https://travelrule.example", []travelrule.Option{ts, travelrule.WithRetryWait(time.Second, time.Millisecond)}, false},
		{"negative retries", "https://travelrule.example", []travelrule.Option{ts, travelrule.WithRetryMax(-1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := travelrule.NewClient(tt.url, tt.opts...)
			if tt.ok {
				require.NoError(t, err)
				assert.NotNil(t, c)
				return
			}
			require.Error(t, err)
			assert.Nil(t, c)
			assert.NotContains(t, err.Error(), "pw")
		})
	}
}

// TestBaseURLCharacterNamed: a base URL with a character no base URL
// holds is refused with the character's class, code point and place.
func TestBaseURLCharacterNamed(t *testing.T) {
	ts := travelrule.WithTokenSource(travelrule.StaticToken("t"))
	const tail = ": a base URL is one line, without spaces or quotes"
	for raw, want := range map[string]string{
		"https://trp.example.com/v1\n":        "a newline (U+000A) at the end",
		"https://trp.example.com/v1\r\n":      "a carriage return (U+000D) and a newline (U+000A) at the end",
		" https://trp.example.com":            "a space (U+0020) at the start",
		"https://trp.example.com/v 1":         "a space (U+0020) at byte offset 25",
		"https://trp.example.com/v1\t":        "a tab (U+0009) at the end",
		`"https://trp.example.com/v1"`:        "a double quote (U+0022) at the start",
		`https://trp.example.com/v1"`:         "a double quote (U+0022) at the end",
		`'https://trp.example.com/v1'`:        "a single quote (U+0027) at the start",
		"\u201chttps://trp.example.com\u201d": "a typographic quote (U+201C) at the start",
		"trp.example.com\n":                   "a newline (U+000A) at the end",
	} {
		_, err := travelrule.NewClient(raw, ts)
		require.Error(t, err, "%q", raw)
		assert.Equal(t, "travelrule: NewClient: base URL has "+want+tail, err.Error(), "%q", raw)
	}
	_, err := travelrule.NewClient("https://trp.example.com/o'brien", ts)
	assert.NoError(t, err, "a single quote inside a path is a URL's character")
}

// TestOperationURLAsBaseURL: the URL of each operation (as the client
// sends it, or the login's, or the inbound inquiry's) given as the base
// URL is refused with the base URL it meant, without its query.
func TestOperationURLAsBaseURL(t *testing.T) {
	c, srv := setup(t, answer(http.StatusBadRequest, `{}`))
	ctx := context.Background()
	_, _ = c.InitiateTransfer(ctx, minimalRequest())
	_, _ = c.ResolveInquiry(ctx, "t-1", travelrule.Reject())
	_, _ = c.SubmitTxID(ctx, "t-1", "0xfeed")
	_, _ = c.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "A", LastName: "B"})
	_, _ = c.LookupTravelAddress(ctx, liveUncheckedAddress)
	_, _ = c.SearchVASPs(ctx, &travelrule.VASPQuery{Domain: "example.com"})
	var paths []string
	for _, r := range srv.requests() {
		paths = append(paths, r.Path+"?"+r.Query)
	}
	require.Len(t, paths, 6, "one request per operation")
	paths = append(paths, "/auth/token", "/transfers/inquiry/019ac452-8660-7061-9b93-8d72eaa11a89", "/TRANSFERS/INITIATE", "/transfers/initiate/")

	base := srv.URL + basePath
	ts := travelrule.WithTokenSource(travelrule.StaticToken("t"))
	for _, p := range paths {
		_, err := travelrule.NewClient(base+p, ts)
		require.Error(t, err, p)
		assert.Equal(t, "travelrule: NewClient: base URL is an operation's URL: did you mean "+base+"?", err.Error(), p)
	}
	_, err := travelrule.NewClient("https://trp.example.com/transfers/txId", ts)
	assert.EqualError(t, err, "travelrule: NewClient: base URL is an operation's URL: did you mean https://trp.example.com?")
	for _, ok := range []string{"https://trp.example.com/transfers", "https://trp.example.com/v1/transfers/inquiry/", "https://trp.example.com/initiate"} {
		_, err := travelrule.NewClient(ok, ts)
		assert.NoError(t, err, ok)
	}
}

// The suggested base URL keeps the path as it was escaped (an escaped
// slash stays escaped), and an inbound inquiry's URL counts as an
// operation's only when the inquiry's id is the path's last segment.
func TestOperationURLSuggestion(t *testing.T) {
	ts := travelrule.WithTokenSource(travelrule.StaticToken("t"))
	for _, tt := range []struct{ url, want string }{ // want "": accepted as a base URL
		{"https://h.example/a%2Fb/transfers/initiate", "https://h.example/a%2Fb"},
		{"https://h.example/a%20b/transfers/txId", "https://h.example/a%20b"},
		{"https://h.example/%C3%BC/auth/token", "https://h.example/%C3%BC"},
		{"https://h.example/v1/transfers/inquiry/019ac452-8660-7061-9b93-8d72eaa11a89", "https://h.example/v1"},
		{"https://h.example/a%2Fb/transfers/inquiry/id%2F1/", "https://h.example/a%2Fb"},
		{"https://h.example/transfers/inquiry/x", "https://h.example"},
		{"https://h.example/transfers/inquiry/v1/api", ""},
		{"https://h.example/proxy/transfers/inquiry/v1/trp", ""},
		{"https://h.example/transfers/inquiry", ""},
		{"https://h.example/transfers/inquiry/", ""},
		{"https://h.example/a%2Ftransfers%2Finitiate", ""},
	} {
		_, err := travelrule.NewClient(tt.url, ts)
		if tt.want == "" {
			assert.NoError(t, err, tt.url)
			continue
		}
		assert.EqualError(t, err, "travelrule: NewClient: base URL is an operation's URL: did you mean "+tt.want+"?", tt.url)
	}
}

func TestCrossOriginRedirectKeepsToken(t *testing.T) {
	var leaked atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		answer(200, `{"status":"succes"}`)(w, r)
	}))
	defer other.Close()
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	})
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTemporaryRedirect, apiErr.StatusCode)
	assert.Zero(t, leaked.Load(), "the bearer token must never reach another origin")
}

func TestSameOriginRedirects(t *testing.T) {
	redirecting := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "-v2") {
				http.Redirect(w, r, r.URL.Path+"-v2?"+r.URL.RawQuery, status)
				return
			}
			if strings.Contains(r.URL.Path, "inquiry") {
				answer(200, `{"status":true}`)(w, r)
				return
			}
			answer(200, `{"status":"succes"}`)(w, r)
		}
	}
	t.Run("followed for calls that may be repeated", func(t *testing.T) {
		c, ts := setup(t, redirecting(http.StatusPermanentRedirect))
		_, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
		require.NoError(t, err)
		reqs := ts.requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, reqs[0].Body, reqs[1].Body)
		assert.Equal(t, "Bearer "+testToken, reqs[1].Header.Get("Authorization"))

		c, ts = setup(t, redirecting(http.StatusTemporaryRedirect), travelrule.WithIdempotency())
		_, err = c.InitiateTransfer(context.Background(), minimalRequest())
		require.NoError(t, err)
		assert.EqualValues(t, 2, ts.hits.Load())
	})
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusSeeOther, http.StatusFound} {
		t.Run("never followed for an initiation: "+http.StatusText(status), func(t *testing.T) {
			// A proxy that acted and then redirected would make a followed
			// redirect a second transfer; a 303 commonly means "done".
			c, ts := setup(t, redirecting(status))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.StatusCode)
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

// logEvent is a slog.Handler that closes seen the first time a record with
// message msg is logged: a test waits on it for an event inside the client.
type logEvent struct {
	msg  string
	seen chan struct{}
	once sync.Once
}

func (h *logEvent) Enabled(context.Context, slog.Level) bool { return true }

func (h *logEvent) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

func (h *logEvent) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logEvent) WithGroup(string) slog.Handler      { return h }

func TestDefaultTransportRequiresTLS12(t *testing.T) {
	ts := httptest.NewUnstartedServer(answer(200, `{"status":"succes"}`))
	ts.TLS = &tls.Config{MaxVersion: tls.VersionTLS11}
	// The server logs the handshake the test provokes; keep it out of the
	// test output and check it instead.
	var mu sync.Mutex
	var serverLog bytes.Buffer
	ts.Config.ErrorLog = log.New(lockedWriter{&mu, &serverLog}, "", 0)
	ts.StartTLS()
	c, err := travelrule.NewClient(ts.URL, travelrule.WithTokenSource(travelrule.StaticToken("t")), travelrule.WithRetryMax(0))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TLS handshake failed")
	var ue *url.Error
	require.ErrorAs(t, err, &ue, "the transport's error stays reachable")
	assert.Contains(t, ue.Err.Error(), "protocol version")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	ts.Close() // waits for the connection, and so for its log line
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, serverLog.String(), "client offered only unsupported versions")
}
