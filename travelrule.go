package travelrule

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/oauth2"
)

// Version is the SDK's version. It is sent in the User-Agent header as
// "travelrule-go/<Version>".
const Version = "0.1.0"

// Defaults of the client's settings; each has an option to change it.
const (
	DefaultRetryMax         = 3
	DefaultRetryWaitMin     = 100 * time.Millisecond
	DefaultRetryWaitMax     = 5 * time.Second
	DefaultRetryAfterMax    = 30 * time.Second
	DefaultAttemptTimeout   = 30 * time.Second
	DefaultMaxResponseBytes = 1 << 20
)

// Client calls the Travel Rule Transfer Exchange Service. It is safe for
// concurrent use by many goroutines and should be made once and reused: it
// holds the connection pool and the token cache.
type Client struct {
	initiateURL string
	inquiryURL  string
	origin      string

	hc     *http.Client          // oauth2.Transport over the base transport
	rc     *retryablehttp.Client // go-retryablehttp over hc, with the policy of retry.go
	tokens *tokenCache

	retryMax      int
	waitMin       time.Duration
	waitMax       time.Duration
	retryAfterMax time.Duration
	maxResponse   int64
	userAgent     string
	logger        *slog.Logger
	idempotency   bool
	strict        bool
}

// NewClient returns a client for the service at baseURL, such as
// "https://travelrule.example.com/api/v3". The base URL may carry a path;
// requests go to <base>/transfers/initiate and
// <base>/transfers/inquiryResolution.
//
// A token source is required ([WithTokenSource] or [WithClientCredentials]).
// NewClient refuses a relative base URL, one with credentials, a query or a
// fragment, and plain http:// to anything but a loopback host, since the
// bearer token would cross the network in clear.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	o := options{
		retryMax:      DefaultRetryMax,
		waitMin:       DefaultRetryWaitMin,
		waitMax:       DefaultRetryWaitMax,
		retryAfterMax: DefaultRetryAfterMax,
		maxResponse:   DefaultMaxResponseBytes,
	}
	for _, opt := range opts {
		if opt == nil {
			o.fail(errors.New("travelrule: NewClient: nil option"))
			continue
		}
		opt(&o)
	}
	if o.err != nil {
		return nil, o.err
	}
	base, err := checkBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if o.tokenSource == nil {
		return nil, errors.New("travelrule: NewClient: a token source is required (WithTokenSource or WithClientCredentials)")
	}

	ua := "travelrule-go/" + Version
	if o.userAgent != "" {
		ua = o.userAgent + " " + ua
	}
	c := &Client{
		initiateURL:   base.String() + "/transfers/initiate",
		inquiryURL:    base.String() + "/transfers/inquiryResolution",
		origin:        base.Scheme + "://" + base.Host,
		tokens:        newTokenCache(o.tokenSource),
		retryMax:      o.retryMax,
		waitMin:       o.waitMin,
		waitMax:       o.waitMax,
		retryAfterMax: o.retryAfterMax,
		maxResponse:   o.maxResponse,
		userAgent:     ua,
		logger:        o.logger,
		idempotency:   o.idempotency,
		strict:        o.strict,
	}

	var baseRT http.RoundTripper = defaultTransport()
	var userRedirect func(*http.Request, []*http.Request) error
	// Each attempt is bounded as a whole, headers and body, by
	// http.Client.Timeout: a response-header time-out alone let a body
	// that drips a byte a second hold an attempt for as long as it drips.
	// The caller's context bounds the whole call.
	hc := &http.Client{Timeout: DefaultAttemptTimeout}
	if o.httpClient != nil {
		baseRT = o.httpClient.Transport
		if baseRT == nil {
			baseRT = http.DefaultTransport
		}
		if o.httpClient.Timeout > 0 {
			hc.Timeout = o.httpClient.Timeout
		}
		hc.Jar = o.httpClient.Jar
		userRedirect = o.httpClient.CheckRedirect
	}
	if ccs, ok := o.tokenSource.(*clientCredentialsSource); ok {
		ccs.hc = &http.Client{Transport: baseRT, Timeout: DefaultAttemptTimeout}
	}
	hc.Transport = authTransport{t: &oauth2.Transport{Source: c.tokens, Base: baseRT}, tokens: c.tokens}
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		return c.checkRedirect(req, via, userRedirect)
	}
	c.hc = hc
	c.rc = c.newRetryClient()
	return c, nil
}

// authTransport is oauth2.Transport with two changes: a token fetch ends
// with the request's context (oauth2.Transport asks its source without
// one), and no deprecated CancelRequest method, which http.Client calls
// when it has a Timeout and which logs a line to the standard logger.
type authTransport struct {
	t      *oauth2.Transport
	tokens *tokenCache
}

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if cl := callFrom(r.Context()); cl != nil {
		// Within this frame a call to GetBody after the request's headers
		// were written is a transport sending it again by itself (see
		// guardReplays).
		cl.rtWrote.Store(false)
		cl.inTransport.Store(true)
		defer cl.inTransport.Store(false)
	}
	if err := a.tokens.tokenFor(r.Context()); err != nil {
		if r.Body != nil {
			_ = r.Body.Close() // a RoundTripper always closes the body
		}
		return nil, err
	}
	return a.t.RoundTrip(r)
}

// defaultTransport is the standard library's transport tuned for a service
// client: TLS 1.2 at least, at most 64 KiB of answer headers, and enough
// idle connections per host that concurrent callers reuse connections
// instead of opening new ones.
func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 128
	t.IdleConnTimeout = 90 * time.Second
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	t.ResponseHeaderTimeout = DefaultAttemptTimeout
	// net/http's default is 10 MiB of headers, far above any answer of the
	// service; a larger header ends the attempt with an error.
	t.MaxResponseHeaderBytes = maxHeaderCopy
	return t
}

func checkBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("travelrule: NewClient: base URL does not parse: %w", errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, errors.New("travelrule: NewClient: base URL must be absolute, with an http or https scheme and a host")
	case u.User != nil:
		return nil, errors.New("travelrule: NewClient: base URL must not carry credentials; use a token source")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, errors.New("travelrule: NewClient: base URL must not carry a query or a fragment")
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return nil, errors.New("travelrule: NewClient: plain http is allowed only to a loopback host; the bearer token would cross the network in clear")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkRedirect never lets the bearer token leave the base URL's origin:
// oauth2.Transport adds the Authorization header to every request it
// carries, redirected ones included, so a redirect to another origin is not
// followed and its 3xx answer becomes an [*APIError]. Only 307 and 308 (which
// keep the method and the body) are followed within the origin, and only
// for calls that may be repeated (ResolveInquiry, or any call made with
// WithIdempotency).
func (c *Client) checkRedirect(req *http.Request, via []*http.Request, user func(*http.Request, []*http.Request) error) error {
	if req.URL.Scheme+"://"+req.URL.Host != c.origin {
		return http.ErrUseLastResponse
	}
	if cl := callFrom(req.Context()); cl != nil && !cl.idempotent {
		// A proxy that acted on the POST and then redirected would make a
		// followed redirect a second transfer: a call that cannot be
		// repeated follows none, and its 3xx is an ambiguous failure.
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
