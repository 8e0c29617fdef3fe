package main

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// sandboxAnswers says how to get each answer of the sandbox (API keys,
// travel addresses, discovery) and where its control plane is; the banner
// and --help print it.
var sandboxAnswers = `API keys (POST {base}/auth/token with x-api-key: <key>, no body):
  - {key} gets a bearer token (an EdDSA JWT; expired: 403 FORBIDDEN)
  - ` + travelruletest.InactiveAPIKey + ` answers 403 FORBIDDEN "API key inactive"
  - ` + travelruletest.ExpiredAPIKey + ` answers 403 FORBIDDEN "API key expired"
  - no key, or another, answers 401 UNAUTHORIZED
Travel addresses (travelAddress of an initiation):
  - POST {base}/travel-address/generate makes one (the same beneficiary gets
    the same address), POST {base}/travel-address/decode reads it back
  - any other readable one resolves, such as TRP's example
    ` + travelruletest.KnownTravelAddress + `
  - an opaque one resolves, such as the docs' placeholder
    ` + travelruletest.PlaceholderTravelAddress + `
  - one whose host is under .invalid answers 404 INVALID_TRAVEL_ADDRESS, such as
    ` + travelruletest.UnknownTravelAddress + ` (no-such-vasp.invalid)
  - a "ta..." value no one could have made (a failed checksum, a character
    outside the URL-safe set) answers 400 INVALID_TRAVEL_ADDRESS
  - --travel-address and --unknown-travel-address register more of either kind
  - with neither a travelAddress nor an email the transfer is accepted
    (--travel-address-required: 400 VALIDATION_ERROR)
Answers: {"status":true,"data":{...}}; errors {"status":false,"errors":[{"code","message","field"}]}
  - an empty asset answers as the live docs show: 400 {"status":false,"errors":
    [{"code":"INVALID_REQUEST","message":"Asset is required"}]}
  - an initiation answers {"status":true,"data":{"transferId":"<id>"}}
    (--excerpt-answers: the excerpt's {"status":"succes","transferId":"<id>"})
  - POST {base}/transfers/txId?q=<id> {"txId":"0x..."} records the transfer's hash
Callbacks, as the live service sends them (travelrule listen prints them):
  - to the originator (an initiation's callback URL) once the beneficiary's VASP
    decided: INQUIRY_RESOLUTION {"approved":{"address","callback"}|false,"callback"},
    then, on an approval, TRANSFER_RESOLUTION {"transferId","status":"APPROVED",
    "statusComment","callback"}; a rejection gets none, as the live docs promise
    none (--rejection-resolution: "REJECTED"): act on the first decision
  - the sandbox decides (approves; --decision reject rejects, --decision none never
    decides: the transfer stays received) unless --inquiry-url names your inbound base URL:
    then a transfer to a travel address the sandbox generated is POSTed to
    <inquiry-url>/transfers/inquiry/<beneficiaryId> as an INQUIRY
    {"asset","amount","callback","IVMS101"} and waits for your inquiryResolution
  - TRANSFER_CONFIRMATION {"txid"} to the callback URL of an approving resolution,
    once the txId is submitted (for the control plane's inquiries, at the approval)
  - signed with x-data-integrity (--standard-webhooks: webhook-* headers); retried
    after 1m, 5m, 15m, 30m, 1h, 3h, 6h, 12h, 24h (--callback-time-scale shortens it)
VASP search (no token needed):
  GET  {base}/discovery/vasp            body {"domain":"example.com"}
Faults (--fault KIND[:KEY=VALUE,...], repeatable, or the control plane), on the operations:
  before acting, nothing stored: rate-limit (429 with Retry-After), unavailable (503 with
    Retry-After), reset-refused-stream, goaway (over HTTP/1.1 both close the connection)
  after the transfer was stored: internal (500), drop, reset-protocol-error,
    proxy-unavailable (503, no Retry-After), gateway-unavailable (503 with Retry-After)
  latency (latency=300ms) delays the request
  keys: rate=0.5 (above 0, default 1), times=1 (default: no limit), ops=initiate+resolve
    (initiate, resolve, generate-travel-address, decode-travel-address, submit-txid;
    default: all), retry-after=2s, latency=300ms
  such as --fault rate-limit:retry-after=2s,times=1 --fault internal:ops=initiate,times=1
Console (--console=false: none): a web page at "/" of the sandbox's address, no login,
  for this machine (and --console-allow): the transfers live, their callbacks, Approve/Reject, faults
Control plane (bearer token as for the operations):
  POST {base}/sandbox/inquiries       {"callback":"<url>", ...} starts an inbound inquiry: 201 {"transferId"}
  GET  {base}/sandbox/transfers/{id}  a transfer's state and the callbacks delivered for it
  POST {base}/sandbox/faults          {"faults":[{"kind":"rate-limit","times":1,"retryAfter":"2s"}]}
                                      replaces the faults ({"faults":[]} clears them); GET lists them
  POST {base}/sandbox/decision        {"decision":"approve"|"reject"|"none"}, over --decision
`

