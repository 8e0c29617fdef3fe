package travelrule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// tokenCache holds the client's bearer token and fetches a new one from
// src when there is none, when it is about to expire (oauth2.Token.Valid:
// 10 seconds before its expiry) or when the service rejected it. At most one
// fetch runs at a time, in a goroutine of its own; a call waits for it or
// for its context, whichever ends first, so a source that hangs holds one
// goroutine however many calls wait and give up. The source is never asked
// in a caller's goroutine, where nothing could bound it.
type tokenCache struct {
	src        oauth2.TokenSource
	static     bool      // src always yields the same token: a refresh cannot help
	credential *keyTable // the parts of the API key or client secret src logs in with; nil without

	mu       sync.Mutex
	tok      *oauth2.Token // the last token src issued; nil before the first
	cur      *bearer       // tok's Authorization header
	rejected bool          // the service refused tok: the next call fetches
	// forbiddenAuth is the Authorization header of a token that met a 403
	// which a new token did not cure: its 403s are forbidden operations,
	// not its expiry, and do not replace it.
	forbiddenAuth string
	fetching      *tokenFetch // the fetch in flight, if any

	// observe, when set, is told of each fetch once it has ended (the
	// client's TokenObservers: see Client.tokenFetched).
	observe func(*TokenFetch)
}

// tokenFetch is one fetch from the source. err is set before done is
// closed.
type tokenFetch struct {
	done chan struct{}
	err  error
}

func newTokenCache(src oauth2.TokenSource) *tokenCache {
	_, static := src.(staticTokenSource)
	t := &tokenCache{src: src, static: static}
	if cred := credentialOf(src); cred != "" {
		t.credential = newKeyTable(cred)
	}
	return t
}

// tokenError marks a failure to obtain a token, so that the retry policy
// does not mistake it for a connection failure.
type tokenError struct{ err error }

// Error names the token endpoint's status and error code, never its body
// (oauth2.RetrieveError's own Error appends the raw answer), and never the
// text of a token source's own error, which is the integrator's code and
// may carry a secret; the cause stays reachable with errors.As.
func (e *tokenError) Error() string {
	const prefix = "obtaining an access token: "
	var re *oauth2.RetrieveError
	var ue *url.Error
	var le *LoginError
	switch {
	case errors.As(e.err, &le):
		return prefix + le.text()
	case errors.As(e.err, &re) && re.Response != nil:
		// The status line's reason phrase is the endpoint's own text: the
		// number and the standard's words only, and an error code only if
		// RFC 6749 (section 5.2) defines it.
		code := re.Response.StatusCode
		msg := prefix + "token endpoint answered " + strconv.Itoa(code) + " " + http.StatusText(code)
		if oauthErrorCodes[re.ErrorCode] {
			msg += ": " + re.ErrorCode
		}
		return msg
	case errors.As(e.err, new(*sourceFault)):
		return prefix + e.err.Error() // the client's own words
	case errors.Is(e.err, context.Canceled):
		// Not the error's text: a source may wrap a context error in its
		// own words (and a secret), and oauth2's names the token URL.
		return prefix + "context canceled"
	case errors.Is(e.err, context.DeadlineExceeded):
		return prefix + "context deadline exceeded"
	case errors.As(e.err, &ue):
		return prefix + "token endpoint unreachable: " + transportText(ue)
	}
	return prefix + "the token source failed"
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *tokenError) Unwrap() error { return e.err }

// oauthErrorCodes are the error codes of a token endpoint that RFC 6749
// (section 5.2) and RFC 6749's registry define; no other code is shown.
var oauthErrorCodes = map[string]bool{
	"invalid_request": true, "invalid_client": true, "invalid_grant": true, "unauthorized_client": true,
	"unsupported_grant_type": true, "invalid_scope": true, "access_denied": true,
	"server_error": true, "temporarily_unavailable": true,
}

// sourceFault is a fault of the token source, described in the client's
// own words: a source that misbehaves fails the calls waiting for it, and
// the next call asks it again.
type sourceFault struct{ text string }

// Error implements error with the client's own words.
func (f *sourceFault) Error() string { return f.text }

