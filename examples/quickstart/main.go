// Command quickstart runs a whole Travel Rule exchange: it initiates a
// transfer, receives its status callbacks on a callback.Handler, and answers
// an inbound inquiry with ResolveInquiry.
//
// With no environment it starts the sandbox (travelruletest) in-process and
// needs nothing but Go:
//
//	go run ./examples/quickstart
//
// With TRAVELRULE_BASE_URL it runs the same flow against that service,
// authenticated with TRAVELRULE_TOKEN or with client credentials
// (TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID, TRAVELRULE_CLIENT_SECRET,
// TRAVELRULE_SCOPES). The service must reach the callback listener: set
// TRAVELRULE_CALLBACK_URL to the public URL that forwards to
// TRAVELRULE_LISTEN_ADDR (default 127.0.0.1:8081, so that it runs beside
// "travelrule sandbox" on 127.0.0.1:8080), path /travelrule/callback.
// Inbound inquiries come from counterparties, so against a real service the
// quickstart waits for one only if TRAVELRULE_WAIT_INQUIRY=1.
//
// Personal data is never printed: parties are shown through their redacted
// fmt form.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

const (
	callbackPath = "/travelrule/callback"
	// defaultListenAddr is where the callback listener listens against a
	// real service: not 127.0.0.1:8080, where "travelrule sandbox" does.
	defaultListenAddr = "127.0.0.1:8081"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run is the whole quickstart; getenv and out make it testable.
func run(ctx context.Context, getenv func(string) string, out io.Writer) error {
	start := time.Now()
	s := &session{out: out, key: make([]byte, 32), events: make(chan *travelrule.Callback, 16)}
	if _, err := rand.Read(s.key); err != nil {
		return err
	}

	// 1. The service: the embedded sandbox, or the one the environment names.
	if getenv("TRAVELRULE_BASE_URL") == "" {
		s.sandbox = travelruletest.NewServer(travelruletest.WithPathPrefix("/api/v3"))
		defer s.sandbox.Close()
	}
	if err := s.connect(getenv); err != nil {
		return err
	}

	// 2. The callback listener: callback.Handler in an ordinary mux.
	srv, err := s.listen(getenv)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }()

	// 3. Initiate a transfer, with a callback URL that names it.
	ref, err := s.initiate(ctx)
	if err != nil {
		return err
	}

	// 4. Its status callbacks, matched to it by the capability reference.
	if err := s.awaitStatusCallbacks(ctx, ref); err != nil {
		return err
	}

	// 5. An inbound inquiry from a counterparty, answered with ResolveInquiry.
	inquiryRef, inquiryURL, err := s.newCallbackURL()
	if err != nil {
		return err
	}
	if s.sandbox == nil && getenv("TRAVELRULE_WAIT_INQUIRY") != "1" {
		fmt.Fprintf(out, "\nDone in %s (set TRAVELRULE_WAIT_INQUIRY=1 to wait for an inbound inquiry).\n", time.Since(start).Round(time.Millisecond))
		return nil
	}
	if err := s.answerInquiry(ctx, inquiryRef, inquiryURL); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nDone in %s.\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// session is what the steps of the quickstart share.
type session struct {
	out          io.Writer
	key          []byte // the capability key: yours alone, never sent anywhere
	events       chan *travelrule.Callback
	sandbox      *travelruletest.Server // nil against a real service
	client       *travelrule.Client
	callbackBase string // where the service sends callbacks
}

// connect makes the client for the sandbox, or for the service that
// TRAVELRULE_BASE_URL names.
func (s *session) connect(getenv func(string) string) error {
	var baseURL string
	var tokens oauth2.TokenSource
	if s.sandbox != nil {
		baseURL, tokens = s.sandbox.URL, s.sandbox.TokenSource()
		fmt.Fprintf(s.out, "Travel Rule quickstart (travelrule-go %s) against the embedded sandbox at %s\n", travelrule.Version, baseURL)
	} else {
		var err error
		if tokens, err = tokenSourceFromEnv(getenv); err != nil {
			return err
		}
		baseURL = getenv("TRAVELRULE_BASE_URL")
		fmt.Fprintf(s.out, "Travel Rule quickstart (travelrule-go %s) against %s\n", travelrule.Version, baseURL)
	}
	client, err := travelrule.NewClient(baseURL, travelrule.WithTokenSource(tokens), travelrule.WithUserAgent("quickstart"))
	if err != nil {
		return err
	}
	s.client = client
	return nil
}

// listen serves callback.Handler and a health check, and sets the callback
// base URL: the listener itself for the sandbox, TRAVELRULE_CALLBACK_URL for
// a real service.
func (s *session) listen(getenv func(string) string) (*http.Server, error) {
	handler := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		select {
		case s.events <- cb:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, callback.WithCapabilityKey(s.key))
	if err := handler.Err(); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(callbackPath, handler)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	listenAddr := "127.0.0.1:0"
	if s.sandbox == nil {
		listenAddr = envOr(getenv, "TRAVELRULE_LISTEN_ADDR", defaultListenAddr)
	}
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	local := "http://" + ln.Addr().String() + callbackPath
	s.callbackBase = local
	if s.sandbox == nil {
		s.callbackBase = getenv("TRAVELRULE_CALLBACK_URL")
		if s.callbackBase == "" {
			_ = srv.Close()
			return nil, errors.New("set TRAVELRULE_CALLBACK_URL to the public URL of the callback listener, which serves " + callbackPath + " on " + ln.Addr().String())
		}
	}
	fmt.Fprintf(s.out, "Callbacks are received on %s (one capability URL per transfer)\n\n", local)
	return srv, nil
}

// newCallbackURL is a fresh reference and the capability URL that names it.
func (s *session) newCallbackURL() (ref, url string, err error) {
	ref = "qs-" + travelrule.NewCallbackRef()[:12]
	url, err = travelrule.NewCallbackURL(s.callbackBase, ref, s.key)
	return ref, url, err
}

// initiate sends the example transfer and returns its callback reference.
func (s *session) initiate(ctx context.Context) (string, error) {
	ref, cbURL, err := s.newCallbackURL()
	if err != nil {
		return "", err
	}
	req := exampleTransfer(cbURL)
	fmt.Fprintf(s.out, "→ InitiateTransfer %s %s, ref %s\n  from %s\n  to   %s\n", req.Amount, req.Asset, ref, describe(req.Originator), describe(req.Beneficiary))
	res, err := s.client.InitiateTransfer(ctx, req)
	var unknown *travelrule.OutcomeUnknownError
	switch {
	case errors.As(err, &unknown):
		return "", fmt.Errorf("the service may have stored the transfer (ref %s, txId %s): reconcile before sending again: %w", unknown.CallbackRef, unknown.TxID, err)
	case err != nil:
		return "", err
	}
	fmt.Fprintf(s.out, "← status %q%s, transferId %q, %d attempt(s)\n\n", res.Status, sic(res.Status), res.TransferID, res.Attempts)
	return ref, nil
}

// sic marks the interface description's misspelt success status, so that a
// reader does not take it for a typo of the quickstart's.
func sic(status string) string {
	if status == "succes" {
		return " (sic: the documented spelling)"
	}
	return ""
}

// awaitStatusCallbacks prints the status callbacks of the transfer ref
// names, up to the final one.
func (s *session) awaitStatusCallbacks(ctx context.Context, ref string) error {
	fmt.Fprintln(s.out, "Status callbacks:")
	for done := false; !done; {
		cb, err := next(ctx, s.events)
		if err != nil {
			return fmt.Errorf("waiting for status callbacks: %w", err)
		}
		if cb.Ref != ref {
			continue
		}
		fmt.Fprintf(s.out, "← %-9s transferId %s\n", cb.Status, cb.TransferID)
		done = cb.Status == "completed" || cb.Status == "rejected"
	}
	return nil
}

// answerInquiry waits for an inbound inquiry and approves it; the sandbox
// first plays the counterparty that sends it, and then reports the
// resolution on inquiryURL.
func (s *session) answerInquiry(ctx context.Context, inquiryRef, inquiryURL string) error {
	if s.sandbox != nil {
		inbound := exampleTransfer(inquiryURL)
		inbound.Asset, inbound.Amount, inbound.TxID = "BTC", "0.042", ""
		inbound.Originator, inbound.Beneficiary = inbound.Beneficiary, inbound.Originator
		go func() { _, _ = s.sandbox.StartInquiry(ctx, inquiryURL, inbound) }()
	}
	fmt.Fprintln(s.out, "\nInbound inquiry:")
	inquiry, err := s.awaitInquiry(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "← inquiry   transferId %s: %s %s\n  from %s\n  to   %s\n",
		inquiry.TransferID, inquiry.Inquiry.Amount, inquiry.Inquiry.Asset, describe(inquiry.Inquiry.Originator), describe(inquiry.Inquiry.Beneficiary))
	resolution, err := s.client.ResolveInquiry(ctx, inquiry.TransferID, &travelrule.InquiryResolution{Approved: "true", Callback: inquiryURL})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "→ ResolveInquiry approved=true ← status %t\n", resolution.Status)
	if s.sandbox == nil {
		return nil
	}
	for {
		cb, err := next(ctx, s.events)
		if err != nil {
			return fmt.Errorf("waiting for the resolution's callback: %w", err)
		}
		if cb.Ref == inquiryRef && cb.Kind == travelrule.KindStatus {
			fmt.Fprintf(s.out, "← %-9s transferId %s\n", cb.Status, cb.TransferID)
			return nil
		}
	}
}