// sandbox runs the sandbox service on an address for clients in other
// processes and languages. It prints, on stdout, the environment a client
// needs (the sandbox's demo API key among it) and a curl transcript of the
// five stages of the service's guide (together a shell script), and on
// stderr how to get each answer. Unless --console=false it also serves the
// sandbox console, a web page at "/" of its address, to this machine (and
// the clients --console-allow lets in), and prints its URL on stderr.
func (c *cli) sandbox(ctx context.Context, args []string) int {
	fs := c.newFlagSet("sandbox", "[--addr HOST:PORT] [--prefix /api/v3] [--token-lifetime 24h] [--inquiry-url URL]\n"+
		"    [--fault KIND[:KEY=VALUE,...]]... [--decision approve|reject|none] [--tls [--tls-ca-file FILE]]\n"+
		"    [--console=false | --console-allow PREFIX...] [flags]")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), "\n"+sandboxExposure+"\n\n"+strings.ReplaceAll(sandboxAnswers, "{key}", travelruletest.DefaultAPIKey+" (or the one you set)"))
	}
	addr := fs.String("addr", defaultSandboxAddr, "the address to listen on; off loopback (127.0.0.0/8, ::1, localhost) only with credentials of your own")
	lifetime := fs.Duration("token-lifetime", 24*time.Hour, "the lifetime of the tokens the sandbox issues")
	cbURL := fs.String("callback-url", "http://"+defaultListenAddr+"/", "the callback URL of the printed curl transcript (travelrule listen's default)")
	opts := c.sandboxOptions(fs)
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	if err := checkListenAddr(*addr, defaultSandboxAddr); err != nil {
		return c.usageError(fs, "%v", err)
	}
	setup, err := opts()
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	if err := exposureError(*addr, setup.published); err != nil {
		fmt.Fprintf(c.stderr, "sandbox: %v\n", err)
		return exitUsage
	}
	// The transcript's transfer must pass the sandbox's own checks.
	if travelruletest.CheckTransfer([]byte(sampleTransfer(*cbURL))) != nil {
		return c.usageError(fs, "--callback-url must be an absolute http or https URL of at most 255 characters, without spaces")
	}
	srv, err := startSandbox(append(setup.opts, travelruletest.WithAddr(*addr), travelruletest.WithTokenLifetime(*lifetime)), setup.tls)
	var opErr *net.OpError
	switch {
	case err != nil && !errors.As(err, &opErr):
		// An option refused what a flag gave it: the option decides.
		return c.usageError(fs, "%s", sandboxFlags.Replace(err.Error()))
	case err != nil:
		fmt.Fprintln(c.stderr, listenFailure("sandbox", *addr, err))
		return exitFailed
	}
	defer srv.Close()
	srv.SetDecision(setup.decision)
	if setup.tls {
		caFile, remove, err := writeCertificate(srv.Certificate(), setup.caFile)
		if err != nil {
			fmt.Fprintf(c.stderr, "sandbox: writing the certificate: %v\n", err)
			return exitFailed
		}
		defer remove()
		setup.caFile = caFile
	}
	if err := c.sandboxBanner(srv, *lifetime, *cbURL, setup); err != nil {
		fmt.Fprintf(c.stderr, "sandbox: %v\n", err)
		return exitFailed
	}
	<-ctx.Done()
	fmt.Fprintln(c.stderr, "stopped")
	return exitOK
}