var (
	errNoToken      = &sourceFault{"token source returned no token and no error"}
	errEmptyToken   = &sourceFault{"token source returned a token without an access token"}
	errBadToken     = &sourceFault{"token source returned a token that cannot go in an Authorization header"}
	errSourceExited = &sourceFault{"token source ended its goroutine (runtime.Goexit)"}
	errNotFetched   = &sourceFault{"no token has been obtained"}
	// errSourcePanicked is matched by the error of a fetch whose source
	// panicked.
	errSourcePanicked = &sourceFault{"token source panicked"}
)

// sourcePanicError is the error of a fetch whose source panicked. It names
// the runtime's error when the runtime itself panicked (a nil dereference,
// an index out of range: the runtime's words, never data), and nothing of
// any other panic value, which is the source's own and may carry the secret
// or the token it was handling.
func sourcePanicError(v any) error {
	if re, ok := v.(runtime.Error); ok {
		t := reflect.TypeOf(re)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.PkgPath() == "runtime" {
			return fmt.Errorf("%w: %w", errSourcePanicked, re)
		}
	}
	return errSourcePanicked
}

// header returns the Authorization header of the cached token for a
// request made in ctx, fetching a token first if need be (see tokenFor),
// with its values for the request's header (shared: not to be changed).
// It returns the cached token even when it has crossed the renewal margin
// since tokenFor or a concurrent 401 marked it rejected: the request then
// meets a 401 of its own and refreshes.
func (t *tokenCache) header(ctx context.Context) (*bearer, error) {
	t.mu.Lock()
	if t.tok.Valid() && !t.rejected {
		b := t.cur
		t.mu.Unlock()
		return b, nil
	}
	t.mu.Unlock()
	if err := t.tokenFor(ctx); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok == nil {
		return nil, &tokenError{errNotFetched}
	}
	return t.cur, nil
}

// tokenFor makes sure that the cache holds a token for a request made in
// ctx, waiting for a fetch if need be. It returns a *tokenError with the
// source's failure, or with the context's error as soon as ctx ends; the
// fetch then goes on in its goroutine, and the calls that come after it
// wait for the same fetch instead of starting another. A fetch that
// succeeds serves the calls that waited for it even if its token is
// already inside the renewal margin.
func (t *tokenCache) tokenFor(ctx context.Context) error {
	t.mu.Lock()
	if t.tok.Valid() && !t.rejected {
		t.mu.Unlock()
		return nil
	}
	if err := ctx.Err(); err != nil {
		t.mu.Unlock()
		return &tokenError{err}
	}
	f := t.fetching
	if f == nil {
		f = &tokenFetch{done: make(chan struct{})}
		t.fetching = f
		go t.fetch(f)
	}
	t.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return &tokenError{f.err}
		}
		return nil
	case <-ctx.Done():
		return &tokenError{ctx.Err()}
	}
}

// fetch asks the source for a token and ends f. A panic, a nil token, an
// empty access token and a source that ends its goroutine become f's error,
// so that no fault of the source ends the process or leaves the cache
// waiting for a fetch that will never end.
func (t *tokenCache) fetch(f *tokenFetch) {
	var tok *oauth2.Token
	var err error = errSourceExited // kept if the source calls runtime.Goexit, which runs only deferred calls
	var start time.Time
	if t.observe != nil {
		start = time.Now()
	}
	defer func() {
		if v := recover(); v != nil {
			tok, err = nil, sourcePanicError(v)
		}
		var b *bearer
		if err == nil {
			b = newBearer(tok, credentialOf(t.src))
		}
		t.mu.Lock()
		if err == nil {
			t.tok, t.cur, t.rejected = tok, b, false
		}
		t.fetching = nil
		f.err = err
		t.mu.Unlock()
		if t.observe != nil {
			// Before the waiting calls go on: a call's end never comes
			// before the report of the fetch it waited for.
			t.report(start, err)
		}
		close(f.done)
	}()
	tok, err = t.src.Token()
	switch {
	case err != nil:
	case tok == nil:
		err = errNoToken
	case tok.AccessToken == "":
		err = errEmptyToken
	case !httpguts.ValidHeaderFieldValue(tok.Type() + " " + tok.AccessToken):
		// net/http would refuse the request before sending it.
		err = errBadToken
	}
}

// report tells the observers of a fetch that began at start and ended
// with err (nil: a token came). An observer's panic is not the source's
// fault and must not leave the waiting calls waiting: it is dropped.
func (t *tokenCache) report(start time.Time, err error) {
	defer func() { _ = recover() }()
	f := &TokenFetch{Duration: time.Since(start)}
	if err != nil {
		f.Err, f.ErrorType = &tokenError{withoutBody(err)}, tokenFaultType(err)
	}
	t.observe(f)
}

