package travelrule_test

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/ivms101"
)

// The README's "First integration", its Go blocks one after the other
// between the two marker lines (TestReadmeFirstIntegrationIsThisCode
// compares them), inside a function that declares what the blocks take
// from their surroundings: the context, a mux, the integrator's own
// bookkeeping and the values they name.

// payments is the originator's own bookkeeping.
type payments interface {
	// Decide, in one transaction, records the payment's decision and queues
	// its broadcast or cancellation, unless the payment has a decision
	// already: then it does nothing.
	Decide(ctx context.Context, paymentID string, d travelrule.Decision) error
	Hold(ctx context.Context, paymentID string) error
	Sent(ctx context.Context, paymentID, transferID string)
}

// customers is the beneficiary VASP's own bookkeeping.
type customers interface {
	SetTravelAddress(ctx context.Context, customerID, travelAddress string) error
	// Confirmed records the hash of an inbound transfer you approved.
	Confirmed(ctx context.Context, transferID, txID string) error
}

// screening is the beneficiary VASP's checks of an originator.
type screening interface {
	Passes(ctx context.Context, originator travelrule.Party, payload *ivms101.Payload) bool
}

func firstIntegration(ctx context.Context, mux *http.ServeMux, baseURL, publicURL string, callbackKey []byte,
	payments payments, paymentID, customerNumber, beneficiaryTravelAddress, from, to string,
	customers customers, screening screening, customerID, wallet string) error {
	// README: begin
	client, err := travelrule.NewClient(baseURL, // "https://trp.travel-rule.com", or the sandbox's URL
		travelrule.WithAPIKey(os.Getenv("TRAVELRULE_API_KEY"))) // POST /auth/token; the JWT is cached
	if err != nil {
		return err
	}
	// The service signs every callback (x-data-integrity) with your signing secret.
	verifier, err := callback.NewDataIntegrityVerifier(os.Getenv("TRAVELRULE_SIGNING_SECRET"))
	if err != nil {
		return err
	}

	// Once, at start-up: the handler of your callback URLs, in your mux.
	decisions := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		if cb.Kind == travelrule.KindTransferConfirmation { // as the beneficiary: the hash of one you approved
			return customers.Confirmed(ctx, cb.Ref, cb.TxID)
		}
		// Act on the first decision that arrives, whichever message carries it.
		decision := cb.Decision() // Approved, Rejected, or "" for a message that decides nothing
		if decision == "" {
			return nil
		}
		// One transaction of yours: record the decision and queue the broadcast (then
		// client.SubmitTxID) or the cancellation, unless the payment has a decision already.
		return payments.Decide(ctx, cb.Ref, decision) // an error answers 500: the message comes again
	}, callback.WithVerifier(verifier), callback.WithCapabilityKey(callbackKey))
	if err := decisions.Err(); err != nil {
		return err // a misconfigured handler refuses every request
	}
	mux.Handle("/travelrule/callback", decisions)

	// For each payment: a callback URL of its own (your payment id, and a tag only your key makes).
	cbURL, err := travelrule.NewCallbackURL(publicURL+"/travelrule/callback", paymentID, callbackKey)
	if err != nil {
		return err
	}
	res, err := client.InitiateTransfer(ctx, &travelrule.TransferRequest{
		TravelAddress: beneficiaryTravelAddress, Asset: "BTC", Amount: "0.25", Callback: cbURL,
		Originator: travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace",
			DateOfBirth: "1815-12-10", AccountNumber: customerNumber, WalletAddress: from},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing",
			DateOfBirth: "1912-06-23", WalletAddress: to},
	})
	switch {
	case errors.Is(err, travelrule.ErrOutcomeUnknown):
		return payments.Hold(ctx, paymentID) // it may exist: reconcile, never send it again blindly
	case err != nil:
		return err // nothing was stored; travelrule.FieldErrors(err) lists the fields at fault
	}
	payments.Sent(ctx, paymentID, res.TransferID) // for SubmitTxID after the broadcast

	// A travel address for each of your customers, to hand to whoever pays them
	// (the same customer gets the same address again).
	ta, err := client.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{
		PersonType: "natural", FirstName: "Alan", LastName: "Turing", WalletAddress: wallet, ExternalID: customerID})
	if err != nil {
		return err
	}
	if err := customers.SetTravelAddress(ctx, customerID, ta.TravelAddress); err != nil {
		return err
	}
	// Transfers to it come as INQUIRY callbacks, signed, to the path the address names.
	inquiries := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		if cb.Kind != travelrule.KindInquiry {
			return nil
		}
		resolution := travelrule.Reject()
		if screening.Passes(ctx, cb.Inquiry.Originator, cb.IVMS101) { // typed: names, address, ids
			// The TRANSFER_CONFIRMATION (the hash) is to come to a callback URL of yours.
			confirmationURL, err := travelrule.NewCallbackURL(publicURL+"/travelrule/callback", cb.TransferID, callbackKey)
			if err != nil {
				return err
			}
			resolution = travelrule.Approve(confirmationURL)
		}
		_, err := client.ResolveInquiry(ctx, cb.TransferID, resolution)
		if errors.Is(err, travelrule.ErrNotApplied) {
			return nil // it was decided before: a redelivery changes nothing
		}
		return err // an error answers 500: the service delivers the inquiry again
	}, callback.WithVerifier(verifier)) // no capability tag: the service chose this URL
	if err := inquiries.Err(); err != nil {
		return err
	}
	mux.Handle("POST /transfers/inquiry/{beneficiaryId}", inquiries)
	// README: end
	return nil
}
