package callback_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// The handler mounted in a mux next to the application's other routes,
// verifying the service's signature (x-data-integrity) before anything
// else: an unsigned or forged callback never reaches the function.
func ExampleNewHandler() {
	const secret = "whsec-live-signing-secret-0123456789abcdef" // from the service's dashboard
	v, err := callback.NewDataIntegrityVerifier(secret)
	if err != nil {
		panic(err)
	}
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		switch cb.Kind {
		case travelrule.KindInquiryResolution, travelrule.KindTransferResolution:
			switch cb.Decision() { // either message, any spelling
			case travelrule.Approved:
				fmt.Println("transfer", cb.TransferID, "approved")
			case travelrule.Rejected:
				fmt.Println("transfer", cb.TransferID, "rejected")
			}
		case travelrule.KindInquiry:
			fmt.Println("inquiry about", cb.TransferID, "for", cb.Inquiry.Amount, cb.Inquiry.Asset)
			// Decide, then answer with client.ResolveInquiry(ctx, cb.TransferID, ...).
		}
		return nil // an error answers 500 and the service delivers again
	}, callback.WithVerifier(v))
	if err := h.Err(); err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	mux.Handle("/travelrule/callback", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(body, signature string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/travelrule/callback", strings.NewReader(body))
		req.Header.Set(callback.HeaderDataIntegrity, signature)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	sign := func(body string) string { return callback.SignDataIntegrity([]byte(secret), []byte(body)) } // as the service does
	for _, body := range []string{
		`{"transferId":"tr-1","status":"approved","timestamp":"2025-03-01T12:00:00Z"}`,
		`{"transferId":"tr-1","status":"approved","timestamp":"2025-03-01T12:00:00Z"}`, // a redelivery
		`{"transferId":"tr-2","status":"inquiry","asset":"BTC","amount":"0.25","callback":"https://x.example/cb","originator":{},"beneficiary":{}}`,
		`not json`,
	} {
		post(body, sign(body))
	}
	post(`{"transferId":"tr-3","status":"approved"}`, "") // a forgery: unsigned
	// Output:
	// transfer tr-1 approved
	// 204 No Content
	// 204 No Content
	// inquiry about tr-2 for 0.25 BTC
	// 204 No Content
	// 400 Bad Request
	// 401 Unauthorized
}

// The capability URL flow: each transfer gets its own callback URL, made
// with a key that only the integrator holds; the handler verifies it and
// hands the reference on, so a callback is matched to its payment even
// without a transferId, and a callback to a guessed URL is refused.
func ExampleWithCapabilityKey() {
	key := []byte("load-me-from-a-secret-store-32-b") // at least 16 bytes
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		fmt.Println("payment", cb.Ref, "transfer", cb.TransferID, cb.Status)
		return nil
	}, callback.WithCapabilityKey(key))
	mux := http.NewServeMux()
	mux.Handle("/travelrule/callback", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// When initiating the transfer for payment-42:
	cbURL, err := travelrule.NewCallbackURL(srv.URL+"/travelrule/callback", "payment-42", key)
	if err != nil {
		panic(err)
	}
	_ = &travelrule.TransferRequest{Callback: cbURL /* , Asset, Amount, parties... */}

	// The service calls back at that URL; a forger does not know it.
	body := `{"transferId":"tr-1","status":"completed"}`
	for _, u := range []string{cbURL, srv.URL + "/travelrule/callback?tr_ref=payment-42&tr_tag=guessedguessedguessedg"} {
		resp, err := http.Post(u, "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// payment payment-42 transfer tr-1 completed
	// 204 No Content
	// 401 Unauthorized
}

// Signing a delivery the Standard Webhooks way, as a sender (or a test)
// does, and verifying it in the handler.
func ExampleWebhookVerifier() {
	secret := []byte("shared-secret-from-the-service")
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		fmt.Println("verified:", cb.TransferID, cb.Status)
		return nil
	}, callback.WithVerifier(&callback.WebhookVerifier{
		Secrets: [][]byte{secret},                // add the previous secret here during a rotation
		Now:     func() time.Time { return now }, // time.Now when nil
		// Tolerance: 0 means 5 minutes.
	}))

	body := []byte(`{"transferId":"tr-1","status":"received"}`)
	fmt.Println(callback.Sign(secret, "msg_1", now, body))
	for _, b := range [][]byte{body, []byte(`{"transferId":"tr-1","status":"completed"}`)} {
		r := httptest.NewRequest(http.MethodPost, "/travelrule/callback", strings.NewReader(string(b)))
		r.Header.Set(callback.HeaderID, "msg_1")
		r.Header.Set(callback.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		r.Header.Set(callback.HeaderSignature, callback.Sign(secret, "msg_1", now, body)) // signs the first body
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// v1,gHl6zYhssGSFu/I9XNOhna1dmZmFdGOr+W7BOyvHLZE=
	// verified: tr-1 received
	// 204
	// 401
}

// The live service's signature: x-data-integrity, the hex of an
// HMAC-SHA512 over the base64 of the body. The handler verifies it before
// anything else; a body changed on the way is refused.
func ExampleNewDataIntegrityVerifier() {
	const secret = "whsec-live-signing-secret-0123456789abcdef" // from the service's dashboard
	v, err := callback.NewDataIntegrityVerifier(secret)         // pass the old secret too during a rotation
	if err != nil {
		fmt.Println(err)
		return
	}
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		fmt.Println("verified:", cb.Kind, cb.TransferID, cb.Decision())
		return nil
	}, callback.WithVerifier(v))

	body := `{"transferId":"abc","status":"APPROVED","statusComment":"ok","callback":"https://x"}`
	signature := callback.SignDataIntegrity([]byte(secret), []byte(body)) // as the service signs: for your tests
	fmt.Println(signature[:16] + "…")
	for _, b := range []string{body, strings.Replace(body, "APPROVED", "REJECTED", 1)} {
		r := httptest.NewRequest(http.MethodPost, "/travelrule/callback", strings.NewReader(b))
		r.Header.Set(callback.HeaderDataIntegrity, signature)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// 77bfd3f709658286…
	// verified: transfer_resolution abc approved
	// 204
	// 401
}
