// Command quickstart walks the five stages of the service's own
// end-to-end guide: a token for the API key, a travel address for the
// beneficiary, the transfer's initiation, the inquiry the beneficiary's
// VASP receives (its IVMS101 originator read into typed fields) and its
// resolution, and the transaction's hash once it is broadcast; with each
// of the service's callbacks, verified by their x-data-integrity
// signature, received on callback.Handler in an ordinary mux.
//
// With no environment it starts the sandbox (travelruletest) in-process and
// needs nothing but Go:
//
//	go run ./examples/quickstart
//
// The quickstart plays both VASPs there: the sandbox sends the inquiries of
// its travel addresses to the quickstart's listener
// (travelruletest.WithInquiryURL), so the transfer it initiates comes back
// to it as an inbound inquiry.
//
// With TRAVELRULE_BASE_URL it runs the same flow against that deployment
// (the live service's staging host, https://trp-stg.travel-rule.com, say),
// logged in with TRAVELRULE_API_KEY (or the key in the file
// TRAVELRULE_API_KEY_FILE), or authenticated with TRAVELRULE_TOKEN or
// client credentials (TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID,
// TRAVELRULE_CLIENT_SECRET, TRAVELRULE_SCOPES), and verifies callbacks with
// the signing secret in TRAVELRULE_SIGNING_SECRET (or the file
// TRAVELRULE_SIGNING_SECRET_FILE). It makes a travel address for a test
// beneficiary, initiates a transfer to it, and submits a made-up
// transaction hash: run it against staging, not production. The service
// must reach the callback listener: set TRAVELRULE_CALLBACK_URL to the
// public URL that forwards to TRAVELRULE_LISTEN_ADDR (default
// 127.0.0.1:8081, so that it runs beside "travelrule sandbox" on
// 127.0.0.1:8080), path /travelrule/callback (and
// /travelrule/callback/confirmation, where the confirmations of the
// inquiries it approves come); inbound inquiries arrive on the same
// listener at /transfers/inquiry/{beneficiaryId}. Inquiries come
// from the service only for your own travel addresses, so against a real
// service the quickstart waits for one only if TRAVELRULE_WAIT_INQUIRY=1.
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
	"regexp"
	"strings"
	"syscall"
	"time"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/ivms101"
	"github.com/vaspkit/travelrule/travelruletest"
)

