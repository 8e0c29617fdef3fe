package travelrule_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
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
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// countingSource issues "tok-1", "tok-2", ... and counts its calls.
type countingSource struct{ n atomic.Int64 }

func (s *countingSource) Token() (*oauth2.Token, error) {
	n := s.n.Add(1)
	return &oauth2.Token{AccessToken: fmt.Sprintf("tok-%d", n), TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

func TestUnauthorizedRefreshesTokenOnce(t *testing.T) {
	tests := []struct {
		name      string
		accept    string // the token the server accepts
		wantErr   bool
		wantHits  int64
		wantFetch int64
	}{
		{"second token accepted", "tok-2", false, 2, 2},
		{"every token rejected: one refresh, one retry, no more", "none", true, 2, 2},
		{"cached token accepted", "tok-1", false, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &countingSource{}
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer "+tt.accept {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				answer(200, `{"status":"succes"}`)(w, r)
			}, travelrule.WithTokenSource(src), travelrule.WithRetryMax(5))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			if tt.wantErr {
				assert.ErrorIs(t, err, travelrule.ErrUnauthorized)
				assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantHits, ts.hits.Load())
			assert.Equal(t, tt.wantFetch, src.n.Load())
		})
	}
}

func TestUnauthorizedBurstRefreshesOnce(t *testing.T) {
	// 20 callers start together on an empty cache, so all of them send
	// tok-1; the server holds every tok-1 request until all 20 have arrived
	// and then refuses them at once. The burst of 401s must refresh once.
	const callers = 20
	src := &countingSource{}
	var arrived sync.WaitGroup
	arrived.Add(callers)
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer tok-1" {
			arrived.Done()
			arrived.Wait()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		answer(200, `{"status":"succes"}`)(w, r)
	}, travelrule.WithTokenSource(src))
	var wg sync.WaitGroup
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 2, src.n.Load(), "one fetch for the first token, one refresh for the whole burst")
	assert.EqualValues(t, 2*callers, ts.hits.Load(), "each caller: one 401, one retry")
}

func TestTokenSourceFailureIsDefiniteAndNotRetried(t *testing.T) {
	c, ts := setup(t, answer(200, `{"status":"succes"}`),
		travelrule.WithTokenSource(oauth2.TokenSource(failingSource{})))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "access token")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Zero(t, ts.hits.Load())
}

type failingSource struct{}

func (failingSource) Token() (*oauth2.Token, error) { return nil, errors.New("token endpoint down") }

// dropAfterRead answers nothing: it reads the request and closes the
// connection, as a service that stored the transfer and then crashed.
func dropAfterRead(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
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

func TestIdempotencyKeyRetriesAmbiguousFailures(t *testing.T) {
	var n atomic.Int64
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			// A fresh connection for the next attempt: net/http itself
			// resends a keyed request dropped on a reused connection,
			// which would hide the drop from the client's retry policy.
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			dropAfterRead(w, r)
		case 3:
			w.WriteHeader(http.StatusGatewayTimeout)
		default:
			answer(200, `{"status":"succes","transferId":"t-9"}`)(w, r)
		}
	}, travelrule.WithIdempotency(), travelrule.WithRetryMax(4))
	res, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.Equal(t, "t-9", res.TransferID)
	assert.Equal(t, 4, res.Attempts, "500, dropped, 504: each retried by the client")
	reqs := ts.requests()
	require.Len(t, reqs, 4)
	key := reqs[0].Header.Get("Idempotency-Key")
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, key)
	for _, r := range reqs {
		assert.Equal(t, key, r.Header.Get("Idempotency-Key"), "one key per logical call, the same on every attempt")
	}
	assert.Equal(t, key, res.IdempotencyKey)

	// A second logical call gets a new key; a key from the context is used as is.
	_, err = c.InitiateTransfer(travelrule.ContextWithIdempotencyKey(context.Background(), "payment-77"), minimalRequest())
	require.NoError(t, err)
	reqs = ts.requests()
	assert.Equal(t, "payment-77", reqs[len(reqs)-1].Header.Get("Idempotency-Key"))
}

func TestIdempotencyOutcomeUnknownCarriesKey(t *testing.T) {
	c, ts := setup(t, answer(500, ``), travelrule.WithIdempotency(), travelrule.WithRetryMax(2))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var unknown *travelrule.OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)
	assert.EqualValues(t, 3, ts.hits.Load())
	assert.Equal(t, 3, unknown.Attempts)
	assert.NotEmpty(t, unknown.IdempotencyKey)
	assert.Equal(t, ts.requests()[0].Header.Get("Idempotency-Key"), unknown.IdempotencyKey)
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