// sandboxSetup is what the sandbox's flags and environment make.
type sandboxSetup struct {
	opts      []travelruletest.Option
	signing   string         // how callbacks are signed and where the secret is, on one line
	secretVar string         // the variable of the published signing secret, to print; "" for a secret of the user's
	published publishedCreds // which credentials are the sandbox's published defaults
	clientID  string         // the client id of the client credentials
	faults    []string       // the --fault values, as given
	console   bool           // serve the console
	consoleIn []netip.Prefix // the clients beyond loopback the console answers (--console-allow)
	decision  travelruletest.Decision
	tls       bool   // serve HTTPS under a self-signed certificate
	caFile    string // where the certificate goes: --tls-ca-file, or "" for a temporary file
}

// sandboxOptions adds the flags that become server options to fs; after
// parsing, the function it returns makes the options, the credentials
// (the API key, the client credentials, the signing secret: the user's, or
// the sandbox's published defaults), and says on one line how callbacks
// are signed and where the secret is (the sandbox's published default
// secret may be shown, a secret of the user's never).
func (c *cli) sandboxOptions(fs *flag.FlagSet) func() (sandboxSetup, error) {
	f := defineSandboxOptionFlags(fs)
	return func() (sandboxSetup, error) { return c.sandboxSetup(f) }
}

// sandboxOptionFlags are the values of the flags that become server
// options.
type sandboxOptionFlags struct {
	keyFile, prefix, inquiryURL, sigFile, decision, caFile               *string
	webhooks, excerpt, noID, rejectionResolution, required, tls, console *bool
	scale                                                                *time.Duration
	known, unknown, faults, allow                                        stringList
}

// defineSandboxOptionFlags adds the flags that become server options to fs.
func defineSandboxOptionFlags(fs *flag.FlagSet) *sandboxOptionFlags {
	f := &sandboxOptionFlags{
		keyFile:             fs.String("api-key-file", "", "accept the API key in this file, one trailing newline removed, instead of the published "+travelruletest.DefaultAPIKey+" (default: env TRAVELRULE_API_KEY_FILE, or the key itself in env TRAVELRULE_API_KEY; never a flag)"),
		prefix:              fs.String("prefix", "", `a path prefix for the service, such as "/api/v3"`),
		inquiryURL:          fs.String("inquiry-url", "", "your base URL as a beneficiary's VASP: a transfer to a travel address the sandbox generated is POSTed as an INQUIRY to <URL>/transfers/inquiry/<beneficiaryId> and waits for your resolution, instead of the sandbox approving it"),
		sigFile:             fs.String("signing-secret-file", "", "sign callbacks (x-data-integrity) with the signing secret in this file (default: env TRAVELRULE_SIGNING_SECRET_FILE, or the secret itself in env TRAVELRULE_SIGNING_SECRET, else the sandbox's published "+travelruletest.DefaultSigningSecret+"; never a flag)"),
		webhooks:            fs.Bool("standard-webhooks", false, "sign callbacks with Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) instead of x-data-integrity"),
		scale:               fs.Duration("callback-time-scale", 0, "how long each minute of the live retry schedule lasts, such as 1s (default: a minute, retries over about 47 hours)"),
		excerpt:             fs.Bool("excerpt-answers", false, `answer initiations as the interface description's excerpt does, {"status":"succes","transferId":"<id>"}, not {"status":true,"data":{...}}`),
		noID:                fs.Bool("documented-answer", false, `answer initiations with the excerpt's documented {"status":"succes"} alone, without transferId`),
		rejectionResolution: fs.Bool("rejection-resolution", false, `send a rejection's originator a TRANSFER_RESOLUTION "REJECTED" after its INQUIRY_RESOLUTION {"approved":false}; the live docs promise one only for an approval`),
		required:            fs.Bool("travel-address-required", false, "refuse an initiation with neither a travelAddress nor an email (400 VALIDATION_ERROR), as the live guide lists travelAddress as required"),
		decision:            fs.String("decision", "approve", "what the sandbox, the beneficiary's VASP, decides on the transfers you initiate: approve, reject, or none (never: the transfer stays received, no callback)"),
		tls:                 fs.Bool("tls", false, "serve HTTPS (HTTP/2 or HTTP/1.1) under a self-signed certificate made at start, for 127.0.0.1, ::1, localhost and the --addr IP; the certificate (public, PEM) goes to a temporary file, or --tls-ca-file, whose path it prints: curl --cacert FILE"),
		caFile:              fs.String("tls-ca-file", "", "with --tls, write the sandbox's certificate (PEM) to this file, for clients to trust, instead of a temporary file removed at exit"),
		console:             fs.Bool("console", true, `serve the sandbox console, a web page at "/" of the sandbox's address (the transfers live, each one's callbacks, Approve and Reject, the faults), to this machine only; --console=false serves none`),
	}
	refuseSecretFlag(fs, "callback-secret", "TRAVELRULE_WEBHOOK_SECRET")
	fs.Var(&f.known, "travel-address", "a travelAddress that resolves, even one under .invalid (repeatable)")
	fs.Var(&f.unknown, "unknown-travel-address", "a travelAddress that resolves to no VASP: 404 (repeatable)")
	fs.Var(&f.faults, "fault", "inject a fault into the operations, `KIND[:KEY=VALUE,...]` such as rate-limit:retry-after=2s,times=1 or internal:ops=initiate (repeatable; see below)")
	fs.Var(&f.allow, "console-allow", "let the clients in `PREFIX`, a CIDR such as 10.0.0.0/8 or an IP address, use the console too (repeatable). "+
		"The console has no login: anyone in PREFIX can see the transfers, reveal their personal data and approve them")
	return f
}

