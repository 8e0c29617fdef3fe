package travelruletest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// login posts to url with the headers given as name/value pairs and no
// body, as the live service's docs do.
func login(t *testing.T, method, url string, header ...string) rawAnswer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawAnswer{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

func TestLogin(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/api/v3"),
		travelruletest.WithAPIKeys("acme-key-1", "acme-key-2"),
		travelruletest.WithInactiveAPIKeys("acme-old-key"), travelruletest.WithExpiredAPIKeys("acme-2025-key"))
	require.Equal(t, srv.URL+"/auth/token", srv.LoginURL())
	tests := []struct {
		name    string
		header  []string
		status  int
		code    string
		message string
	}{
		{"x-api-key", []string{"x-api-key", "acme-key-1"}, http.StatusOK, "", ""},
		{"another key", []string{"X-API-KEY", "acme-key-2"}, http.StatusOK, "", ""},
		{"Authorization: ApiKey", []string{"Authorization", "ApiKey acme-key-1"}, http.StatusOK, "", ""},
		{"Authorization: apikey, any case", []string{"Authorization", "apikey acme-key-2"}, http.StatusOK, "", ""},
		{"missing", nil, http.StatusUnauthorized, "UNAUTHORIZED", "API key missing"},
		{"a bearer token is no key", []string{"Authorization", "Bearer " + token(t, srv)}, http.StatusUnauthorized, "UNAUTHORIZED", "API key missing"},
		{"unknown", []string{"x-api-key", "acme-key-3"}, http.StatusUnauthorized, "UNAUTHORIZED", "not recognised"},
		{"a key's prefix", []string{"x-api-key", "acme-key-"}, http.StatusUnauthorized, "UNAUTHORIZED", "not recognised"},
		{"the default key, replaced", []string{"x-api-key", travelruletest.DefaultAPIKey}, http.StatusUnauthorized, "UNAUTHORIZED", "not recognised"},
		{"inactive", []string{"x-api-key", "acme-old-key"}, http.StatusForbidden, "FORBIDDEN", "API key inactive"},
		{"expired", []string{"x-api-key", "acme-2025-key"}, http.StatusForbidden, "FORBIDDEN", "API key expired"},
		{"the built-in inactive key", []string{"x-api-key", travelruletest.InactiveAPIKey}, http.StatusForbidden, "FORBIDDEN", "API key inactive"},
		{"the built-in expired key", []string{"Authorization", "ApiKey " + travelruletest.ExpiredAPIKey}, http.StatusForbidden, "FORBIDDEN", "API key expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := login(t, http.MethodPost, srv.LoginURL(), tt.header...)
			require.Equal(t, tt.status, a.Status, "body %s", a.Body)
			assert.Equal(t, "no-store", a.Header.Get("Cache-Control"))
			assert.NotEmpty(t, a.Header.Get("X-Request-Id"))
			if tt.status != http.StatusOK {
				code, msg, _ := a.errorBody(t)
				assert.Equal(t, tt.code, code)
				assert.Contains(t, msg, tt.message)
				for _, key := range []string{"acme-key", "acme-old-key", "acme-2025-key"} {
					assert.NotContains(t, string(a.Body), key, "the answer quotes the key")
				}
				return
			}
			checkLoginAnswer(t, srv, a.Body, travelruletest.DefaultTokenLifetime)
		})
	}
}

// checkLoginAnswer checks a successful login's body: unwrapped, camelCase,
// an EdDSA JWT that the operations accept and whose exp is expiresAt.
func checkLoginAnswer(t *testing.T, srv *travelruletest.Server, body []byte, lifetime time.Duration) {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	assert.ElementsMatch(t, []string{"accessToken", "expiresIn", "expiresAt", "tokenType"}, keys(m), "not wrapped in data")
	assert.Equal(t, "Bearer", m["tokenType"])
	assert.EqualValues(t, lifetime/time.Second, m["expiresIn"])
	expiresAt, _ := m["expiresAt"].(string)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, expiresAt, "ISO 8601, UTC, milliseconds")
	tok, _ := m["accessToken"].(string)
	var claims jwt.RegisteredClaims
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, &claims)
	require.NoError(t, err)
	assert.Equal(t, "EdDSA", parsed.Header["alg"], "as the live example's header says")
	at, err := time.Parse(time.RFC3339Nano, expiresAt)
	require.NoError(t, err)
	assert.True(t, at.Equal(claims.ExpiresAt.Time), "expiresAt %s is the JWT's exp %s", at, claims.ExpiresAt.Time)

	a := post(t, srv.URL+"/transfers/initiate", tok, validRequest("http://127.0.0.1:1/cb"))
	assert.Equal(t, http.StatusOK, a.Status, "the token works: %s", a.Body)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestLoginDefaultsAndRefusals(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithTokenLifetime(90*time.Second))
	a := login(t, http.MethodPost, srv.LoginURL(), "x-api-key", travelruletest.DefaultAPIKey)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	checkLoginAnswer(t, srv, a.Body, 90*time.Second)

	// A body, which the docs do not send, is ignored.
	b := post(t, srv.LoginURL(), "", `{"apiKey":"x"}`, "x-api-key", travelruletest.DefaultAPIKey)
	assert.Equal(t, http.StatusOK, b.Status)

	for _, method := range []string{http.MethodGet, http.MethodPut} {
		a := login(t, method, srv.LoginURL(), "x-api-key", travelruletest.DefaultAPIKey)
		assert.Equal(t, http.StatusMethodNotAllowed, a.Status)
		assert.Equal(t, http.MethodPost, a.Header.Get("Allow"))
		code, _, _ := a.errorBody(t)
		assert.Equal(t, "METHOD_NOT_ALLOWED", code)
	}
}