func TestServerMessageIsScrubbedOfPersonalData(t *testing.T) {
	req := fullRequest()
	echo := fmt.Sprintf(`{"message":"cannot route %s %s born %s at %s","fields":[{"field":"beneficiary.walletAddress","reason":"unknown wallet %s"}]}`,
		req.Originator.FirstName, req.Originator.LastName, req.Originator.DateOfBirth, req.Beneficiary.WalletAddress, req.Beneficiary.WalletAddress)
	c, _ := setup(t, answer(400, echo))
	// The error string carries no server text at all; Message is scrubbed
	// of the request's personal values.
	_, err := c.InitiateTransfer(context.Background(), req)
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	for _, pii := range piiOf(req) {
		assert.NotContains(t, err.Error(), pii)
		assert.NotContains(t, apiErr.Message, pii)
		assert.NotContains(t, fmt.Sprint(apiErr.Fields), pii)
	}
	assert.Contains(t, apiErr.Message, "cannot route")
	assert.Equal(t, echo, string(apiErr.Body), "the raw body is kept for the caller")
}

// piiOf lists every personal value of a request, and the test token.
func piiOf(r *travelrule.TransferRequest) []string {
	out := []string{testToken, r.Email, r.TravelAddress}
	for _, p := range []travelrule.Party{r.Originator, r.Beneficiary} {
		for _, v := range []string{p.FirstName, p.LastName, p.DateOfBirth, p.StreetName, p.PostCode, p.TownName, p.NationalID, p.AccountNumber, p.WalletAddress} {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// scanned are the options of a log handler whose output a test scans for
// personal data. Timestamps and durations go: their random digits could
// spell a digit-only value (a postcode, a national id) by chance, and they
// are never personal data.
var scanned = &slog.HandlerOptions{
	Level: slog.LevelDebug,
	ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		switch {
		case len(groups) == 0 && a.Key == slog.TimeKey:
			return slog.Attr{}
		case a.Value.Kind() == slog.KindDuration:
			return slog.String(a.Key, "[duration]")
		}
		return a
	},
}

func TestScannedLogsHaveNoClockDigits(t *testing.T) {
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, scanned)).Info("m", "wait", 1410623*time.Nanosecond, "n", 7)
	slog.New(slog.NewTextHandler(&buf, scanned)).Info("m", slog.Group("g", "wait", 10623*time.Millisecond))
	assert.Equal(t, `{"level":"INFO","msg":"m","wait":"[duration]","n":7}`+"\n"+`level=INFO msg=m g.wait=[duration]`+"\n", buf.String())
}

func TestRedactionInFmtAndSlog(t *testing.T) {
	req := fullRequest()
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, scanned))
	logger.Info("req", "request", req, "value", *req, "party", req.Originator)
	logger.Info("text", slog.Any("request", req))
	slog.New(slog.NewTextHandler(&buf, scanned)).Info("text", "request", req)
	for _, verb := range []string{"%v", "%+v", "%s", "%#v", "%q", "%d", "%x"} {
		fmt.Fprintf(&buf, verb+"\n", req)
		fmt.Fprintf(&buf, verb+"\n", *req)
		fmt.Fprintf(&buf, verb+"\n", req.Beneficiary)
		fmt.Fprintf(&buf, verb+"\n", &req.Originator)
	}
	out := buf.String()
	for _, pii := range piiOf(req) {
		assert.NotContains(t, out, pii)
	}
	assert.Contains(t, out, "[redacted]")
	assert.Contains(t, out, "ETH", "non-personal fields stay readable")
	assert.Contains(t, out, "DE")
}