// sandboxSetup makes what the flags' values say, as sandboxOptions does.
func (c *cli) sandboxSetup(f *sandboxOptionFlags) (sandboxSetup, error) {
	o, d, from, err := f.serverOptions()
	if err != nil {
		return sandboxSetup{}, err
	}
	so, signing, publishedSecret, err := c.sandboxSigning(*f.sigFile, *f.webhooks)
	if err != nil {
		return sandboxSetup{}, err
	}
	creds, published, clientID, err := c.sandboxCredentials(*f.keyFile)
	if err != nil {
		return sandboxSetup{}, err
	}
	published.signingSecret = publishedSecret
	return sandboxSetup{opts: append(append(o, so...), creds...), signing: signing, secretVar: signingSecretVar(publishedSecret, *f.webhooks),
		published: published, clientID: clientID, faults: f.faults, decision: d, tls: *f.tls, caFile: *f.caFile, console: *f.console, consoleIn: from}, nil
}

// serverOptions makes the options of the flags but the signing and the
// credentials, and returns them with the decision and the console's
// clients beyond loopback; or the error of a value or a combination that
// does not hold.
func (f *sandboxOptionFlags) serverOptions() ([]travelruletest.Option, travelruletest.Decision, []netip.Prefix, error) {
	set, err := parseFaults(f.faults)
	if err != nil {
		return nil, "", nil, err
	}
	d, err := parseDecision(*f.decision)
	if err != nil {
		return nil, "", nil, err
	}
	if *f.caFile != "" && !*f.tls {
		return nil, "", nil, errors.New("--tls-ca-file needs --tls")
	}
	from, err := parseConsoleAllow(f.allow)
	if err != nil {
		return nil, "", nil, err
	}
	switch {
	case len(f.allow) > 0 && !*f.console:
		return nil, "", nil, errors.New("--console-allow needs the console: drop --console=false")
	case *f.scale < 0:
		return nil, "", nil, errors.New("--callback-time-scale must not be negative")
	}
	o := []travelruletest.Option{travelruletest.WithTravelAddresses(f.known...), travelruletest.WithUnknownTravelAddresses(f.unknown...),
		travelruletest.WithFaults(set...)}
	if *f.console {
		o = append(o, travelruletest.WithConsole(from...))
	}
	if *f.prefix != "" {
		o = append(o, travelruletest.WithPathPrefix(*f.prefix))
	}
	if *f.inquiryURL != "" {
		o = append(o, travelruletest.WithInquiryURL(*f.inquiryURL)) // checked by the option: see sandboxFlags
	}
	if *f.scale > 0 {
		o = append(o, travelruletest.WithCallbackTimeScale(*f.scale))
	}
	return append(o, f.answerOptions()...), d, from, nil
}

