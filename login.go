package travelrule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/vaspkit/travelrule/internal/oneline"
)

// The live service's login: POST {base}/auth/token with the API key in
// x-api-key and no body, answered (unwrapped, camelCase) with
// {"accessToken","expiresIn","expiresAt","tokenType"}. The client's token
// cache (auth.go) runs it, one fetch at a time, and reuses the token until
// shortly before it ends.

// Sentinels of a failed login; the concrete error is a [*LoginError].
var (
	// ErrLoginFailed matches every [*LoginError]: the client could not
	// obtain a token with its API key, and sent nothing else.
	ErrLoginFailed = errors.New("travelrule: login failed")
	// ErrAPIKeyRefused matches a [*LoginError] whose answer refused the API
	// key itself (401 or 403): missing or unknown, inactive, expired or
	// forbidden. Another token will not come until the key is fixed in the
	// service's dashboard.
	ErrAPIKeyRefused = errors.New("travelrule: API key refused")
)

// KeyRefusal says why the service refused an API key, as far as its
// answer tells.
type KeyRefusal string

// The refusals of an API key. The live service answers 401 to a missing
// key and 403 to one that is inactive or expired, or to a customer that is
// inactive; which of these it was is read from its message and codes.
const (
	KeyNotRefused KeyRefusal = ""          // the key was not refused (another failure)
	KeyUnknown    KeyRefusal = "unknown"   // 401: missing or not recognised
	KeyInactive   KeyRefusal = "inactive"  // 403: the key (or the customer) is deactivated
	KeyExpired    KeyRefusal = "expired"   // 403: the key's expiredAt has passed
	KeyForbidden  KeyRefusal = "forbidden" // 403 without saying which
)

// keyRefusal decides why an answer to a login refused the key: by its
// status or code, then by the words of its message (which is the
// service's own text, read only for these words).
func keyRefusal(status int, codes []string, message string) KeyRefusal {
	switch {
	case status == http.StatusUnauthorized:
		return KeyUnknown // the live docs: 401 is a key missing
	case status == http.StatusForbidden:
	case status/100 != 2:
		return KeyNotRefused // another failure, whatever its codes say
	case matchesCode(codes, ErrUnauthorized):
		return KeyUnknown // a 2xx refusal: its code decides
	case !matchesCode(codes, ErrForbidden):
		return KeyNotRefused
	}
	// A 403: inactive or expired key or customer, or forbidden.
	m := strings.ToLower(message)
	switch {
	case strings.Contains(m, "inactive"), strings.Contains(m, "deactivated"), strings.Contains(m, "disabled"), strings.Contains(m, "not active"):
		return KeyInactive
	case strings.Contains(m, "expired"):
		return KeyExpired
	}
	return KeyForbidden
}

// LoginError is a failed login with an API key ([WithAPIKey]): the token
// endpoint could not be reached, refused the key, or answered something
// that holds no token. Nothing else was sent. It matches [ErrLoginFailed],
// [ErrAPIKeyRefused] when the key itself was refused, the status sentinels
// ([ErrUnauthorized], [ErrForbidden], ...) and its codes as [ErrorCode]s.
// Its Error method never shows the key, the token or the service's text.
type LoginError struct {
	// URL is the token endpoint, such as "https://trp.example.com/auth/token".
	URL string
	// StatusCode is the HTTP status of the answer; 0 if none came.
	StatusCode int
	// Refusal says why the key was refused, or is KeyNotRefused.
	Refusal KeyRefusal
	// Codes are the codes of the answer's "errors" array, in order.
	Codes []string
	// RequestID is the answer's X-Request-Id header, if any.
	RequestID string
	// Body is the raw answer body, through the client's size limit. It may
	// hold the token: do not log it.
	Body []byte
	// Err is why no answer came (a transport error), or nil.
	Err error

	reason        string // the client's own words for a 2xx that holds no token
	message       string // the service's message (ServerMessage)
	shownCode     []string
	hideRequestID bool // RequestID holds (a part of) the key, or is not of a request id's shape
}

// Error implements error, in the client's own words: the endpoint, the
// status, the codes and the refusal.
func (e *LoginError) Error() string { return "travelrule: " + e.text() }

