package travelrule

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// tokenCache caches the tokens of a source with oauth2.ReuseTokenSource and
// can be invalidated after a 401, which ReuseTokenSource itself cannot: an
// invalidation replaces the cache with a fresh one over the same source.
// Only the first invalidation for a rejected token does so, so a burst of
// 401s refreshes once.
type tokenCache struct {
	src oauth2.TokenSource

	mu   sync.Mutex
	cur  oauth2.TokenSource
	last *oauth2.Token // the token cur last returned
}

func newTokenCache(src oauth2.TokenSource) *tokenCache {
	return &tokenCache{src: src, cur: oauth2.ReuseTokenSource(nil, src)}
}

// tokenError marks a failure to obtain a token, so that the retry policy
// does not mistake it for a connection failure.
type tokenError struct{ err error }

// Error names the token endpoint's status and error code, never its body
// (oauth2.RetrieveError's own Error appends the raw answer); the cause stays
// reachable with errors.As.
func (e *tokenError) Error() string {
	var re *oauth2.RetrieveError
	if errors.As(e.err, &re) && re.Response != nil {
		msg := "obtaining an access token: token endpoint answered " + re.Response.Status
		if isIdentifier(re.ErrorCode, 64) {
			msg += ": " + re.ErrorCode
		}
		return msg
	}
	return "obtaining an access token: " + e.err.Error()
}
func (e *tokenError) Unwrap() error { return e.err }

// Token implements oauth2.TokenSource. The lock is not held while the source
// fetches a token.
func (t *tokenCache) Token() (*oauth2.Token, error) {
	t.mu.Lock()
	cur := t.cur
	t.mu.Unlock()
	tok, err := cur.Token()
	if err != nil {
		return nil, &tokenError{err}
	}
	t.mu.Lock()
	if t.cur == cur {
		t.last = tok
	}
	t.mu.Unlock()
	return tok, nil
}

// valid reports whether the cache holds a token that oauth2.ReuseTokenSource
// will hand out without a fetch (it renews 10 seconds before expiry), so
// that a call need not wait for one.
func (t *tokenCache) valid() bool {
	t.mu.Lock()
	tok := t.last
	t.mu.Unlock()
	return tok != nil && tok.AccessToken != "" && (tok.Expiry.IsZero() || time.Until(tok.Expiry) > 10*time.Second)
}

// tokenFor returns a token, or the context's error as a *tokenError as soon
// as ctx ends: oauth2.Transport asks its source without a context, so a
// slow token endpoint would otherwise hold the call past its deadline. The
// fetch goes on in the background and its token is cached.
func (t *tokenCache) tokenFor(ctx context.Context) error {
	if t.valid() {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := t.Token()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return &tokenError{ctx.Err()}
	}
}

// refresh drops the cached token if it is still the rejected one and
// reports whether a token different from the rejected one is now available.
func (t *tokenCache) refresh(rejected string) bool {
	t.mu.Lock()
	// Reset only the cache that issued the rejected token (or, when the
	// rejected token is unknown, the current one): a caller whose 401 comes
	// after another caller's refresh finds the new token instead of
	// resetting again.
	if t.last != nil && (rejected == "" || t.last.AccessToken == rejected) {
		t.cur = oauth2.ReuseTokenSource(nil, t.src)
		t.last = nil
	}
	t.mu.Unlock()
	tok, err := t.Token()
	return err == nil && tok.AccessToken != rejected
}

// clientCredentialsSource fetches a token with the client-credentials grant
// on every call, with a context of its own (never the caller's, which may
// have ended) and through the client's own base transport, so that the TLS
// settings, proxy and roots given to WithHTTPClient apply to the token
// endpoint too; tokenCache does the caching.
type clientCredentialsSource struct {
	cfg *clientcredentials.Config
	hc  *http.Client // set by NewClient
}

func (s *clientCredentialsSource) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultAttemptTimeout)
	defer cancel()
	if s.hc != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, s.hc)
	}
	return s.cfg.Token(ctx)
}

// idempotencyKeyFrom returns the context's key or a new one.
func idempotencyKeyFrom(ctx context.Context) string {
	if k, ok := ctx.Value(idempotencyKeyCtx{}).(string); ok && k != "" {
		return k
	}
	return NewIdempotencyKey()
}

// NewIdempotencyKey returns a new random key in the form of a version 4
// UUID. Make one before a call and store it with your payment record, then
// call with [ContextWithIdempotencyKey], so that the same payment carries
// the same key even after a restart.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