// answerOptions are the options of the flags that pick among the forms of
// the service's answers and callbacks that its documents give.
func (f *sandboxOptionFlags) answerOptions() []travelruletest.Option {
	var o []travelruletest.Option
	if *f.excerpt || *f.noID {
		o = append(o, travelruletest.WithExcerptAnswers())
	}
	if *f.noID {
		o = append(o, travelruletest.WithTransferIDInAnswer(false))
	}
	if *f.required {
		o = append(o, travelruletest.WithTravelAddressRequired())
	}
	if *f.rejectionResolution {
		o = append(o, travelruletest.WithRejectionResolution())
	}
	return o
}

// signingSecretVar is the variable the banner sets to the sandbox's
// published signing secret, or "" when the secret is the user's.
func signingSecretVar(published, webhooks bool) string {
	switch {
	case !published:
		return ""
	case webhooks:
		return "TRAVELRULE_WEBHOOK_SECRET"
	}
	return "TRAVELRULE_SIGNING_SECRET"
}

// sandboxCredentials returns the options that set the credentials the
// sandbox accepts, which of them are its published defaults, and the
// client id: the API key of --api-key-file, TRAVELRULE_API_KEY_FILE or
// TRAVELRULE_API_KEY, else travelruletest.DefaultAPIKey; the client
// credentials TRAVELRULE_CLIENT_ID (default travelruletest.DefaultClientID)
// and TRAVELRULE_CLIENT_SECRET, else the published ones. A credential
// set to its published value counts as published.
func (c *cli) sandboxCredentials(keyFile string) ([]travelruletest.Option, publishedCreds, string, error) {
	key, err := c.apiKey(&settings{apiKeyFile: keyFile})
	if err != nil {
		return nil, publishedCreds{}, "", err
	}
	var o []travelruletest.Option
	if key != "" {
		o = append(o, travelruletest.WithAPIKeys(key))
	}
	id := c.getenv("TRAVELRULE_CLIENT_ID")
	secret, _, err := c.secret("TRAVELRULE_CLIENT_SECRET", "client secret")
	if err != nil {
		return nil, publishedCreds{}, "", err
	}
	if id == "" {
		id = travelruletest.DefaultClientID
	}
	if secret == "" {
		secret = travelruletest.DefaultClientSecret
	}
	o = append(o, travelruletest.WithClientCredentials(id, secret))
	return o, publishedCreds{
		apiKey:       key == "" || key == travelruletest.DefaultAPIKey,
		clientSecret: secret == travelruletest.DefaultClientSecret,
	}, id, nil
}

// sandboxSigning returns the options that sign the sandbox's callbacks,
// a line saying how and where the secret is, and whether the secret is
// the sandbox's published one: x-data-integrity under the signing secret
// of the file or environment (signingSecret), else the sandbox's default;
// Standard Webhooks with webhooks, or with a Standard Webhooks secret
// (TRAVELRULE_WEBHOOK_SECRET or the file TRAVELRULE_WEBHOOK_SECRET_FILE
// names; never a flag), which is then the secret. A signing secret and a
// Standard Webhooks secret are not both taken. The line names where the
// secret came from, never the user's secret.
func (c *cli) sandboxSigning(sigFile string, webhooks bool) ([]travelruletest.Option, string, bool, error) {
	secret, secretSource, err := c.secret("TRAVELRULE_WEBHOOK_SECRET", "Standard Webhooks secret")
	if err != nil {
		return nil, "", false, err
	}
	signing, err := c.signingSecret(sigFile)
	if err != nil {
		return nil, "", false, err
	}
	var o []travelruletest.Option
	var where string
	key := []byte(travelruletest.DefaultSigningSecret)
	switch {
	case signing != "" && secret != "":
		return nil, "", false, errors.New("both a signing secret (x-data-integrity) and a Standard Webhooks secret are set: set one")
	case secret != "":
		v, err := callback.NewWebhookVerifier(secret) // decodes "whsec_<base64>"; takes a raw secret as it is
		if err != nil {
			return nil, "", false, err
		}
		key = v.Secrets[0]
		webhooks, where = true, "the Standard Webhooks secret you gave ("+secretSource+")"
	case signing != "":
		key = []byte(signing)
		where = "the signing secret you gave (" + c.signingSecretSource(sigFile) + ")"
	default:
		where = "the sandbox's published default secret, " + travelruletest.DefaultSigningSecret
	}
	published := string(key) == travelruletest.DefaultSigningSecret
	if !published {
		o = append(o, travelruletest.WithCallbackSecret(key))
	}
	if webhooks {
		o = append(o, travelruletest.WithStandardWebhooks())
		return o, "callbacks are signed with Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) under " + where, published, nil
	}
	return o, "callbacks are signed as the live service signs them, x-data-integrity (HMAC-SHA512 over the body's base64), under " + where, published, nil
}

