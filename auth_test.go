package travelrule_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
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

// Frames that goroutine stacks are searched for.
const (
	// sdkFrame is in the stack of every goroutine that runs the SDK's code
	// or was started by it (its "created by" line).
	sdkFrame = "github.com/vaspkit/travelrule."
	// waitFrame is the frame of a call waiting for a token.
	waitFrame = "github.com/vaspkit/travelrule.(*tokenCache).tokenFor("
)

// goroutinesIn counts the goroutines whose stack contains frame.
func goroutinesIn(frame string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, frame) {
			n++
		}
	}
	return n
}

// requireNoSDKGoroutines waits until no goroutine runs the SDK's code; the
// bound only ends a test whose goroutines never leave.
func requireNoSDKGoroutines(t *testing.T, msg string) {
	t.Helper()
	require.Eventually(t, func() bool { return goroutinesIn(sdkFrame) == 0 }, 30*time.Second, 5*time.Millisecond, msg)
}

// receive waits for a value from ch; the bound only ends a test whose value
// never comes.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	bound := time.NewTimer(30 * time.Second)
	defer bound.Stop()
	var v T
	select {
	case v = <-ch:
	case <-bound.C:
		t.Fatalf("%s never happened", what)
	}
	return v
}

func TestTokenRequestsNeverFollowRedirects(t *testing.T) {
	const secret = "CLIENT-SECRET-MARKER"
	allowAll := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	tests := []struct {
		name   string
		status int
		host   string // the host name of the redirect target, on another port
		style  oauth2.AuthStyle
		hc     *http.Client // given to WithHTTPClient, if not nil
	}{
		{"307 to another port, secret in the header", http.StatusTemporaryRedirect, "127.0.0.1", oauth2.AuthStyleInHeader, nil},
		{"308 to another port, secret in the body", http.StatusPermanentRedirect, "127.0.0.1", oauth2.AuthStyleInParams, nil},
		{"307 to another host, secret in the body", http.StatusTemporaryRedirect, "localhost", oauth2.AuthStyleInParams, nil},
		{"308 to another host, secret in the header", http.StatusPermanentRedirect, "localhost", oauth2.AuthStyleInHeader, nil},
		{"a CheckRedirect that allows all, secret in the header", http.StatusTemporaryRedirect, "127.0.0.1", oauth2.AuthStyleInHeader, allowAll},
		{"a CheckRedirect that allows all, secret in the body", http.StatusPermanentRedirect, "localhost", oauth2.AuthStyleInParams, allowAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// evil mints a token for whoever asks; the service accepts any.
			var evilHits atomic.Int64
			evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				evilHits.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"access_token":"EVIL-TOKEN","token_type":"Bearer","expires_in":3600}`)
			}))
			t.Cleanup(evil.Close)
			evilURL, err := url.Parse(evil.URL)
			require.NoError(t, err)
			evilURL.Host = net.JoinHostPort(tt.host, evilURL.Port())

			var endpointHits atomic.Int64
			endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				endpointHits.Add(1)
				w.Header().Set("Location", evilURL.String()+"/token")
				w.WriteHeader(tt.status)
			}))
			t.Cleanup(endpoint.Close)

			opts := []travelrule.Option{travelrule.WithClientCredentials(&clientcredentials.Config{
				ClientID: "client-id", ClientSecret: secret, TokenURL: endpoint.URL + "/token", AuthStyle: tt.style,
			})}
			if tt.hc != nil {
				opts = append(opts, travelrule.WithHTTPClient(tt.hc))
			}
			c, ts := setup(t, answer(200, `{"status":"succes"}`), opts...)
			_, err = c.InitiateTransfer(context.Background(), minimalRequest())

			assert.Zero(t, evilHits.Load(), "the token request must not follow the redirect")
			assert.Zero(t, ts.hits.Load(), "the service must not be called")
			assert.EqualValues(t, 1, endpointHits.Load())
			require.Error(t, err)
			var re *oauth2.RetrieveError
			require.ErrorAs(t, err, &re, "the token endpoint's answer stays reachable")
			assert.Equal(t, tt.status, re.Response.StatusCode)
			assert.Contains(t, err.Error(), "obtaining an access token: token endpoint answered "+strconv.Itoa(tt.status))
			assert.NotContains(t, err.Error(), secret)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "nothing was sent to the service")
		})
	}
}

// hangingSource answers only once released, and counts how often it was
// asked; entered is closed the first time.
type hangingSource struct {
	asked   atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func (s *hangingSource) Token() (*oauth2.Token, error) {
	if s.asked.Add(1) == 1 {
		close(s.entered)
	}
	<-s.release
	return &oauth2.Token{AccessToken: "late", Expiry: time.Now().Add(time.Hour)}, nil
}

// hang is a token source that does not answer until released.
type hang struct {
	opt     travelrule.Option
	frame   string          // a frame of the goroutine that waits in the source
	entered <-chan struct{} // closed when the source is first asked
	asked   func() int64    // how many tokens were asked for
	release func()          // lets the source answer
}

func TestHangingTokenSourceHoldsOneGoroutine(t *testing.T) {
	tests := []struct {
		name  string
		start func(t *testing.T) hang
	}{
		{"token source that never returns", func(t *testing.T) hang {
			src := &hangingSource{entered: make(chan struct{}), release: make(chan struct{})}
			var once sync.Once
			release := func() { once.Do(func() { close(src.release) }) }
			t.Cleanup(release)
			return hang{travelrule.WithTokenSource(src), "travelrule_test.(*hangingSource).Token(", src.entered, src.asked.Load, release}
		}},
		{"token endpoint that never answers", func(t *testing.T) hang {
			var asked atomic.Int64
			entered, released := make(chan struct{}), make(chan struct{})
			endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if asked.Add(1) == 1 {
					close(entered)
				}
				<-released
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"access_token":"late","token_type":"Bearer","expires_in":3600}`)
			}))
			t.Cleanup(endpoint.Close)
			var once sync.Once
			release := func() { once.Do(func() { close(released) }) }
			t.Cleanup(release) // before endpoint.Close, which waits for the handler
			opt := travelrule.WithClientCredentials(&clientcredentials.Config{
				ClientID: "id", ClientSecret: "secret", TokenURL: endpoint.URL, AuthStyle: oauth2.AuthStyleInParams,
			})
			return hang{opt, "travelrule.(*clientCredentialsSource).Token(", entered, asked.Load, release}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const calls = 500
			requireNoSDKGoroutines(t, "goroutines of the SDK left by earlier tests")
			h := tt.start(t)
			c, ts := setup(t, answer(200, `{"status":"succes"}`), h.opt)

			errs := make([]error, calls)
			cancels := make([]context.CancelFunc, calls)
			var wg sync.WaitGroup
			for i := range calls {
				ctx, cancel := context.WithCancel(context.Background())
				cancels[i] = cancel
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = c.InitiateTransfer(ctx, minimalRequest())
				}()
			}
			receive(t, h.entered, "the token fetch")
			require.Eventually(t, func() bool { return goroutinesIn(waitFrame) == calls }, 30*time.Second, 5*time.Millisecond,
				"every call waits for the token")
			assert.Equal(t, 1, goroutinesIn(h.frame), "one fetch for all the calls")

			for _, cancel := range cancels {
				cancel()
			}
			returned := make(chan struct{})
			go func() {
				wg.Wait()
				close(returned)
			}()
			receive(t, returned, "the return of every call")
			for i, err := range errs {
				require.ErrorIs(t, err, context.Canceled, "call %d", i)
				require.Contains(t, err.Error(), "obtaining an access token", "call %d", i)
				require.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "call %d", i)
			}
			assert.Equal(t, 1, goroutinesIn(h.frame), "the fetch goes on")
			assert.Equal(t, 1, goroutinesIn(sdkFrame), "no goroutine outlives its call but the one fetch")
			assert.EqualValues(t, 1, h.asked())
			assert.Zero(t, ts.hits.Load())

			h.release()
			requireNoSDKGoroutines(t, "the fetch ends once the source answers")
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err)
			assert.EqualValues(t, 1, h.asked(), "the abandoned fetch's token is cached")
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

