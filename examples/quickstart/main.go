// Command quickstart walks the five stages of the service's own
// end-to-end guide: a token for the API key, a travel address for the
// beneficiary, the transfer's initiation (and its status callbacks,
// received on a callback.Handler), an inquiry and its resolution, and the
// transaction's hash once it is broadcast.
//
// With no environment it starts the sandbox (travelruletest) in-process and
// needs nothing but Go:
//
//	go run ./examples/quickstart
//
// With TRAVELRULE_BASE_URL it runs the same flow against that deployment
// (the live service's staging host, https://trp-stg.travel-rule.com, say),
// logged in with TRAVELRULE_API_KEY (or the key in the file
// TRAVELRULE_API_KEY_FILE), or authenticated with TRAVELRULE_TOKEN or
// client credentials (TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID,
// TRAVELRULE_CLIENT_SECRET, TRAVELRULE_SCOPES). It makes a travel address
// for a test beneficiary, initiates a transfer to it, and submits a made-up
// transaction hash: run it against staging, not production. The service
// must reach the callback listener: set TRAVELRULE_CALLBACK_URL to the
// public URL that forwards to TRAVELRULE_LISTEN_ADDR (default
// 127.0.0.1:8081, so that it runs beside "travelrule sandbox" on
// 127.0.0.1:8080), path /travelrule/callback. Inbound inquiries come from
// counterparties, so against a real service the quickstart waits for one
// only if TRAVELRULE_WAIT_INQUIRY=1.
//
// Personal data is never printed: parties are shown by kind and country,
// a travel address by its form and length.
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

	// The service: the embedded sandbox, or the one the environment names.
	if getenv("TRAVELRULE_BASE_URL") == "" {
		s.sandbox = travelruletest.NewServer(travelruletest.WithPathPrefix("/api/v3"))
		defer s.sandbox.Close()
	}
	if err := s.connect(getenv); err != nil {
		return err
	}

	// The callback listener: callback.Handler in an ordinary mux.
	srv, err := s.listen(getenv)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }()

	// 1. A token for the API key.
	if err := s.login(ctx); err != nil {
		return err
	}

	// 2. A travel address for the beneficiary.
	ta, err := s.travelAddress(ctx)
	if err != nil {
		return err
	}

	// 3. The transfer to it, with a callback URL that names it, and its
	// status callbacks, matched to it by the capability reference.
	ref, transferID, err := s.initiate(ctx, ta)
	if err != nil {
		return err
	}
	if err := s.awaitStatusCallbacks(ctx, ref); err != nil {
		return err
	}

	// 4. An inquiry and its resolution: as the beneficiary, an inbound
	// inquiry from a counterparty, answered with ResolveInquiry.
	if s.sandbox == nil && getenv("TRAVELRULE_WAIT_INQUIRY") != "1" {
		fmt.Fprintln(out, "\n4. Inquiry and resolution: skipped (set TRAVELRULE_WAIT_INQUIRY=1 to wait for an inbound inquiry)")
	} else {
		inquiryRef, inquiryURL, err := s.newCallbackURL()
		if err != nil {
			return err
		}
		if err := s.answerInquiry(ctx, inquiryRef, inquiryURL); err != nil {
			return err
		}
	}

	// 5. The transaction's hash, once it is broadcast.
	if err := s.submitTxID(ctx, transferID); err != nil {
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
	var auth travelrule.Option
	if s.sandbox != nil {
		baseURL, auth = s.sandbox.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey)
		fmt.Fprintf(s.out, "Travel Rule quickstart (travelrule-go %s) against the embedded sandbox at %s\n", travelrule.Version, baseURL)
	} else {
		var err error
		if auth, err = authFromEnv(getenv); err != nil {
			return err
		}
		baseURL = getenv("TRAVELRULE_BASE_URL")
		fmt.Fprintf(s.out, "Travel Rule quickstart (travelrule-go %s) against %s\n", travelrule.Version, baseURL)
	}
	client, err := travelrule.NewClient(baseURL, auth, travelrule.WithUserAgent("quickstart"))
	if err != nil {
		return err
	}
	s.client = client
	return nil
}

// login is stage 1: the token. The client would log in on its first call;
// Login does it now, so that a refused key is reported before anything
// else is sent.
func (s *session) login(ctx context.Context) error {
	fmt.Fprintln(s.out, "1. Token")
	if err := s.client.Login(ctx); err != nil {
		if errors.Is(err, travelrule.ErrAPIKeyRefused) {
			return fmt.Errorf("the API key was refused (make or reactivate one in the service's dashboard): %w", err)
		}
		return err
	}
	fmt.Fprintln(s.out, "→ POST /auth/token (x-api-key) ← a bearer JWT, cached until shortly before it ends")
	return nil
}

