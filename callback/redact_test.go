package callback_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// Planted values: secrets, capability keys and tags, and personal data of a
// callback body. None may come out of any rendering of the package's types.
const (
	plantedSecret    = "Planted-Webhook-Secret-Q7x"
	plantedRotated   = "Planted-Rotated-Secret-W3k" // handed to NewWebhookVerifier as whsec_<base64>
	plantedCapKey    = "Planted-Capability-Key-Z9v"
	plantedWeak      = "PlantedWeak15b!" // 15 bytes: refused
	plantedNotBase64 = "Planted!Not!Base64!"
	plantedRedeliver = "msg-Zebulon-Quaxworth-id" // a webhook-id spelling a name
	plantedTagged    = "https://b.example/trp?tr_ref=x&tr_tag=PlantedTagPlantedTag9"
	// plantedInquiryFields are a flat inbound inquiry's members.
	plantedInquiryFields = `"transferId":"tr-77","status":"inquiry","asset":"BTC","amount":"0.25",
 "callback":"https://bank.example/cb?tr_ref=p1&tr_tag=PlantedInquiryTagXxxx1","travelAddress":"ta1PlantedTravelAddr",
 "email":"zebulon@planted.example",
 "originator":{"personType":"natural","firstName":"Zebulon","lastName":"Quaxworth","dateOfBirth":"1901-02-03",
   "streetName":"Plantedstrasse","postCode":"PLZ-99417","walletAddress":"bc1qPlantedOriginatorWallet"},
 "beneficiary":{"personType":"natural","firstName":"Philippa","lastName":"Oxenbridge","nationalId":"NI-PLANTED-4411"}`
	// plantedBody carries every kind of planted value at once: an inquiry
	// with a decision, so of KindUnknown.
	plantedBody = `{` + plantedInquiryFields + `,
 "approved":{"address":"bc1qPlantedApprovedAddress","callback":"` + plantedTagged + `"},
 "rejected":"Zebulon Quaxworth is on a list"}`
	// plantedInquiry is a flat inquiry alone: KindInquiry, its parties in
	// Inquiry.
	plantedInquiry = `{` + plantedInquiryFields + `}`
	// plantedIVMS101Members are an IVMS101 payload's members, planted.
	plantedIVMS101Members = `"originator":{"originatorPersons":[{"naturalPerson":{
   "name":{"nameIdentifier":[{"primaryIdentifier":"Quaxworth","secondaryIdentifier":"Zebulon","nameIdentifierType":"LEGL"}]},
   "geographicAddress":[{"addressType":"HOME","streetName":"Plantedstrasse","postCode":"PLZ-99417","townName":"Plantedtown","country":"DE"}],
   "dateAndPlaceOfBirth":{"dateOfBirth":"1901-02-03","placeOfBirth":"Plantedbirthplace"}}}],
  "accountNumber":["bc1qPlantedOriginatorWallet"]},
 "beneficiary":{"beneficiaryPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Oxenbridge","secondaryIdentifier":"Philippa","nameIdentifierType":"LEGL"}]}}}],
  "accountNumber":["bc1qPlantedBeneficiaryWallet"]},
 "originatingVASP":{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"Planted Exchange GmbH","legalPersonNameIdentifierType":"LEGL"}]}}}}`
	// plantedLiveInquiry is the live service's INQUIRY, the payload nested;
	// plantedLiveEnvelope the same with the payload's members at the top
	// level, as live-service.md's stage 4 also describes it.
	plantedLiveInquiry  = `{"asset":"ETH","amount":"1","callback":"https://svc.example/transfers/inquiryResolution?q=t-9&tr_tag=PlantedInquiryTagXxxx2","IVMS101":{` + plantedIVMS101Members + `}}`
	plantedLiveEnvelope = `{"asset":"ETH","amount":"1","callback":"https://svc.example/transfers/inquiryResolution?q=t-9&tr_tag=PlantedInquiryTagXxxx2",` + plantedIVMS101Members + `}`
)

var planted = []string{
	plantedSecret, plantedRotated, plantedCapKey, plantedWeak, plantedNotBase64, plantedRedeliver,
	"PlantedTagPlantedTag9", "PlantedInquiryTagXxxx1", "ta1PlantedTravelAddr", "zebulon@planted.example",
	"Zebulon", "Quaxworth", "1901-02-03", "Plantedstrasse", "PLZ-99417", "bc1qPlantedOriginatorWallet",
	"Philippa", "Oxenbridge", "NI-PLANTED-4411", "bc1qPlantedApprovedAddress", "is on a list",
	"PlantedInquiryTagXxxx2", "Plantedtown", "Plantedbirthplace", "bc1qPlantedBeneficiaryWallet", "Planted Exchange GmbH",
}

// leakForms are the spellings of a planted value that fmt and log/slog
// produce: itself (%s, %q, %v of a string), its bytes in hex (%x, %X of a
// string or []byte), in decimal (%v, %d of a []byte) and in base64 (JSON of
// a []byte).
func leakForms(s string) []string {
	return []string{
		s,
		hex.EncodeToString([]byte(s)),
		strings.Trim(fmt.Sprint([]byte(s)), "[]"),
		strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(s)), "="),
	}
}