// text is Error without the package prefix.
func (e *LoginError) text() string {
	var b strings.Builder
	b.WriteString("login failed: POST ")
	b.WriteString(e.URL)
	b.WriteString(": ")
	switch {
	case e.StatusCode == 0:
		b.WriteString(transportText(e.Err))
		return b.String()
	default:
		b.WriteString(strconv.Itoa(e.StatusCode))
		b.WriteByte(' ')
		b.WriteString(http.StatusText(e.StatusCode))
	}
	if len(e.shownCode) > 0 {
		b.WriteString(": ")
		b.WriteString(joinShown(e.shownCode))
	}
	switch {
	case e.Refusal == KeyUnknown:
		b.WriteString(": the API key is missing or not recognised")
	case e.Refusal == KeyInactive:
		b.WriteString(": the API key (or its customer) is inactive")
	case e.Refusal == KeyExpired:
		b.WriteString(": the API key has expired")
	case e.Refusal == KeyForbidden:
		b.WriteString(": the API key is refused (inactive, expired or forbidden)")
	case e.reason != "":
		b.WriteString(": ")
		b.WriteString(e.reason)
	}
	if !e.hideRequestID && showRequestID(e.RequestID) {
		b.WriteString(" (request id ")
		b.WriteString(e.RequestID)
		b.WriteByte(')')
	}
	return b.String()
}

// ServerMessage returns the service's message as it sent it. It may hold
// personal data, the key or a token the service echoed: treat it as you
// treat Body. No printed form of the error shows it.
func (e *LoginError) ServerMessage() string { return e.message }

// Format implements fmt.Formatter with the text of Error under every verb.
func (e LoginError) Format(f fmt.State, verb rune) { writeError(f, verb, e.Error()) }

// MarshalJSON encodes the error as the JSON string of its Error text.
func (e LoginError) MarshalJSON() ([]byte, error) { return json.Marshal(e.Error()) }

// Is reports whether the error matches target: [ErrLoginFailed] always,
// [ErrAPIKeyRefused] when the key was refused, a status sentinel by the
// answer's status, or one of its codes.
func (e *LoginError) Is(target error) bool {
	if matchesCode(e.Codes, target) {
		return true
	}
	switch target {
	case ErrLoginFailed:
		return true
	case ErrAPIKeyRefused:
		return e.Refusal != KeyNotRefused
	case ErrUnexpectedResponse:
		return e.StatusCode/100 == 2 && e.reason != ""
	}
	return (&APIError{StatusCode: e.StatusCode}).Is(target)
}

// Unwrap returns the transport error, if any.
func (e *LoginError) Unwrap() error { return e.Err }

// WithAPIKey logs in with the service's API key, as the live service
// documents: POST {baseURL}/auth/token, no body, the key in the x-api-key
// header, answered with {"accessToken","expiresIn","expiresAt","tokenType"}
// (at the top level or wrapped in "data"; snake_case names are read too).
// The token is cached and a new one fetched shortly before it ends (10
// seconds before expiresIn, counted from when the login was sent, or, without
// it, before expiresAt; a token with neither is kept until the service
// refuses it), after a 401, and after a 403, which is how the live service
// answers an expired token: one new login and one more try. One login runs
// at a time however many goroutines call, in a goroutine of its own,
// bounded by the attempt time-out, through the client's base transport
// (see [WithHTTPClient]).
//
// The login follows no redirect (the key goes to the base URL's origin and
// nowhere else) and is not retried by itself: a failure fails the calls
// waiting for it with a [*LoginError] (matched by [ErrLoginFailed]; by
// [ErrAPIKeyRefused] when the key is missing, unknown, inactive or
// expired) and the next call logs in again. The key appears in no log
// line, error string, fmt or slog form. An empty key, or one that cannot
// go in a header, makes NewClient fail; the error names the character
// that cannot (such as the newline at the end that os.ReadFile of a key
// file leaves) and where it is, never the key.
func WithAPIKey(key string) Option {
	return func(o *options) {
		if key == "" {
			o.fail(errors.New("travelrule: WithAPIKey: the key is empty"))
			return
		}
		if f, ok := oneline.Find(key, oneline.Secret); ok {
			o.fail(errors.New("travelrule: WithAPIKey: the key cannot go in a header: it has " + f.String() + keyFileHint(f)))
			return
		}
		o.tokenSource = &apiKeySource{key: secret(key)}
	}
}

