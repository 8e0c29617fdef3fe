// Command resolve answers an inbound inquiry about a transfer.
//
// With no environment it runs against the embedded sandbox, which first
// plays a counterparty that sends an inquiry; with TRAVELRULE_BASE_URL,
// TRAVELRULE_API_KEY and the transfer's id as the argument it resolves that
// inquiry on that service:
//
//	go run ./examples/resolve
//	go run ./examples/resolve <transfer-id> [true|false]
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/vaspkit/travelrule"
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
	baseURL := getenv("TRAVELRULE_BASE_URL")
	opts := []travelrule.Option{travelrule.WithAPIKey(getenv("TRAVELRULE_API_KEY"))}
	var transferID, approved = "", "true"
	if len(args) > 1 {
		approved = args[1]
	}
	if baseURL == "" {
		srv := travelruletest.NewServer()
		defer srv.Close()
		baseURL, opts = srv.URL, []travelrule.Option{travelrule.WithAPIKey(travelruletest.DefaultAPIKey)}
		// The counterparty sends us an inquiry; a real integration receives
		// it on its callback handler.
		inbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		defer inbox.Close()
		id, err := srv.StartInquiry(ctx, inbox.URL, &travelrule.TransferRequest{
			Asset: "ETH", Amount: "2", Callback: inbox.URL,
			Originator:  travelrule.Party{PersonType: "natural", FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09"},
			Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		})
		if err != nil {
			return err
		}
		transferID = id
	} else if len(args) > 0 {
		transferID = args[0]
	}
	client, err := travelrule.NewClient(baseURL, opts...)
	if err != nil {
		return err
	}
	res, err := client.ResolveInquiry(ctx, transferID, &travelrule.InquiryResolution{Approved: approved})
	if err != nil {
		return err // a *ValidationError when the transfer id is missing
	}
	fmt.Fprintf(out, "inquiry %s resolved with approved=%s: status %t\n", transferID, approved, res.Status)
	return nil
}