// probeSource issues its tokens in order and then blocks until released.
// It closes onCaller if it is ever asked in a goroutine that runs one of
// the client's calls, where the call's context cannot bound it, and blocked
// when it blocks in any other goroutine.
type probeSource struct {
	tokens                     []*oauth2.Token
	asked                      atomic.Int64
	onCaller, blocked, release chan struct{}
	onCallerOnce, blockedOnce  sync.Once
}

func (s *probeSource) Token() (*oauth2.Token, error) {
	i := int(s.asked.Add(1)) - 1
	buf := make([]byte, 64<<10)
	stack := string(buf[:runtime.Stack(buf, false)])
	switch {
	case strings.Contains(stack, "github.com/vaspkit/travelrule.(*Client)."):
		s.onCallerOnce.Do(func() { close(s.onCaller) })
	case i >= len(s.tokens):
		s.blockedOnce.Do(func() { close(s.blocked) })
	}
	if i < len(s.tokens) {
		return s.tokens[i], nil
	}
	<-s.release
	return nil, errors.New("released")
}

func TestTokenSourceNeverRunsInTheCallersGoroutine(t *testing.T) {
	tests := []struct {
		name      string
		token     *oauth2.Token // the source's first token; it blocks after
		status    int           // the service's answer to every request
		wantErr   error
		wantHits  int64
		wantAsked int64
	}{
		// A token inside the renewal margin must be fetched in the cache's
		// goroutine, never in the call's.
		{"token inside the renewal margin", &oauth2.Token{AccessToken: "short-lived", Expiry: time.Now().Add(5 * time.Second)}, 200, nil, 1, 1},
		// The refresh after a 401 is asked for after the attempt (attempts.go,
		// facts), in the call; a call whose context ends while it waits for
		// the new token ends with the 401.
		{"refresh after a 401", &oauth2.Token{AccessToken: "tok-1", Expiry: time.Now().Add(time.Hour)}, 401, travelrule.ErrUnauthorized, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &probeSource{tokens: []*oauth2.Token{tt.token},
				onCaller: make(chan struct{}), blocked: make(chan struct{}), release: make(chan struct{})}
			t.Cleanup(func() { close(src.release) })
			c, ts := setup(t, answer(tt.status, `{"status":"succes"}`), travelrule.WithTokenSource(src))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := initiateAsync(ctx, c)
			var err error
			select {
			case <-src.onCaller:
				t.Fatal("the token source was asked in the call's goroutine, beyond the reach of its context")
			case <-src.blocked:
				cancel()
				err = receive(t, done, "the call's return after its context ended")
			case err = <-done:
			}
			assertDefinite(t, err, tt.wantErr)
			assert.Equal(t, tt.wantHits, ts.hits.Load())
			assert.EqualValues(t, tt.wantAsked, src.asked.Load())
		})
	}
}

