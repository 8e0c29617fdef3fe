package main

import (
	"context"
	"fmt"
	"time"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// sandbox runs the sandbox service on an address for clients in other
// processes and languages, and prints its base URL and a token.
func (c *cli) sandbox(ctx context.Context, args []string) int {
	fs := c.newFlagSet("sandbox", "[--addr HOST:PORT] [--prefix /api/v3] [--token-lifetime 24h]")
	addr := fs.String("addr", defaultSandboxAddr, "the address to listen on")
	prefix := fs.String("prefix", "", `a path prefix for the operations, such as "/api/v3"`)
	lifetime := fs.Duration("token-lifetime", 24*time.Hour, "the lifetime of the tokens the sandbox issues")
	secret := fs.String("callback-secret", "", "sign callbacks with this Standard Webhooks secret (default: env TRAVELRULE_WEBHOOK_SECRET)")
	noID := fs.Bool("documented-answer", false, `answer initiations with the documented {"status":"succes"} alone, without transferId`)
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	if *secret == "" {
		*secret = c.getenv("TRAVELRULE_WEBHOOK_SECRET") // after parsing: a flag default would print it in --help
	}
	opts := []travelruletest.Option{travelruletest.WithAddr(*addr), travelruletest.WithTokenLifetime(*lifetime)}
	if *prefix != "" {
		opts = append(opts, travelruletest.WithPathPrefix(*prefix))
	}
	if *secret != "" {
		v, err := callback.NewWebhookVerifier(*secret) // decodes "whsec_<base64>"; takes a raw secret as it is
		if err != nil {
			return c.usageError(fs, "%v", err)
		}
		opts = append(opts, travelruletest.WithCallbackSecret(v.Secrets[0]))
	}
	if *noID {
		opts = append(opts, travelruletest.WithTransferIDInAnswer(false))
	}
	srv, err := startSandbox(opts)
	if err != nil {
		fmt.Fprintln(c.stderr, listenFailure("sandbox", *addr, err))
		return exitFailed
	}
	defer srv.Close()
	tok, err := srv.TokenSource().Token()
	if err != nil {
		fmt.Fprintf(c.stderr, "sandbox: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "TRAVELRULE_BASE_URL=%s\nTRAVELRULE_TOKEN=%s\nTRAVELRULE_TOKEN_URL=%s\nTRAVELRULE_CLIENT_ID=%s\nTRAVELRULE_CLIENT_SECRET=%s\n",
		srv.URL, tok.AccessToken, srv.TokenURL(), travelruletest.DefaultClientID, travelruletest.DefaultClientSecret)
	fmt.Fprintf(c.stderr, "sandbox listening on %s (token valid for %s); stop with Ctrl-C\n", srv.URL, *lifetime)
	<-ctx.Done()
	fmt.Fprintln(c.stderr, "stopped")
	return exitOK
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