// awaitInquiry returns the next inquiry callback, passing over the others.
func (s *session) awaitInquiry(ctx context.Context) (*travelrule.Callback, error) {
	for {
		cb, err := next(ctx, s.events)
		if err != nil {
			return nil, fmt.Errorf("waiting for an inquiry: %w", err)
		}
		if cb.Kind == travelrule.KindInquiry && cb.Inquiry != nil {
			return cb, nil
		}
	}
}

func next(ctx context.Context, events <-chan *travelrule.Callback) (*travelrule.Callback, error) {
	select {
	case cb := <-events:
		return cb, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// describe shows a party without its personal data.
func describe(p travelrule.Party) string {
	return fmt.Sprintf("%s person, country %s (name, birth date, address, IDs and wallet redacted)", p.PersonType, p.Country)
}

// exampleTransfer is a realistic transfer between two natural persons.
func exampleTransfer(callbackURL string) *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		TxID:     "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
		Asset:    "ETH",
		Amount:   "1.25",
		Callback: callbackURL,
		Originator: travelrule.Party{
			PersonType: "natural", FirstName: "Zoë", LastName: "Ødegård-Müller", DateOfBirth: "1984-02-29",
			AddressType: "HOME", StreetName: "Straße des 17. Juni", BuildingNumber: "135", PostCode: "10623",
			TownName: "Berlin", Country: "DE", NationalID: "123456789", NationalIDType: "IDCD",
			WalletAddress: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
		},
		Beneficiary: travelrule.Party{
			PersonType: "natural", FirstName: "美咲", LastName: "山田", DateOfBirth: "1990-07-01",
			TownName: "東京", Country: "JP", WalletAddress: "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
		},
	}
}

// tokenSourceFromEnv reads a static token or client-credentials settings.
func tokenSourceFromEnv(getenv func(string) string) (oauth2.TokenSource, error) {
	if tok := getenv("TRAVELRULE_TOKEN"); tok != "" {
		return travelrule.StaticToken(tok), nil
	}
	cfg := &clientcredentials.Config{
		TokenURL:     getenv("TRAVELRULE_TOKEN_URL"),
		ClientID:     getenv("TRAVELRULE_CLIENT_ID"),
		ClientSecret: getenv("TRAVELRULE_CLIENT_SECRET"),
	}
	if cfg.TokenURL == "" || cfg.ClientID == "" {
		return nil, errors.New("set TRAVELRULE_TOKEN, or TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID and TRAVELRULE_CLIENT_SECRET")
	}
	if s := getenv("TRAVELRULE_SCOPES"); s != "" {
		cfg.Scopes = strings.Split(s, ",")
	}
	return cfg.TokenSource(context.Background()), nil
}

func envOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}
