package travelruletest

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
)

// The client credentials the sandbox accepts by default.
const (
	// DefaultClientID and DefaultClientSecret are the client credentials
	// the token endpoint accepts unless [WithClientCredentials] sets others.
	DefaultClientID     = "sandbox-client"
	DefaultClientSecret = "sandbox-secret"
)

// Defaults of the server's other settings; the option named with each
// changes it.
const (
	defaultTokenLifetime      = time.Hour              // WithTokenLifetime
	defaultCallbackAttempts   = 5                      // WithCallbackRetry
	defaultCallbackBackoffMin = 100 * time.Millisecond // WithCallbackRetry
	defaultCallbackBackoffMax = 2 * time.Second        // WithCallbackRetry
	defaultSeed               = 1                      // WithSeed
	defaultRecordLimit        = 10_000                 // WithRecordLimit
	defaultIdempotencyWindow  = 24 * time.Hour         // WithIdempotencyWindow
)

// Option configures a [Server] made by [NewServer]. An invalid option value
// makes NewServer panic, as httptest.NewServer does when it cannot listen.
type Option func(*config)

type config struct {
	addr               string
	prefix             string
	clientID           string
	clientSecret       string
	tokenLifetime      time.Duration
	apiKeys            apiKeys
	transferIDInAnswer bool
	excerptAnswers     bool
	reachRequired      bool
	approve            func(travelrule.TransferRequest) bool
	travelAddresses    directory
	cbSecret           []byte
	cbAttempts         int
	cbBackoffMin       time.Duration
	cbBackoffMax       time.Duration
	cbClient           *http.Client
	noCallbacks        bool
	faults             []Fault
	seed               uint64
	noIdempotency      bool
	recordLimit        int
	idemWindow         time.Duration
	logger             *slog.Logger
	now                func() time.Time // the clock tokens are minted and verified by; nil is time.Now
	err                error
}