// signingSecretSource names where signingSecret found the secret.
func (c *cli) signingSecretSource(sigFile string) string {
	switch {
	case sigFile != "":
		return "--signing-secret-file"
	case c.getenv("TRAVELRULE_SIGNING_SECRET_FILE") != "":
		return "TRAVELRULE_SIGNING_SECRET_FILE"
	}
	return "TRAVELRULE_SIGNING_SECRET"
}

// sandboxBanner prints the environment and the curl transcript on stdout
// and how to get each answer on stderr. The sandbox's published
// credentials are printed, the signing secret among them, not secrets;
// the user's never are, nor a token they would give: the transcript then
// reads the API key from $TRAVELRULE_API_KEY.
func (c *cli) sandboxBanner(srv *travelruletest.Server, lifetime time.Duration, cbURL string, setup sandboxSetup) error {
	tok, err := srv.TokenSource().Token()
	if err != nil {
		return err
	}
	c.sandboxEnvironment(srv, tok.AccessToken, setup)
	f := flow{baseURL: srv.URL, callbackURL: cbURL}
	if setup.published.apiKey {
		f.apiKey = travelruletest.DefaultAPIKey
	}
	if setup.tls {
		// curl reads CURL_CA_BUNDLE, Go programs (this CLI, the SDK's
		// default transport) SSL_CERT_FILE on Linux: the transcript trusts
		// the sandbox.
		fmt.Fprintf(c.stdout, "# --tls: curl and Go programs trust the sandbox's self-signed certificate\nexport CURL_CA_BUNDLE=%s\nexport SSL_CERT_FILE=%s\n",
			shellWord(setup.caFile), shellWord(setup.caFile))
	}
	fmt.Fprint(c.stdout, transcript(f))
	c.sandboxNotes(srv, lifetime, setup)
	return nil
}

// sandboxEnvironment prints on stdout, as shell assignments, the base URL
// and the published credentials, the API key's alternatives commented
// out: a token (only when anyone could fetch one with the published
// credentials: with credentials of the user's it would let whoever reads
// this output in for its lifetime) and the client credentials.
func (c *cli) sandboxEnvironment(srv *travelruletest.Server, token string, setup sandboxSetup) {
	// Stdout is a shell script: every value is one shell word.
	fmt.Fprintf(c.stdout, "TRAVELRULE_BASE_URL=%s\n", shellWord(srv.URL))
	if setup.published.apiKey {
		fmt.Fprintf(c.stdout, "TRAVELRULE_API_KEY=%s\n", shellWord(travelruletest.DefaultAPIKey))
	}
	if setup.secretVar != "" {
		fmt.Fprintf(c.stdout, "%s=%s\n", setup.secretVar, shellWord(travelruletest.DefaultSigningSecret))
	}
	// The CLI takes credentials of one kind: the other kinds are printed
	// commented out, to use instead of the API key.
	alt := "# "
	fmt.Fprintln(c.stdout, "# or, instead of the API key, a token or the client credentials:")
	if setup.published.apiKey && setup.published.clientSecret {
		fmt.Fprintf(c.stdout, "%sTRAVELRULE_TOKEN=%s\n", alt, shellWord(token))
	}
	fmt.Fprintf(c.stdout, "%sTRAVELRULE_TOKEN_URL=%s\n%sTRAVELRULE_CLIENT_ID=%s\n",
		alt, shellWord(srv.TokenURL()), alt, shellWord(setup.clientID))
	if setup.published.clientSecret {
		fmt.Fprintf(c.stdout, "%sTRAVELRULE_CLIENT_SECRET=%s\n", alt, shellWord(travelruletest.DefaultClientSecret))
	}
}

