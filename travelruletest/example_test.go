package travelruletest_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// Example runs the live service's guide against the sandbox: a token for
// the API key, a travel address for the beneficiary, the transfer to it,
// the callbacks of its resolution, and the transaction's hash.
func Example() {
	srv := travelruletest.NewServer(travelruletest.WithPathPrefix("/api/v3"))
	defer srv.Close()

	// Where the sandbox sends the transfer's callbacks.
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	// 1. The client logs in at {URL}/auth/token with the sandbox's API key.
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// 2. A travel address for the beneficiary, in the service's unchecked form.
	ta, err := client.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{
		PersonType: "natural", FirstName: "Alan", LastName: "Turing", WalletAddress: "0xfeedbeef",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ta.Form)

	// 3. The transfer to it.
	res, err := client.InitiateTransfer(ctx, &travelrule.TransferRequest{
		TravelAddress: ta.TravelAddress,
		Asset:         "BTC",
		Amount:        "0.25",
		Callback:      receiver.URL + "/travelrule/callback",
		Originator:    travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary:   travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status)

	// 4. The callbacks of the decision of the beneficiary's VASP (the
	// sandbox approves), signed with x-data-integrity.
	callbacks, err := srv.WaitCallbacks(ctx, 2)
	if err != nil {
		log.Fatal(err)
	}
	for _, cb := range callbacks {
		fmt.Println(cb.Kind, cb.Status, cb.TransferID == res.TransferID, cb.Delivered)
	}

	// 5. The transaction's hash, once broadcast.
	if _, err := client.SubmitTxID(ctx, res.TransferID, "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"); err != nil {
		log.Fatal(err)
	}
	tr, _ := srv.Transfer(res.TransferID)
	fmt.Println(tr.Flow, tr.Confirmed)
	// Output:
	// unchecked
	// true
	// INQUIRY_RESOLUTION approved true true
	// TRANSFER_RESOLUTION completed true true
	// OPEN_VASP true
}
