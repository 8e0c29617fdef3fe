package travelrule_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

func ExampleNewClient() {
	srv := travelruletest.NewServer() // in production: your service's base URL
	defer srv.Close()

	client, err := travelrule.NewClient(srv.URL,
		travelrule.WithTokenSource(srv.TokenSource()), // any oauth2.TokenSource of bearer JWTs
		travelrule.WithUserAgent("acme-exchange/2.1"),
		travelrule.WithRetryMax(5),
		travelrule.WithRetryWait(200*time.Millisecond, 10*time.Second),
		travelrule.WithHTTPClient(&http.Client{Timeout: 15 * time.Second}),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = client
	fmt.Println("ready")
	// Output: ready
}

func ExampleClient_InitiateTransfer() {
	srv := travelruletest.NewServer()
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
	if err != nil {
		log.Fatal(err)
	}

	res, err := client.InitiateTransfer(context.Background(), &travelrule.TransferRequest{
		TxID:        "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
		Asset:       "BTC",
		Amount:      "0.25",
		Callback:    "https://vasp-a.example/travelrule/callback",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", Country: "GB"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	})
	var invalid *travelrule.ValidationError
	switch {
	case errors.As(err, &invalid):
		for _, f := range invalid.Fields {
			fmt.Println(f.Field, f.Reason) // nothing was sent
		}
		return
	case errors.Is(err, travelrule.ErrOutcomeUnknown):
		// The service may have stored the transfer: reconcile, do not resend.
		return
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(res.OK(), res.Attempts)
	// Output: true 1
}

func ExampleClient_ResolveInquiry() {
	srv := travelruletest.NewServer()
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
	if err != nil {
		log.Fatal(err)
	}
	// A counterparty sends an inquiry to our callback handler (here a
	// stand-in that accepts it).
	inbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer inbox.Close()
	transferID, err := srv.StartInquiry(context.Background(), inbox.URL, &travelrule.TransferRequest{
		Asset: "ETH", Amount: "2", Callback: inbox.URL,
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
	})
	if err != nil {
		log.Fatal(err)
	}

	res, err := client.ResolveInquiry(context.Background(), transferID, travelrule.Approve(""))
	if err != nil {
		// errors.Is(err, travelrule.ErrNotApplied): it was decided the other way before.
		log.Fatal(err)
	}
	fmt.Println(res.OK())

	// The other decision now is not applied: an error, never a result.
	_, err = client.ResolveInquiry(context.Background(), transferID, travelrule.Reject())
	fmt.Println(errors.Is(err, travelrule.ErrNotApplied))
	// Output:
	// true
	// true
}

func ExampleNewCallbackURL() {
	key := []byte("a key of at least 16 bytes, kept secret")
	cbURL, err := travelrule.NewCallbackURL("https://vasp-a.example/travelrule/callback", "payment-1001", key)
	if err != nil {
		log.Fatal(err)
	}
	// Give cbURL as TransferRequest.Callback; callback.WithCapabilityKey(key)
	// verifies it and hands "payment-1001" to your function as Callback.Ref.
	fmt.Println(travelrule.CallbackRef(cbURL))
	// Output: payment-1001
}

func ExampleTransferRequest_Validate() {
	req := &travelrule.TransferRequest{
		Asset:       "BTC",
		Callback:    "vasp-a.example/cb",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", Country: "GBR"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
	var invalid *travelrule.ValidationError
	if errors.As(req.Validate(), &invalid) {
		for _, f := range invalid.Fields {
			fmt.Printf("%s: %s\n", f.Field, f.Reason)
		}
	}
	// Output:
	// amount: required
	// callback: must be an absolute http or https URL
	// originator.country: must be exactly 2 letters
}

func ExampleParty_Format() {
	p := travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", Country: "GB"}
	fmt.Printf("%v\n", p)
	legal := travelrule.Party{PersonType: "legal", LegalName: "Acme Custody GmbH", Email: "ops@acme.example", Country: "DE"}
	fmt.Printf("%v\n", legal)
	// Output:
	// {PersonType:natural FirstName:[redacted] LastName:[redacted] LegalName: DateOfBirth:[redacted] Email: AddressType: StreetName: BuildingNumber: PostCode: TownName: Country:GB NationalID: NationalIDType: AccountNumber: WalletAddress:}
	// {PersonType:legal FirstName: LastName: LegalName:[redacted] DateOfBirth: Email:[redacted] AddressType: StreetName: BuildingNumber: PostCode: TownName: Country:DE NationalID: NationalIDType: AccountNumber: WalletAddress:}
}

func ExampleEncodeTravelAddress() {
	ta, err := travelrule.EncodeTravelAddress("beneficiary.com/x/12345?t=i")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ta)
	// Output: ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv
}

func ExampleDecodeTravelAddress() {
	uri, err := travelrule.DecodeTravelAddress("ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("https://" + uri)

	// The live service's unchecked form: readable, without checksum.
	uri, err = travelrule.DecodeTravelAddress("ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN")
	fmt.Println("https://"+uri, err)

	// Its opaque form: valid, but not readable; send it as it is.
	_, err = travelrule.DecodeTravelAddress("taCFLQmuE6GqfR2jRM6m8qF7b9V8PjhzGiED4KmteccXagHRPKVDbLSKe9MwF755NJuKL5Q1CJ1zmXDm2m7crZBUJ7pPfDCoKL1n")
	fmt.Println(errors.Is(err, travelrule.ErrOpaqueTravelAddress), errors.Is(err, travelrule.ErrInvalidTravelAddress))

	// One character of a checksummed address mistyped:
	_, err = travelrule.DecodeTravelAddress("ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9ww")
	fmt.Println(errors.Is(err, travelrule.ErrInvalidTravelAddress), err)
	// Output:
	// https://beneficiary.com/x/12345?t=i
	// https://trp.your-domain.com/transfers/inquiry/019ac452-8660-7061-9b93-8d72eaa11a89?t=i <nil>
	// true false
	// true travelrule: invalid travel address: checksum does not match and it does not end in t=i (mistyped?)
}

func ExampleInspectTravelAddress() {
	for _, ta := range []string{
		"ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv",                                                                 // TRP's example
		"ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN", // the live service's
		"ta1qexamplebeneficiaryvasp1ahjk23",                                                                             // the live docs' placeholder
		"ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9ww",                                                                 // mistyped
	} {
		form, _ := travelrule.InspectTravelAddress(ta)
		fmt.Println(form)
	}
	// Output:
	// checksummed
	// unchecked
	// opaque
	// invalid
}

func ExampleWithAPIKey() {
	srv := travelruletest.NewServer() // in production: "https://trp.travel-rule.com"
	defer srv.Close()

	// The key from your secret store, never from source code or argv.
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		log.Fatal(err)
	}
	// Log in at start-up, so that a refused key stops the deployment
	// rather than the first transfer.
	err = client.Login(context.Background())
	var refused *travelrule.LoginError
	switch {
	case errors.As(err, &refused):
		log.Fatalf("API key refused (%s): make or reactivate one in the dashboard", refused.Refusal)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println("logged in")
	// Output: logged in
}

func ExampleClient_GenerateTravelAddress() {
	srv := travelruletest.NewServer()
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		log.Fatal(err)
	}

	// As the beneficiary's VASP: the address your customer gives senders.
	beneficiary := &travelrule.TravelAddressRequest{
		PersonType:    "natural",
		FirstName:     "Alan",
		LastName:      "Turing",
		WalletAddress: "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
		ExternalID:    "customer-1912", // your own id: the same customer, the same address
	}
	res, err := client.GenerateTravelAddress(context.Background(), beneficiary)
	if err != nil {
		log.Fatal(err)
	}
	again, err := client.GenerateTravelAddress(context.Background(), beneficiary)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Form, res.TravelAddress == again.TravelAddress)
	// Output: unchecked true
}

func ExampleClient_LookupTravelAddress() {
	srv := travelruletest.NewServer()
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		log.Fatal(err)
	}
	made, err := client.GenerateTravelAddress(context.Background(), &travelrule.TravelAddressRequest{
		PersonType: "legal", LegalName: "Acme Custody GmbH", WalletAddress: "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
	})
	if err != nil {
		log.Fatal(err)
	}

	info, err := client.LookupTravelAddress(context.Background(), made.TravelAddress)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.LegalName == "Acme Custody GmbH")
	// Output: true
}

func ExampleClient_SubmitTxID() {
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.InitiateTransfer(context.Background(), &travelrule.TransferRequest{
		Asset:       "BTC",
		Amount:      "0.25",
		Callback:    "https://vasp-a.example/travelrule/callback",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23", Email: "alan@example.org"},
	})
	if err != nil {
		log.Fatal(err)
	}

	// After the broadcast: the same hash every time, so a retry is safe.
	tx, err := client.SubmitTxID(context.Background(), res.TransferID, "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tx.OK())
	// Output: true
}

func ExampleClient_SearchVASPs() {
	srv := travelruletest.NewServer()
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.SearchVASPs(context.Background(), &travelrule.VASPQuery{Domain: "example.com"})
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range res.VASPs {
		fmt.Println(v.Name, v.Domain)
	}
	// Output:
	// Example Exchange exchange.example.com
	// Example Custody custody.example.com
}

func ExampleErrorCode() {
	srv := travelruletest.NewServer()
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.SubmitTxID(context.Background(), "no-such-transfer", "0xabc")
	fmt.Println(errors.Is(err, travelrule.CodeTransferNotFound), errors.Is(err, travelrule.ErrNotFound))
	// Output: true true
}

// The field faults of a request, whichever side found them: the client
// before sending, or the service in its 400.
func ExampleFieldErrors() {
	srv := travelruletest.NewServer()
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.InitiateTransfer(context.Background(), &travelrule.TransferRequest{
		Asset: "BTC", Amount: "0.25", Callback: "https://vasp-a.example/cb",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing"},
	})
	fmt.Println(errors.Is(err, travelrule.ErrInvalidRequest)) // nothing was sent
	for _, f := range travelrule.FieldErrors(err) {
		fmt.Println(f.Field, f.Reason)
	}
	// Output:
	// true
	// beneficiary.dateOfBirth required for both parties by the interface description (2.2)
}

// The decision of a resolution callback, read one way for the live
// INQUIRY_RESOLUTION and TRANSFER_RESOLUTION alike.
func ExampleCallback_Decision() {
	for _, body := range []string{
		`{"approved":true,"callback":"https://vasp-b.example/confirm"}`,
		`{"transferId":"abc","status":"APPROVED","statusComment":"ok","callback":"https://x"}`,
		`{"transferId":"abc","status":"REJECTED","statusComment":"sanctions","callback":"https://x"}`,
	} {
		cb, err := travelrule.ParseCallback([]byte(body))
		if err != nil {
			log.Fatal(err)
		}
		switch cb.Decision() {
		case travelrule.Approved:
			fmt.Println(cb.Kind, "approved")
		case travelrule.Rejected:
			fmt.Println(cb.Kind, "rejected")
		}
	}
	// Output:
	// inquiry_resolution approved
	// transfer_resolution approved
	// transfer_resolution rejected
}

// The live service's INQUIRY, as a beneficiary's VASP receives it: the
// parties are an IVMS101 payload, read into typed fields.
func ExampleParseCallback() {
	body := []byte(`{"asset":"ETH","amount":"1.5",
	 "callback":"https://trp.example/transfers/inquiryResolution?q=019ac452-8660-7061-9b93-8d72eaa11a89",
	 "IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{
	   "name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","secondaryIdentifier":"Grace","nameIdentifierType":"LEGL"}]},
	   "dateAndPlaceOfBirth":{"dateOfBirth":"1906-12-09","placeOfBirth":"New York"},"countryOfResidence":"US"}}],
	   "accountNumber":["0x742d35Cc6634C0532925a3b844Bc454e4438f44e"]},
	  "beneficiary":{"beneficiaryPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Lovelace","secondaryIdentifier":"Ada","nameIdentifierType":"LEGL"}]}}}]}}}`)
	cb, err := travelrule.ParseCallback(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	o := cb.Inquiry.Originator
	fmt.Println(cb.Kind, cb.TransferID, cb.Inquiry.Amount, cb.Inquiry.Asset)
	fmt.Println(o.PersonType, o.LastName, o.DateOfBirth, o.Country)
	fmt.Println("not in the flat party:", cb.Unmapped) // still in cb.IVMS101
	fmt.Println(o)                                     // personal data redacted
	// Output:
	// inquiry 019ac452-8660-7061-9b93-8d72eaa11a89 1.5 ETH
	// natural Hopper 1906-12-09 US
	// not in the flat party: [originator.originatorPersons[0].naturalPerson.dateAndPlaceOfBirth.placeOfBirth]
	// {PersonType:natural FirstName:[redacted] LastName:[redacted] LegalName: DateOfBirth:[redacted] Email: AddressType: StreetName: BuildingNumber: PostCode: TownName: Country:US NationalID: NationalIDType: AccountNumber: WalletAddress:[redacted]}
}

// A request's parties as the IVMS101 payload an inquiry carries, and what
// IVMS101 has no place for.
func ExampleTransferRequest_IVMS101() {
	req := &travelrule.TransferRequest{
		Originator: travelrule.Party{PersonType: "natural", FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09", Country: "US",
			AccountNumber: "cust-1906", WalletAddress: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"},
		Beneficiary: travelrule.Party{PersonType: "legal", LegalName: "Analytical Engines Ltd", Email: "ops@engines.example"},
	}
	p, unmapped := req.IVMS101()
	out, err := json.Marshal(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// IVMS101 takes a date of birth only with a place of birth, which a
	// Party has not: it is left out, and said to be.
	fmt.Println("unmapped:", unmapped)
	fmt.Println("valid IVMS101:", p.Validate() == nil)
	// Output:
	// {"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","secondaryIdentifier":"Grace","nameIdentifierType":"LEGL"}]},"customerIdentification":"cust-1906","countryOfResidence":"US"}}],"accountNumber":["0x742d35Cc6634C0532925a3b844Bc454e4438f44e"]},"beneficiary":{"beneficiaryPersons":[{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"Analytical Engines Ltd","legalPersonNameIdentifierType":"LEGL"}]}}}]}}
	// unmapped: [originator.dateOfBirth beneficiary.email]
	// valid IVMS101: true
}

// Per-call options: this initiation has its own deadline per attempt, no
// more than one retry, a header for the integrator's gateway and the
// payment's own idempotency key, all without a second client. None of them
// makes the initiation repeatable.
func ExampleCallOption() {
	srv := travelruletest.NewServer()
	defer srv.Close()
	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
	if err != nil {
		log.Fatal(err)
	}
	req := &travelrule.TransferRequest{
		TxID:        "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
		Asset:       "BTC",
		Amount:      "0.25",
		Callback:    "https://vasp-a.example/travelrule/callback",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
	}
	res, err := client.InitiateTransfer(context.Background(), req,
		travelrule.WithCallAttemptTimeout(5*time.Second),
		travelrule.WithCallRetryMax(1),
		travelrule.WithCallHeader("X-Tenant", "eu-1"),
		travelrule.WithCallIdempotencyKey("payment-2026-0042"),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.OK(), res.IdempotencyKey)

	// An option that is not allowed fails the call before anything is sent.
	_, err = client.InitiateTransfer(context.Background(), req, travelrule.WithCallHeader("Authorization", "Bearer another"))
	fmt.Println(err)
	// Output:
	// true payment-2026-0042
	// travelrule: invalid request: WithCallHeader: Authorization is set by the client
}
