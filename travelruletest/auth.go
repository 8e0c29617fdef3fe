package travelruletest

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
)

// The claims of the tokens the server issues and accepts.
const (
	issuer   = "travelruletest"                // the iss claim
	audience = "travel-rule-transfer-exchange" // the aud claim
)

// tokenPath is where the OAuth2 token endpoint answers, whatever the path
// prefix.
const tokenPath = "/oauth/token"

// maxVerified bounds the cache of verified tokens.
const maxVerified = 4096

// tokens mints the server's tokens and verifies bearer tokens.
type tokens struct {
	key      ed25519.PrivateKey // signs, EdDSA; random per server, fixed at start
	parser   *jwt.Parser        // fixed at start
	now      func() time.Time   // the clock tokens are minted and verified by
	lifetime time.Duration      // of the tokens minted
	subject  string             // the sub claim: the client id

	mu       sync.Mutex           // guards verified
	verified map[string]time.Time // tokens that verified, and their expiry
}

func newTokens(cfg *config) *tokens {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic("travelruletest: making the token key: " + err.Error())
	}
	tk := &tokens{
		key:      key,
		now:      cfg.clock(),
		lifetime: cfg.tokenLifetime,
		subject:  cfg.clientID,
		verified: make(map[string]time.Time),
	}
	tk.parser = jwt.NewParser(
		jwt.WithTimeFunc(tk.now),
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithAudience(audience),
		jwt.WithExpirationRequired(),
	)
	return tk
}

// TokenURL returns the URL of the server's OAuth2 token endpoint, which
// grants client credentials (see [WithClientCredentials]) a bearer JWT, so
// that a golang.org/x/oauth2/clientcredentials.Config with this TokenURL
// works unchanged.
func (s *Server) TokenURL() string { return s.origin + tokenPath }

// TokenSource returns a token source of valid tokens for this server: each
// call mints a new JWT with the server's lifetime (see
// [WithTokenLifetime]), so it should be used behind a cache such as the
// client's own.
func (s *Server) TokenSource() oauth2.TokenSource { return s.tokens }

// Token mints a new valid token; it makes tokens an oauth2.TokenSource.
func (tk *tokens) Token() (*oauth2.Token, error) {
	now := tk.now()
	// A JWT's exp is in whole seconds: the token's Expiry says no later.
	exp := now.Add(tk.lifetime).Truncate(time.Second)
	return &oauth2.Token{
		AccessToken: tk.mint(tk.key, now, exp),
		TokenType:   "Bearer",
		Expiry:      exp,
	}, nil
}

// ExpiredToken returns a token that is valid in every way except that it
// expired an hour ago: the operations answer it 403 FORBIDDEN, as the live
// service answers an expired token.
func (s *Server) ExpiredToken() string {
	now := s.tokens.now()
	return s.tokens.mint(s.tokens.key, now.Add(-2*time.Hour), now.Add(-time.Hour))
}

// ForgedToken returns a token with valid claims signed (EdDSA) with a key
// other than the server's: the operations answer it 401 UNAUTHORIZED.
func (s *Server) ForgedToken() string {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic("travelruletest: ForgedToken: " + err.Error())
	}
	now := s.tokens.now()
	return s.tokens.mint(key, now, now.Add(s.tokens.lifetime))
}

// mint makes a token with the server's claims, issued at iat and expiring
// at exp, signed with key.
func (tk *tokens) mint(key ed25519.PrivateKey, iat, exp time.Time) string {
	var jti [12]byte
	_, _ = rand.Read(jti[:])
	return sign(key, jwt.RegisteredClaims{
		Issuer:    issuer,
		Subject:   tk.subject,
		Audience:  jwt.ClaimStrings{audience},
		IssuedAt:  jwt.NewNumericDate(iat),
		ExpiresAt: jwt.NewNumericDate(exp),
		ID:        hex.EncodeToString(jti[:]),
	})
}

// sign signs claims with key (EdDSA, as the live service's tokens are).
func sign(key ed25519.PrivateKey, claims jwt.Claims) string {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims).SignedString(key)
	if err != nil {
		panic("travelruletest: signing a token: " + err.Error())
	}
	return tok
}

// authenticate checks the request's bearer token; it returns nil if the
// token is valid, else the answer: 401 UNAUTHORIZED for a missing,
// malformed or forged token, 403 FORBIDDEN for an expired one (as the live
// service answers it). Both carry WWW-Authenticate.
func (s *Server) authenticate(r *http.Request) *answer {
	h := r.Header.Get("Authorization")
	if h == "" {
		a := errorAnswer(http.StatusUnauthorized, codeUnauthorized, "missing bearer token")
		a.header = append(a.header, "WWW-Authenticate", `Bearer realm="travelruletest"`)
		return a
	}
	scheme, tok, _ := strings.Cut(h, " ")
	reason, expired := "", false
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		reason = "authorization is not a bearer token"
	} else {
		reason, expired = s.tokens.verify(strings.TrimSpace(tok))
	}
	if reason == "" {
		return nil
	}
	status, code := http.StatusUnauthorized, codeUnauthorized
	if expired {
		status, code = http.StatusForbidden, codeForbidden
	}
	a := errorAnswer(status, code, reason)
	a.header = append(a.header, "WWW-Authenticate",
		`Bearer realm="travelruletest", error="invalid_token", error_description="`+reason+`"`)
	return a
}

