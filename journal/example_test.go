package journal_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/journal"
)

// The journal watches the client's calls and the callback handler's
// deliveries, and Stuck reports the transfers that wait too long.
func Example() {
	ctx := context.Background()
	// A stand-in for the service, answering an initiation as the live
	// service does.
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":true,"data":{"transferId":"t-1"}}`)
	}))
	defer svc.Close()

	// A clock moved by hand, for the example's sake; by default the
	// journal uses time.Now. In a fleet, every replica's journal is on
	// one shared store (callback/redisstore, callback/pgstore).
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	j, err := journal.New(journal.NewMemoryStore(0, 0), journal.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	client, err := travelrule.NewClient(svc.URL,
		travelrule.WithTokenSource(travelrule.StaticToken("token")),
		travelrule.WithObserver(j)) // records each initiation before it is sent
	if err != nil {
		log.Fatal(err)
	}
	capKey := []byte("example-capability-key-0123456789")
	handler := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithCapabilityKey(capKey),
		callback.WithObserver(j)) // records each verified callback
	if err := handler.Err(); err != nil {
		log.Fatal(err)
	}

	cbURL, err := travelrule.NewCallbackURL("https://vasp.example/travelrule/callback", "payment-42", capKey)
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.InitiateTransfer(ctx, &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.25", Callback: cbURL,
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	})
	if err != nil {
		log.Fatal(err)
	}

	report := func() {
		found, err := j.Stuck(ctx, journal.Thresholds{})
		if err != nil {
			log.Fatal(err)
		}
		for _, f := range found {
			fmt.Printf("%s: %s, %s\n", f.Entry.TransferID, f.Rule, f.Entry.Stage)
		}
	}

	now = now.Add(25 * time.Hour) // no decision for a day
	report()

	// The service's TRANSFER_RESOLUTION reaches the handler.
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, cbURL,
		strings.NewReader(fmt.Sprintf(`{"transferId":%q,"status":"APPROVED"}`, res.TransferID))))
	fmt.Println("callback answered", rec.Code)

	now = now.Add(25 * time.Hour) // approved, and no txId for a day
	report()
	// Output:
	// t-1: initiated, no resolution, initiated
	// callback answered 204
	// t-1: approved, no txId submitted, resolved
}