// sandboxNotes prints on stderr how callbacks are signed, what the flags
// changed, where the console is, and how to get each answer.
func (c *cli) sandboxNotes(srv *travelruletest.Server, lifetime time.Duration, setup sandboxSetup) {
	fmt.Fprintf(c.stderr, "%s\n", setup.signing)
	if setup.tls {
		fmt.Fprintf(c.stderr, "serving HTTPS under a self-signed certificate (for 127.0.0.1, ::1, localhost and the --addr IP), in %s: "+
			"curl --cacert %s; Python requests verify=%s; Go: add it to tls.Config.RootCAs (or SSL_CERT_FILE=%s on Linux)\n",
			setup.caFile, shellWord(setup.caFile), setup.caFile, shellWord(setup.caFile))
	}
	if len(setup.faults) > 0 {
		fmt.Fprintf(c.stderr, "injecting faults (--fault): %s\n", strings.Join(setup.faults, " "))
	}
	if setup.decision != travelruletest.DecisionApprove {
		fmt.Fprintf(c.stderr, "deciding %s on the transfers initiated (--decision)\n", setup.decision)
	}
	if u := srv.ConsoleURL(); u != "" {
		fmt.Fprintln(c.stderr, consoleLine(u, setup.consoleIn))
	}
	key := "your API key (TRAVELRULE_API_KEY)"
	if setup.published.apiKey {
		key = travelruletest.DefaultAPIKey
	}
	answers := strings.NewReplacer("{base}", srv.URL, "{key}", key).Replace(sandboxAnswers)
	fmt.Fprintf(c.stderr, "sandbox listening on %s (API key %s; tokens valid for %s); stop with Ctrl-C\n%s",
		srv.URL, key, lifetime, answers)
}

// publishedCreds says which of the sandbox's credentials are its published
// defaults, which anyone who reads its documentation knows.
type publishedCreds struct {
	apiKey        bool // travelruletest.DefaultAPIKey
	clientSecret  bool // travelruletest.DefaultClientSecret
	signingSecret bool // travelruletest.DefaultSigningSecret
}

// sandboxExposure is what --help says of listening off loopback.
const sandboxExposure = `Off loopback (an --addr outside 127.0.0.0/8 and ::1, other than localhost) the
sandbox starts only with credentials of your own: with its published ones,
anyone who reaches it could log in, make it POST to any URL (its callbacks,
its inbound inquiries) and read the answer's status back, and forge its
callbacks' signatures. Set:
  the API key         TRAVELRULE_API_KEY, TRAVELRULE_API_KEY_FILE or --api-key-file
  the client secret   TRAVELRULE_CLIENT_SECRET (and TRAVELRULE_CLIENT_ID)
  the signing secret  TRAVELRULE_SIGNING_SECRET, TRAVELRULE_SIGNING_SECRET_FILE
                      or --signing-secret-file (or a Standard Webhooks secret:
                      TRAVELRULE_WEBHOOK_SECRET or TRAVELRULE_WEBHOOK_SECRET_FILE)`

// exposureError returns why the sandbox must not listen on addr with the
// credentials published marks as the published ones, or nil: on a
// loopback address only this machine reaches it; off loopback, each
// published credential must be replaced, and the error names what to set.
// An address net.Listen cannot read gets nil: listening fails on it.
func exposureError(addr string, published publishedCreds) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || isLoopbackHost(host) {
		return nil
	}
	var set []string
	if published.apiKey {
		set = append(set, "the API key (TRAVELRULE_API_KEY, TRAVELRULE_API_KEY_FILE or --api-key-file)")
	}
	if published.clientSecret {
		set = append(set, "the client secret (TRAVELRULE_CLIENT_SECRET, and TRAVELRULE_CLIENT_ID)")
	}
	if published.signingSecret {
		set = append(set, "the signing secret (TRAVELRULE_SIGNING_SECRET, TRAVELRULE_SIGNING_SECRET_FILE or --signing-secret-file; or a Standard Webhooks secret, TRAVELRULE_WEBHOOK_SECRET or TRAVELRULE_WEBHOOK_SECRET_FILE)")
	}
	if len(set) == 0 {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s, which is not a loopback address, with the sandbox's published credentials: "+
		"anyone who reaches it could log in, make it POST to any URL and read the answer's status back, or forge its callbacks. "+
		"Set values of your own for %s; or listen on 127.0.0.1, [::1] or localhost", addr, strings.Join(set, "; "))
}

// isLoopbackHost reports whether host, of an address to listen on, is a
// loopback one: localhost, or an IP address in 127.0.0.0/8 or ::1. No host
// (every interface) and any other name are not.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// stringList is a repeatable string flag.
type stringList []string