// travelAddress is stage 2: the beneficiary's VASP makes a travel address
// for its customer (here the sandbox's, or your staging deployment, plays
// that VASP) and the originator reads it back.
func (s *session) travelAddress(ctx context.Context) (string, error) {
	fmt.Fprintln(s.out, "\n2. Travel address")
	b := exampleTransfer("").Beneficiary
	res, err := s.client.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{
		PersonType: b.PersonType, FirstName: b.FirstName, LastName: b.LastName,
		WalletAddress: b.WalletAddress, ExternalID: "quickstart-beneficiary-1",
	})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.out, "→ GenerateTravelAddress for a %s ← a travel address, %s form, %d characters\n", describe(b), res.Form, len(res.TravelAddress))
	info, err := s.client.LookupTravelAddress(ctx, res.TravelAddress)
	if err != nil {
		return "", err
	}
	same := info.FirstName == b.FirstName && info.LastName == b.LastName && info.WalletAddress == b.WalletAddress
	fmt.Fprintf(s.out, "→ LookupTravelAddress ← the beneficiary's name and wallet, matching: %t\n", same)
	return res.TravelAddress, nil
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

// initiate is stage 3: it sends the example transfer to the travel
// address and returns its callback reference and transfer id.
func (s *session) initiate(ctx context.Context, ta string) (ref, transferID string, err error) {
	fmt.Fprintln(s.out, "\n3. Initiation")
	ref, cbURL, err := s.newCallbackURL()
	if err != nil {
		return "", "", err
	}
	req := exampleTransfer(cbURL)
	req.TravelAddress = ta
	fmt.Fprintf(s.out, "→ InitiateTransfer %s %s to the travel address, ref %s\n  from %s\n  to   %s\n", req.Amount, req.Asset, ref, describe(req.Originator), describe(req.Beneficiary))
	res, err := s.client.InitiateTransfer(ctx, req)
	var unknown *travelrule.OutcomeUnknownError
	switch {
	case errors.As(err, &unknown):
		return "", "", fmt.Errorf("the service may have stored the transfer (ref %s): reconcile before sending again: %w", unknown.CallbackRef, err)
	case err != nil:
		return "", "", err
	}
	fmt.Fprintf(s.out, "← transferId %s (status %q), %d attempt(s)\n", res.TransferID, res.Status, res.Attempts)
	return ref, res.TransferID, nil
}

// submitTxID is stage 5: the transaction's hash, after the broadcast.
func (s *session) submitTxID(ctx context.Context, transferID string) error {
	fmt.Fprintln(s.out, "\n5. Transaction hash")
	if transferID == "" {
		fmt.Fprintln(s.out, "→ SubmitTxID skipped: the service answered no transferId")
		return nil
	}
	res, err := s.client.SubmitTxID(ctx, transferID, exampleTxHash)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "→ SubmitTxID %s…%s ← accepted, %d attempt(s); the service confirms to the beneficiary's VASP\n", exampleTxHash[:6], exampleTxHash[len(exampleTxHash)-4:], res.Attempts)
	return nil
}

// awaitStatusCallbacks prints the status callbacks of the transfer ref
// names, up to the final one.
func (s *session) awaitStatusCallbacks(ctx context.Context, ref string) error {
	fmt.Fprintln(s.out, "Status callbacks (the beneficiary's VASP decided):")
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
		inbound.Asset, inbound.Amount = "BTC", "0.042"
		inbound.Originator, inbound.Beneficiary = inbound.Beneficiary, inbound.Originator
		go func() { _, _ = s.sandbox.StartInquiry(ctx, inquiryURL, inbound) }()
	}
	fmt.Fprintln(s.out, "\n4. Inquiry and resolution (as the beneficiary's VASP)")
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

// exampleTxHash is the made-up hash of the example transfer's
// transaction.
const exampleTxHash = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"

// exampleTransfer is a realistic transfer between two natural persons.
func exampleTransfer(callbackURL string) *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
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

// authFromEnv reads the API key (TRAVELRULE_API_KEY, or the file
// TRAVELRULE_API_KEY_FILE names), a static token, or client-credentials
// settings, in that order.
func authFromEnv(getenv func(string) string) (travelrule.Option, error) {
	if key := getenv("TRAVELRULE_API_KEY"); key != "" {
		return travelrule.WithAPIKey(key), nil
	}
	if path := getenv("TRAVELRULE_API_KEY_FILE"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading TRAVELRULE_API_KEY_FILE: %w", err)
		}
		return travelrule.WithAPIKey(strings.TrimRight(string(b), "\r\n")), nil
	}
	if tok := getenv("TRAVELRULE_TOKEN"); tok != "" {
		return travelrule.WithTokenSource(travelrule.StaticToken(tok)), nil
	}
	cfg := &clientcredentials.Config{
		TokenURL:     getenv("TRAVELRULE_TOKEN_URL"),
		ClientID:     getenv("TRAVELRULE_CLIENT_ID"),
		ClientSecret: getenv("TRAVELRULE_CLIENT_SECRET"),
	}
	if cfg.TokenURL == "" || cfg.ClientID == "" {
		return nil, errors.New("set TRAVELRULE_API_KEY (or TRAVELRULE_API_KEY_FILE); or TRAVELRULE_TOKEN; or TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID and TRAVELRULE_CLIENT_SECRET")
	}
	if s := getenv("TRAVELRULE_SCOPES"); s != "" {
		cfg.Scopes = strings.Split(s, ",")
	}
	return travelrule.WithClientCredentials(cfg), nil
}

func envOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}
