package travelrule

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vaspkit/travelrule/internal/oneline"
)

// Version is the SDK's version. It is sent in the User-Agent header as
// "travelrule-go/<Version>".
const Version = "0.1.0"

// Defaults of the client's settings; each has an option to change it.
const (
	defaultRetryMax         = 3
	defaultRetryWaitMin     = 100 * time.Millisecond
	defaultRetryWaitMax     = 5 * time.Second
	defaultRetryAfterMax    = 30 * time.Second
	defaultAttemptTimeout   = 30 * time.Second
	defaultMaxResponseBytes = 1 << 20
)

// Client calls the Travel Rule Transfer Exchange Service. It is safe for
// concurrent use by many goroutines and should be made once and reused: it
// holds the connection pool and the token cache.
type Client struct {
	options // as NewClient settled them

	baseURL        string // without a trailing slash
	initiateURL    string
	inquiryURL     string
	origin         string        // the base URL's scheme and host: the bearer token goes nowhere else
	userAgent      []string      // the User-Agent header's value: one slice that no request changes
	attemptTimeout time.Duration // the longest one attempt may take, answer body included

	hc *http.Client // the transport under the retry loop (attempts.go)
	// tracesWrites is set once the transport is known to report through
	// httptrace each request it writes: net/http's own transport does,
	// and any other once it has (guard.go). A pointer, so that a Client
	// value may still be copied (and printed).
	tracesWrites *atomic.Bool
	tokens       *tokenCache
	deadlines    *sharedDeadlines // the attempt time-out of callers whose context cannot end

	watch         watchers // the observers' optional interfaces (observer.go)
	serverAddress string   // the base URL's host, for AttemptInfo
	serverPort    int      // the base URL's port, or its scheme's
}

// NewClient returns a client for the service at baseURL, such as
// "https://travelrule.example.com/api/v3". The base URL may carry a path;
// requests go to <base>/transfers/initiate and
// <base>/transfers/inquiryResolution.
//
// Authentication is required: the live service's API key ([WithAPIKey]),
// a token source of bearer JWTs ([WithTokenSource]) or the OAuth2
// client-credentials grant ([WithClientCredentials]).
// NewClient refuses a relative base URL, one with credentials, a query or a
// fragment, and plain http:// to anything but a loopback host, since the
// bearer token would cross the network in clear. It also refuses an
// operation's URL (".../v1/transfers/initiate"), naming the base URL it
// meant, and a character no base URL holds (a line break, a space, a
// quote), naming it and where it is.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	o, err := settle(opts)
	if err != nil {
		return nil, err
	}
	base, err := checkBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if o.tokenSource == nil {
		return nil, errors.New("travelrule: NewClient: a token source is required (WithAPIKey, WithTokenSource or WithClientCredentials)")
	}
	c := &Client{
		options:        o,
		baseURL:        base.String(),
		initiateURL:    base.String() + "/transfers/initiate",
		inquiryURL:     base.String() + "/transfers/inquiryResolution",
		origin:         base.Scheme + "://" + base.Host,
		userAgent:      []string{"travelrule-go/" + Version},
		attemptTimeout: defaultAttemptTimeout,
		tokens:         newTokenCache(o.tokenSource),
	}
	if o.userAgent != "" {
		c.userAgent[0] = o.userAgent + " " + c.userAgent[0]
	}
	c.serverAddress, c.serverPort = hostPort(base)
	c.watch = watchersOf(o.observers)
	if len(c.watch.tokens) > 0 {
		c.tokens.observe = c.tokenFetched
	}
	c.hc = c.newHTTPClient()
	c.deadlines = newSharedDeadlines(c.attemptTimeout)
	if aks, ok := o.tokenSource.(*apiKeySource); ok {
		aks.url = base.String() + "/auth/token"
		aks.hc = &http.Client{Transport: c.hc.Transport, Timeout: c.attemptTimeout, CheckRedirect: refuseRedirect}
		aks.userAgent = c.userAgent[0]
		aks.maxBody = o.maxResponse
		aks.now = time.Now
	}
	return c, nil
}

