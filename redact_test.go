package travelrule_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// wrapped nests a value in a struct, as an application's own types do.
type wrapped struct{ V any }

// formsOf renders x with every fmt verb, alone and nested in a struct, and
// through log/slog's text and JSON handlers, as a value, in a group and in
// a struct. For a type whose JSON form is its wire form (wire), the JSON
// handler's rendering of the struct (encoding/json's) is left out.
func formsOf(x any, wire bool) map[string]string {
	out := map[string]string{"Sprint": fmt.Sprint(x), "Sprintln": fmt.Sprintln(x)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out[verb] = fmt.Sprintf(verb, x)
		out["nested "+verb] = fmt.Sprintf(verb, wrapped{x})
	}
	for name, newHandler := range map[string]func(io.Writer) slog.Handler{
		"text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, scanned) },
		"json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, scanned) },
	} {
		var buf bytes.Buffer
		l := slog.New(newHandler(&buf))
		l.Info("m", "value", x)
		l.Info("m", slog.Group("g", slog.Any("nested", x)))
		if name == "text" || !wire {
			l.Info("m", "struct", wrapped{x})
		}
		out["slog "+name] = buf.String()
	}
	return out
}

// TestEveryTypeIsRedacted renders every exported type that holds personal
// data, server text or a capability, made by real calls against a hostile
// server, and finds none of the planted values in any case or encoding.
func TestEveryTypeIsRedacted(t *testing.T) {
	const (
		echoed = "Zebulon Quaxworth"                    // server text that is a name
		wallet = "bc1qPlantedWalletAddressQuaxworth000" // an identifier-shaped personal value
		rawID  = "rid Zebulon"                          // a request id of any text
		tag    = "PlantedCapabilityKey0123"             // the capability key
	)
	key := []byte(tag)
	cbURL, err := travelrule.NewCallbackURL("https://vasp.example/cb", "pay-1", key)
	require.NoError(t, err)
	capTag := cbURL[strings.Index(cbURL, "tr_tag=")+len("tr_tag="):]
	req := hostileRequest()
	req.Callback = cbURL
	req.Originator.WalletAddress = wallet
	planted := append(piiOf(req), echoed, wallet, rawID, capTag, "Quaxworth")

	hostile := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Request-Id", rawID)
			w.Header().Set("X-Echo", echoed)
			answer(status, body)(w, r)
		}
	}
	c, _ := setup(t, hostile(200, `{"status":"succes","transferId":"`+echoed+`","note":"`+wallet+`"}`))
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	c, _ = setup(t, hostile(200, `{"status":true,"note":"`+echoed+`"}`))
	inq, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true", Callback: cbURL})
	require.NoError(t, err)

	c, _ = setup(t, hostile(400, `{"error":"`+wallet+`","message":"`+echoed+`","fields":[{"field":"`+wallet+`","reason":"`+echoed+`"},{"field":"originator.lastName","reason":"`+echoed+`"}]}`))
	_, err = c.InitiateTransfer(context.Background(), req)
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Len(t, apiErr.Fields, 2)

	c, _ = setup(t, hostile(500, `{"message":"`+echoed+`"}`))
	_, err = c.InitiateTransfer(context.Background(), req)
	var unknown *travelrule.OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)

	c, _ = setup(t, hostile(200, `{"status":true,"data":{"travelAddress":"`+echoed+`","note":"`+wallet+`"}}`))
	taRes, err := c.GenerateTravelAddress(context.Background(), &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: req.Originator.FirstName, LastName: req.Originator.LastName, WalletAddress: wallet})
	require.NoError(t, err)
	c, _ = setup(t, hostile(200, `{"status":true,"data":{"firstName":"`+echoed+`","walletAddress":"`+wallet+`"}}`))
	taInfo, err := c.LookupTravelAddress(context.Background(), "ta1qexamplebeneficiaryvasp1ahjk23")
	require.NoError(t, err)
	c, _ = setup(t, hostile(200, `{"status":"`+echoed+`"}`))
	_, err = c.SubmitTxID(context.Background(), "t-1", "0xabc")
	require.Error(t, err)
	c, _ = setup(t, hostile(200, `{"status":true,"txId":"`+echoed+`"}`))
	txRes, err := c.SubmitTxID(context.Background(), "t-1", "0xabc")
	require.NoError(t, err)
	c, _ = setup(t, hostile(200, `{"status":true,"data":{"count":1,"vasps":[{"name":"`+echoed+`","domain":"`+wallet+`"}]}}`))
	vasps, err := c.SearchVASPs(context.Background(), &travelrule.VASPQuery{Domain: "example.com"})
	require.NoError(t, err)
	c, _ = setup(t, hostile(400, `{"status":false,"errors":[{"code":"`+wallet+`","message":"`+echoed+`","field":"`+wallet+`"},{"code":"VALIDATION_ERROR","message":"`+echoed+`"}]}`))
	_, err = c.InitiateTransfer(context.Background(), req)
	var liveErr *travelrule.APIError
	require.ErrorAs(t, err, &liveErr)

	cb, err := travelrule.ParseCallback([]byte(`{"transferId":"` + echoed + `","status":"` + echoed + `","txId":"` + echoed + `"}`))
	require.NoError(t, err)

	tests := []struct {
		name  string
		value any
		wire  bool
		want  string // in the %+v form: what stays readable
	}{
		{"*TransferResult", res, true, "Attempts:1 Raw:["},
		{"TransferResult", *res, true, "Status:succes TransferID:[redacted] RequestID:[redacted]"},
		{"*InquiryResult", inq, true, "{Status:true RequestID:[redacted] Attempts:1 Raw:["},
		{"InquiryResolution", travelrule.InquiryResolution{Approved: "true", Callback: cbURL}, true, "{Approved:true Callback:[redacted]}"},
		{"*APIError", apiErr, false, "StatusCode:400 Code:[redacted] Codes: Message:[redacted]"},
		{"APIError wrapped", fmt.Errorf("paying: %w", apiErr), false, "paying: travelrule: InitiateTransfer: 400 Bad Request (fields: originator.lastName)"},
		{"FieldError from the server, unknown path", apiErr.Fields[0], true, "[redacted]: [redacted]"},
		{"FieldError from the server, known path", apiErr.Fields[1], true, "originator.lastName: [redacted]"},
		{"*OutcomeUnknownError", unknown, false, "Callback:[redacted] CallbackRef:pay-1"},
		{"OutcomeUnknownError wrapped", fmt.Errorf("paying: %w", unknown), false, "outcome unknown after 1 attempt(s)"},
		{"*Callback", cb, true, "TransferID:[redacted] Status:[redacted] StatusComment: TxID:[redacted]"},
		{"TransferRequest", *req, true, "Callback:[redacted]"},
		{"Party", req.Originator, true, "WalletAddress:[redacted]"},
		{"*TravelAddressResult", taRes, true, "TravelAddress:[redacted] Form:invalid"},
		{"*TravelAddressInfo", taInfo, true, "FirstName:[redacted]"},
		{"TravelAddressRequest", travelrule.TravelAddressRequest{PersonType: "natural", FirstName: req.Originator.FirstName, WalletAddress: wallet}, true, "FirstName:[redacted]"},
		{"*TxIDResult", txRes, true, "Status:true"},
		{"*VASPSearchResult", vasps, true, "Count:1 VASPs:[1]"},
		{"*APIError from the live envelope", liveErr, false, "StatusCode:400 Code:[redacted] Codes: Message:[redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forms := formsOf(tt.value, tt.wire)
			for form, out := range forms {
				lower := strings.ToLower(out)
				for _, p := range planted {
					for _, enc := range []string{p, hex.EncodeToString([]byte(p)), strings.Trim(fmt.Sprint([]byte(p)), "[]"), strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(p)), "=")} {
						assert.NotContains(t, lower, strings.ToLower(enc), "%s leaks %q", form, p)
					}
				}
			}
			assert.Contains(t, forms["%+v"], tt.want)
		})
	}
}

