package travelrule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// The login with an API key, against the test server written from the
// live service's docs (live_test.go).

func TestAPIKeyLogin(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	for range 3 {
		res, err := c.InitiateTransfer(context.Background(), minimalRequest())
		require.NoError(t, err)
		assert.Equal(t, liveTransferID, res.TransferID, "the live envelope's data.transferId")
		assert.Equal(t, "true", res.Status)
	}
	logins := live.requests("/auth/token")
	require.Len(t, logins, 1, "the token is cached: one login for three calls")
	login := logins[0]
	assert.Equal(t, http.MethodPost, login.Method)
	assert.Equal(t, liveKey, login.Header.Get("X-Api-Key"))
	assert.Empty(t, login.Body, "no body")
	assert.Empty(t, login.Header.Get("Authorization"), "the key goes in x-api-key only")
	for _, r := range live.requests("/transfers/initiate") {
		assert.Equal(t, "Bearer eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ2YXNwIn0.sig1", r.Header.Get("Authorization"))
		assert.Empty(t, r.Header.Get("X-Api-Key"), "the key never goes to an operation")
	}
}

// TestTokenRenewedBeforeItEnds: the token is fetched again shortly
// before expiresIn (or, without it, expiresAt) says it ends, and reused
// until then.
func TestTokenRenewedBeforeItEnds(t *testing.T) {
	soon := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	later := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, tt := range []struct {
		name    string
		fields  map[string]any
		wrapped bool
		logins  int64 // for three calls
	}{
		{"expiresIn an hour", map[string]any{"expiresIn": 3600, "expiresAt": later, "tokenType": "Bearer"}, false, 1},
		{"expiresIn 5 s: inside the renewal margin", map[string]any{"expiresIn": 5, "expiresAt": later}, false, 3},
		{"expiresIn wins over a later expiresAt", map[string]any{"expiresIn": 5, "expiresAt": later}, false, 3},
		{"expiresIn as a string", map[string]any{"expiresIn": "3600"}, false, 1},
		{"expiresAt alone, an hour away", map[string]any{"expiresAt": later}, false, 1},
		{"expiresAt alone, 5 s away", map[string]any{"expiresAt": soon}, false, 3},
		{"expiresAt in the past (a skewed clock): kept until refused", map[string]any{"expiresAt": past}, false, 1},
		{"neither: kept until refused", map[string]any{}, false, 1},
		{"wrapped in data", map[string]any{"expiresIn": 3600}, true, 1},
		{"wrapped in data, 5 s", map[string]any{"expiresIn": 5}, true, 3},
		{"snake_case", map[string]any{"access_token": "ignored-in-favour-of-accessToken", "expires_in": 5}, false, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			live.tokenFields, live.tokenWrapped = tt.fields, tt.wrapped
			c := live.client(t, liveKey)
			for range 3 {
				_, err := c.InitiateTransfer(context.Background(), minimalRequest())
				require.NoError(t, err)
			}
			assert.Equal(t, tt.logins, live.logins.Load())
		})
	}
}

// TestExpiredTokenIs403: the live service answers an expired JWT 403, not
// 401; the client logs in once more and tries once more.
func TestExpiredTokenIs403(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	live.expireTokens()
	res, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts, "one 403, one retry with the new token")
	assert.EqualValues(t, 2, live.logins.Load())
	reqs := live.requests("/transfers/initiate")
	require.Len(t, reqs, 3)
	assert.NotEqual(t, reqs[1].Header.Get("Authorization"), reqs[2].Header.Get("Authorization"))
}