// clock returns the clock tokens are minted and verified by.
func (c *config) clock() func() time.Time {
	if c.now != nil {
		return c.now
	}
	return time.Now
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func defaultConfig() config {
	return config{
		addr:               "127.0.0.1:0",
		clientID:           DefaultClientID,
		clientSecret:       DefaultClientSecret,
		tokenLifetime:      defaultTokenLifetime,
		apiKeys:            defaultAPIKeys(),
		transferIDInAnswer: true,
		travelAddresses:    directory{},
		cbAttempts:         defaultCallbackAttempts,
		cbBackoffMin:       defaultCallbackBackoffMin,
		cbBackoffMax:       defaultCallbackBackoffMax,
		seed:               defaultSeed,
		recordLimit:        defaultRecordLimit,
		idemWindow:         defaultIdempotencyWindow,
	}
}

// WithAddr sets the TCP address the server listens on (default
// "127.0.0.1:0", a free loopback port). Use it to run the sandbox at a fixed
// address, for clients in other processes.
func WithAddr(addr string) Option {
	return func(c *config) {
		if addr == "" {
			c.fail(errors.New("travelruletest: WithAddr: empty address"))
		}
		c.addr = addr
	}
}

// WithPathPrefix mounts the service under prefix, such as "/api/v3" (the
// live service's guide uses a base URL with a path), so that clients are
// tested with a base URL that has a path: Server.URL ends with the prefix,
// and every endpoint of the service and of the control plane answers under
// it (<prefix>/auth/token, <prefix>/transfers/initiate, ...). The OAuth2
// token endpoint stays at /oauth/token.
func WithPathPrefix(prefix string) Option {
	return func(c *config) {
		p := strings.TrimRight(prefix, "/")
		if p != "" && !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		if strings.ContainsAny(p, "?#") {
			c.fail(errors.New("travelruletest: WithPathPrefix: prefix must be a plain path"))
		}
		c.prefix = p
	}
}

// WithClientCredentials sets the client id and secret that the token
// endpoint accepts (defaults [DefaultClientID] and [DefaultClientSecret]).
func WithClientCredentials(id, secret string) Option {
	return func(c *config) {
		if id == "" || secret == "" {
			c.fail(errors.New("travelruletest: WithClientCredentials: empty id or secret"))
		}
		c.clientID, c.clientSecret = id, secret
	}
}

// WithTokenLifetime sets the lifetime of the tokens the server issues
// (default an hour); at least one second, the precision of a JWT's exp
// claim.
func WithTokenLifetime(d time.Duration) Option {
	return func(c *config) {
		if d < time.Second {
			c.fail(errors.New("travelruletest: WithTokenLifetime: lifetime must be at least one second"))
		}
		c.tokenLifetime = d
	}
}

// WithTransferIDInAnswer chooses whether a successful initiation's answer
// carries the transfer's id: {"status":true,"data":{"transferId":"<id>"}}
// when include is true (the default: the live service documents that the
// answer carries the id), {"status":true,"data":{}} when it is false. With
// [WithExcerptAnswers] the answers are {"status":"succes","transferId":"<id>"}
// and the excerpt's {"status":"succes"} alone.
func WithTransferIDInAnswer(include bool) Option {
	return func(c *config) { c.transferIDInAnswer = include }
}

// WithExcerptAnswers makes successful initiations answer as the interface
// description's excerpt documents, {"status":"succes"} (sic), with the
// transfer's id beside it at the top level unless
// [WithTransferIDInAnswer](false), instead of the live service's
// {"status":true,"data":{…}}. Clients must read both. Other answers keep
// the live service's envelopes.
func WithExcerptAnswers() Option {
	return func(c *config) { c.excerptAnswers = true }
}

// WithTravelAddressRequired makes the server refuse an initiation that
// names no way to reach the beneficiary, neither a travelAddress (the
// OPEN_VASP flow) nor an email or beneficiary.email (the EMAIL flow): 400
// VALIDATION_ERROR for the field travelAddress, as the live service's
// integration guide lists travelAddress as required. Without it such an
// initiation is accepted, as the excerpt (travelAddress optional) allows,
// and goes by the OPEN_VASP flow to the sandbox's own beneficiary VASP.
// [CheckTransfer] judges as a server without this option.
func WithTravelAddressRequired() Option {
	return func(c *config) { c.reachRequired = true }
}

// WithApproval sets the decision of the beneficiary's VASP on each initiated
// transfer: fn returning true approves it (received → approved → completed),
// false rejects it (received → rejected). The default approves every
// transfer. fn is called once per new transfer, from the request's
// goroutine, and must be safe for concurrent use; it gets a copy of the
// request.
func WithApproval(fn func(req travelrule.TransferRequest) bool) Option {
	return func(c *config) {
		if fn == nil {
			c.fail(errors.New("travelruletest: WithApproval: nil function"))
		}
		c.approve = fn
	}
}

// WithTravelAddresses registers values of travelAddress that resolve to the
// sandbox's beneficiary VASP whatever their form. Without registering, an
// initiation's travelAddress resolves as a directory would (see
// travelrule.InspectTravelAddress for the forms): an address the sandbox
// generated (POST {URL}/travel-address/generate) resolves to its
// beneficiary; an opaque one (the live service's encrypted-looking form, or
// a URL-safe "ta" token that is not base58, such as the docs'
// "ta1qexamplebeneficiaryvasp1ahjk23") resolves; a readable one
// (checksummed or unchecked) resolves unless its host is under .invalid,
// such as [UnknownTravelAddress]'s, which resolves to no VASP (404
// INVALID_TRAVEL_ADDRESS); one that no one could have made (a failed
// checksum, a character outside the URL-safe set, ...) is a 400
// INVALID_TRAVEL_ADDRESS fault of the field travelAddress; a value that
// does not start with "ta", and none, is accepted.
func WithTravelAddresses(addrs ...string) Option {
	return func(c *config) {
		for _, a := range addrs {
			c.travelAddresses[a] = true
		}
	}
}

// WithUnknownTravelAddresses registers values of travelAddress that resolve
// to no VASP, so that an initiation that carries one is answered 404
// INVALID_TRAVEL_ADDRESS, and POST {URL}/travel-address/decode too, as one
// whose travel address's host is under .invalid is (see
// [WithTravelAddresses]). The later of the two options wins for a value
// both register.
func WithUnknownTravelAddresses(addrs ...string) Option {
	return func(c *config) {
		for _, a := range addrs {
			c.travelAddresses[a] = false
		}
	}
}

// WithCallbackSecret makes the server sign every callback request with
// secret, as Standard Webhooks do: the webhook-signature header carries
// "v1," and the base64 HMAC-SHA256 under secret of webhook-id + "." +
// webhook-timestamp + "." + body, which callback.WebhookVerifier checks.
// Without it, callbacks carry webhook-id and webhook-timestamp but no
// signature.
func WithCallbackSecret(secret []byte) Option {
	return func(c *config) {
		if len(secret) == 0 {
			c.fail(errors.New("travelruletest: WithCallbackSecret: empty secret"))
		}
		c.cbSecret = append([]byte(nil), secret...)
	}
}

// WithCallbackRetry sets how many times a callback is sent at most
// (attempts, at least 1; default 5) and the bounds of the exponential
// backoff between attempts: min after the first failure, doubling up to
// max (defaults 100 ms and 2 s). Small values make tests of redelivery
// fast.
func WithCallbackRetry(attempts int, min, max time.Duration) Option {
	return func(c *config) {
		if attempts < 1 || min < 0 || max < min {
			c.fail(errors.New("travelruletest: WithCallbackRetry: need attempts >= 1 and 0 <= min <= max"))
		}
		c.cbAttempts, c.cbBackoffMin, c.cbBackoffMax = attempts, min, max
	}
}

// WithCallbackHTTPClient sets the HTTP client that sends callbacks and
// inquiries, for instance one that trusts an httptest.NewTLSServer
// receiver. Redirects are not followed whatever its CheckRedirect says: a
// 3xx answer is a failed attempt. The default client has a time-out of ten
// seconds per attempt.
func WithCallbackHTTPClient(hc *http.Client) Option {
	return func(c *config) {
		if hc == nil {
			c.fail(errors.New("travelruletest: WithCallbackHTTPClient: nil client"))
		}
		c.cbClient = hc
	}
}

// WithoutCallbacks makes the server send no callbacks over HTTP: each
// status callback is recorded as finished at once, with no attempt and
// Delivered false, and transfers still move through their states. Use it
// when a test's callback URLs are placeholders (so that the sandbox does not
// reach out to them) or for load tests of the client. StartInquiry and the
// control plane's POST {URL}/sandbox/inquiries still send their inquiry.
func WithoutCallbacks() Option {
	return func(c *config) { c.noCallbacks = true }
}

// WithFaults sets the faults injected from the start; see [Fault] and
// [Server.SetFaults].
func WithFaults(faults ...Fault) Option {
	return func(c *config) {
		for _, f := range faults {
			if err := f.check(); err != nil {
				c.fail(err)
			}
		}
		c.faults = append([]Fault(nil), faults...)
	}
}

// WithSeed seeds the random choice of the requests that faults hit
// (default 1). The same seed, faults and sequence of requests give the
// same faults.
func WithSeed(seed uint64) Option {
	return func(c *config) { c.seed = seed }
}

// WithoutIdempotency makes the server ignore Idempotency-Key headers, as a
// service that follows the description (which documents none) may: every
// initiation then makes a new transfer.
func WithoutIdempotency() Option {
	return func(c *config) { c.noIdempotency = true }
}

// WithRecordLimit bounds the memory the server's records take, for long
// runs and load tests: it keeps the n most recent transfers, requests,
// finished callbacks and Idempotency-Key answers (default 10,000; 0 keeps
// everything) and forgets older ones, with three exceptions that are kept
// however old until they are settled:
//
//   - a transfer that is still pending: an inquiry from
//     [Server.StartInquiry] or the control plane awaiting resolution
//     (ResolveInquiry must still find it; the control plane starts no more
//     while as many are kept beyond the limit as the limit itself), or a
//     transfer whose status callbacks are not all finished;
//   - an Idempotency-Key whose request is still being processed;
//   - an Idempotency-Key answered less than the idempotency window ago
//     ([WithIdempotencyWindow]), so that a retry within the window is
//     still replayed rather than acted on twice. With keys, the memory
//     kept thus grows with the keyed requests of one window.
//
// [Server.Stats] counts everything since the start, forgotten records
// included; [Server.Transfers], [Server.Requests] and [Server.Callbacks]
// return what is kept. It panics (from NewServer) if n is negative.
func WithRecordLimit(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.fail(errors.New("travelruletest: WithRecordLimit: negative limit"))
		}
		c.recordLimit = n
	}
}

// WithIdempotencyWindow sets how long the answer stored for an
// Idempotency-Key is kept at least (default a day, as payment services
// commonly honour keys), counted from the first request with the key.
// Within the window a request with the key is replayed whatever the record
// limit; after it, the answer is forgotten once the record limit
// ([WithRecordLimit]) is exceeded, and a request with the key is acted on
// as new. A zero window keeps only the record
// limit's most recent answers.
func WithIdempotencyWindow(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail(errors.New("travelruletest: WithIdempotencyWindow: negative window"))
		}
		c.idemWindow = d
	}
}

// WithLogger sets the logger for one line per request and per callback
// attempt, and one when a latency fault starts holding a request (default
// none: the server logs nothing). The lines carry methods, paths, statuses,
// transfer ids and callback statuses, never bodies, query strings, callback
// URLs, tokens or personal data. The one exception is the holding line.
// When the client sent an X-Request-Id that is a short identifier (at most
// 64 letters, digits, '.', '_' or '-'), that line carries it as
// request_id, as the client sent it.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}
