package travelruletest

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The live service's login: POST {URL}/auth/token, no body, the API key in
// x-api-key (or "Authorization: ApiKey <key>"), answered unwrapped with
// {"accessToken","expiresIn","expiresAt","tokenType":"Bearer"}. The token
// is a JWT like those of TokenSource and the OAuth2 endpoint.

// The API keys every sandbox knows unless options say otherwise. They are
// demo values, not secrets: print them, put them in scripts.
const (
	// DefaultAPIKey is the API key that POST {URL}/auth/token accepts
	// unless [WithAPIKeys] sets others.
	DefaultAPIKey = "sandbox-api-key"
	// InactiveAPIKey is an API key that was deactivated, as in the live
	// service's dashboard: POST {URL}/auth/token answers it 403 FORBIDDEN
	// with the message "API key inactive". [WithInactiveAPIKeys] adds
	// more.
	InactiveAPIKey = "sandbox-api-key-inactive"
	// ExpiredAPIKey is an API key whose expiredAt has passed: POST
	// {URL}/auth/token answers it 403 FORBIDDEN with the message "API key
	// expired". [WithExpiredAPIKeys] adds more.
	ExpiredAPIKey = "sandbox-api-key-expired"
)

// loginPath is where the live service's login answers, after the path
// prefix.
const loginPath = "/auth/token"

// keyState is what the sandbox knows of an API key.
type keyState uint8

const (
	keyActive   keyState = iota + 1 // accepted
	keyInactive                     // 403 "API key inactive"
	keyExpired                      // 403 "API key expired"
)

// apiKeys are the API keys the sandbox knows, by the SHA-256 of the key,
// so that a look-up's time does not depend on how much of a key matches.
type apiKeys map[[32]byte]keyState

func defaultAPIKeys() apiKeys {
	return apiKeys{
		sha256.Sum256([]byte(DefaultAPIKey)):  keyActive,
		sha256.Sum256([]byte(InactiveAPIKey)): keyInactive,
		sha256.Sum256([]byte(ExpiredAPIKey)):  keyExpired,
	}
}

// set records keys in state st; it reports an error for a key that the
// client could not send.
func (ks apiKeys) set(st keyState, keys []string) error {
	for _, k := range keys {
		if k == "" || strings.TrimSpace(k) != k || !httpguts.ValidHeaderFieldValue(k) {
			return errors.New("an API key is empty or cannot go in a header")
		}
		ks[sha256.Sum256([]byte(k))] = st
	}
	return nil
}

// WithAPIKeys sets the API keys that POST {URL}/auth/token accepts, in
// place of [DefaultAPIKey] (unless an option made that key inactive or
// expired, which it stays). [InactiveAPIKey] and [ExpiredAPIKey] are still
// refused as such. A key given to several of the API-key options takes the
// state of the last. It panics (from NewServer) without a key, or with one
// that is empty or cannot go in an HTTP header.
func WithAPIKeys(keys ...string) Option {
	return func(c *config) {
		if len(keys) == 0 {
			c.fail(errors.New("travelruletest: WithAPIKeys: no key"))
			return
		}
		if d := sha256.Sum256([]byte(DefaultAPIKey)); c.apiKeys[d] == keyActive {
			delete(c.apiKeys, d)
		}
		if err := c.apiKeys.set(keyActive, keys); err != nil {
			c.fail(errors.New("travelruletest: WithAPIKeys: " + err.Error()))
		}
	}
}

// WithInactiveAPIKeys registers API keys that were deactivated: POST
// {URL}/auth/token answers each 403 FORBIDDEN, "API key inactive", as the
// live service answers a key whose isActive is off. [InactiveAPIKey] is
// one without the option.
func WithInactiveAPIKeys(keys ...string) Option {
	return func(c *config) {
		if err := c.apiKeys.set(keyInactive, keys); err != nil {
			c.fail(errors.New("travelruletest: WithInactiveAPIKeys: " + err.Error()))
		}
	}
}

// WithExpiredAPIKeys registers API keys whose expiry has passed: POST
// {URL}/auth/token answers each 403 FORBIDDEN, "API key expired", as the
// live service answers a key past its expiredAt. [ExpiredAPIKey] is one
// without the option.
func WithExpiredAPIKeys(keys ...string) Option {
	return func(c *config) {
		if err := c.apiKeys.set(keyExpired, keys); err != nil {
			c.fail(errors.New("travelruletest: WithExpiredAPIKeys: " + err.Error()))
		}
	}
}

// LoginURL returns the URL of the live service's login, {URL}/auth/token,
// where an API key (see [DefaultAPIKey]) gets a bearer token: what
// travelrule.WithAPIKey posts to.
func (s *Server) LoginURL() string { return s.URL + loginPath }

// loginAnswer is the body of a successful login, unwrapped as the live
// service answers it.
type loginAnswer struct {
	AccessToken string `json:"accessToken"`
	ExpiresIn   int64  `json:"expiresIn"`
	ExpiresAt   string `json:"expiresAt"`
	TokenType   string `json:"tokenType"`
}

// serveLogin is POST {URL}/auth/token. The body, if any, is not read: the
// service documents none.
func (s *Server) serveLogin(r *http.Request) *answer {
	if r.Method != http.MethodPost {
		return methodNotAllowed(http.MethodPost)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxBody))
	key := r.Header.Get("X-Api-Key")
	if key == "" {
		if scheme, v, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "ApiKey") {
			key = strings.TrimSpace(v)
		}
	}
	var refused *answer
	switch s.cfg.apiKeys[sha256.Sum256([]byte(key))] {
	case keyActive:
	case keyInactive:
		refused = errorAnswer(http.StatusForbidden, codeForbidden, "API key inactive")
	case keyExpired:
		refused = errorAnswer(http.StatusForbidden, codeForbidden, "API key expired")
	default:
		msg := "API key not recognised"
		if key == "" {
			msg = "API key missing: send it in the x-api-key header"
		}
		refused = errorAnswer(http.StatusUnauthorized, codeUnauthorized, msg)
	}
	if refused != nil {
		refused.header = append(refused.header, "Cache-Control", "no-store")
		return refused
	}
	tok, _ := s.tokens.Token()
	body, _ := json.Marshal(loginAnswer{
		AccessToken: tok.AccessToken,
		ExpiresIn:   int64(s.cfg.tokenLifetime / time.Second),
		ExpiresAt:   isoMillis(tok.Expiry),
		TokenType:   "Bearer",
	})
	return &answer{status: http.StatusOK, body: body, header: []string{"Cache-Control", "no-store"}}
}

// isoMillis is t in ISO 8601, UTC, with milliseconds and Z, as the live
// service writes expiresAt: "2026-05-11T10:00:00.000Z".
func isoMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
