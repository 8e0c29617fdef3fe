package main

import (
	"context"
	"encoding/json"
	"errors"
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
	fs := c.newFlagSet("listen", "[--addr HOST:PORT] [--path /callback] [--signing-secret-file FILE] [--show-pii]\n\n"+
		"Secrets come from the environment, each VAR or VAR_FILE (a file that holds it), never from a flag:\n"+
		"TRAVELRULE_SIGNING_SECRET (x-data-integrity), TRAVELRULE_WEBHOOK_SECRET (Standard Webhooks),\n"+
		"TRAVELRULE_CALLBACK_KEY (capability callback URLs).")
	addr := fs.String("addr", defaultListenAddr, "the address to listen on, HOST:PORT: 127.0.0.1:PORT for this machine only, 0.0.0.0:PORT for every interface")
	path := fs.String("path", "/", "the path to serve callbacks on; one ending in / serves every path under it, such as /transfers/inquiry/ for the inquiries of a beneficiary's travel addresses")
	showPII := fs.Bool("show-pii", false, "print personal data and the raw body instead of redacting them")
	// Secrets default to "" and are read from the environment after
	// parsing: a flag's default would print them in --help and usage errors.
	sigFile := fs.String("signing-secret-file", "", "verify the live service's x-data-integrity signatures with the signing secret in this file, one trailing newline removed (default: env TRAVELRULE_SIGNING_SECRET_FILE, or the secret itself in env TRAVELRULE_SIGNING_SECRET; never a flag)")
	refuseSecretFlag(fs, "secret", "TRAVELRULE_WEBHOOK_SECRET")
	refuseSecretFlag(fs, "capability-key", "TRAVELRULE_CALLBACK_KEY")
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	if err := checkListenAddr(*addr, defaultListenAddr); err != nil {
		return c.usageError(fs, "%v", err)
	}
	if !strings.HasPrefix(*path, "/") {
		return c.usageError(fs, "--path must start with /")
	}
	opts, verified, err := c.verification(*sigFile)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	open := len(opts) == 0 // a debugging tool: it warns below
	if open {
		opts = append(opts, callback.WithoutAuthentication())
	}
	h := c.callbackHandler(*showPII, opts)
	if err := h.Err(); err != nil {
		fmt.Fprintf(c.stderr, "listen: %v\n", err)
		return exitUsage
	}
	mux, err := serveMux(*path, h)
	if err != nil {
		return c.usageError(fs, "--path: %v", err)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(c.stderr, listenFailure("listen", *addr, err))
		return exitFailed
	}
	if open {
		fmt.Fprintln(c.stderr, "warning: verifying nothing: anyone who can reach this address can post callbacks; set TRAVELRULE_SIGNING_SECRET (the live service's x-data-integrity), TRAVELRULE_WEBHOOK_SECRET or TRAVELRULE_CALLBACK_KEY (or their _FILE forms)")
	} else {
		fmt.Fprintf(c.stderr, "verifying %s\n", strings.Join(verified, " and "))
	}
	fmt.Fprintf(c.stderr, "listening for callbacks on http://%s%s\n", ln.Addr(), *path)
	limits := defaultListenTimeouts
	if c.listenTimeouts != nil {
		limits = *c.listenTimeouts
	}
	if c.listenConns != nil {
		ln = acceptHook{ln, c.listenConns}
	}
	return serveUntilDone(ctx, listenServer(mux, limits), ln, c)
}

// acceptHook is a listener that calls hook with each connection it accepts.
type acceptHook struct {
	net.Listener
	hook func(net.Conn)
}

func (l acceptHook) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err == nil {
		l.hook(conn)
	}
	return conn, err
}

// serverTimeouts are the time-outs of a server that anyone may reach.
type serverTimeouts struct {
	header time.Duration // to read a request's headers
	read   time.Duration // to read a whole request, body included
	write  time.Duration // from the end of the headers to the end of the answer
	idle   time.Duration // a kept-alive connection waiting for the next request
}

// defaultListenTimeouts are listen's: a callback is a few kilobytes that a
// server sends at once, so a sender that trickles its headers or its body,
// does not read its answer, or holds an idle connection, loses it within
// seconds, and many such senders hold nothing for long. write outlasts
// read, so that a body that came just in time still gets its answer.
var defaultListenTimeouts = serverTimeouts{header: 5 * time.Second, read: 10 * time.Second, write: 15 * time.Second, idle: 30 * time.Second}

// listenServer is the server of listen: h behind the time-outs t and a
// 64 KiB bound on headers (the handler bounds the body's size).
func listenServer(h http.Handler, t serverTimeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.header, ReadTimeout: t.read, WriteTimeout: t.write,
		IdleTimeout: t.idle, MaxHeaderBytes: 64 << 10}
}

