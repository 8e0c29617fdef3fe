package travelruletest

import "time"

// WithClock makes the server mint and verify tokens by now instead of
// time.Now, so that a test moves the clock past a token's expiry instead
// of waiting for it.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// OpenConns returns how many connections the server has open.
func OpenConns(s *Server) int { return int(s.open.Load()) }