// TestNoSecretsInLogsOrErrors runs every path of the client with a
// debug-level logger and scans the log and every error string for the
// token and the request's personal data.
func TestNoSecretsInLogsOrErrors(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, scanned))
	req := fullRequest()
	echo := `{"message":"` + req.Originator.LastName + ` ` + req.Beneficiary.WalletAddress + `"}`
	handlers := map[string]http.HandlerFunc{
		"ok":       answer(200, `{"status":"succes"}`),
		"400 echo": answer(400, echo),
		"401":      answer(401, echo),
		"404":      answer(404, echo),
		"429": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "0")
			answer(429, echo)(w, r)
		},
		"500":     answer(500, echo),
		"503":     answer(503, echo),
		"dropped": dropAfterRead,
		"garbage": answer(200, echo),
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example/x", http.StatusTemporaryRedirect)
		},
		"slow":      func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, // until the client gives up
		"too large": answer(400, strings.Repeat(req.Originator.FirstName, 100000)),
	}
	var errs []string
	for name, h := range handlers {
		for _, idem := range []bool{false, true} {
			opts := []travelrule.Option{travelrule.WithLogger(logger), travelrule.WithMaxResponseBytes(64 << 10)}
			if idem {
				opts = append(opts, travelrule.WithIdempotency())
			}
			c, _ := setup(t, h, opts...)
			for _, call := range []func(context.Context) error{
				func(ctx context.Context) error { _, err := c.InitiateTransfer(ctx, req); return err },
				func(ctx context.Context) error {
					_, err := c.ResolveInquiry(ctx, "t-1", &travelrule.InquiryResolution{Approved: "true", Callback: req.Callback})
					return err
				},
			} {
				// Only the slow server needs the caller to give up; the
				// others run every retry to its end.
				ctx, cancel := context.WithCancel(context.Background())
				if name == "slow" {
					ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
				}
				if err := call(ctx); err != nil {
					errs = append(errs, name+": "+err.Error())
				}
				cancel()
			}
		}
	}
	bad := *req
	bad.Originator.Country = req.Originator.FirstName
	c, _ := setup(t, answer(200, ""), travelrule.WithLogger(logger))
	_, err := c.InitiateTransfer(context.Background(), &bad)
	errs = append(errs, err.Error())

	mu.Lock()
	out := logs.String() + strings.Join(errs, "\n")
	mu.Unlock()
	assert.Contains(t, logs.String(), "level=DEBUG", "the debug logger saw the calls")
	for _, secret := range append(piiOf(req), req.Callback) {
		assert.NotContains(t, out, secret)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// countingTransport counts the requests that go through it.
type countingTransport struct {
	n    atomic.Int64
	base http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

func TestClientCredentialsUseTheClientsTransport(t *testing.T) {
	srv := travelruletest.NewServer()
	defer srv.Close()
	rt := &countingTransport{base: http.DefaultTransport}
	c, err := travelrule.NewClient(srv.URL, travelrule.WithHTTPClient(&http.Client{Transport: rt}),
		travelrule.WithClientCredentials(&clientcredentials.Config{
			ClientID: travelruletest.DefaultClientID, ClientSecret: travelruletest.DefaultClientSecret, TokenURL: srv.TokenURL(),
		}))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.EqualValues(t, 2, rt.n.Load(), "the token request and the initiation both go through the given transport")
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.EqualValues(t, 3, rt.n.Load(), "the token is cached")
}

// opaqueTransport hides the request's trace: it re-contexts every request,
// as some instrumentation and test transports do.
type opaqueTransport struct{ base http.RoundTripper }

func (o opaqueTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return o.base.RoundTrip(r.WithContext(context.WithoutCancel(context.Background())))
}

func TestTransportWithoutTracesCountsAsSent(t *testing.T) {
	// Without trace events the client cannot prove that nothing was sent:
	// a dropped connection must not be retried as "never sent".
	c, ts := setup(t, dropAfterRead, travelrule.WithHTTPClient(&http.Client{Transport: opaqueTransport{http.DefaultTransport}}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.EqualValues(t, 1, ts.hits.Load())
}

// blockedSource issues a token only once released; asked says it was
// asked, returned that it answered (the first time).
type blockedSource struct {
	asked, release, returned chan struct{}
	once                     sync.Once
}

func (s *blockedSource) Token() (*oauth2.Token, error) {
	first := false
	s.once.Do(func() { first = true; close(s.asked) })
	<-s.release
	if first {
		defer close(s.returned)
	}
	return &oauth2.Token{AccessToken: "slow", Expiry: time.Now().Add(time.Hour)}, nil
}

func TestTokenFetchEndsWithTheContext(t *testing.T) {
	src := &blockedSource{asked: make(chan struct{}), release: make(chan struct{}), returned: make(chan struct{})}
	c, ts := setup(t, answer(200, `{"status":"succes"}`), travelrule.WithTokenSource(src))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-src.asked
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := c.InitiateTransfer(ctx, minimalRequest())
		done <- err
	}()
	var err error
	select {
	case err = <-done: // while the fetch is still blocked
	case <-time.After(time.Minute): // bounds a failure only
		close(src.release)
		t.Fatal("the call waited for the token fetch instead of ending with its context")
	}
	close(src.release)
	select {
	case <-src.asked:
		<-src.returned // the fetch goes on in the background; let it end with the test
	default:
		t.Error("the call never asked for a token")
	}
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "nothing was sent")
	assert.Zero(t, ts.hits.Load())
}

// noRequestTransport answers 401 without setting Response.Request, as
// some custom transports do.
type noRequestTransport struct{}

func (noRequestTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}, nil
}

func TestUnauthorizedWithoutRequestDoesNotPanic(t *testing.T) {
	c, err := travelrule.NewClient("https://travelrule.example", travelrule.WithTokenSource(travelrule.StaticToken("t")),
		travelrule.WithHTTPClient(&http.Client{Transport: noRequestTransport{}}))
	require.NoError(t, err)
	_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	assert.ErrorIs(t, err, travelrule.ErrUnauthorized)
}

func TestRetryAfterReportedWhenTheBudgetRunsOut(t *testing.T) {
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
	}, travelrule.WithRetryMax(1))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, time.Duration(0), apiErr.RetryAfter)
	c, _ = setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
	}, travelrule.WithRetryAfterMax(time.Second))
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 7*time.Second, apiErr.RetryAfter)
}

func TestTokenEndpointBodyStaysOutOfErrors(t *testing.T) {
	tokenEndpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"client ENDPOINT-BODY-MARKER unknown"}`)
	}))
	defer tokenEndpoint.Close()
	c, ts := setup(t, answer(200, `{"status":"succes"}`), travelrule.WithClientCredentials(&clientcredentials.Config{
		ClientID: "id", ClientSecret: "CLIENT-SECRET-MARKER", TokenURL: tokenEndpoint.URL,
	}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401 Unauthorized: invalid_client")
	assert.NotContains(t, err.Error(), "MARKER")
	var re *oauth2.RetrieveError
	assert.ErrorAs(t, err, &re, "the token endpoint's answer stays reachable")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Zero(t, ts.hits.Load())
}
