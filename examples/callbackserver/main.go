// Command callbackserver is an HTTP server that receives the Travel Rule
// service's callbacks about the transfers it initiates with
// callback.Handler, mounted in an ordinary mux next to the server's other
// routes. It accepts only callbacks signed with the service's signing
// secret (x-data-integrity) at capability URLs made with its key, and acts
// on the first decision of each payment that arrives, whichever message
// carries it, once.
//
//	TRAVELRULE_SIGNING_SECRET=<from the service's dashboard> TRAVELRULE_CALLBACK_KEY=<at least 16 bytes> go run ./examples/callbackserver
//
// It serves until interrupted. With -demo it also starts the embedded
// sandbox, initiates one transfer whose callbacks it receives, and exits.
//
// Run on several replicas, it shares its record of processed deliveries
// through Redis or PostgreSQL, so that a callback delivered to two replicas
// is processed once (its record of each payment's decision, in memory,
// stands for your database, which the replicas share too):
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
	"sync"
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
	resolved := make(chan travelrule.Decision, 1)
	h, err := newHandler(key, secret, store, out, resolved)
	if err != nil {
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
		return errors.New("no decision before the end")
	}
}

// newHandler is the handler of the callback URLs: it acts on the first
// decision of each payment that arrives, whichever message carries it (an
// approval comes as an INQUIRY_RESOLUTION and a TRANSFER_RESOLUTION, in
// any order; for a rejection the live docs promise the INQUIRY_RESOLUTION
// alone), and once; it sends each decision it acted on to resolved when
// resolved has room.
func newHandler(key []byte, secret string, store callback.Store, out io.Writer, resolved chan<- travelrule.Decision) (*callback.Handler, error) {
	verifier, err := callback.NewDataIntegrityVerifier(secret)
	if err != nil {
		return nil, fmt.Errorf("TRAVELRULE_SIGNING_SECRET: %w", err)
	}
	book := &payments{decided: map[string]travelrule.Decision{}}
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		// cb.Ref is the payment's id, from its capability URL.
		decision := cb.Decision() // either message's decision, whatever its spelling
		fmt.Fprintf(out, "callback for payment %s: %s, decision %q\n", cb.Ref, cb.Kind, decision)
		if decision == "" {
			return nil
		}
		if !book.decide(cb.Ref, decision) {
			fmt.Fprintf(out, "payment %s: decided already, nothing to do\n", cb.Ref)
			return nil
		}
		// Act here: queue the broadcast of an approved payment, cancel a
		// rejected one.
		fmt.Fprintf(out, "payment %s %s: %s\n", cb.Ref, decision, map[travelrule.Decision]string{travelrule.Approved: "broadcast queued", travelrule.Rejected: "cancelled"}[decision])
		select {
		case resolved <- decision:
		default:
		}
		return nil
	}, callback.WithVerifier(verifier), callback.WithCapabilityKey(key), callback.WithStore(store), callback.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	return h, h.Err()
}

// payments stands for the originator's records of its payments: the first
// decision of each, recorded once. In production it is one transaction of
// your database, which every replica shares: UPDATE payments SET decision
// = $2 WHERE id = $1 AND decision IS NULL, and the broadcast or the
// cancellation queued with it, so that a failure records neither.
type payments struct {
	mu      sync.Mutex
	decided map[string]travelrule.Decision
}

// decide records d as the decision of the payment id unless it has one,
// and reports whether it did.
func (p *payments) decide(id string, d travelrule.Decision) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.decided[id]; ok {
		return false
	}
	p.decided[id] = d
	return true
}