// hostPort returns u's host and its port, or the scheme's.
func hostPort(u *url.URL) (string, int) {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return u.Hostname(), p
	}
	if u.Scheme == "http" {
		return u.Hostname(), 80
	}
	return u.Hostname(), 443
}

// newHTTPClient makes the client's HTTP client over the transport, cookie
// jar and redirect policy of WithHTTPClient's client, or the default
// transport. Its time-out becomes the attempt time-out (timeout.go), which
// covers the answer body too; the http.Client itself has none, so that no
// request costs a timer of net/http's.
func (c *Client) newHTTPClient() *http.Client {
	var base http.RoundTripper = defaultTransport()
	var jar http.CookieJar
	var userRedirect func(*http.Request, []*http.Request) error
	if hc := c.httpClient; hc != nil {
		base, jar, userRedirect = hc.Transport, hc.Jar, hc.CheckRedirect
		if base == nil {
			base = http.DefaultTransport
		}
		if hc.Timeout > 0 {
			c.attemptTimeout = hc.Timeout
		}
	}
	if ccs, ok := c.tokenSource.(*clientCredentialsSource); ok {
		ccs.hc = &http.Client{Transport: base, Timeout: defaultAttemptTimeout}
	}
	c.tracesWrites = new(atomic.Bool)
	c.tracesWrites.Store(reportsWrites(base))
	return &http.Client{
		Transport: base,
		Jar:       jar,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return c.checkRedirect(req, via, userRedirect)
		},
	}
}

// defaultTransport is the standard library's transport tuned for a service
// client: TLS 1.2 at least, at most 64 KiB of answer headers, and enough
// idle connections per host that concurrent callers reuse connections
// instead of opening new ones. The attempt time-out (timeout.go) bounds each
// request.
func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 128
	t.IdleConnTimeout = 90 * time.Second
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	// net/http's default is 10 MiB of headers, far above any answer of the
	// service; a larger header ends the attempt with an error.
	t.MaxResponseHeaderBytes = maxHeaderCopy
	return t
}