// holder nests a value in a struct, as an application's own types do.
type holder struct{ Field any }

// renderings formats x with every verb, alone and nested in a struct, and
// logs it with the text and JSON handlers of log/slog as a value, in a
// group and nested in a struct. wire leaves out the JSON handler's
// rendering of the struct, which is encoding/json's: for a type whose JSON
// form is the wire form, that is not redacted.
func renderings(x any, wire bool) map[string]string {
	out := map[string]string{
		"Sprint":   fmt.Sprint(x),
		"Sprintln": fmt.Sprintln(x), // as Println writes it
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out[verb] = fmt.Sprintf(verb, x)
		out["in a struct, "+verb] = fmt.Sprintf(verb, holder{x})
	}
	// Without the time, whose digits could spell a planted number.
	opts := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	for name, h := range map[string]func(io.Writer) slog.Handler{
		"text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) },
		"json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) },
	} {
		log := func(args ...any) string {
			var buf bytes.Buffer
			slog.New(h(&buf)).Info("m", args...)
			return buf.String()
		}
		out["slog "+name+", value"] = log("value", x)
		out["slog "+name+", group"] = log(slog.Group("group", slog.Any("nested", x)))
		if name == "text" || !wire {
			out["slog "+name+", in a struct"] = log("struct", holder{x})
		}
	}
	return out
}

