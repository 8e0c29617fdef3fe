// Command resolve is the beneficiary's side of a transfer: it receives the
// service's inbound inquiry where its travel addresses point
// (/transfers/inquiry/{beneficiaryId}), verifies its x-data-integrity
// signature, reads the originator from its IVMS101 payload, answers with
// ResolveInquiry, and receives the transaction's confirmation.
//
// With no environment it runs against the embedded sandbox, which plays
// the originator's side: it sends the inquiry, and, once the inquiry is
// approved, the confirmation.
//
//	go run ./examples/resolve
//
// With TRAVELRULE_BASE_URL and TRAVELRULE_API_KEY it resolves the inquiry
// about the transfer given as its argument on that service (approved
// unless the second argument is false):
//
//	go run ./examples/resolve <transfer-id> [true|false]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/ivms101"
	"github.com/vaspkit/travelrule/travelruletest"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, os.Getenv, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "resolve:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, args []string, out io.Writer) error {
	if getenv("TRAVELRULE_BASE_URL") == "" {
		return demo(ctx, out)
	}
	if len(args) == 0 {
		return errors.New("give the transfer id of the inquiry to resolve")
	}
	approved := "true"
	if len(args) > 1 {
		approved = args[1]
	}
	client, err := travelrule.NewClient(getenv("TRAVELRULE_BASE_URL"), travelrule.WithAPIKey(getenv("TRAVELRULE_API_KEY")))
	if err != nil {
		return err
	}
	res, err := client.ResolveInquiry(ctx, args[0], &travelrule.InquiryResolution{Approved: approved})
	if err != nil {
		return err // a *ValidationError when the transfer id is missing or the decision is not "true" or "false"
	}
	fmt.Fprintf(out, "inquiry %s resolved with approved=%s: status %t\n", args[0], approved, res.OK())
	return nil
}

// demo is the whole flow against the embedded sandbox.
func demo(ctx context.Context, out io.Writer) error {
	// The live retry schedule, with each minute a tenth of a second: a
	// delivery that fails is tried again within the demo's time.
	sandbox := travelruletest.NewServer(travelruletest.WithCallbackTimeScale(100 * time.Millisecond))
	defer sandbox.Close()
	client, err := travelrule.NewClient(sandbox.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		return err
	}
	// The service's signing secret, from its dashboard; the sandbox's is
	// published.
	verifier, err := callback.NewDataIntegrityVerifier(travelruletest.DefaultSigningSecret)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	key := []byte(travelrule.NewCallbackRef()) // the capability key: yours alone
	confirmURL, err := travelrule.NewCallbackURL(base+"/travelrule/callback", "payment-in-7", key)
	if err != nil {
		return err
	}
	confirmed := make(chan string, 1)
	inquiries := inquiryHandler(out, client, verifier, confirmURL)
	callbacks := confirmationHandler(verifier, key, confirmed)
	if err := errors.Join(inquiries.Err(), callbacks.Err()); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /transfers/inquiry/{beneficiaryId}", inquiries)
	mux.Handle("/travelrule/callback", callbacks)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	// The sandbox plays the originator's VASP: an inquiry to one of our
	// travel addresses.
	if _, err := sandbox.StartInquiry(ctx, base+"/transfers/inquiry/beneficiary-7", &travelrule.TransferRequest{
		Asset: "ETH", Amount: "2",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09", Country: "US", WalletAddress: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", WalletAddress: "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D"},
	}); err != nil {
		return err
	}
	select {
	case ref := <-confirmed:
		fmt.Fprintf(out, "transaction confirmed for %s\n", ref)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the confirmation: %w", ctx.Err())
	}
}

// inquiryHandler receives the inquiries, which come where the travel
// addresses point: it screens the originator and resolves the inquiry,
// approving with confirmURL, where the TRANSFER_CONFIRMATION is to come.
// The service chose that URL, so the signature is the whole check.
func inquiryHandler(out io.Writer, client *travelrule.Client, verifier callback.Verifier, confirmURL string) *callback.Handler {
	return callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		if cb.Kind != travelrule.KindInquiry {
			return nil
		}
		o := cb.Inquiry.Originator
		// Everything in an inquiry is the sender's text: show codes only.
		fmt.Fprintf(out, "inquiry %s: %s %s from a %s person in %s, %d IVMS101 field(s) not in the flat party\n",
			cb.TransferID, shown(cb.Inquiry.Amount, amountPattern.MatchString(cb.Inquiry.Amount)),
			shown(cb.Inquiry.Asset, tickerPattern.MatchString(cb.Inquiry.Asset)),
			shown(o.PersonType, o.PersonType == "natural" || o.PersonType == "legal"),
			shown(o.Country, ivms101.ValidCountry(o.Country)), len(cb.Unmapped))
		approved := screen(o) // your screening: sanctions lists, the names you hold
		resolution := travelrule.Reject()
		if approved {
			resolution = travelrule.Approve(confirmURL)
		}
		res, err := client.ResolveInquiry(ctx, cb.TransferID, resolution)
		if err != nil {
			return err // 500: the service delivers the inquiry again
		}
		fmt.Fprintf(out, "resolved with approved=%t: status %t\n", approved, res.OK())
		return nil
	}, callback.WithVerifier(verifier))
}

// confirmationHandler receives the callbacks at the capability URLs made
// with key, such as the confirmation at the URL the resolution named, and
// sends the confirmation's reference on confirmed.
func confirmationHandler(verifier callback.Verifier, key []byte, confirmed chan<- string) *callback.Handler {
	return callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		if cb.Kind == travelrule.KindTransferConfirmation {
			select {
			case confirmed <- cb.Ref:
			default:
			}
		}
		return nil
	}, callback.WithVerifier(verifier), callback.WithCapabilityKey(key))
}

// shown returns a value of a code list as it is, and anything else as
// "[redacted]".
func shown(v string, valid bool) string {
	if valid {
		return v
	}
	return "[redacted]"
}

var (
	amountPattern = regexp.MustCompile(`^[0-9]{1,30}(\.[0-9]{1,18})?$`)
	tickerPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,20}$`)
)

// screen stands for the beneficiary's own checks of the originator.
func screen(originator travelrule.Party) bool {
	return originator.LastName != "" && originator.Country != ""
}