// TestForbiddenWithAFreshTokenIsAnError: a 403 to a token just fetched is
// the operation forbidden: one retry, then the APIError; the key stays.
func TestForbiddenWithAFreshTokenIsAnError(t *testing.T) {
	live := newLiveService(t)
	live.handle("/transfers/initiate", func(w http.ResponseWriter, r *http.Request) {
		liveError(w, http.StatusForbidden, "FORBIDDEN", "customer may not initiate")
	})
	c := live.client(t, liveKey)
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrForbidden)
	require.ErrorIs(t, err, travelrule.CodeForbidden)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "a 403 is a refusal before acting")
	assert.NotErrorIs(t, err, travelrule.ErrLoginFailed)
	assert.Len(t, live.requests("/transfers/initiate"), 2)
	assert.EqualValues(t, 2, live.logins.Load())
	// The next call does not log in again: a new token did not cure the
	// 403, so the operation is forbidden, not the token expired.
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrForbidden)
	assert.EqualValues(t, 2, live.logins.Load())
	assert.Len(t, live.requests("/transfers/initiate"), 3)
}

// TestLasting403CostsNoLoginPerCall: a forbidden operation answered 403
// on every call costs one new token in all, not one per call.
func TestLasting403CostsNoLoginPerCall(t *testing.T) {
	live := newLiveService(t)
	live.handle("/transfers/txId", func(w http.ResponseWriter, r *http.Request) {
		liveError(w, http.StatusForbidden, "FORBIDDEN", "not your transfer")
	})
	c := live.client(t, liveKey)
	for range 10 {
		_, err := c.SubmitTxID(context.Background(), liveTransferID, txHash)
		require.ErrorIs(t, err, travelrule.ErrForbidden)
	}
	assert.EqualValues(t, 2, live.logins.Load(), "the first login, and one new token that did not cure the 403")
	assert.Len(t, live.requests("/transfers/txId"), 11)
}

// TestFirewall403IsNotResent: a 403 that is not the service's answer about
// the token (a firewall's page, which may come after the service stored
// the transfer) does not resend an initiation.
func TestFirewall403IsNotResent(t *testing.T) {
	live := newLiveService(t)
	var created atomic.Int64
	live.handle("/transfers/initiate", func(w http.ResponseWriter, r *http.Request) {
		created.Add(1)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("<html><body>Request blocked by WAF</body></html>"))
	})
	c := live.client(t, liveKey)
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusForbidden, apiErr.StatusCode)
	assert.Contains(t, string(apiErr.Body), "WAF", "the body is still read")
	assert.EqualValues(t, 1, created.Load(), "sent once")
	assert.EqualValues(t, 1, live.logins.Load())

	// A call that may be sent again gets a new token and one more try.
	live.handle("/transfers/txId", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) })
	_, err = c.SubmitTxID(context.Background(), liveTransferID, txHash)
	require.ErrorIs(t, err, travelrule.ErrForbidden)
	assert.Len(t, live.requests("/transfers/txId"), 2)
}