// TestCallbackTypesRedacted renders every type of the package that holds a secret, a
// capability key or sender bytes, and the callbacks it hands on, with
// every fmt verb and through log/slog, and checks that no planted value
// comes out, in any case or encoding, while the redacted form shows the
// non-secret configuration.
func TestCallbackTypesRedacted(t *testing.T) {
	v, err := callback.NewWebhookVerifier(plantedSecret, "whsec_"+base64.StdEncoding.EncodeToString([]byte(plantedRotated)))
	require.NoError(t, err)
	v.Tolerance, v.Now = time.Minute, fixedClock

	var got *travelrule.Callback
	h := callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error { got = cb; return nil },
		callback.WithCapabilityKey([]byte(plantedCapKey)), callback.WithVerifier(v), callback.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, h.Err())
	u, err := travelrule.NewCallbackURL("https://vasp.example/cb", "payment-42", []byte(plantedCapKey))
	require.NoError(t, err)
	// deliver sends body to the handler under its own webhook-id and
	// returns the callback handed to the function.
	deliver := func(body, id string) *travelrule.Callback {
		t.Helper()
		got = nil
		r := httptest.NewRequest(http.MethodPost, u, strings.NewReader(body))
		setSignatureHeaders(r.Header, []byte(plantedRotated), id, fixedNow, []byte(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusNoContent, w.Code)
		require.NotNil(t, got)
		require.Equal(t, "payment-42", got.Ref)
		return got
	}
	everything := deliver(plantedBody, plantedRedeliver)
	require.Equal(t, travelrule.KindUnknown, everything.Kind, "an inquiry with a decision")
	// The inquiries, each kind of party the test plants, go through the
	// Inquiry and IVMS101 paths of the redaction.
	inquiry := deliver(plantedInquiry, plantedRedeliver+"-inquiry")
	liveInquiry := deliver(plantedLiveInquiry, plantedRedeliver+"-live")
	liveEnvelope := deliver(plantedLiveEnvelope, plantedRedeliver+"-envelope")
	for _, cb := range []*travelrule.Callback{inquiry, liveInquiry, liveEnvelope} {
		require.Equal(t, travelrule.KindInquiry, cb.Kind)
		require.NotNil(t, cb.Inquiry)
		require.Equal(t, "Quaxworth", cb.Inquiry.Originator.LastName, "the test plants what it looks for")
	}
	for _, cb := range []*travelrule.Callback{liveInquiry, liveEnvelope} {
		require.NotNil(t, cb.IVMS101)
		require.Equal(t, "Plantedbirthplace", cb.IVMS101.Originator.Persons[0].NaturalPerson.DateAndPlaceOfBirth.PlaceOfBirth, "the test plants what it looks for")
	}
	tag := u[strings.Index(u, "tr_tag=")+len("tr_tag="):]

	weak := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{[]byte(plantedSecret), []byte(plantedWeak)}}))
	_, errParseShort := parseSecret(plantedWeak)
	_, errParseBase64 := parseSecret("whsec_" + plantedNotBase64)
	_, errNewShort := callback.NewWebhookVerifier(plantedSecret, plantedWeak)
	verifyErr := func(header http.Header) error {
		r := httptest.NewRequest(http.MethodPost, "/cb", strings.NewReader(plantedBody))
		r.Header = header
		return v.Verify(r, []byte(plantedBody))
	}
	signed := func(ts string, sig string) http.Header {
		return http.Header{"Webhook-Id": {plantedRedeliver}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig}}
	}
	errTimestamp := verifyErr(signed("1901-02-03", callback.Sign([]byte(plantedSecret), plantedRedeliver, fixedNow, nil)))
	errSignature := verifyErr(signed("1750000000", "v1,"+base64.StdEncoding.EncodeToString([]byte(plantedSecret))+" "+plantedNotBase64))
	errNoSignature := verifyErr(http.Header{"Webhook-Id": {plantedRedeliver}, "Webhook-Timestamp": {"1750000000"}})
	require.ErrorIs(t, errTimestamp, callback.ErrTimestamp)
	require.ErrorIs(t, errSignature, callback.ErrSignature)
	require.ErrorIs(t, errNoSignature, callback.ErrNoSignature)

	tests := []struct {
		name    string
		value   any
		wire    bool   // its JSON form is the wire form (see renderings)
		wantFmt string // in its %+v form
		wantLog string // in its JSON log record as "value"
	}{
		{"*WebhookVerifier", v, false, "{Secrets:[[redacted] [redacted]] Tolerance:1m0s Now:func()}", `"value":{"secrets":2,"tolerance":60000000000}`},
		{"WebhookVerifier", *v, false, "{Secrets:[[redacted] [redacted]] Tolerance:1m0s Now:func()}", `"value":{"secrets":2,"tolerance":60000000000}`},
		{"*Handler", h, false,
			"{CapabilityKey:[redacted] Verifiers:[*callback.WebhookVerifier] MaxBodyBytes:1048576 Store:*callback.MemoryStore Err:<nil>}",
			`"value":{"capabilityKey":"[redacted]","previousKeys":0,"verifiers":1,"authenticated":true,"maxBodyBytes":1048576,"dedup":true}`},
		{"Handler", *h, false, "{CapabilityKey:[redacted] Verifiers:[*callback.WebhookVerifier]", `"value":{"capabilityKey":"[redacted]",`},
		{"*Handler with a weak secret", weak, false,
			"{CapabilityKey: Verifiers:[] MaxBodyBytes:1048576 Store:*callback.MemoryStore Err:callback: WithVerifier: WebhookVerifier has a secret shorter than 16 bytes}",
			`"value":{"capabilityKey":"","previousKeys":0,"verifiers":0,"authenticated":false,"maxBodyBytes":1048576,"dedup":true,"error":"callback: WithVerifier: WebhookVerifier has a secret shorter than 16 bytes"}`},
		{"Handler.Err", weak.Err(), false, "shorter than 16 bytes", "shorter than 16 bytes"},
		{"NewWebhookVerifier error, short", errParseShort, false, "at least 16 bytes", "at least 16 bytes"},
		{"NewWebhookVerifier error, not base64", errParseBase64, false, "must be base64", "must be base64"},
		{"NewWebhookVerifier error", errNewShort, false, "secret 2: secret must have at least 16 bytes", "secret 2:"},
		{"Verify error, timestamp", errTimestamp, false, "timestamp", "timestamp"},
		{"Verify error, signature", errSignature, false, "signature does not verify", "signature does not verify"},
		{"Verify error, no signature", errNoSignature, false, "no signature", "no signature"},
		{"*travelrule.Callback handed to the function", everything, true, "Address:[redacted]", `"kind":"unknown"`},
		{"travelrule.Callback handed to the function", *everything, true, "Ref:payment-42", `"ref":"payment-42"`},
		{"*travelrule.Callback of an inquiry", inquiry, true, "Kind:inquiry", `"kind":"inquiry"`},
		{"travelrule.Callback of an inquiry", *inquiry, true, "Asset:BTC", `"kind":"inquiry"`},
		{"*travelrule.Callback of a live INQUIRY", liveInquiry, true, "Country:DE", `"kind":"inquiry"`},
		{"travelrule.Callback of a live INQUIRY", *liveInquiry, true, "Asset:ETH", `"kind":"inquiry"`},
		{"*travelrule.Callback of a live INQUIRY, the payload at the top level", liveEnvelope, true, "Country:DE", `"kind":"inquiry"`},
		{"travelrule.Callback of a live INQUIRY, the payload at the top level", *liveEnvelope, true, "Asset:ETH", `"kind":"inquiry"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := renderings(tt.value, tt.wire)
			for rendering, out := range outs {
				lower := strings.ToLower(out)
				for _, p := range append(planted, tag) {
					for _, form := range leakForms(p) {
						assert.NotContains(t, lower, strings.ToLower(form), "%s leaks %q", rendering, p)
					}
				}
			}
			assert.Contains(t, outs["%+v"], tt.wantFmt)
			assert.Contains(t, outs["slog json, value"], tt.wantLog)
		})
	}
}

// An inbound inquiry's txId, asset and the parties' codes are the sender's
// text: the handler's "callback: delivered" debug line never shows them
// unless they have their own shapes.
func TestInquiryTextStaysOutOfHandlerLogs(t *testing.T) {
	const name = "Zebulon Quaxworth"
	var logs bytes.Buffer
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		callback.WithoutDedup(), noAuth)
	body := `{"status":"inquiry","transferId":"t-1","txId":"` + name + `","asset":"` + name + `","amount":"1",` +
		`"originator":{"personType":"` + name + `","country":"` + name + `"}}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/cb", strings.NewReader(body)))
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Contains(t, logs.String(), "callback: delivered")
	assert.NotContains(t, logs.String(), "Quaxworth")
}
