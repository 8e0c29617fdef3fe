package travelruletest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func TestUnauthorized(t *testing.T) {
	srv := newServer(t)
	now := time.Now()
	claims := func(iss, aud string, exp time.Time) jwt.RegisteredClaims {
		c := jwt.RegisteredClaims{Issuer: iss, IssuedAt: jwt.NewNumericDate(now)}
		if aud != "" {
			c.Audience = jwt.ClaimStrings{aud}
		}
		if !exp.IsZero() {
			c.ExpiresAt = jwt.NewNumericDate(exp)
		}
		return c
	}
	later := now.Add(time.Hour)
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims(travelruletest.Issuer, travelruletest.Audience, later)).
		SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	hs512, err := jwt.NewWithClaims(jwt.SigningMethodHS512, claims(travelruletest.Issuer, travelruletest.Audience, later)).
		SignedString([]byte("some other key of enough length!"))
	require.NoError(t, err)
	// Algorithm confusion: HS256 keyed with the server's public key.
	confused, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(travelruletest.Issuer, travelruletest.Audience, later)).
		SignedString([]byte(travelruletest.PublicKey(srv)))
	require.NoError(t, err)
	past := now.Add(-time.Hour)

	tests := []struct {
		name          string
		authorization string
		status        int
		reason        string // "" means no error code in WWW-Authenticate
	}{
		{"missing", "", http.StatusUnauthorized, ""},
		{"basic scheme", "Basic c2FuZGJveDpzZWNyZXQ=", http.StatusUnauthorized, "authorization is not a bearer token"},
		{"an API key", "ApiKey " + travelruletest.DefaultAPIKey, http.StatusUnauthorized, "authorization is not a bearer token"},
		{"empty bearer", "Bearer ", http.StatusUnauthorized, "authorization is not a bearer token"},
		{"malformed", "Bearer not.a.jwt", http.StatusUnauthorized, "token malformed"},
		{"expired", "Bearer " + srv.ExpiredToken(), http.StatusForbidden, "token expired"},
		{"forged", "Bearer " + srv.ForgedToken(), http.StatusUnauthorized, "token signature invalid"},
		{"forged and expired", "Bearer " + travelruletest.SignForeignToken(claims(travelruletest.Issuer, travelruletest.Audience, past)), http.StatusUnauthorized, "token signature invalid"},
		{"alg none", "Bearer " + none, http.StatusUnauthorized, "token signature invalid"},
		{"other algorithm", "Bearer " + hs512, http.StatusUnauthorized, "token signature invalid"},
		{"HS256 under the public key", "Bearer " + confused, http.StatusUnauthorized, "token signature invalid"},
		{"wrong issuer", "Bearer " + travelruletest.SignToken(srv, claims("someone-else", travelruletest.Audience, later)), http.StatusUnauthorized, "token issuer not accepted"},
		{"wrong issuer and expired", "Bearer " + travelruletest.SignToken(srv, claims("someone-else", travelruletest.Audience, past)), http.StatusUnauthorized, "token issuer not accepted"},
		{"wrong audience", "Bearer " + travelruletest.SignToken(srv, claims(travelruletest.Issuer, "other-api", later)), http.StatusUnauthorized, "token audience not accepted"},
		{"no audience", "Bearer " + travelruletest.SignToken(srv, claims(travelruletest.Issuer, "", later)), http.StatusUnauthorized, "token lacks a required claim"},
		{"no expiry", "Bearer " + travelruletest.SignToken(srv, claims(travelruletest.Issuer, travelruletest.Audience, time.Time{})), http.StatusUnauthorized, "token lacks a required claim"},
	}
	for _, path := range []string{"/transfers/initiate", "/transfers/inquiryResolution?q=x"} {
		for _, tc := range tests {
			t.Run(strings.TrimPrefix(strings.Split(path, "?")[0], "/transfers/")+"/"+tc.name, func(t *testing.T) {
				var hdr []string
				if tc.authorization != "" {
					hdr = []string{"Authorization", tc.authorization}
				}
				a := post(t, srv.URL+path, "", validRequest("http://127.0.0.1/cb"), hdr...)
				require.Equal(t, tc.status, a.Status)
				www := a.Header.Get("WWW-Authenticate")
				if tc.reason == "" {
					assert.Equal(t, `Bearer realm="travelruletest"`, www)
				} else {
					assert.Contains(t, www, `error="invalid_token"`)
					assert.Contains(t, www, tc.reason)
				}
				code, msg, _ := a.errorBody(t)
				if tc.status == http.StatusForbidden {
					assert.Equal(t, "FORBIDDEN", code, "an expired token, as the live service answers it")
				} else {
					assert.Equal(t, "UNAUTHORIZED", code)
				}
				assert.NotEmpty(t, msg)
			})
		}
	}
	assert.Empty(t, srv.Transfers())

	// A valid token passes.
	a := post(t, srv.URL+"/transfers/initiate", token(t, srv), validRequest("http://127.0.0.1:1/cb"))
	assert.Equal(t, http.StatusOK, a.Status)
}