// Test403InTheServiceFormat: a 403 in the service's own envelope is a
// refused token only when its code says so (FORBIDDEN or UNAUTHORIZED);
// with any other code an initiation, which the service may have acted on,
// is not sent again and costs no second login.
func Test403InTheServiceFormat(t *testing.T) {
	tests := []struct {
		code     string
		resent   bool
		wantSent int64
	}{
		{"FORBIDDEN", true, 2},
		{"UNAUTHORIZED", true, 2},
		{"VALIDATION_ERROR", false, 1},
		{"INTERNAL_ERROR", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			live := newLiveService(t)
			var created atomic.Int64
			live.handle("/transfers/initiate", func(w http.ResponseWriter, r *http.Request) {
				created.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"status":false,"errors":[{"code":"` + tt.code + `","message":"no"}]}`))
			})
			c := live.client(t, liveKey)
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.Error(t, err)
			assert.Equal(t, tt.wantSent, created.Load())
			if tt.resent {
				assert.EqualValues(t, 2, live.logins.Load(), "a new token for the one more try")
			} else {
				assert.EqualValues(t, 1, live.logins.Load(), "no second login")
			}
		})
	}
}

// TestRefusedKey: a bad key is a clear, typed error that says the login
// failed and why; nothing reaches the operation, and the key appears
// nowhere.
func TestRefusedKey(t *testing.T) {
	for _, tt := range []struct {
		name    string
		key     string
		status  int
		refusal travelrule.KeyRefusal
		text    string
	}{
		{"inactive", liveInactiveKey, 403, travelrule.KeyInactive, "the API key (or its customer) is inactive"},
		{"expired", liveExpiredKey, 403, travelrule.KeyExpired, "the API key has expired"},
		{"unknown", "trp_live_key_never_issued_4242", 401, travelrule.KeyUnknown, "missing or not recognised"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			var logs bytes.Buffer
			c := live.client(t, tt.key, travelrule.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.ErrorIs(t, err, travelrule.ErrLoginFailed)
			require.ErrorIs(t, err, travelrule.ErrAPIKeyRefused)
			assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
			var le *travelrule.LoginError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.status, le.StatusCode)
			assert.Equal(t, tt.refusal, le.Refusal)
			assert.Equal(t, live.URL+liveBase+"/auth/token", le.URL)
			assert.Contains(t, err.Error(), "nothing sent")
			assert.Contains(t, err.Error(), "login failed")
			assert.Contains(t, err.Error(), tt.text)
			assert.Empty(t, live.requests("/transfers/initiate"), "nothing was sent to the transfer endpoint")
			var js bytes.Buffer
			slog.New(slog.NewJSONHandler(&js, nil)).Info("failed", "err", err, "login", le)
			for _, shown := range []string{err.Error(), fmt.Sprintf("%v %+v %#v %s %q", err, err, err, err, err), fmt.Sprintf("%+v %#v", le, le), printedForms(t, le), js.String(), logs.String()} {
				assert.NotContains(t, shown, tt.key)
			}
		})
	}
}

// TestKeyRefusedWhenTheTokenExpires: the token expires and the key was
// deactivated meanwhile; the call's error is the 403 and says why no new
// token came.
func TestKeyRefusedWhenTheTokenExpires(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	live.expireTokens()
	live.setKey(liveKey, "inactive")
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrForbidden)
	require.ErrorIs(t, err, travelrule.ErrAPIKeyRefused)
	var le *travelrule.LoginError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, travelrule.KeyInactive, le.Refusal)
	assert.Contains(t, err.Error(), "no new token")
	assert.NotContains(t, err.Error(), liveKey)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
}

// TestOneLoginAtATime: however many goroutines call on an empty cache,
// one login runs, and it serves them all.
func TestOneLoginAtATime(t *testing.T) {
	live := newLiveService(t)
	hold := make(chan struct{})
	live.holdLogin = hold
	entered := make(chan struct{})
	var once sync.Once
	c := live.client(t, liveKey, travelrule.WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == liveBase+"/auth/token" {
			once.Do(func() { close(entered) })
		}
		return http.DefaultTransport.RoundTrip(r)
	})}))
	const callers = 32
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.InitiateTransfer(context.Background(), minimalRequest()); err != nil {
				failed.Add(1)
			}
		}()
	}
	<-entered
	close(hold)
	wg.Wait()
	assert.Zero(t, failed.Load())
	assert.EqualValues(t, 1, live.logins.Load(), "the token lives an hour: one login serves every caller")
	assert.EqualValues(t, 1, live.maxInFlight.Load())
	assert.Len(t, live.requests("/transfers/initiate"), callers)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLoginFollowsNoRedirect: a login answered with a redirect fails; the
// key reaches no other place.
func TestLoginFollowsNoRedirect(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			live := newLiveService(t)
			live.handle("/auth/token", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, live.URL+liveBase+"/auth/token2", status) // same origin, even
			})
			c := live.client(t, liveKey)
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			var le *travelrule.LoginError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, status, le.StatusCode)
			assert.NotErrorIs(t, err, travelrule.ErrAPIKeyRefused)
			assert.Len(t, live.requests("/auth/token2"), 0)
			assert.Len(t, live.requests("/auth/token"), 1)
		})
	}
	assert.Zero(t, elsewhere.Load())
}

// TestTokenAnswersNotUnderstood: a 2xx login answer without a token is a
// LoginError in the client's words, not the token's.
func TestTokenAnswersNotUnderstood(t *testing.T) {
	for _, tt := range []struct{ name, body, text string }{
		{"no accessToken", `{"expiresIn":3600}`, "holds no accessToken"},
		{"not JSON", `<html>welcome</html>`, "not a JSON object"},
		{"status false", `{"status":false,"errors":[{"code":"FORBIDDEN","message":"customer inactive"}]}`, "inactive"},
		{"a status that means neither", `{"status":"pending","accessToken":"x"}`, "status"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			live.handle("/auth/token", answer(200, tt.body))
			c := live.client(t, liveKey)
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.ErrorIs(t, err, travelrule.ErrLoginFailed)
			assert.Contains(t, err.Error(), tt.text)
			assert.Empty(t, live.requests("/transfers/initiate"))
		})
	}
}

// TestWithAPIKeyRefusesBadKeys: a key that cannot go in a header is
// refused with the character that cannot and where it is, never any part
// of the key; a key read whole from its file is told to be trimmed.
func TestWithAPIKeyRefusesBadKeys(t *testing.T) {
	const fileHint = " (as os.ReadFile of a key file leaves it: trim it, with strings.TrimSpace)"
	keyFile := filepath.Join(t.TempDir(), "api-key")
	require.NoError(t, os.WriteFile(keyFile, []byte("key-0009-from-a-file\n"), 0o600))
	fromFile, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	tests := []struct {
		key  string
		want string
	}{
		{"", "travelrule: WithAPIKey: the key is empty"},
		{" padded-key-0001 ", "travelrule: WithAPIKey: the key cannot go in a header: it has a space (U+0020) at the start"},
		{"key-0002\nsecond-line", "travelrule: WithAPIKey: the key cannot go in a header: it has a newline (U+000A) at byte offset 8"},
		{"key-0003\n", "travelrule: WithAPIKey: the key cannot go in a header: it has a newline (U+000A) at the end" + fileHint},
		{"key-0004\r\n", "travelrule: WithAPIKey: the key cannot go in a header: it has a carriage return (U+000D) and a newline (U+000A) at the end" + fileHint},
		{"key-0005\t", "travelrule: WithAPIKey: the key cannot go in a header: it has a tab (U+0009) at the end"},
		{"key-0006\x00", "travelrule: WithAPIKey: the key cannot go in a header: it has a NUL (U+0000) at the end"},
		{string(fromFile), "travelrule: WithAPIKey: the key cannot go in a header: it has a newline (U+000A) at the end" + fileHint},
	}
	for _, tt := range tests {
		c, err := travelrule.NewClient("https://trp.example.com", travelrule.WithAPIKey(tt.key))
		require.Error(t, err, "%q", tt.key)
		assert.Nil(t, c)
		assert.Equal(t, tt.want, err.Error())
		assert.NotContains(t, err.Error(), "key-000", "the key is not quoted")
	}
	_, err = travelrule.NewClient("https://trp.example.com", travelrule.WithAPIKey(strings.TrimSpace(string(fromFile))))
	assert.NoError(t, err, "the trimmed key is taken")
}

func TestLoginErrorJSONShowsNoMoreThanError(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveInactiveKey)
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var le *travelrule.LoginError
	require.True(t, errors.As(err, &le))
	b, jerr := json.Marshal(le)
	require.NoError(t, jerr)
	assert.JSONEq(t, mustJSON(t, le.Error()), string(b))
}

// A LoginError value, not only the pointer, prints and logs in the
// client's words: its Body may hold the token.
func TestLoginErrorValueIsRedacted(t *testing.T) {
	const planted = "PlantedLoginTokenSecret0123"
	live := newLiveService(t)
	live.handle("/auth/token", answer(200, `{"status":"pending","accessToken":"`+planted+`","message":"`+planted+`"}`))
	c := live.client(t, liveKey)
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var le *travelrule.LoginError
	require.ErrorAs(t, err, &le)
	require.Contains(t, string(le.Body), planted)
	for form, s := range valueForms(t, *le) {
		assert.NotContains(t, s, planted, form)
		assert.NotContains(t, s, liveKey, form)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestClientShowsNoKey: the key is in no form of the client itself.
func TestClientShowsNoKey(t *testing.T) {
	c, err := travelrule.NewClient("https://trp.example.com/v1", travelrule.WithAPIKey(liveKey))
	require.NoError(t, err)
	var js bytes.Buffer
	slog.New(slog.NewJSONHandler(&js, nil)).Info("client", "c", c, "v", *c)
	for _, shown := range []string{fmt.Sprintf("%v %+v %#v", c, c, c), fmt.Sprintf("%v %+v %#v", *c, *c, *c), js.String()} {
		assert.NotContains(t, shown, liveKey)
	}
}

func TestLogin(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	require.NoError(t, c.Login(context.Background()))
	require.NoError(t, c.Login(context.Background()), "a valid token is reused")
	assert.EqualValues(t, 1, live.logins.Load())
	assert.Len(t, live.requests(""), 1, "nothing but the login")

	refused := live.client(t, liveExpiredKey)
	err := refused.Login(context.Background())
	var le *travelrule.LoginError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, travelrule.KeyExpired, le.Refusal)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = live.client(t, liveKey).Login(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "travelrule: Login: nothing sent")
}

// TestUnreachableLogin: a login that gets no answer is a LoginError too,
// and says that nothing was sent.
func TestUnreachableLogin(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	base := dead.URL + liveBase
	dead.Close()
	c, err := travelrule.NewClient(base, travelrule.WithAPIKey(liveKey), travelrule.WithRetryMax(0))
	require.NoError(t, err)
	_, err = c.GenerateTravelAddress(context.Background(), &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "A", LastName: "B"})
	require.ErrorIs(t, err, travelrule.ErrLoginFailed)
	assert.NotErrorIs(t, err, travelrule.ErrAPIKeyRefused)
	var le *travelrule.LoginError
	require.ErrorAs(t, err, &le)
	assert.Zero(t, le.StatusCode)
	assert.Contains(t, err.Error(), "nothing sent")
	assert.Contains(t, err.Error(), "login failed: POST "+base+"/auth/token: connection failed")
	assert.NotContains(t, err.Error(), "/travel-address/generate")
}

// TestLoginErrorsHoldNoPartOfTheKey: a token endpoint that echoes the key,
// whole or masked in part, in its request id, codes or message: no form
// of the error shows any of it.
func TestLoginErrorsHoldNoPartOfTheKey(t *testing.T) {
	masked := liveInactiveKey[:len(liveInactiveKey)-4] + "****"
	for _, tt := range []struct {
		name   string
		status int
		body   string
		header string
	}{
		{"request id", 403, `{"status":false,"errors":[{"code":"FORBIDDEN","message":"inactive"}]}`, liveInactiveKey},
		{"masked request id", 401, `{"status":false,"errors":[{"code":"UNAUTHORIZED"}]}`, masked},
		{"code", 403, `{"status":false,"errors":[{"code":"` + liveInactiveKey + `"},{"code":"FORBIDDEN"}]}`, "req-1"},
		{"masked message", 403, `{"status":false,"errors":[{"code":"FORBIDDEN","message":"API key ` + masked + ` is inactive"}]}`, "req-2"},
		{"2xx without a token", 200, `{"note":"` + masked + `"}`, masked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			live.handle("/auth/token", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Request-Id", tt.header)
				answer(tt.status, tt.body)(w, r)
			})
			c := live.client(t, liveInactiveKey)
			_, err := c.InitiateTransfer(context.Background(), minimalRequest())
			var le *travelrule.LoginError
			require.ErrorAs(t, err, &le)
			var js bytes.Buffer
			slog.New(slog.NewTextHandler(&js, nil)).Info("x", "err", err)
			fragment := liveInactiveKey[4:16]
			for _, shown := range []string{err.Error(), fmt.Sprintf("%+v %#v %q", err, le, err), printedForms(t, le), strings.Join(le.Codes, " "), js.String(), mustJSON(t, le)} {
				assert.NotContains(t, shown, fragment)
			}
		})
	}
}