// verification returns the handler's options that verify callbacks, from
// --signing-secret-file (sigFile) and the environment (none when nothing
// is set), and what they verify, in words that name where each secret came
// from. A signing secret (the live service's x-data-integrity) and a
// Standard Webhooks secret are not both taken: a callback carries one
// signature, and the handler asks every verifier.
func (c *cli) verification(sigFile string) ([]callback.Option, []string, error) {
	signing, sigSource, err := c.signingSecretFrom(sigFile)
	if err != nil {
		return nil, nil, err
	}
	secret, secretSource, err := c.secret("TRAVELRULE_WEBHOOK_SECRET", "Standard Webhooks secret")
	if err != nil {
		return nil, nil, err
	}
	capKey, capSource, err := c.secret("TRAVELRULE_CALLBACK_KEY", "capability key")
	if err != nil {
		return nil, nil, err
	}
	if capKey != "" && len(capKey) < 16 {
		// Said here, with its source, before the handler would refuse it
		// in words of its own.
		return nil, nil, fmt.Errorf("%s: the capability key is shorter than 16 bytes", capSource)
	}
	if signing != "" && secret != "" {
		return nil, nil, errors.New("both a signing secret (x-data-integrity) and a Standard Webhooks secret are set: a callback carries one signature; set one")
	}
	var opts []callback.Option
	var verified []string
	if signing != "" {
		v, err := callback.NewDataIntegrityVerifier(signing)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, callback.WithVerifier(v))
		verified = append(verified, "x-data-integrity signatures (secret from "+sigSource+")")
	}
	if secret != "" {
		v, err := callback.NewWebhookVerifier(secret) // "whsec_<base64>" or raw
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, callback.WithVerifier(v))
		verified = append(verified, "Standard Webhooks signatures (secret from "+secretSource+")")
	}
	if capKey != "" {
		opts = append(opts, callback.WithCapabilityKey([]byte(capKey)))
		verified = append(verified, "capability callback URLs (key from "+capSource+")")
	}
	return opts, verified, nil
}

// signingSecret returns the live service's signing secret, or "" when none
// is set: from the file --signing-secret-file names (file), else from the
// environment (TRAVELRULE_SIGNING_SECRET or the file
// TRAVELRULE_SIGNING_SECRET_FILE names; setting both is an error). A secret
// shorter than 16 bytes is an error. The secret is never a flag, and no
// error quotes it.
func (c *cli) signingSecret(file string) (string, error) {
	secret, _, err := c.signingSecretFrom(file)
	return secret, err
}

// signingSecretFrom is signingSecret, with where the secret came from.
func (c *cli) signingSecretFrom(file string) (secret, source string, err error) {
	const what = "signing secret"
	if file != "" {
		secret, source, err = c.secretFile(file, "--signing-secret-file", what)
	} else {
		secret, source, err = c.secret("TRAVELRULE_SIGNING_SECRET", what)
	}
	if err == nil && secret != "" && len(secret) < 16 {
		return "", "", fmt.Errorf("%s: the signing secret is shorter than 16 bytes", source)
	}
	return secret, source, err
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
		// Connections still open after the grace period are cut, so that
		// the process stops what it serves.
		_ = srv.Close()
		fmt.Fprintf(c.stderr, "shutdown: %v; remaining connections closed\n", err)
		return exitFailed
	}
	fmt.Fprintln(c.stderr, "stopped")
	return exitOK
}

// serveMux returns a mux that serves h at path, or why path is not a
// pattern http.ServeMux takes (it panics on those).
func serveMux(path string, h http.Handler) (mux *http.ServeMux, err error) {
	defer func() {
		if v := recover(); v != nil {
			mux, err = nil, fmt.Errorf("not a path pattern http.ServeMux accepts: %v", v)
		}
	}()
	mux = http.NewServeMux()
	mux.Handle(path, h)
	return mux, nil
}

// callbackLine is the JSON line printed for a callback: personal data and
// the raw body only with --show-pii. Without it, the identifiers, status,
// asset and amount are those of the callback's log/slog form, which shows
// a value of the sender's only when it has an identifier's (or a
// ticker's, an amount's) shape and holds none of an inquiry's personal
// values.
func callbackLine(cb *travelrule.Callback, showPII bool) map[string]any {
	line := map[string]any{"kind": cb.Kind, "transferId": cb.TransferID, "status": cb.Status}
	if d := cb.Decision(); d != "" {
		line["decision"] = d // an INQUIRY_RESOLUTION's or a TRANSFER_RESOLUTION's, read one way
	}
	shown := map[string]string{}
	if !showPII {
		shown = redactedForms(cb)
		line["transferId"], line["status"] = shown["transferId"], shown["status"]
	}
	put := func(k, v string, pii bool) {
		switch {
		case v == "":
		case pii && !showPII:
			line[k] = "[redacted]"
		default:
			line[k] = v
		}
	}
	if showPII {
		put("txId", cb.TxID, false)
	} else {
		put("txId", shown["txId"], false)
	}
	put("ref", cb.Ref, false)
	put("address", cb.Address, true)
	put("approvedCallback", cb.ApprovedCallback, true)
	put("reason", cb.Reason, true)
	put("statusComment", cb.StatusComment, true)
	if !cb.Timestamp.IsZero() {
		line["timestamp"] = cb.Timestamp.Format(time.RFC3339)
	}
	if cb.Inquiry != nil {
		line["asset"], line["amount"] = cb.Inquiry.Asset, cb.Inquiry.Amount
		if !showPII {
			line["asset"], line["amount"] = shown["inquiry.asset"], shown["inquiry.amount"]
		}
		if showPII {
			line["inquiry"] = cb.Inquiry
		} else {
			line["inquiry"] = "[redacted]"
		}
	}
	if cb.IVMS101 != nil {
		if showPII {
			line["ivms101"] = cb.IVMS101
		} else {
			line["ivms101"] = "[redacted]"
		}
	}
	if showPII {
		line["raw"] = cb.Raw
	}
	return line
}

// redactedForms returns the string values of the callback's log/slog
// form, by key ("inquiry.asset" for a member of a group).
func redactedForms(cb *travelrule.Callback) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, attrs []slog.Attr)
	walk = func(prefix string, attrs []slog.Attr) {
		for _, a := range attrs {
			v := a.Value.Resolve()
			switch v.Kind() {
			case slog.KindGroup:
				walk(prefix+a.Key+".", v.Group())
			case slog.KindString:
				out[prefix+a.Key] = v.String()
			}
		}
	}
	walk("", cb.LogValue().Group())
	return out
}