// keyFileHint is what a key read whole from its file (os.ReadFile) needs,
// when f is the file's line break: the only part of an error about a key
// that depends on it, and never any of its characters.
func keyFileHint(f oneline.Flaw) string {
	if !f.Trailing() {
		return ""
	}
	return " (as os.ReadFile of a key file leaves it: trim it, with strings.TrimSpace)"
}

// secret is a value that no fmt verb or slog handler shows.
type secret string

// Format implements fmt.Formatter.
func (secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue implements slog.LogValuer.
func (secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// apiKeySource logs in with an API key on every call; tokenCache does the
// caching and the one-at-a-time. NewClient sets url, hc and the rest.
type apiKeySource struct {
	key       secret
	url       string       // {base}/auth/token
	hc        *http.Client // follows no redirect; its Timeout bounds a login
	userAgent string
	maxBody   int64
	now       func() time.Time // time.Now outside tests
}

// Format implements fmt.Formatter: the source is shown without its key.
func (s *apiKeySource) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "travelrule.apiKeySource{url:%s key:%s}", s.url, redacted)
}

// Token implements oauth2.TokenSource: one login.
func (s *apiKeySource) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.hc.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, http.NoBody)
	if err != nil {
		return nil, &LoginError{URL: s.url, Err: err}
	}
	req.Header["X-Api-Key"] = []string{string(s.key)}
	req.Header["Accept"] = []string{"application/json"}
	req.Header["User-Agent"] = []string{s.userAgent}
	sent := s.now()
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, &LoginError{URL: s.url, Err: sanitize(err)}
	}
	defer resp.Body.Close()
	body, err := readBody(resp, s.maxBody)
	key := string(s.key)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, loginRefused(s.url, resp, body, key)
	}
	if err != nil {
		e := loginRefused(s.url, resp, nil, key)
		e.Body, e.reason = body, transportText(err)
		return nil, e
	}
	tok, reason := parseTokenAnswer(body, sent, s.now()) // a token only without a reason
	if reason != "" {
		e := loginRefused(s.url, resp, body, key)
		if reason != "status false" {
			e.reason = reason // a 2xx that holds no token: not a refusal
			e.Refusal, e.Codes, e.shownCode = KeyNotRefused, nil, nil
		}
		// A token in an answer not understood is still a token: none of
		// it may show in the error.
		for _, access := range answerTokens(body) {
			e.hideRequestID = e.hideRequestID || holdsKeyPart(e.RequestID, access)
		}
		return nil, e
	}
	return tok, nil
}

// loginRefused is the error of a login answered with an error: its codes,
// its message, and the refusal they say.
func loginRefused(url string, resp *http.Response, body []byte, key string) *LoginError {
	ae := newAPIError("", resp.StatusCode, resp.Header, body, newSecrets([]string{key}, []string{key}))
	e := &LoginError{
		URL:           url,
		StatusCode:    resp.StatusCode,
		Refusal:       keyRefusal(resp.StatusCode, ae.allCodes(), ae.message),
		RequestID:     ae.RequestID,
		Body:          body,
		reason:        ae.redirectReason(),
		message:       ae.message,
		hideRequestID: ae.hideRequestID,
	}
	for _, c := range ae.allCodes() {
		if !holdsKeyPart(c, key) {
			e.Codes = append(e.Codes, c)
		}
	}
	for _, c := range ae.visibleCodes() {
		if !holdsKeyPart(c, key) {
			e.shownCode = append(e.shownCode, c)
		}
	}
	return e
}

// holdsKeyPart reports whether s holds keyPart or more consecutive
// characters of key, in any case.
func holdsKeyPart(s, key string) bool {
	if s == "" {
		return false
	}
	ls, lk := strings.ToLower(s), strings.ToLower(key)
	if len(lk) < keyPart {
		return strings.Contains(ls, lk)
	}
	for i := 0; i+keyPart <= len(lk); i++ {
		if strings.Contains(ls, lk[i:i+keyPart]) {
			return true
		}
	}
	return false
}