// withoutBody returns err without the answer body it may carry: a token
// endpoint's answer may hold a token (a login answered 2xx that the client
// did not understand) or echo the client's secret, and an observer is
// given neither.
func withoutBody(err error) error {
	switch e := err.(type) {
	case *LoginError:
		c := *e
		c.Body = nil
		return &c
	case *oauth2.RetrieveError:
		c := *e
		c.Body, c.Response = nil, nil
		return &c
	}
	return err
}

// tokenFaultType is a short, fixed name of a fetch's failure, for
// TokenFetch.ErrorType: "token_refused" when the token endpoint answered
// and refused (an OAuth2 error, the live service's login refusal),
// "token_answer_invalid" for a login answered 2xx without a token the
// client understood, "token_source" for a source that misbehaved, and
// otherwise the name of the failure below HTTP (faultType).
func tokenFaultType(err error) string {
	var (
		re *oauth2.RetrieveError
		le *LoginError
		sf *sourceFault
	)
	switch {
	case errors.As(err, &le) && le.Err != nil:
		return faultType(le.Err)
	case errors.As(err, &le) && le.StatusCode >= 200 && le.StatusCode <= 299 && le.Refusal == KeyNotRefused:
		return "token_answer_invalid"
	case errors.As(err, &le), errors.As(err, &re):
		return "token_refused"
	case errors.As(err, &sf):
		return "token_source"
	}
	if t := faultType(err); t != "_OTHER" {
		return t
	}
	return "token_source"
}

