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

func Example() {
	srv := travelruletest.NewServer(travelruletest.WithPathPrefix("/api/v3"))
	defer srv.Close()

	// Where the sandbox sends the transfer's status callbacks.
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.InitiateTransfer(context.Background(), &travelrule.TransferRequest{
		Asset:       "BTC",
		Amount:      "0.25",
		Callback:    receiver.URL + "/travelrule/callback",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status)

	callbacks, err := srv.WaitCallbacks(context.Background(), 3)
	if err != nil {
		log.Fatal(err)
	}
	for _, cb := range callbacks {
		fmt.Println(cb.Status, cb.TransferID == res.TransferID, cb.Delivered)
	}
	// Output:
	// succes
	// received true true
	// approved true true
	// completed true true
}