// verify checks a bearer token and returns what is wrong with it, or "",
// and whether what is wrong is only that it expired. A token that verified
// is remembered until it expires, so that a client reusing its token costs
// a map look-up rather than a JWT verification.
func (tk *tokens) verify(tok string) (reason string, expired bool) {
	now := tk.now()
	tk.mu.Lock()
	exp, ok := tk.verified[tok]
	tk.mu.Unlock()
	if ok && now.Before(exp) {
		return "", false
	}
	var claims jwt.RegisteredClaims
	if _, err := tk.parser.ParseWithClaims(tok, &claims, tk.keyFunc); err != nil {
		reason := tokenFault(err)
		return reason, reason == tokenExpired
	}
	tk.mu.Lock()
	if len(tk.verified) >= maxVerified {
		clear(tk.verified)
	}
	tk.verified[tok] = claims.ExpiresAt.Time
	tk.mu.Unlock()
	return "", false
}

func (tk *tokens) keyFunc(*jwt.Token) (any, error) { return tk.key.Public(), nil }

// tokenFault names what is wrong with a token, in words that never repeat
// it. A token that expired and has another fault is named by the other, so
// that "token expired" (answered 403) means a token that is good but for
// its age.
func tokenFault(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "token malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "token signature invalid"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "token lacks a required claim"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "token issuer not accepted"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "token audience not accepted"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "token not valid yet"
	case errors.Is(err, jwt.ErrTokenExpired):
		return tokenExpired
	}
	return "token invalid"
}

// tokenExpired is the fault of a token good but for its age.
const tokenExpired = "token expired"

// serveToken is the OAuth2 token endpoint: the client-credentials grant
// (RFC 6749 section 4.4), with the client authenticated by HTTP Basic or by
// client_id and client_secret in the form.
func (s *Server) serveToken(r *http.Request) *answer {
	if r.Method != http.MethodPost {
		a := oauthError(http.StatusMethodNotAllowed, "invalid_request", "use POST")
		a.header = append(a.header, "Allow", http.MethodPost)
		return a
	}
	r.Body = io.NopCloser(io.LimitReader(r.Body, 64<<10))
	if a := refuseJSONGrant(r); a != nil {
		return a
	}
	if err := r.ParseForm(); err != nil {
		return oauthError(http.StatusBadRequest, "invalid_request", "form does not parse")
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 section 2.3.1: form-encoded before Basic encoding.
		if v, err := url.QueryUnescape(id); err == nil {
			id = v
		}
		if v, err := url.QueryUnescape(secret); err == nil {
			secret = v
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	idOK := subtle.ConstantTimeCompare([]byte(id), []byte(s.cfg.clientID)) == 1
	secretOK := subtle.ConstantTimeCompare([]byte(secret), []byte(s.cfg.clientSecret)) == 1
	if !idOK || !secretOK {
		a := oauthError(http.StatusUnauthorized, "invalid_client", "client authentication failed")
		a.header = append(a.header, "WWW-Authenticate", `Basic realm="travelruletest"`)
		return a
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		return oauthError(http.StatusBadRequest, "unsupported_grant_type", "only client_credentials is supported")
	}
	ts, _ := s.tokens.Token()
	body := `{"access_token":"` + ts.AccessToken + `","token_type":"Bearer","expires_in":` +
		strconv.FormatInt(int64(s.cfg.tokenLifetime/time.Second), 10) + `}`
	return &answer{status: http.StatusOK, body: []byte(body), header: []string{"Cache-Control", "no-store"}}
}

// refuseJSONGrant answers 400 invalid_request to a token request whose body
// is JSON (declared so by its Content-Type, or opening with "{"), which
// would otherwise be refused for a missing client or grant type; it
// returns nil for any other request, whose body it leaves to be read.
func refuseJSONGrant(r *http.Request) *answer {
	br := bufio.NewReaderSize(r.Body, jsonSniffLen)
	r.Body = io.NopCloser(br)
	head, _ := br.Peek(jsonSniffLen) // what there is, if less
	if !isJSON(r.Header.Get("Content-Type")) && !bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")) {
		return nil
	}
	return oauthError(http.StatusBadRequest, "invalid_request",
		"OAuth2 token requests are form-encoded (application/x-www-form-urlencoded, RFC 6749 section 4.4): "+
			"send grant_type=client_credentials with the client's credentials in HTTP Basic or in the form")
}

// jsonSniffLen is how much of a token request's body is read to tell JSON.
const jsonSniffLen = 512

func oauthError(status int, code, desc string) *answer {
	return &answer{status: status, body: []byte(`{"error":"` + code + `","error_description":"` + desc + `"}`),
		header: []string{"Cache-Control", "no-store"}}
}