func TestServerMessageIsBehindItsAccessor(t *testing.T) {
	req := fullRequest()
	echo := fmt.Sprintf(`{"message":"cannot route %s %s born %s at %s","fields":[{"field":"beneficiary.walletAddress","reason":"unknown wallet %s"}]}`,
		req.Originator.FirstName, req.Originator.LastName, req.Originator.DateOfBirth, req.Beneficiary.WalletAddress, req.Beneficiary.WalletAddress)
	c, _ := setup(t, answer(400, echo))
	// No printed form carries server text; ServerMessage and the fields'
	// Reason return it as it came.
	_, err := c.InitiateTransfer(context.Background(), req)
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	for _, pii := range piiOf(req) {
		assert.NotContains(t, err.Error(), pii)
		assert.NotContains(t, printedForms(t, err), pii)
		assert.NotContains(t, printedForms(t, apiErr.Fields), pii)
	}
	assert.Equal(t, fmt.Sprintf("cannot route %s %s born %s at %s", req.Originator.FirstName, req.Originator.LastName,
		req.Originator.DateOfBirth, req.Beneficiary.WalletAddress), apiErr.ServerMessage())
	require.Len(t, apiErr.Fields, 1)
	assert.Equal(t, "unknown wallet "+req.Beneficiary.WalletAddress, apiErr.Fields[0].Reason)
	assert.Equal(t, echo, string(apiErr.Body), "the raw body is kept for the caller")
}

