// Command initiate sends one Travel Rule transfer and prints the answer.
//
// With no environment it runs against the embedded sandbox; with
// TRAVELRULE_BASE_URL and TRAVELRULE_API_KEY it runs against that service:
//
//	go run ./examples/initiate
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "initiate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, out io.Writer) error {
	baseURL := getenv("TRAVELRULE_BASE_URL")
	opts := []travelrule.Option{travelrule.WithAPIKey(getenv("TRAVELRULE_API_KEY"))}
	if baseURL == "" {
		srv := travelruletest.NewServer(travelruletest.WithoutCallbacks()) // the callback URL below is a placeholder
		defer srv.Close()
		baseURL, opts = srv.URL, []travelrule.Option{travelrule.WithAPIKey(travelruletest.DefaultAPIKey)}
	}
	client, err := travelrule.NewClient(baseURL, opts...)
	if err != nil {
		return err
	}
	res, err := client.InitiateTransfer(ctx, &travelrule.TransferRequest{
		TxID:        "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
		Asset:       "BTC",
		Amount:      "0.25",
		Callback:    "https://vasp-a.example/travelrule/callback",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", Country: "GB"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23", Country: "GB"},
	})
	var invalid *travelrule.ValidationError
	var unknown *travelrule.OutcomeUnknownError
	switch {
	case errors.As(err, &invalid):
		return fmt.Errorf("nothing was sent: %w", err)
	case errors.As(err, &unknown):
		return fmt.Errorf("a transfer may exist (txId %s): reconcile before sending again: %w", unknown.TxID, err)
	case err != nil:
		return err
	}
	fmt.Fprintf(out, "status %q, transfer %q, %d attempt(s)\n", res.Status, res.TransferID, res.Attempts)
	return nil
}