func checkBaseURL(raw string) (*url.URL, error) {
	if f, ok := oneline.Find(raw, oneline.URL); ok {
		// Its class and place only: the value may be a secret pasted in
		// the wrong place.
		return nil, errors.New("travelrule: NewClient: base URL has " + f.String() + ": a base URL is one line, without spaces or quotes")
	}
	if guess := schemeless(raw); guess != "" {
		return nil, errors.New("travelrule: NewClient: base URL has no scheme: did you mean " + guess + "?")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil && !strings.Contains(raw, "://"):
		return nil, errors.New("travelrule: NewClient: base URL has no scheme: it starts with https:// (http:// only for a loopback host)")
	case err != nil:
		// Not url.Parse's words: they quote the input, which may be a
		// token or a key pasted in the wrong place.
		return nil, errors.New("travelrule: NewClient: base URL does not parse: check its host, its port and its %-escapes")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, errors.New("travelrule: NewClient: base URL must be absolute, with an http or https scheme and a host, such as https://trp.example.com")
	case u.User != nil:
		return nil, errors.New("travelrule: NewClient: base URL must not carry credentials; use a token source")
	case operationBase(u) != "":
		return nil, errors.New("travelrule: NewClient: base URL is an operation's URL: did you mean " + operationBase(u) + "?")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, errors.New("travelrule: NewClient: base URL must not carry a query or a fragment")
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return nil, errors.New("travelrule: NewClient: plain http is allowed only to a loopback host; the bearer token would cross the network in clear")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// operationPaths are the paths the client adds to the base URL, and the
// inbound inquiry's, whose id follows it.
var operationPaths = []string{
	"/auth/token", "/transfers/initiate", "/transfers/inquiryResolution", "/transfers/txId",
	"/travel-address/generate", "/travel-address/decode", "/discovery/vasp",
}

const inquiryPath = "/transfers/inquiry/"

// operationBase returns the base URL that u, the URL of an operation
// (".../v1/transfers/initiate") or of an inbound inquiry
// (".../v1/transfers/inquiry/<id>", the id the path's last segment), most
// likely meant ("https://host/v1"), in u's own escaping and without its
// query or fragment; "" when u's path does not end in an operation's.
func operationBase(u *url.URL) string {
	p := strings.TrimRight(u.EscapedPath(), "/")
	end := -1
	for _, op := range operationPaths {
		if n := len(p) - len(op); n >= 0 && strings.EqualFold(p[n:], op) {
			end = n
		}
	}
	if id := strings.LastIndexByte(p, '/') + 1; end < 0 && id > len(inquiryPath)-1 && strings.EqualFold(p[id-len(inquiryPath):id], inquiryPath) {
		end = id - len(inquiryPath)
	}
	if end < 0 {
		return ""
	}
	return u.Scheme + "://" + u.Host + p[:end]
}

// schemeless returns the URL a base URL without a scheme most likely
// meant ("127.0.0.1:18080" → "http://127.0.0.1:18080", "trp.example.com"
// → "https://trp.example.com"): http:// for a loopback host, the only
// one plain http may reach, https:// otherwise, and never the path. It
// returns "" for a raw URL that has a scheme, or whose host is neither an
// IP address, localhost, nor a domain name whose last label is letters
// alone: the guess is quoted in an error, so a token or an API key given
// in the base URL's place ("eyJhbGci….eyJzdWIi….c2ln", "trk_live.9f8e")
// is never echoed.
func schemeless(raw string) string {
	if raw == "" || len(raw) > 255 || strings.Contains(raw, "://") || strings.HasPrefix(raw, "//") {
		return ""
	}
	host, _, _ := strings.Cut(raw, "/")
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-.:[]", r)) {
			return ""
		}
	}
	u, err := url.Parse("//" + host)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return ""
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return ""
		}
	}
	name := u.Hostname()
	switch {
	case isLoopback(name):
		return "http://" + host
	case net.ParseIP(name) != nil:
	case !strings.Contains(name, "."):
		return "" // "transfers" or "api": a bare word is not a host anyone meant
	default:
		tld := name[strings.LastIndexByte(name, '.')+1:]
		if len(tld) < 2 || strings.IndexFunc(tld, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) >= 0 {
			return ""
		}
	}
	return "https://" + host
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkRedirect never lets the bearer token leave the base URL's origin:
// http.Client copies the Authorization header to a redirect within the
// origin, so a redirect to another origin is not followed and its 3xx
// answer becomes an [*APIError]. Only 307 and 308 (which keep the method
// and the body) are followed within the origin, and only for calls that
// may be repeated (ResolveInquiry, or any call made with WithIdempotency):
// a call that may not be repeated has no Request.GetBody, and http.Client
// follows no 307 or 308 without one. A proxy that acted on the POST and
// then redirected would otherwise make a followed redirect a second
// transfer.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request, user func(*http.Request, []*http.Request) error) error {
	if req.URL.Scheme+"://"+req.URL.Host != c.origin {
		return http.ErrUseLastResponse
	}
	if req.Response != nil && req.Response.StatusCode != http.StatusTemporaryRedirect && req.Response.StatusCode != http.StatusPermanentRedirect {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if user != nil {
		return user(req, via)
	}
	return nil
}

// encodeJSON encodes v without HTML escaping (callback URLs keep their '&').
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(1024)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // drop Encode's newline
}

// encodeBody encodes a call's request body, or says why it cannot.
func encodeBody(op string, v any) ([]byte, error) {
	body, err := encodeJSON(v)
	if err != nil {
		return nil, fmt.Errorf("travelrule: %s: encoding request: %w", op, err)
	}
	return body, nil
}