func TestScannedLogsHaveNoClockDigits(t *testing.T) {
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, scanned)).Info("m", "wait", 1410623*time.Nanosecond, "n", 7)
	slog.New(slog.NewTextHandler(&buf, scanned)).Info("m", slog.Group("g", "wait", 10623*time.Millisecond))
	assert.Equal(t, `{"level":"INFO","msg":"m","wait":"[duration]","n":7}`+"\n"+`level=INFO msg=m g.wait=[duration]`+"\n", buf.String())
}

func TestRedactionInFmtAndSlog(t *testing.T) {
	req := fullRequest()
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, scanned))
	logger.Info("req", "request", req, "value", *req, "party", req.Originator)
	logger.Info("text", slog.Any("request", req))
	slog.New(slog.NewTextHandler(&buf, scanned)).Info("text", "request", req)
	for _, verb := range []string{"%v", "%+v", "%s", "%#v", "%q", "%d", "%x"} {
		fmt.Fprintf(&buf, verb+"\n", req)
		fmt.Fprintf(&buf, verb+"\n", *req)
		fmt.Fprintf(&buf, verb+"\n", req.Beneficiary)
		fmt.Fprintf(&buf, verb+"\n", &req.Originator)
	}
	out := buf.String()
	for _, pii := range piiOf(req) {
		assert.NotContains(t, out, pii)
	}
	assert.Contains(t, out, "[redacted]")
	assert.Contains(t, out, "ETH", "non-personal fields stay readable")
	assert.Contains(t, out, "DE")
}

// TestNoSecretsInLogsOrErrors runs every path of the client with a
// debug-level logger and scans the log and every error string for the
// token and the request's personal data.
func TestNoSecretsInLogsOrErrors(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, scanned))
	req := fullRequest()
	echo := `{"message":"` + req.Originator.LastName + ` ` + req.Beneficiary.WalletAddress + `"}`
	handlers := map[string]http.HandlerFunc{
		"ok":       answer(200, `{"status":"succes"}`),
		"400 echo": answer(400, echo),
		"401":      answer(401, echo),
		"404":      answer(404, echo),
		"429": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "0")
			answer(429, echo)(w, r)
		},
		"500":     answer(500, echo),
		"503":     answer(503, echo),
		"dropped": dropAfterRead,
		"garbage": answer(200, echo),
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example/x", http.StatusTemporaryRedirect)
		},
		"slow":      func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, // until the client gives up
		"too large": answer(400, strings.Repeat(req.Originator.FirstName, 100000)),
	}
	var errs []string
	for name, h := range handlers {
		for _, idem := range []bool{false, true} {
			opts := []travelrule.Option{travelrule.WithLogger(logger), travelrule.WithMaxResponseBytes(64 << 10)}
			if idem {
				opts = append(opts, travelrule.WithIdempotency())
			}
			c, _ := setup(t, h, opts...)
			for _, call := range []func(context.Context) error{
				func(ctx context.Context) error { _, err := c.InitiateTransfer(ctx, req); return err },
				func(ctx context.Context) error {
					_, err := c.ResolveInquiry(ctx, "t-1", &travelrule.InquiryResolution{Approved: "true", Callback: req.Callback})
					return err
				},
			} {
				// Only the slow server needs the caller to give up; the
				// others run every retry to its end.
				ctx, cancel := context.WithCancel(context.Background())
				if name == "slow" {
					ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
				}
				if err := call(ctx); err != nil {
					errs = append(errs, name+": "+err.Error())
				}
				cancel()
			}
		}
	}
	bad := *req
	bad.Originator.Country = req.Originator.FirstName
	c, _ := setup(t, answer(200, ""), travelrule.WithLogger(logger))
	_, err := c.InitiateTransfer(context.Background(), &bad)
	errs = append(errs, err.Error())

	mu.Lock()
	out := logs.String() + strings.Join(errs, "\n")
	mu.Unlock()
	assert.Contains(t, logs.String(), "level=DEBUG", "the debug logger saw the calls")
	for _, secret := range append(piiOf(req), req.Callback) {
		assert.NotContains(t, out, secret)
	}
}

