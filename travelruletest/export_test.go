package travelruletest

import (
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The claims of the server's tokens, for tests that make their own.
const (
	Issuer   = issuer
	Audience = audience
)

// Defaults that tests check.
const (
	DefaultTokenLifetime = defaultTokenLifetime
	DefaultRecordLimit   = defaultRecordLimit
)

// WithClock makes the server mint and verify tokens by now instead of
// time.Now, so that a test moves the clock past a token's expiry instead
// of waiting for it.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// OpenConns returns how many connections the server has open.
func OpenConns(s *Server) int { return int(s.open.Load()) }

// SignToken signs claims with the server's key (HS256), for tests of
// tokens with other claims, such as a wrong issuer or audience.
func SignToken(s *Server, claims jwt.Claims) string { return sign(s.tokens.key, claims) }