const (
	callbackPath = "/travelrule/callback"
	// confirmationSuffix follows the callback URL in the confirmation URLs
	// the quickstart gives as the beneficiary's VASP.
	confirmationSuffix = "/confirmation"
	// inquiryRoute is where the beneficiary's VASP receives inquiries: the
	// path the service's travel addresses name.
	inquiryRoute = "POST /transfers/inquiry/{beneficiaryId}"
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
	s := newSession(out)
	embedded := getenv("TRAVELRULE_BASE_URL") == ""

	// The callback listener: callback.Handler in an ordinary mux, for the
	// originator's callbacks and the beneficiary's inquiries.
	srv, err := s.listen(getenv, embedded)
	if err != nil {
		return err
	}
	defer shutdown(srv)

	// The service: the embedded sandbox, which sends the inquiries of its
	// travel addresses to the listener, or the one the environment names.
	if embedded {
		s.startSandbox()
		defer s.sandbox.Close()
	}
	if err := s.connect(getenv); err != nil {
		return err
	}

	// 1. A token for the API key.
	if err := s.login(ctx); err != nil {
		return err
	}

	// 2. A travel address for the beneficiary.
	ta, err := s.travelAddress(ctx)
	if err != nil {
		return err
	}

	// 3. The transfer to it, with a callback URL that names it.
	ref, transferID, err := s.initiate(ctx, ta)
	if err != nil {
		return err
	}

	// 4. The inquiry and its resolution: as the beneficiary's VASP, the
	// inbound inquiry, answered with ResolveInquiry; as the originator,
	// the resolution's callbacks, matched to the transfer by its reference.
	confirmRef, err := s.inquiryStage(ctx, getenv)
	if err != nil {
		return err
	}
	decision, err := s.awaitDecision(ctx, ref)
	if err != nil {
		return err
	}

	// 5. The transaction's hash, once it is broadcast, and the
	// confirmation the beneficiary's VASP receives; nothing for a rejection.
	if err := s.submitTxID(ctx, ref, transferID, confirmRef, decision); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nDone in %s.\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// session is what the steps of the quickstart share.
type session struct {
	out          io.Writer
	key          []byte // the capability key of the originator's callback URLs: yours alone, never sent anywhere
	confirmKey   []byte // another, for the confirmation URLs the beneficiary's VASP gives
	events       chan *travelrule.Callback
	sandbox      *travelruletest.Server // nil against a real service
	client       *travelrule.Client
	listenerBase string                  // the listener's own base URL
	callbackBase string                  // where the service sends callbacks
	decided      travelrule.CallbackKind // the kind of the message whose decision was acted on
}

// newSession is a session writing to out, with random capability keys of
// its own (crypto/rand.Read never fails).
func newSession(out io.Writer) *session {
	s := &session{out: out, key: make([]byte, 32), confirmKey: make([]byte, 32), events: make(chan *travelrule.Callback, 16)}
	_, _ = rand.Read(s.key)
	_, _ = rand.Read(s.confirmKey)
	return s
}

// startSandbox starts the embedded sandbox, which sends the inquiries of
// its travel addresses to the listener, with the live retry schedule, each
// minute a tenth of a second: a callback that fails is tried again within
// the quickstart's time. No path prefix, as `travelrule sandbox` and the
// curl lines of docs/sandbox.md have none.
func (s *session) startSandbox() {
	s.sandbox = travelruletest.NewServer(travelruletest.WithInquiryURL(s.listenerBase),
		travelruletest.WithCallbackTimeScale(100*time.Millisecond))
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
	fmt.Fprintf(s.out, "Callbacks are received on %s (one capability URL per transfer), inquiries on %s/transfers/inquiry/{beneficiaryId}, each verified by its x-data-integrity signature\n\n", s.listenerBase+callbackPath, s.listenerBase)
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

// listen serves callback.Handler and a health check, and sets the
// listener's base URL and the callback base URL: the listener itself for
// the sandbox, TRAVELRULE_CALLBACK_URL for a real service.
func (s *session) listen(getenv func(string) string, embedded bool) (*http.Server, error) {
	secret := travelruletest.DefaultSigningSecret // the sandbox's, published
	if !embedded {
		var err error
		if secret, err = signingSecret(getenv); err != nil {
			return nil, err
		}
	}
	verifier, err := callback.NewDataIntegrityVerifier(secret)
	if err != nil {
		return nil, fmt.Errorf("the signing secret: %w", err)
	}
	deliver := func(ctx context.Context, cb *travelrule.Callback) error {
		select {
		case s.events <- cb:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The originator's callbacks come to URLs the quickstart made: they
	// must carry its capability. Inquiries come to the path the travel
	// address names, which the service chose: the signature alone.
	// The confirmations come to the URLs the quickstart gives as the
	// beneficiary's VASP, under a key of their own: a callback's body names
	// the URL of its own transfer, and the handler refuses one that names
	// another URL of its key than the one it arrived at.
	callbacks := callback.NewHandler(deliver, callback.WithVerifier(verifier), callback.WithCapabilityKey(s.key))
	confirmations := callback.NewHandler(deliver, callback.WithVerifier(verifier), callback.WithCapabilityKey(s.confirmKey))
	inquiries := callback.NewHandler(deliver, callback.WithVerifier(verifier))
	if err := errors.Join(callbacks.Err(), confirmations.Err(), inquiries.Err()); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(callbackPath, callbacks)
	mux.Handle(callbackPath+confirmationSuffix, confirmations)
	mux.Handle(inquiryRoute, inquiries)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	listenAddr := "127.0.0.1:0"
	if !embedded {
		listenAddr = envOr(getenv, "TRAVELRULE_LISTEN_ADDR", defaultListenAddr)
	}
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.listenerBase = "http://" + ln.Addr().String()
	s.callbackBase = s.listenerBase + callbackPath
	if !embedded {
		s.callbackBase = getenv("TRAVELRULE_CALLBACK_URL")
		if s.callbackBase == "" {
			_ = srv.Close()
			return nil, errors.New("set TRAVELRULE_CALLBACK_URL to the public URL of the callback listener, which serves " + callbackPath + " on " + ln.Addr().String())
		}
	}
	return srv, nil
}

// shutdown stops the listener once its handlers have answered the
// callbacks they took, for a few seconds at most: a callback whose 204 is
// cut off would be sent again, to a listener no longer there.
func shutdown(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if srv.Shutdown(ctx) != nil {
		_ = srv.Close()
	}
}

// signingSecret reads the service's callback signing secret from
// TRAVELRULE_SIGNING_SECRET or the file TRAVELRULE_SIGNING_SECRET_FILE
// names.
func signingSecret(getenv func(string) string) (string, error) {
	secret, path := getenv("TRAVELRULE_SIGNING_SECRET"), getenv("TRAVELRULE_SIGNING_SECRET_FILE")
	switch {
	case secret != "" && path != "":
		return "", errors.New("set TRAVELRULE_SIGNING_SECRET or TRAVELRULE_SIGNING_SECRET_FILE, not both")
	case secret != "":
		return secret, nil
	}
	if path == "" {
		return "", errors.New("set TRAVELRULE_SIGNING_SECRET (or TRAVELRULE_SIGNING_SECRET_FILE) to the service's callback signing secret: callbacks are verified, never taken on trust")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading TRAVELRULE_SIGNING_SECRET_FILE: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// newCallbackURL is a fresh reference and the capability URL that names it.
func (s *session) newCallbackURL(prefix string) (ref, url string, err error) {
	ref = prefix + travelrule.NewCallbackRef()[:12]
	url, err = travelrule.NewCallbackURL(s.callbackBase, ref, s.key)
	return ref, url, err
}

// newConfirmationURL is a fresh reference and the capability URL, under
// the confirmation key, that names it.
func (s *session) newConfirmationURL() (ref, url string, err error) {
	ref = "qs-confirm-" + travelrule.NewCallbackRef()[:12]
	url, err = travelrule.NewCallbackURL(s.callbackBase+confirmationSuffix, ref, s.confirmKey)
	return ref, url, err
}

// initiate is stage 3: it sends the example transfer to the travel
// address and returns its callback reference and transfer id.
func (s *session) initiate(ctx context.Context, ta string) (ref, transferID string, err error) {
	fmt.Fprintln(s.out, "\n3. Initiation")
	ref, cbURL, err := s.newCallbackURL("qs-")
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

// inquiryStage is stage 4 as the beneficiary's VASP, when an inquiry comes
// to it: always from the sandbox, from a real service only when
// TRAVELRULE_WAIT_INQUIRY=1 (inquiries come only for your own travel
// addresses). It returns the reference of the confirmation URL the
// approval named, or "".
func (s *session) inquiryStage(ctx context.Context, getenv func(string) string) (string, error) {
	if s.sandbox == nil && getenv("TRAVELRULE_WAIT_INQUIRY") != "1" {
		fmt.Fprintln(s.out, "\n4. Inquiry and resolution: the inquiry goes to the beneficiary's VASP (set TRAVELRULE_WAIT_INQUIRY=1 to answer one sent to you)")
		return "", nil
	}
	return s.answerInquiry(ctx)
}

// answerInquiry is stage 4 as the beneficiary's VASP: it waits for the
// inbound inquiry, reads its IVMS101 originator, and approves it through
// the service, naming the URL that is to receive the transaction's
// confirmation. It returns that URL's reference.
func (s *session) answerInquiry(ctx context.Context) (confirmRef string, err error) {
	fmt.Fprintln(s.out, "\n4. Inquiry and resolution (as the beneficiary's VASP, then as the originator)")
	cb, err := s.await(ctx, "an inquiry", func(cb *travelrule.Callback) bool { return cb.Kind == travelrule.KindInquiry })
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.out, "← INQUIRY   transferId %s: %s %s\n", cb.TransferID, shown(cb.Inquiry.Amount, isAmount(cb.Inquiry.Amount)), shown(cb.Inquiry.Asset, isTicker(cb.Inquiry.Asset)))
	if cb.IVMS101 != nil {
		fmt.Fprintf(s.out, "  IVMS101 (edition %s) originator: %s\n", edition(cb.IVMS101), describeIVMS101(cb.IVMS101))
	}
	fmt.Fprintf(s.out, "  read into a Party: from %s\n                     to   %s\n", describe(cb.Inquiry.Originator), describe(cb.Inquiry.Beneficiary))
	fmt.Fprintf(s.out, "  IVMS101 fields a Party has no place for: %d (still in cb.IVMS101)\n", len(cb.Unmapped))

	confirmRef, confirmURL, err := s.newConfirmationURL()
	if err != nil {
		return "", err
	}
	res, err := s.client.ResolveInquiry(ctx, cb.TransferID, travelrule.Approve(confirmURL))
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.out, "→ ResolveInquiry approved=true ← status %t\n", res.OK())
	return confirmRef, nil
}

// awaitDecision returns the decision of the beneficiary's VASP on the
// transfer ref names: the first that arrives, whichever message carries it.
// An approval comes as an INQUIRY_RESOLUTION and a TRANSFER_RESOLUTION, in
// any order; for a rejection the live docs promise the INQUIRY_RESOLUTION
// alone.
func (s *session) awaitDecision(ctx context.Context, ref string) (travelrule.Decision, error) {
	for {
		cb, err := s.await(ctx, "the decision", func(cb *travelrule.Callback) bool { return cb.Ref == ref })
		if err != nil {
			return "", err
		}
		s.printResolution(cb)
		if d := cb.Decision(); d != "" {
			s.decided = cb.Kind
			fmt.Fprintf(s.out, "  the first decision: %s, acted on once\n", d)
			return d, nil
		}
	}
}

// printResolution prints one of the originator's callbacks.
func (s *session) printResolution(cb *travelrule.Callback) {
	switch cb.Kind {
	case travelrule.KindInquiryResolution:
		if cb.Decision() == travelrule.Approved {
			fmt.Fprintf(s.out, "← INQUIRY_RESOLUTION approved, the beneficiary's wallet address %s\n", present(cb.Address))
		} else {
			fmt.Fprintln(s.out, "← INQUIRY_RESOLUTION rejected")
		}
	case travelrule.KindTransferResolution:
		fmt.Fprintf(s.out, "← TRANSFER_RESOLUTION %s (%s), transferId %s, comment %s\n", shown(cb.Status, isTicker(cb.Status)), cb.Decision(), cb.TransferID, present(cb.StatusComment))
	default:
		fmt.Fprintf(s.out, "← a callback of kind %s\n", cb.Kind)
	}
}

// submitTxID is stage 5 once the transfer is approved: the transaction's
// hash, after the broadcast, and the confirmation the beneficiary's VASP
// then receives at the URL it named (confirmRef; empty when this run did
// not answer the inquiry). The approval's other message is passed over:
// the decision was acted on already.
func (s *session) submitTxID(ctx context.Context, ref, transferID, confirmRef string, decision travelrule.Decision) error {
	fmt.Fprintln(s.out, "\n5. Transaction hash")
	if decision != travelrule.Approved {
		fmt.Fprintln(s.out, "→ nothing to broadcast: the beneficiary's VASP rejected the transfer, the payment is cancelled")
		return nil
	}
	if transferID == "" {
		fmt.Fprintln(s.out, "→ SubmitTxID skipped: the service answered no transferId")
		return nil
	}
	res, err := s.client.SubmitTxID(ctx, transferID, exampleTxHash)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "→ SubmitTxID %s ← accepted, %d attempt(s); the service confirms to the beneficiary's VASP\n", short(exampleTxHash), res.Attempts)
	// The approval's other message, and the confirmation if this run is
	// the beneficiary's VASP too.
	other := travelrule.KindTransferResolution
	if s.decided == other {
		other = travelrule.KindInquiryResolution
	}
	for seenOther, confirmed := false, confirmRef == ""; !seenOther || !confirmed; {
		cb, err := s.await(ctx, "the approval's other message and the confirmation", func(cb *travelrule.Callback) bool {
			return cb.Ref == ref && cb.Kind == other || cb.Ref == confirmRef && cb.Kind == travelrule.KindTransferConfirmation
		})
		if err != nil {
			return err
		}
		if cb.Kind == travelrule.KindTransferConfirmation {
			fmt.Fprintf(s.out, "← TRANSFER_CONFIRMATION txid %s (as the beneficiary's VASP)\n", short(cb.TxID))
			confirmed = true
			continue
		}
		s.printResolution(cb)
		fmt.Fprintln(s.out, "  the transfer was decided already: nothing to do")
		seenOther = true
	}
	return nil
}

// await returns the next callback that match accepts, passing over the
// others.
func (s *session) await(ctx context.Context, what string, match func(*travelrule.Callback) bool) (*travelrule.Callback, error) {
	for {
		select {
		case cb := <-s.events:
			if match(cb) {
				return cb, nil
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// edition names a payload's IVMS101 edition.
func edition(p *ivms101.Payload) ivms101.Version {
	if p.Version == "" {
		return ivms101.Version2020
	}
	return p.Version
}

// describeIVMS101 shows what the payload's first originator person holds,
// by its typed fields, without their values: the codes of IVMS101's code
// lists and countries are not personal data.
func describeIVMS101(p *ivms101.Payload) string {
	if p.Originator == nil || len(p.Originator.Persons) == 0 {
		return "none"
	}
	np := p.Originator.Persons[0].NaturalPerson
	if np == nil {
		return "a legal person (name redacted)"
	}
	var parts []string
	if np.Name != nil && len(np.Name.NameIdentifiers) > 0 {
		t := np.Name.NameIdentifiers[0].NameIdentifierType
		parts = append(parts, fmt.Sprintf("name of type %s", shown(string(t), t.Valid())))
	}
	if np.DateAndPlaceOfBirth != nil && np.DateAndPlaceOfBirth.DateOfBirth != "" {
		parts = append(parts, "date of birth")
	}
	for _, a := range np.GeographicAddresses {
		parts = append(parts, fmt.Sprintf("%s address in %s", shown(string(a.AddressType), a.AddressType.Valid()), shown(a.Country, ivms101.ValidCountry(a.Country))))
	}
	if id := np.NationalIdentification; id != nil {
		t := id.NationalIdentifierType
		parts = append(parts, fmt.Sprintf("national id of type %s", shown(string(t), t.Valid())))
	}
	parts = append(parts, fmt.Sprintf("%d account number(s)", len(p.Originator.AccountNumbers)))
	return "a natural person: " + strings.Join(parts, ", ") + " (values redacted)"
}

// shown returns a value of a code list as it is, and anything else, which
// is the sender's free text, as "[redacted]".
func shown(v string, valid bool) string {
	if valid {
		return v
	}
	return "[redacted]"
}

// present says whether a value the output must not show is there.
func present(v string) string {
	if v == "" {
		return "absent"
	}
	return "present (redacted)"
}

// isAmount reports whether s is a plain decimal amount.
func isAmount(s string) bool { return amountPattern.MatchString(s) }

// isTicker reports whether s looks like an asset's ticker.
func isTicker(s string) bool { return tickerPattern.MatchString(s) }

var (
	amountPattern = regexp.MustCompile(`^[0-9]{1,30}(\.[0-9]{1,18})?$`)
	tickerPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,20}$`)
)

// short abbreviates a transaction hash.
func short(h string) string {
	if len(h) < 12 {
		return h
	}
	return h[:6] + "…" + h[len(h)-4:]
}

// describe shows a party without its personal data: its kind and
// country, when they are codes (an inquiry's parties are the sender's
// text).
func describe(p travelrule.Party) string {
	kind := shown(p.PersonType, p.PersonType == "natural" || p.PersonType == "legal")
	return fmt.Sprintf("%s person, country %s (name, address, IDs and wallet redacted)", kind, shown(p.Country, ivms101.ValidCountry(p.Country)))
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
			AddressType: "HOME", StreetName: "丸の内", BuildingNumber: "1-9-1", TownName: "東京", Country: "JP",
			WalletAddress: "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
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