func TestAPIKeyOptionsRefuseBadKeys(t *testing.T) {
	for name, opt := range map[string]travelruletest.Option{
		"no key":               travelruletest.WithAPIKeys(),
		"empty":                travelruletest.WithAPIKeys(""),
		"space around":         travelruletest.WithAPIKeys(" key"),
		"a line break":         travelruletest.WithAPIKeys("a\nb"),
		"inactive, empty":      travelruletest.WithInactiveAPIKeys(""),
		"expired, a control":   travelruletest.WithExpiredAPIKeys("a\x00b"),
		"expired, space after": travelruletest.WithExpiredAPIKeys("key "),
	} {
		t.Run(name, func(t *testing.T) {
			assert.Panics(t, func() { travelruletest.NewServer(opt).Close() })
		})
	}
}

// The last option wins for a key several name, and WithAPIKeys leaves a
// default key that an option made inactive so.
func TestAPIKeyOptionsOrder(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(),
		travelruletest.WithInactiveAPIKeys(travelruletest.DefaultAPIKey, "k"),
		travelruletest.WithAPIKeys("k", travelruletest.InactiveAPIKey))
	for key, want := range map[string]int{
		travelruletest.DefaultAPIKey:  http.StatusForbidden,
		"k":                           http.StatusOK,
		travelruletest.InactiveAPIKey: http.StatusOK,
		travelruletest.ExpiredAPIKey:  http.StatusForbidden,
	} {
		assert.Equal(t, want, login(t, http.MethodPost, srv.LoginURL(), "x-api-key", key).Status, key)
	}
}

// The SDK's WithAPIKey logs in at the sandbox as at the live service, and
// tells why a key is refused.
func TestLoginThroughTheClient(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/api/v3"))
	c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	require.NoError(t, err)
	for range 3 {
		_, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
		require.NoError(t, err)
	}
	assert.Equal(t, 1, countPath(srv, "/api/v3/auth/token"), "the token is cached")

	for _, tt := range []struct {
		key     string
		refusal travelrule.KeyRefusal
		status  int
	}{
		{"no-such-key", travelrule.KeyUnknown, http.StatusUnauthorized},
		{travelruletest.InactiveAPIKey, travelrule.KeyInactive, http.StatusForbidden},
		{travelruletest.ExpiredAPIKey, travelrule.KeyExpired, http.StatusForbidden},
	} {
		t.Run(tt.key, func(t *testing.T) {
			c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(tt.key))
			require.NoError(t, err)
			before := len(srv.Transfers())
			_, err = c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.ErrorIs(t, err, travelrule.ErrAPIKeyRefused)
			var le *travelrule.LoginError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.refusal, le.Refusal)
			assert.Equal(t, tt.status, le.StatusCode)
			assert.Len(t, srv.Transfers(), before, "nothing else was sent")
		})
	}
}

// An expired token is answered 403, and the SDK logs in again and
// succeeds: the server's clock is moved past the token's end, not waited
// for.
func TestExpiredTokenLogsInAgain(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithClock(now))
	c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)

	clock.Add(int64(2 * time.Hour))
	res, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts, "a 403, then the retry with a new token")
	assert.Equal(t, 2, countPath(srv, "/auth/token"))
	var statuses []int
	for _, r := range srv.Requests() {
		if r.Path == "/transfers/initiate" {
			statuses = append(statuses, r.Status)
		}
	}
	assert.Equal(t, []int{http.StatusOK, http.StatusForbidden, http.StatusOK}, statuses)
}

// The key is never recorded or logged.
func TestAPIKeyIsNeverRecorded(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	key := "acme-secret-key-0123456789"
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithAPIKeys(key), travelruletest.WithLogger(logger))
	login(t, http.MethodPost, srv.LoginURL(), "x-api-key", key)
	login(t, http.MethodPost, srv.LoginURL(), "Authorization", "ApiKey "+key)
	login(t, http.MethodPost, srv.LoginURL(), "x-api-key", key+"-wrong")
	rs := srv.Requests()
	require.Len(t, rs, 3)
	for _, r := range rs {
		assert.Empty(t, r.Header.Get("X-Api-Key"))
		assert.Empty(t, r.Header.Get("Authorization"))
	}
	assert.Equal(t, []int{http.StatusOK, http.StatusOK, http.StatusUnauthorized}, []int{rs[0].Status, rs[1].Status, rs[2].Status})
	assert.NotContains(t, logs.String(), "acme-secret")
	assert.Contains(t, logs.String(), "/auth/token", "the lines were written")
}

// countPath counts the requests recorded on path.
func countPath(srv *travelruletest.Server, path string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Path == path {
			n++
		}
	}
	return n
}

// syncBuffer is a buffer that the server's goroutines write and the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