// tokenFields are the fields of a token answer, in the live service's
// camelCase and in OAuth2's snake_case.
type tokenFields struct {
	AccessToken      flexString `json:"accessToken"`
	AccessTokenSnake flexString `json:"access_token"`
	ExpiresIn        flexString `json:"expiresIn"`
	ExpiresInSnake   flexString `json:"expires_in"`
	ExpiresAt        flexString `json:"expiresAt"`
	TokenType        flexString `json:"tokenType"`
	TokenTypeSnake   flexString `json:"token_type"`
}

// first returns the first non-empty value.
func first(vals ...flexString) string {
	for _, v := range vals {
		if v != "" {
			return string(v)
		}
	}
	return ""
}

// tokenAnswer is a token answer, unwrapped or wrapped in "data" (data
// wins).
type tokenAnswer struct {
	envelope
	tokenFields
	Data tokenFields `json:"data"`
}

// parseTokenAnswer reads a 2xx token answer sent at sent and read at now.
// reason is the client's own words for an answer that holds no token
// ("status false" for the envelope's refusal), or "".
//
// The token ends, for the cache, at sent plus expiresIn (counted from the
// request, so that neither the clocks' skew nor the answer's transit makes
// it late), or, without expiresIn, at expiresAt when that is in the future;
// with neither it has no expiry and is kept until the service refuses it.
// The type is always Bearer: every call carries "Authorization: Bearer".
func parseTokenAnswer(body []byte, sent, now time.Time) (tok *oauth2.Token, reason string) {
	var ans tokenAnswer
	if !decodeLenient(body, &ans) {
		return nil, "the answer is not a JSON object"
	}
	if ans.Status.o == outcomeRefused {
		return nil, "status false"
	}
	if ans.Status.o == outcomeOther {
		return nil, "the answer's status is not one of success"
	}
	top, d := &ans.tokenFields, &ans.Data // d is empty unless data was an object
	access := first(d.AccessToken, d.AccessTokenSnake, top.AccessToken, top.AccessTokenSnake)
	expiresIn := first(d.ExpiresIn, d.ExpiresInSnake, top.ExpiresIn, top.ExpiresInSnake)
	expiresAt := first(d.ExpiresAt, top.ExpiresAt)
	if access == "" {
		return nil, "the answer holds no accessToken"
	}
	tok = &oauth2.Token{AccessToken: access, TokenType: "Bearer"}
	if secs, err := strconv.ParseFloat(expiresIn, 64); err == nil && secs > 0 && secs < 1e9 {
		tok.Expiry = sent.Add(time.Duration(secs * float64(time.Second)))
	} else if at, err := time.Parse(time.RFC3339Nano, expiresAt); err == nil && at.After(now) {
		tok.Expiry = at
	}
	return tok, ""
}

// answerTokens returns the access tokens a token answer holds, at the top
// or in data, in either spelling, whatever its status says.
func answerTokens(body []byte) []string {
	var ans tokenAnswer
	if !decodeLenient(body, &ans) {
		return nil
	}
	var out []string
	for _, t := range []flexString{ans.Data.AccessToken, ans.Data.AccessTokenSnake, ans.tokenFields.AccessToken, ans.tokenFields.AccessTokenSnake} {
		if t != "" {
			out = append(out, string(t))
		}
	}
	return out
}

// Login makes sure the client holds a token, logging in (or asking its
// token source) now if it holds none that is valid, as its first call
// would. Use it at start-up or in a readiness check, to learn that the
// API key works before a transfer depends on it. A refused key returns
// the [*LoginError]; a context that ends first, its error. Nothing but
// the login is sent.
func (c *Client) Login(ctx context.Context) error {
	err := c.tokens.tokenFor(ctx)
	if err == nil {
		return nil
	}
	var le *LoginError
	if errors.As(err, &le) {
		return le
	}
	return &transportError{op: "Login", err: err}
}