// String implements flag.Value.
func (l *stringList) String() string { return strings.Join(*l, ",") }

// Set implements flag.Value.
func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// sandboxFlags names, in an option's error, the flag that set it.
var sandboxFlags = strings.NewReplacer(
	"travelruletest: WithConsole: the path prefix", "--prefix: the path prefix",
	" is the console's", ` is the console's: choose another --prefix, or serve no console (--console=false)`,
	"travelruletest: WithConsole:", "--console-allow:",
	"travelruletest: WithInquiryURL:", "--inquiry-url:",
	"travelruletest: WithPathPrefix:", "--prefix:",
	"travelruletest: WithAddr:", "--addr:",
	"travelruletest: WithTokenLifetime:", "--token-lifetime:",
	"travelruletest: WithCallbackTimeScale:", "--callback-time-scale:",
)

// startSandbox starts the server (over TLS with useTLS), turning
// NewServer's panic on a bad option or a busy address into an error; a
// panic value that is an error stays one, for errors.Is.
func startSandbox(opts []travelruletest.Option, useTLS bool) (srv *travelruletest.Server, err error) {
	defer func() {
		switch v := recover().(type) {
		case nil:
		case error:
			err = v
		default:
			err = fmt.Errorf("%v", v)
		}
	}()
	if useTLS {
		return travelruletest.NewTLSServer(opts...), nil
	}
	return travelruletest.NewServer(opts...), nil
}

// parseFaults reads the --fault values.
func parseFaults(specs []string) ([]travelruletest.Fault, error) {
	faults := make([]travelruletest.Fault, len(specs))
	for i, spec := range specs {
		f, err := travelruletest.ParseFault(spec)
		if err != nil {
			return nil, errors.New("--fault: " + strings.TrimPrefix(strings.TrimPrefix(err.Error(), "travelruletest: ParseFault: "), "travelruletest: Fault: "))
		}
		faults[i] = f
	}
	return faults, nil
}

// parseConsoleAllow reads the --console-allow values: a CIDR prefix, or an
// IP address taken as a prefix of that one address. An IPv4-mapped IPv6
// address or prefix becomes the IPv4 one, as the console sees its
// clients' addresses.
func parseConsoleAllow(values []string) ([]netip.Prefix, error) {
	var from []netip.Prefix
	for _, v := range values {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			ip, err2 := netip.ParseAddr(v)
			if err2 != nil || ip.Zone() != "" {
				return nil, fmt.Errorf("--console-allow %q: want a CIDR prefix such as 10.0.0.0/8 or an IP address such as 192.168.1.5", v)
			}
			p = netip.PrefixFrom(ip, ip.BitLen())
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		from = append(from, p.Masked())
	}
	return from, nil
}

// consoleLine is the banner's line that gives the console's URL and who it
// answers: this machine, and the clients in from, who need no login.
func consoleLine(url string, from []netip.Prefix) string {
	if len(from) == 0 {
		return "console: " + url + " (open it in a browser; it answers this machine only)"
	}
	in := make([]string, len(from))
	for i, p := range from {
		in[i] = p.String()
	}
	return "console: " + url + " (open it in a browser; it answers this machine and " + strings.Join(in, ", ") +
		" (--console-allow), with no login: anyone there can see the transfers, reveal their personal data and approve them)"
}

// parseDecision reads the --decision value.
func parseDecision(v string) (travelruletest.Decision, error) {
	switch d := travelruletest.Decision(v); d {
	case travelruletest.DecisionApprove, travelruletest.DecisionReject, travelruletest.DecisionNone:
		return d, nil
	}
	return "", errors.New("--decision must be approve, reject or none")
}

// writeCertificate writes cert, PEM-encoded, to the file name, or to a new
// temporary file if name is "", and returns the file's path and a function
// that removes the temporary file (nothing for a file the user named).
// The certificate is public: the file is readable by all.
func writeCertificate(cert *x509.Certificate, name string) (string, func(), error) {
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	if name != "" {
		return name, func() {}, os.WriteFile(name, data, 0o644)
	}
	dir, err := os.MkdirTemp("", "travelrule-sandbox-")
	if err != nil {
		return "", nil, err
	}
	name = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return name, func() { _ = os.RemoveAll(dir) }, nil
}
