package travelruletest

import (
	"crypto/ed25519"
	"crypto/rand"
	"slices"
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

// CallbackDelays returns the waits between the attempts at a callback.
func CallbackDelays(s *Server) []time.Duration { return slices.Clone(s.cfg.cbDelays) }

// OpenConns returns how many connections the server has open.
func OpenConns(s *Server) int { return int(s.open.Load()) }

// SignToken signs claims with the server's key (EdDSA), for tests of
// tokens with other claims, such as a wrong issuer or audience.
func SignToken(s *Server, claims jwt.Claims) string { return sign(s.tokens.key, claims) }

// SignForeignToken signs claims with a key of no server's.
func SignForeignToken(claims jwt.Claims) string {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return sign(key, claims)
}

// PublicKey returns the server's public key, for tests of algorithm
// confusion.
func PublicKey(s *Server) ed25519.PublicKey { return s.tokens.key.Public().(ed25519.PublicKey) }