// piiOf lists every personal value of a request, and the test token.
func piiOf(r *travelrule.TransferRequest) []string {
	out := []string{testToken, r.Email, r.TravelAddress}
	for _, p := range []travelrule.Party{r.Originator, r.Beneficiary} {
		for _, v := range []string{p.FirstName, p.LastName, p.DateOfBirth, p.StreetName, p.PostCode, p.TownName, p.NationalID, p.AccountNumber, p.WalletAddress} {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// A short personal value (a first name "Ma", a last name "Li") is cut out
// of the server's text where it writes it as a word, and the server's words
// that hold its letters ("match") stay readable, in the message and the
// field reasons. A value shown or hidden whole (a code that is not one of
// the documented ones, a request id, a transfer id) is hidden when it holds
// the value anywhere, since nothing can be cut out of it; a documented code
// (VALIDATION_ERROR, for "Li") is always shown.
func TestShortPersonalValuesHideOnlyAsWords(t *testing.T) {
	req := fullRequest()
	req.Beneficiary.FirstName = "Ma"
	req.Beneficiary.LastName = "Li"
	tests := []struct {
		name, code, requestID, message, reason string
		wantText, hiddenText                   []string // in err.Error()
		wantMessage, wantReason                string
	}{
		{
			name: "its letters inside words", code: "INVALID_MATCH", requestID: "req-match-1",
			message: "checksum does not match", reason: "checksum does not MATCH",
			hiddenText:  []string{"INVALID_MATCH", "req-match-1"},
			wantMessage: "checksum does not match", wantReason: "checksum does not MATCH",
		},
		{
			name: "a documented code holding a short name's letters", code: "VALIDATION_ERROR", requestID: "req-1",
			message: "linear check failed", reason: "invalid",
			wantText:    []string{"VALIDATION_ERROR", "req-1"},
			wantMessage: "linear check failed", wantReason: "invalid",
		},
		{
			name: "glued inside an identifier", code: "SANCTIONS_HITLI", requestID: "REQMAX",
			message: "hit", reason: "hit",
			hiddenText:  []string{"SANCTIONS_HITLI", "REQMAX"},
			wantMessage: "hit", wantReason: "hit",
		},
		{
			name: "the name as a word", code: "INVALID_MA", requestID: "req-ma-1",
			message: `beneficiary "Ma" unknown`, reason: "firstName=MA, refused",
			hiddenText:  []string{"INVALID_MA", "req-ma-1"},
			wantMessage: `beneficiary "Ma" unknown`, wantReason: "firstName=MA, refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Request-Id", tt.requestID)
				answer(400, fmt.Sprintf(`{"error":%q,"message":%q,"fields":[{"field":"beneficiary.firstName","reason":%q}]}`, tt.code, tt.message, tt.reason))(w, r)
			})
			_, err := c.InitiateTransfer(context.Background(), req)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.wantMessage, apiErr.ServerMessage())
			require.Len(t, apiErr.Fields, 1)
			assert.Equal(t, tt.wantReason, apiErr.Fields[0].Reason)
			assert.NotContains(t, printedForms(t, err), tt.message)
			assert.NotContains(t, printedForms(t, apiErr.Fields), tt.reason)
			for _, s := range tt.wantText {
				assert.Contains(t, err.Error(), s)
			}
			for _, s := range tt.hiddenText {
				assert.NotContains(t, err.Error(), s)
				assert.NotContains(t, fmt.Sprintf("%+v", apiErr), s)
			}
		})
	}
	// A transfer id joins a transfer's records: hidden only when it holds
	// the value as a word.
	for id, want := range map[string]string{"tr-linear-1": "TransferID:tr-linear-1", "tr-li-1": "TransferID:[redacted]", "tr-ok-1": "TransferID:tr-ok-1"} {
		c, _ := setup(t, answer(200, `{"status":"succes","transferId":"`+id+`"}`))
		res, err := c.InitiateTransfer(context.Background(), req)
		require.NoError(t, err)
		assert.Contains(t, fmt.Sprintf("%+v", *res), want)
	}
}

// TestTransferIDKeptBesideShortNumbers: a transfer id in which a short
// personal value's characters happen to fall (the building number "12" in
// a UUID) is kept and shown: it joins the transfer's records and
// callbacks. (Hidden, the journal lost the id of such a transfer.)
func TestTransferIDKeptBesideShortNumbers(t *testing.T) {
	const id = "4b1f2ae3-5c6d-4e7f-8a9b-e07fc91280a7"
	req := fullRequest()
	req.Beneficiary.BuildingNumber = "12"
	c, _ := setup(t, answer(200, `{"status":true,"data":{"transferId":"`+id+`"}}`))
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprintf("%+v", *res), "TransferID:"+id)
}