func TestUnauthorizedThroughClient(t *testing.T) {
	srv := newServer(t)
	for _, tt := range []struct {
		name string
		tok  string
		want error
	}{
		{"expired", srv.ExpiredToken(), travelrule.ErrForbidden},
		{"forged", srv.ForgedToken(), travelrule.ErrUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(travelrule.StaticToken(tt.tok)))
			require.NoError(t, err)
			_, err = c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestTokenSource(t *testing.T) {
	srv := newServer(t, travelruletest.WithTokenLifetime(90*time.Second))
	tok, err := srv.TokenSource().Token()
	require.NoError(t, err)
	assert.Equal(t, "Bearer", tok.TokenType)
	assert.WithinDuration(t, time.Now().Add(90*time.Second), tok.Expiry, 2*time.Second)

	var claims jwt.RegisteredClaims
	_, _, err = jwt.NewParser().ParseUnverified(tok.AccessToken, &claims)
	require.NoError(t, err)
	assert.Equal(t, travelruletest.Issuer, claims.Issuer)
	assert.Equal(t, jwt.ClaimStrings{travelruletest.Audience}, claims.Audience)
	assert.Equal(t, travelruletest.DefaultClientID, claims.Subject)
	assert.NotEmpty(t, claims.ID)

	tok2, err := srv.TokenSource().Token()
	require.NoError(t, err)
	assert.NotEqual(t, tok.AccessToken, tok2.AccessToken, "every token is new")

	// Another server's tokens are refused.
	other := newServer(t)
	a := post(t, srv.URL+"/transfers/initiate", token(t, other), validRequest("http://127.0.0.1:1/cb"))
	assert.Equal(t, http.StatusUnauthorized, a.Status)
}

func TestClientCredentials(t *testing.T) {
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleAutoDetect, oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		t.Run(map[oauth2.AuthStyle]string{0: "auto", 1: "params", 2: "header"}[style], func(t *testing.T) {
			srv := newServer(t, travelruletest.WithClientCredentials("acme exchange", "s3cret/+&"), travelruletest.WithPathPrefix("/api/v3"))
			cfg := &clientcredentials.Config{
				ClientID:     "acme exchange",
				ClientSecret: "s3cret/+&",
				TokenURL:     srv.TokenURL(),
				Scopes:       []string{"transfers"},
				AuthStyle:    style,
			}
			c, err := travelrule.NewClient(srv.URL, travelrule.WithClientCredentials(cfg))
			require.NoError(t, err)
			res, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			assert.Equal(t, "true", res.Status)

			tok, err := cfg.Token(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "Bearer", tok.Type())
			assert.WithinDuration(t, time.Now().Add(travelruletest.DefaultTokenLifetime), tok.Expiry, 5*time.Second)
		})
	}
}

func TestTokenEndpointErrors(t *testing.T) {
	srv := newServer(t)
	t.Run("wrong secret", func(t *testing.T) {
		cfg := &clientcredentials.Config{ClientID: travelruletest.DefaultClientID, ClientSecret: "wrong", TokenURL: srv.TokenURL()}
		_, err := cfg.Token(context.Background())
		var re *oauth2.RetrieveError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "invalid_client", re.ErrorCode)
	})
	form := func(method string, v url.Values, basic bool) (int, map[string]any) {
		req, err := http.NewRequest(method, srv.TokenURL(), strings.NewReader(v.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic {
			req.SetBasicAuth(travelruletest.DefaultClientID, travelruletest.DefaultClientSecret)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		return resp.StatusCode, m
	}
	status, m := form(http.MethodPost, url.Values{"grant_type": {"password"}}, true)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "unsupported_grant_type", m["error"])

	status, _ = form(http.MethodGet, nil, true)
	assert.Equal(t, http.StatusMethodNotAllowed, status)

	status, m = form(http.MethodPost, url.Values{"grant_type": {"client_credentials"}}, true)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "Bearer", m["token_type"])
	assert.EqualValues(t, 3600, m["expires_in"])
	tok, _ := m["access_token"].(string)
	a := post(t, srv.URL+"/transfers/initiate", tok, validRequest("http://127.0.0.1:1/cb"))
	assert.Equal(t, http.StatusOK, a.Status)
}

func TestVerifiedTokenStillExpires(t *testing.T) {
	// The server remembers tokens it verified, but not past their expiry:
	// its clock is moved, not waited for.
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithClock(now))
	exp := now().Add(time.Hour)
	tok := travelruletest.SignToken(srv, jwt.RegisteredClaims{
		Issuer:    travelruletest.Issuer,
		Audience:  jwt.ClaimStrings{travelruletest.Audience},
		ExpiresAt: jwt.NewNumericDate(exp),
	})
	for _, tt := range []struct {
		at   time.Time
		want int
	}{
		{now(), http.StatusOK},                 // verified, then remembered
		{exp.Add(-time.Second), http.StatusOK}, // remembered
		{exp, http.StatusForbidden},            // expired, though remembered
		{exp.Add(time.Hour), http.StatusForbidden},
	} {
		clock.Store(tt.at.UnixNano())
		a := post(t, srv.URL+"/transfers/initiate", tok, validRequest("http://127.0.0.1:1/cb"))
		assert.Equal(t, tt.want, a.Status, "at %s", tt.at)
	}
}

