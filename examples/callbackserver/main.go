// Command callbackserver is an HTTP server that receives the Travel Rule
// service's callbacks about the transfers it initiates with
// callback.Handler, mounted in an ordinary mux next to the server's other
// routes. It accepts only callbacks signed with the service's signing
// secret (x-data-integrity) at capability URLs made with its key.
//
//	TRAVELRULE_SIGNING_SECRET=<from the service's dashboard> TRAVELRULE_CALLBACK_KEY=<at least 16 bytes> go run ./examples/callbackserver
//
// It serves until interrupted. With -demo it also starts the embedded
// sandbox, initiates one transfer whose callbacks it receives, and exits.
//
// Run on several replicas, it shares its record of processed deliveries
// through Redis or PostgreSQL, so that a callback delivered to two replicas
// is processed once:
//
//	TRAVELRULE_REDIS_URL=redis://localhost:6379/0 go run ./examples/callbackserver
//	TRAVELRULE_DATABASE_URL=postgres://localhost:5432/payments go run ./examples/callbackserver
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on (8081: beside travelrule sandbox on 8080)")
	demo := flag.Bool("demo", false, "initiate a transfer against the embedded sandbox, receive its callbacks and exit")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	key := []byte(os.Getenv("TRAVELRULE_CALLBACK_KEY"))
	secret := os.Getenv("TRAVELRULE_SIGNING_SECRET")
	if *demo {
		if len(key) == 0 {
			key = []byte(travelrule.NewCallbackRef())
		}
		secret = travelruletest.DefaultSigningSecret // the embedded sandbox signs with it
	}
	if err := start(ctx, *addr, key, secret, *demo, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "callbackserver:", err)
		os.Exit(1)
	}
}

// start runs the server with the de-duplication store the environment
// names.
func start(ctx context.Context, addr string, key []byte, secret string, demo bool, out io.Writer) error {
	store, where, closeStore, err := sharedStore(ctx, os.Getenv)
	if err != nil {
		return err
	}
	defer closeStore()
	fmt.Fprintf(out, "de-duplication: %s\n", where)
	return run(ctx, addr, key, secret, demo, store, out)
}

func run(ctx context.Context, addr string, key []byte, secret string, demo bool, store callback.Store, out io.Writer) error {
	verifier, err := callback.NewDataIntegrityVerifier(secret)
	if err != nil {
		return fmt.Errorf("TRAVELRULE_SIGNING_SECRET: %w", err)
	}
	resolved := make(chan travelrule.Decision, 1)
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		// Record the outcome against your own payment, found by cb.Ref.
		// Decision reads either message's decision, whatever its spelling.
		switch cb.Kind {
		case travelrule.KindInquiryResolution: // the beneficiary's VASP answered the inquiry
			fmt.Fprintf(out, "callback for payment %s: inquiry %s\n", cb.Ref, cb.Decision())
		case travelrule.KindTransferResolution: // the transfer is decided
			fmt.Fprintf(out, "callback for payment %s: transfer %s %s\n", cb.Ref, cb.TransferID, cb.Decision())
			if cb.Decision() != "" {
				select {
				case resolved <- cb.Decision():
				default:
				}
			}
		}
		return nil
	}, callback.WithVerifier(verifier), callback.WithCapabilityKey(key), callback.WithStore(store), callback.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err := h.Err(); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/travelrule/callback", h)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	fmt.Fprintf(out, "receiving callbacks on http://%s/travelrule/callback\n", ln.Addr())

	if !demo {
		<-ctx.Done()
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// The live retry schedule, with each minute a tenth of a second: a
	// delivery that fails is tried again within the demo's time.
	sandbox := travelruletest.NewServer(travelruletest.WithCallbackTimeScale(100 * time.Millisecond))
	defer sandbox.Close()
	client, err := travelrule.NewClient(sandbox.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		return err
	}
	cbURL, err := travelrule.NewCallbackURL("http://"+ln.Addr().String()+"/travelrule/callback", "payment-1001", key)
	if err != nil {
		return err
	}
	if _, err := client.InitiateTransfer(ctx, &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.1", Callback: cbURL,
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}); err != nil {
		return err
	}
	select {
	case decision := <-resolved:
		fmt.Fprintf(out, "payment payment-1001 resolved: %s\n", decision)
		return nil
	case <-ctx.Done():
		return errors.New("no TRANSFER_RESOLUTION before the end")
	}
}