// faultySource misbehaves the first time it is asked and issues a good
// token after.
type faultySource struct {
	fault func() (*oauth2.Token, error)
	asked atomic.Int64
}

func (s *faultySource) Token() (*oauth2.Token, error) {
	if s.asked.Add(1) == 1 {
		return s.fault()
	}
	return &oauth2.Token{AccessToken: "good", Expiry: time.Now().Add(time.Hour)}, nil
}

// fakeRuntimeError claims to be the runtime's error; it is not, and its
// text is not to be trusted.
type fakeRuntimeError string

func (e fakeRuntimeError) Error() string { return string(e) }
func (fakeRuntimeError) RuntimeError()   {}

// accessToken reads a token's access token, nil or not.
func accessToken(t *oauth2.Token) string { return t.AccessToken }

func TestMisbehavingTokenSource(t *testing.T) {
	const secret = "SECRET-MARKER"
	tests := []struct {
		name  string
		fault func() (*oauth2.Token, error)
		want  string // the error's text after "obtaining an access token: "
	}{
		{"panics with a string", func() (*oauth2.Token, error) { panic("client_secret=" + secret) }, "token source panicked"},
		{"panics with an error", func() (*oauth2.Token, error) { panic(fmt.Errorf("token %s refused", secret)) }, "token source panicked"},
		{"panics with a value posing as the runtime's", func() (*oauth2.Token, error) { panic(fakeRuntimeError(secret)) }, "token source panicked"},
		{"panics in the runtime", func() (*oauth2.Token, error) { return nil, errors.New(accessToken(nil)) },
			"token source panicked: runtime error: invalid memory address or nil pointer dereference"},
		// The runtime's own words, which differ between Go releases.
		{"panics with nil", func() (*oauth2.Token, error) { panic(nil) }, "token source panicked: " + (&runtime.PanicNilError{}).Error()},
		{"ends its goroutine", func() (*oauth2.Token, error) { runtime.Goexit(); return nil, nil }, "token source ended its goroutine"},
		{"returns no token and no error", func() (*oauth2.Token, error) { return nil, nil }, "token source returned no token and no error"},
		{"returns an empty access token", func() (*oauth2.Token, error) { return &oauth2.Token{TokenType: "Bearer"}, nil },
			"token source returned a token without an access token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &faultySource{fault: tt.fault}
			c, ts := setup(t, answer(200, `{"status":"succes"}`), travelrule.WithTokenSource(src))
			done := initiateAsync(context.Background(), c)
			err := receive(t, done, "the return of the call whose source misbehaved")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "obtaining an access token: "+tt.want)
			assert.NotContains(t, err.Error(), secret)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			assert.Zero(t, ts.hits.Load(), "nothing is sent without a token")

			_, err = c.InitiateTransfer(context.Background(), minimalRequest())
			require.NoError(t, err, "the next call asks the source again")
			assert.EqualValues(t, 2, src.asked.Load())
			assert.EqualValues(t, 1, ts.hits.Load())
		})
	}
}

