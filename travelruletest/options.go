package travelruletest

import (
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
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
	defaultTokenLifetime     = time.Hour      // WithTokenLifetime
	defaultCallbackMinute    = time.Minute    // WithCallbackTimeScale: the live retry schedule as it is
	defaultSeed              = 1              // WithSeed
	defaultRecordLimit       = 10_000         // WithRecordLimit
	defaultIdempotencyWindow = 24 * time.Hour // WithIdempotencyWindow
)

// minSigningSecret is the fewest bytes a callback secret may have: as
// callback.NewDataIntegrityVerifier and callback.WebhookVerifier require.
const minSigningSecret = 16

// Option configures a [Server] made by [NewServer]. An invalid option value
// makes NewServer panic, as httptest.NewServer does when it cannot listen.
type Option func(*config)

type config struct {
	addr                string
	prefix              string
	clientID            string
	clientSecret        string
	tokenLifetime       time.Duration
	apiKeys             apiKeys
	transferIDInAnswer  bool
	excerptAnswers      bool
	reachRequired       bool
	approve             func(travelrule.TransferRequest) bool
	rejectionResolution bool // a rejection gets a TRANSFER_RESOLUTION too
	travelAddresses     directory
	cbSecret            []byte
	standardWebhooks    bool
	cbDelays            []time.Duration // the waits between a callback's attempts: len+1 attempts
	cbClient            *http.Client
	inquiryURL          string // the integrator's base URL as a beneficiary's VASP, or ""
	noCallbacks         bool
	faults              []Fault
	seed                uint64
	noIdempotency       bool
	recordLimit         int
	idemWindow          time.Duration
	logger              *slog.Logger
	console             bool
	consoleFrom         []netip.Prefix
	now                 func() time.Time // the clock tokens are minted and verified by; nil is time.Now
	err                 error
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
		cbSecret:           []byte(DefaultSigningSecret),
		cbDelays:           liveSchedule(defaultCallbackMinute),
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
// transfer that the sandbox decides itself (all of them, unless
// [WithInquiryURL] sends some to the integrator): fn returning true
// approves it (received → approved → completed), false rejects it
// (received → rejected); the originator hears it by an INQUIRY_RESOLUTION,
// and an approval by a TRANSFER_RESOLUTION too ([WithRejectionResolution]).
// The default approves every transfer. fn is
// called once per new transfer, from the request's goroutine, and must be
// safe for concurrent use; it gets a copy of the request.
func WithApproval(fn func(req travelrule.TransferRequest) bool) Option {
	return func(c *config) {
		if fn == nil {
			c.fail(errors.New("travelruletest: WithApproval: nil function"))
		}
		c.approve = fn
	}
}

// WithRejectionResolution makes a rejection send the originator a
// TRANSFER_RESOLUTION "REJECTED" after its INQUIRY_RESOLUTION
// {"approved":false}, as the sandbox did before. By default a rejection
// gets the INQUIRY_RESOLUTION alone: the live docs send a
// TRANSFER_RESOLUTION "once the beneficiary VASP approves" and promise
// none for a rejection, so an originator must act on the first decision
// that arrives, in either message. Use it to test that an originator
// takes the second message of a rejection in its stride.
func WithRejectionResolution() Option {
	return func(c *config) { c.rejectionResolution = true }
}

// WithInquiryURL makes the integrator the beneficiary's VASP of the
// travel addresses the sandbox generates (POST {URL}/travel-address/generate):
// base is the integrator's base URL for inbound TRP inquiries, an
// absolute http or https URL without query or fragment. An initiation
// whose travelAddress is one of those addresses is then not decided by
// the sandbox ([WithApproval] is not asked): the sandbox POSTs an INQUIRY
// to base + "/transfers/inquiry/" + <beneficiaryId>, the path the travel
// address names, with {"asset","amount","callback","IVMS101"}, callback
// being <URL>/transfers/inquiryResolution?q=<transferId>; the transfer
// waits in state inquiry until the integrator resolves it
// (ResolveInquiry). The resolution sends the originator, at the
// initiation's callback URL, its INQUIRY_RESOLUTION (and, for an
// approval, a TRANSFER_RESOLUTION: see [WithRejectionResolution]), and a
// resolution that approves with a callback URL
// makes that URL the one that gets the TRANSFER_CONFIRMATION once the
// txId is submitted. The INQUIRY is sent even [WithoutCallbacks].
func WithInquiryURL(base string) Option {
	return func(c *config) {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
			c.fail(errors.New("travelruletest: WithInquiryURL: need an absolute http or https URL without query or fragment"))
			return
		}
		c.inquiryURL = strings.TrimRight(base, "/")
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

// WithCallbackSecret sets the secret the server signs every callback
// with (default [DefaultSigningSecret]), at least 16 bytes. By default a
// callback is signed as the live service signs it: the x-data-integrity
// header carries the lower-case hex of the HMAC-SHA512, keyed with secret,
// of the base64 text of the body, which callback.DataIntegrityVerifier
// checks (callback.NewDataIntegrityVerifier(string(secret))). With
// [WithStandardWebhooks], the same secret signs Standard Webhooks headers
// instead.
func WithCallbackSecret(secret []byte) Option {
	return func(c *config) {
		if len(secret) < minSigningSecret {
			c.fail(errors.New("travelruletest: WithCallbackSecret: the secret must have at least 16 bytes"))
		}
		c.cbSecret = append([]byte(nil), secret...)
	}
}

// WithStandardWebhooks makes the server sign callbacks as Standard
// Webhooks do instead of the live service's x-data-integrity: every
// callback carries webhook-id (the same on every attempt of a delivery),
// webhook-timestamp and webhook-signature ("v1," and the base64
// HMAC-SHA256, under the callback secret, of webhook-id + "." +
// webhook-timestamp + "." + body), which callback.WebhookVerifier checks,
// and no x-data-integrity.
func WithStandardWebhooks() Option {
	return func(c *config) { c.standardWebhooks = true }
}

// WithCallbackTimeScale runs the live service's retry schedule with each
// of its minutes lasting minute, so that tests of redelivery take
// milliseconds: a callback not acknowledged (any answer but a 2xx, or
// none) is sent again after 1, 5, 15, 30, 60, 180, 360, 720 and 1440
// "minutes", ten attempts in all, then given up. The default is the
// schedule as it is, time.Minute: about 47 hours. WithCallbackTimeScale
// and [WithCallbackRetry] set the same thing: the later one wins.
func WithCallbackTimeScale(minute time.Duration) Option {
	return func(c *config) {
		if minute <= 0 {
			c.fail(errors.New("travelruletest: WithCallbackTimeScale: the minute must be positive"))
		}
		c.cbDelays = liveSchedule(minute)
	}
}

// WithCallbackRetry replaces the live service's retry schedule (see
// [WithCallbackTimeScale]) with an exponential backoff: a callback is sent
// at most attempts times (at least 1), waiting min after the first
// failure, then doubling up to max. Small values make tests of redelivery
// fast. The later of WithCallbackRetry and WithCallbackTimeScale wins.
func WithCallbackRetry(attempts int, min, max time.Duration) Option {
	return func(c *config) {
		if attempts < 1 || min < 0 || max < min {
			c.fail(errors.New("travelruletest: WithCallbackRetry: need attempts >= 1 and 0 <= min <= max"))
			return
		}
		c.cbDelays = exponentialSchedule(attempts, min, max)
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
// callback is recorded as finished at once, with no attempt and Delivered
// false, and transfers still move through their states. Use it when a
// test's callback URLs are placeholders (so that the sandbox does not
// reach out to them) or for load tests of the client. Inquiries are still
// sent: those of StartInquiry and of the control plane's POST
// {URL}/sandbox/inquiries, and those to the integrator's inquiry URL
// ([WithInquiryURL]).
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
//     transfer whose callbacks are not all finished;
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

// WithConsole makes the server serve the sandbox console, a web page for
// a person, at "/" of its address (see [Server.ConsoleURL]): the transfers
// as they arrive, each one's timeline (its requests, the decision, every
// attempt at each callback with its answer, latency and next retry), the
// faults with a switch, and Approve and Reject buttons on the transfers
// that wait for the decision of the beneficiary's VASP (under
// [DecisionNone]). Personal data shows redacted until the person reveals
// it; no secret shows. It answers loopback clients, and those in from;
// its buttons refuse requests from pages of other origins. Its paths, "/"
// and those under "/console/", are outside the service's: the path prefix
// (see [WithPathPrefix]) must not be "/console".
func WithConsole(from ...netip.Prefix) Option {
	return func(c *config) {
		for _, p := range from {
			if !p.IsValid() {
				c.fail(errors.New("travelruletest: WithConsole: an invalid address prefix"))
				continue
			}
			if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
				// The console sees IPv4 clients as IPv4 addresses.
				p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
			}
			c.consoleFrom = append(c.consoleFrom, p.Masked())
		}
		c.console = true
	}
}