func TestTokenSourceExpiryIsTheJWTs(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 999_000_000, time.UTC)
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithClock(func() time.Time { return at }))
	tok, err := srv.TokenSource().Token()
	require.NoError(t, err)
	var claims jwt.RegisteredClaims
	_, _, err = jwt.NewParser().ParseUnverified(tok.AccessToken, &claims)
	require.NoError(t, err)
	assert.Equal(t, claims.ExpiresAt.Time.UTC(), tok.Expiry.UTC(), "the client must not think a token valid longer than the server does")
}

// TestTokenEndpointRefusesJSON: a token request with a JSON body is told
// that the grant is form-encoded, rather than that the client or the grant
// type is wrong; a form keeps working, even one sent with Basic
// credentials.
func TestTokenEndpointRefusesJSON(t *testing.T) {
	srv := newServer(t)
	jsonBody := `{"grant_type":"client_credentials","client_id":"` + travelruletest.DefaultClientID +
		`","client_secret":"` + travelruletest.DefaultClientSecret + `"}`
	tests := []struct {
		name, contentType, body string
		basic                   bool
	}{
		{"declared JSON", "application/json", jsonBody, false},
		{"declared JSON with charset, Basic", "Application/JSON; charset=utf-8", `{"grant_type":"client_credentials"}`, true},
		{"declared JSON, empty", "application/json", "", true},
		{"JSON without a type", "", jsonBody, false},
		{"JSON declared a form", "application/x-www-form-urlencoded", "\n  " + jsonBody, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.TokenURL(), strings.NewReader(tt.body))
			require.NoError(t, err)
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			if tt.basic {
				req.SetBasicAuth(travelruletest.DefaultClientID, travelruletest.DefaultClientSecret)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var m map[string]string
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Equal(t, "invalid_request", m["error"])
			assert.Contains(t, m["error_description"], "form-encoded")
			assert.Contains(t, m["error_description"], "grant_type=client_credentials")
			assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
		})
	}
	t.Run("a form still works", func(t *testing.T) {
		cfg := &clientcredentials.Config{ClientID: travelruletest.DefaultClientID, ClientSecret: travelruletest.DefaultClientSecret, TokenURL: srv.TokenURL()}
		for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
			cfg.AuthStyle = style
			tok, err := cfg.Token(context.Background())
			require.NoError(t, err, "style %v", style)
			assert.NotEmpty(t, tok.AccessToken)
		}
	})
}