// refresh is called after a 401 or 403 answer to a request that carried
// the rejected Authorization header ("" when the transport did not say)
// and reports whether a token other than the rejected one is now at hand,
// fetched within ctx, or why none could be had (a *tokenError).
// It marks the cached token rejected if it is still the rejected one, so
// a burst of 401s leads to one fetch: a caller whose 401 comes after
// another caller's refresh finds the new token, or the fetch under way,
// instead of rejecting again. A static source cannot yield another token.
func (t *tokenCache) refresh(ctx context.Context, rejected string) (bool, error) {
	if t.static {
		return false, nil
	}
	t.reject(rejected)
	if err := t.tokenFor(ctx); err != nil {
		return false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tok != nil && t.cur.auth != rejected, nil
}

// reject marks the cached token rejected if it is still the one whose
// Authorization header the service refused ("" when the transport did not
// say), so that the next call fetches a new one.
func (t *tokenCache) reject(rejected string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && (rejected == "" || t.cur.auth == rejected) {
		t.rejected = true
	}
}

// markForbidden records that the cached token, whose Authorization header
// is auth, met a 403 that a new token did not cure. Only a token with a
// known expiry is marked: it is renewed before it ends anyway, so that a
// mark never keeps an expired token.
func (t *tokenCache) markForbidden(auth string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && t.cur.auth == auth && !t.tok.Expiry.IsZero() {
		t.forbiddenAuth = auth
	}
}

// forbidden reports whether auth is the cached token's header and was
// marked by markForbidden.
func (t *tokenCache) forbidden(auth string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return auth != "" && t.forbiddenAuth == auth && t.tok != nil && t.cur.auth == auth
}

// refusal is what the token cache is told of an attempt that met a 401 or
// 403.
type refusal struct {
	resp       *http.Response // the answer
	repeatable bool           // the call may be sent twice
	refreshed  bool           // an earlier 401 or 403 of the call was retried with a new token
	canRetry   bool           // the retry budget allows another attempt
	limit      int64          // the client's answer size limit
}

// afterRefusal reports whether, after the 401 or 403 r, a token other than
// the rejected one is at hand, or why none could be had (a *tokenError).
// A 401 always asks for one. A 403 is how the live service answers an
// expired token, and also a forbidden operation, a proxy's or a firewall's
// refusal:
//
//   - a call that may not be repeated asks for a new token only when the
//     403 is the service's own answer about the token (its envelope, with
//     the code FORBIDDEN or UNAUTHORIZED): a firewall's 403 may come after
//     the service acted, and the retry would send the transfer again;
//   - a token that already met a 403 that a new token did not cure (the
//     operation is forbidden) is not replaced again, so that a lasting 403
//     costs no login per call; it is renewed before it expires all the same.
func (t *tokenCache) afterRefusal(ctx context.Context, r refusal) (newToken bool, noToken error) {
	var rejected string // unknown if the transport gave no request back: refresh anyway
	if r.resp.Request != nil {
		rejected = r.resp.Request.Header.Get("Authorization")
	}
	if r.resp.StatusCode == http.StatusForbidden {
		switch {
		case !r.repeatable && !serviceRefusedToken(r.resp, r.limit):
			return false, nil
		case t.forbidden(rejected):
			return false, nil
		case r.refreshed:
			// A new token met the same 403: the operation is forbidden.
			t.markForbidden(rejected)
			return false, nil
		}
	}
	switch {
	case !r.refreshed && r.canRetry:
		return t.refresh(ctx, rejected)
	case r.resp.StatusCode == http.StatusUnauthorized || !r.refreshed:
		// No retry follows: the next call fetches a new token.
		t.reject(rejected)
	}
	return false, nil
}

// serviceRefusedToken reports whether a 403 answer is the service's own
// refusal of a token: its error envelope with the code FORBIDDEN or
// UNAUTHORIZED. It reads the body (through the size limit) and puts it
// back for the answer's reader.
func serviceRefusedToken(resp *http.Response, limit int64) bool {
	body, err := readBody(resp, limit)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	if err != nil {
		return false
	}
	var eb errorBody
	if json.Unmarshal(body, &eb) != nil {
		return false
	}
	codes := eb.Errors.codes()
	return matchesCode(codes, ErrForbidden) || matchesCode(codes, ErrUnauthorized)
}

// isAuthStatus reports whether status refuses the request's token: 401,
// or 403, which is how the live service answers an expired one.
func isAuthStatus(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// authorization is the Authorization header a token makes, as
// oauth2.Token.SetAuthHeader writes it, whatever its type.
// credentialOf is the API key or client secret src logs in with, "" for a
// token source of the caller's: see callSecrets.keys. It is read from the
// source, never kept in a field of the Client, whose fmt form would print
// it.
func credentialOf(src oauth2.TokenSource) string {
	switch src := src.(type) {
	case *apiKeySource:
		return string(src.key)
	case *clientCredentialsSource:
		return src.cfg.ClientSecret
	}
	return ""
}

// bearer is the Authorization header of one token, made once when the
// cache takes the token and shared by every request that carries it.
type bearer struct {
	auth   string    // the header's value
	values []string  // {auth}: the header's values, which no request changes
	parts  *keyTable // finds any part of the token, or of the credential it was got with
}

func newBearer(tok *oauth2.Token, credential string) *bearer {
	auth := tok.Type() + " " + tok.AccessToken
	return &bearer{auth: auth, values: []string{auth}, parts: newKeyTable(tok.AccessToken, credential)}
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

// Token implements oauth2.TokenSource. The token request follows no
// redirect, whatever the CheckRedirect of s.hc or of WithHTTPClient's
// client: net/http resends the body of a 307 or 308 (client_secret, with
// AuthStyleInParams) and the Authorization header to the same host on
// another port (client_id:client_secret, with AuthStyleInHeader), and the
// token that the other place minted would then be sent to the service. A
// 3xx answer is an *oauth2.RetrieveError, a failure of the call.
func (s *clientCredentialsSource) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultAttemptTimeout)
	defer cancel()
	hc := &http.Client{CheckRedirect: refuseRedirect}
	if s.hc != nil {
		hc.Transport, hc.Timeout = s.hc.Transport, s.hc.Timeout
	}
	tok, err := s.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && s.echoesSecret(re.ErrorCode+" "+re.ErrorDescription) {
		// An endpoint that echoes the secret as its error code: keep the
		// answer, drop the echo from what an error string could show.
		clean := *re
		clean.ErrorCode, clean.ErrorDescription = "", ""
		return nil, &clean
	}
	return tok, err
}

// echoesSecret reports whether text holds the client secret, or a part of
// it: a secret is matched as a substring whatever its length, never only
// as a whole word as personal values are.
func (s *clientCredentialsSource) echoesSecret(text string) bool {
	secret := s.cfg.ClientSecret
	return secret != "" && (strings.Contains(strings.ToLower(text), strings.ToLower(secret)) || holdsKeyPart(text, secret))
}

// refuseRedirect is the CheckRedirect of token requests: the 3xx answer is
// returned as it is.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
