package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// sandboxAnswers says how to get each answer of the sandbox (API keys,
// travel addresses, discovery) and where its control plane is; the banner
// and --help print it.
var sandboxAnswers = `API keys (POST {base}/auth/token with x-api-key: <key>, no body):
  - ` + travelruletest.DefaultAPIKey + ` gets a bearer token (an EdDSA JWT; expired: 403 FORBIDDEN)
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
  - an initiation answers {"status":true,"data":{"transferId":"<id>"}}
    (--excerpt-answers: the excerpt's {"status":"succes","transferId":"<id>"})
  - POST {base}/transfers/txId?q=<id> {"txId":"0x..."} records the transfer's hash
VASP search (no token needed):
  GET  {base}/discovery/vasp            body {"domain":"example.com"}
Control plane (bearer token as for the operations):
  POST {base}/sandbox/inquiries       {"callback":"<url>", ...} starts an inbound inquiry: 201 {"transferId"}
  GET  {base}/sandbox/transfers/{id}  a transfer's state and the callbacks delivered for it
`

// sandbox runs the sandbox service on an address for clients in other
// processes and languages. It prints, on stdout, the environment a client
// needs (the sandbox's demo API key among it) and a curl transcript of the
// five stages of the service's guide (together a shell script), and on
// stderr how to get each answer.
func (c *cli) sandbox(ctx context.Context, args []string) int {
	fs := c.newFlagSet("sandbox", "[--addr HOST:PORT] [--prefix /api/v3] [--token-lifetime 24h] [flags]")
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(fs.Output(), "\n"+sandboxAnswers) }
	addr := fs.String("addr", defaultSandboxAddr, "the address to listen on")
	lifetime := fs.Duration("token-lifetime", 24*time.Hour, "the lifetime of the tokens the sandbox issues")
	cbURL := fs.String("callback-url", "http://"+defaultListenAddr+"/", "the callback URL of the printed curl transcript (travelrule listen's default)")
	opts := c.sandboxOptions(fs)
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	o, err := opts()
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	// The transcript's transfer must pass the sandbox's own checks.
	if travelruletest.CheckTransfer([]byte(sampleTransfer(*cbURL))) != nil {
		return c.usageError(fs, "--callback-url must be an absolute http or https URL of at most 255 characters, without spaces")
	}
	srv, err := startSandbox(append(o, travelruletest.WithAddr(*addr), travelruletest.WithTokenLifetime(*lifetime)))
	if err != nil {
		fmt.Fprintln(c.stderr, listenFailure("sandbox", *addr, err))
		return exitFailed
	}
	defer srv.Close()
	if err := c.sandboxBanner(srv, *lifetime, *cbURL); err != nil {
		fmt.Fprintf(c.stderr, "sandbox: %v\n", err)
		return exitFailed
	}
	<-ctx.Done()
	fmt.Fprintln(c.stderr, "stopped")
	return exitOK
}

// sandboxOptions adds the flags that become server options to fs; after
// parsing, the function it returns makes the options.
func (c *cli) sandboxOptions(fs *flag.FlagSet) func() ([]travelruletest.Option, error) {
	prefix := fs.String("prefix", "", `a path prefix for the service, such as "/api/v3"`)
	secret := fs.String("callback-secret", "", "sign callbacks with this Standard Webhooks secret (default: env TRAVELRULE_WEBHOOK_SECRET)")
	excerpt := fs.Bool("excerpt-answers", false, `answer initiations as the interface description's excerpt does, {"status":"succes","transferId":"<id>"}, not {"status":true,"data":{...}}`)
	noID := fs.Bool("documented-answer", false, `answer initiations with the excerpt's documented {"status":"succes"} alone, without transferId`)
	required := fs.Bool("travel-address-required", false, "refuse an initiation with neither a travelAddress nor an email (400 VALIDATION_ERROR), as the live guide lists travelAddress as required")
	var known, unknown stringList
	fs.Var(&known, "travel-address", "a travelAddress that resolves, even one under .invalid (repeatable)")
	fs.Var(&unknown, "unknown-travel-address", "a travelAddress that resolves to no VASP: 404 (repeatable)")
	return func() ([]travelruletest.Option, error) {
		o := []travelruletest.Option{travelruletest.WithTravelAddresses(known...), travelruletest.WithUnknownTravelAddresses(unknown...)}
		if *prefix != "" {
			o = append(o, travelruletest.WithPathPrefix(*prefix))
		}
		if *secret == "" {
			*secret = c.getenv("TRAVELRULE_WEBHOOK_SECRET") // after parsing: a flag default would print it in --help
		}
		if *secret != "" {
			v, err := callback.NewWebhookVerifier(*secret) // decodes "whsec_<base64>"; takes a raw secret as it is
			if err != nil {
				return nil, err
			}
			o = append(o, travelruletest.WithCallbackSecret(v.Secrets[0]))
		}
		if *excerpt || *noID {
			o = append(o, travelruletest.WithExcerptAnswers())
		}
		if *noID {
			o = append(o, travelruletest.WithTransferIDInAnswer(false))
		}
		if *required {
			o = append(o, travelruletest.WithTravelAddressRequired())
		}
		return o, nil
	}
}

// sandboxBanner prints the environment and the curl transcript on stdout
// and how to get each answer on stderr. The API key is the sandbox's demo
// key, not a secret.
func (c *cli) sandboxBanner(srv *travelruletest.Server, lifetime time.Duration, cbURL string) error {
	tok, err := srv.TokenSource().Token()
	if err != nil {
		return err
	}
	// Stdout is a shell script: every value is one shell word.
	fmt.Fprintf(c.stdout, "TRAVELRULE_BASE_URL=%s\nTRAVELRULE_API_KEY=%s\nTRAVELRULE_TOKEN=%s\nTRAVELRULE_TOKEN_URL=%s\nTRAVELRULE_CLIENT_ID=%s\nTRAVELRULE_CLIENT_SECRET=%s\n",
		shellWord(srv.URL), shellWord(travelruletest.DefaultAPIKey), shellWord(tok.AccessToken), shellWord(srv.TokenURL()),
		shellWord(travelruletest.DefaultClientID), shellWord(travelruletest.DefaultClientSecret))
	fmt.Fprint(c.stdout, transcript(flow{baseURL: srv.URL, apiKey: travelruletest.DefaultAPIKey, callbackURL: cbURL}))
	fmt.Fprintf(c.stderr, "sandbox listening on %s (API key %s; tokens valid for %s); stop with Ctrl-C\n%s",
		srv.URL, travelruletest.DefaultAPIKey, lifetime, strings.ReplaceAll(sandboxAnswers, "{base}", srv.URL))
	return nil
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

// startSandbox starts the server, turning NewServer's panic on a bad option
// or a busy address into an error; a panic value that is an error stays
// one, for errors.Is.
func startSandbox(opts []travelruletest.Option) (srv *travelruletest.Server, err error) {
	defer func() {
		switch v := recover().(type) {
		case nil:
		case error:
			err = v
		default:
			err = fmt.Errorf("%v", v)
		}
	}()
	return travelruletest.NewServer(opts...), nil
}
