package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// listen runs the callback handler on its own and prints each callback as a
// JSON line on stdout; refusals and failures are logged on stderr.
func (c *cli) listen(ctx context.Context, args []string) int {
	fs := c.newFlagSet("listen", "[--addr HOST:PORT] [--path /callback] [--show-pii]")
	addr := fs.String("addr", defaultListenAddr, "the address to listen on")
	path := fs.String("path", "/", "the path to serve callbacks on")
	showPII := fs.Bool("show-pii", false, "print personal data and the raw body instead of redacting them")
	// Secrets default to "" and are read from the environment after
	// parsing: a flag's default would print them in --help and usage errors.
	secret := fs.String("secret", "", "verify Standard Webhooks HMAC signatures with this secret (default: env TRAVELRULE_WEBHOOK_SECRET, preferred: flags show in process lists)")
	capKey := fs.String("capability-key", "", "accept only capability callback URLs made with this key (default: env TRAVELRULE_CALLBACK_KEY)")
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	if !strings.HasPrefix(*path, "/") {
		return c.usageError(fs, "--path must start with /")
	}
	opts, err := c.verification(*secret, *capKey)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	h := c.callbackHandler(*showPII, opts)
	if err := h.Err(); err != nil {
		fmt.Fprintf(c.stderr, "listen: %v\n", err)
		return exitUsage
	}
	mux := http.NewServeMux()
	mux.Handle(*path, h)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(c.stderr, listenFailure("listen", *addr, err))
		return exitFailed
	}
	if len(opts) == 0 {
		fmt.Fprintln(c.stderr, "warning: verifying nothing: anyone who can reach this address can post callbacks; set TRAVELRULE_WEBHOOK_SECRET or --capability-key")
	}
	fmt.Fprintf(c.stderr, "listening for callbacks on http://%s%s\n", ln.Addr(), *path)
	return serveUntilDone(ctx, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln, c)
}

// verification returns the handler's options that verify callbacks, from
// the flags or else the environment; none when neither is set.
func (c *cli) verification(secret, capKey string) ([]callback.Option, error) {
	if secret == "" {
		secret = c.getenv("TRAVELRULE_WEBHOOK_SECRET")
	}
	if capKey == "" {
		capKey = c.getenv("TRAVELRULE_CALLBACK_KEY")
	}
	var opts []callback.Option
	if secret != "" {
		v, err := callback.NewWebhookVerifier(secret) // "whsec_<base64>" or raw
		if err != nil {
			return nil, err
		}
		opts = append(opts, callback.WithVerifier(v))
	}
	if capKey != "" {
		opts = append(opts, callback.WithCapabilityKey([]byte(capKey)))
	}
	return opts, nil
}

// callbackHandler is the handler that prints each callback as a JSON line
// on stdout, and logs on stderr each refusal with its reason (the
// handler's own log lines, which never carry bodies, secrets, signatures
// or personal data) and each failure.
func (c *cli) callbackHandler(showPII bool, opts []callback.Option) *callback.Handler {
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var mu sync.Mutex
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	return callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(callbackLine(cb, showPII))
	}, append(opts, callback.WithLogger(logger))...)
}

// serveUntilDone serves until ctx ends (SIGINT or SIGTERM), then shuts the
// server down, letting requests in flight finish.
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener, c *cli) int {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(c.stderr, "serve: %v\n", err)
		return exitFailed
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(c.stderr, "shutdown: %v\n", err)
		return exitFailed
	}
	fmt.Fprintln(c.stderr, "stopped")
	return exitOK
}

// callbackLine is the JSON line printed for a callback: personal data and
// the raw body only with --show-pii.
func callbackLine(cb *travelrule.Callback, showPII bool) map[string]any {
	line := map[string]any{"kind": cb.Kind, "transferId": cb.TransferID, "status": cb.Status}
	put := func(k, v string, pii bool) {
		switch {
		case v == "":
		case pii && !showPII:
			line[k] = "[redacted]"
		default:
			line[k] = v
		}
	}
	put("txId", cb.TxID, false)
	put("ref", cb.Ref, false)
	put("address", cb.Address, true)
	put("approvedCallback", cb.ApprovedCallback, true)
	put("reason", cb.Reason, true)
	if !cb.Timestamp.IsZero() {
		line["timestamp"] = cb.Timestamp.Format(time.RFC3339)
	}
	if cb.Inquiry != nil {
		line["asset"], line["amount"] = cb.Inquiry.Asset, cb.Inquiry.Amount
		if showPII {
			line["inquiry"] = cb.Inquiry
		} else {
			line["inquiry"] = "[redacted]"
		}
	}
	if showPII {
		line["raw"] = cb.Raw
	}
	return line
}