// pointerSource is a token source with a pointer receiver.
type pointerSource struct{}

func (*pointerSource) Token() (*oauth2.Token, error) { return &oauth2.Token{AccessToken: "t"}, nil }

// funcSource is a token source that is a function.
type funcSource func() (*oauth2.Token, error)

func (f funcSource) Token() (*oauth2.Token, error) { return f() }

func TestNewClientRejectsNilSourcesAndOptions(t *testing.T) {
	static := travelrule.WithTokenSource(travelrule.StaticToken("t"))
	var nilOption travelrule.Option
	tests := []struct {
		name    string
		opts    []travelrule.Option
		wantErr string // "" for a client
	}{
		{"pointer source", []travelrule.Option{travelrule.WithTokenSource(&pointerSource{})}, ""},
		{"function source", []travelrule.Option{travelrule.WithTokenSource(funcSource(func() (*oauth2.Token, error) { return nil, nil }))}, ""},
		{"nil pointer source", []travelrule.Option{travelrule.WithTokenSource((*pointerSource)(nil))}, "nil token source"},
		{"nil function source", []travelrule.Option{travelrule.WithTokenSource(funcSource(nil))}, "nil token source"},
		{"nil option alone", []travelrule.Option{nil}, "nil option"},
		{"nil option after a source", []travelrule.Option{static, nilOption}, "nil option"},
		{"nil option before a source", []travelrule.Option{nil, static}, "nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *travelrule.Client
			var err error
			require.NotPanics(t, func() { c, err = travelrule.NewClient("https://travelrule.example", tt.opts...) })
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.NotNil(t, c)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Nil(t, c)
		})
	}
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
			var want error
			if tt.wantErr {
				want = travelrule.ErrUnauthorized
			}
			assertDefinite(t, err, want)
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

func TestTokenFetchEndsWithTheContext(t *testing.T) {
	src := &blockedSource{asked: make(chan struct{}), release: make(chan struct{}), returned: make(chan struct{})}
	c, ts := setup(t, answer(200, `{"status":"succes"}`), travelrule.WithTokenSource(src))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-src.asked
		cancel()
	}()
	done := initiateAsync(ctx, c)
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

func TestUnauthorizedWithoutRequestDoesNotPanic(t *testing.T) {
	c, err := travelrule.NewClient("https://travelrule.example", travelrule.WithTokenSource(travelrule.StaticToken("t")),
		travelrule.WithHTTPClient(&http.Client{Transport: noRequestTransport{}}))
	require.NoError(t, err)
	_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	assert.ErrorIs(t, err, travelrule.ErrUnauthorized)
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

// initiateAsync starts an initiation in a goroutine of its own and returns
// where its error arrives.
func initiateAsync(ctx context.Context, c *travelrule.Client) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.InitiateTransfer(ctx, minimalRequest())
		done <- err
	}()
	return done
}

// assertDefinite checks that err is nil when want is nil, and otherwise
// that it matches want and is a definite failure, not ErrOutcomeUnknown.
func assertDefinite(t *testing.T, err, want error) {
	t.Helper()
	if want == nil {
		require.NoError(t, err)
		return
	}
	require.ErrorIs(t, err, want)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
}

// A 401 that no retry can follow (WithRetryMax(0), or after the one
// refresh) still marks the token rejected: the next call fetches a new one
// instead of sending the refused token again.
func TestUnauthorizedWithoutRetryRejectsTheToken(t *testing.T) {
	src := &countingSource{}
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-2" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		answer(200, `{"status":"succes"}`)(w, r)
	}, travelrule.WithTokenSource(src), travelrule.WithRetryMax(0))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	assertDefinite(t, err, travelrule.ErrUnauthorized)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.EqualValues(t, 2, ts.hits.Load())
	assert.EqualValues(t, 2, src.n.Load())
}
