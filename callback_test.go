package travelrule_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// cbInquiryBody is an inbound inquiry in the excerpt-era shape the SDK
// read before the live INQUIRY (the initiation request's flat fields with
// "status":"inquiry"; the sandbox sends the live one, cbLiveInquiryBody),
// with values the spec writes as numbers written as numbers.
const cbInquiryBody = `{"transferId":"tr-77","status":"inquiry","asset":"BTC","amount":"0.25",
 "callback":"https://bank.example/cb?tr_ref=p1&tr_tag=SECRETTAGxxxxxxxxxxxxx","txId":"0xabc",
 "travelAddress":"ta1SECRETTRAVELADDR","email":"ada@example.com",
 "originator":{"personType":"natural","firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1815-12-10",
   "buildingNumber":12,"postCode":10115,"country":"GB","walletAddress":"bc1qORIGINATORWALLET"},
 "beneficiary":{"personType":"natural","firstName":"Alan","lastName":"Turing","dateOfBirth":"1912-06-23",
   "nationalId":"NI-SECRET-99","nationalIdType":"CCPT","extra":{"x":1}},
 "unknownField":[1,2,3]}`

// cbLiveInquiryBody is the live service's INQUIRY: the parties in a nested
// IVMS101 payload (live-service.md, Callbacks), with made-up people.
var cbLiveInquiryBody = func() string {
	b, err := os.ReadFile("testdata/callback_inquiry_live.json")
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(b))
}()

// decided is cb as ParseCallback makes it for an INQUIRY_RESOLUTION that
// carries d.
func decided(d travelrule.Decision, cb travelrule.Callback) travelrule.Callback {
	return travelrule.WithDecision(cb, d)
}

func TestParseCallbackKinds(t *testing.T) {
	ts := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		body string
		want travelrule.Callback // Raw and Inquiry are checked apart
	}{
		{"sandbox status", `{"transferId":"tr-1","status":"approved","txId":"0xfeed","timestamp":"2025-03-01T12:00:00Z"}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "tr-1", Status: "approved", TxID: "0xfeed", Timestamp: ts}},
		{"status without txId", `{"transferId":"tr-1","status":"received","timestamp":"2025-03-01T12:00:00Z"}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "tr-1", Status: "received", Timestamp: ts}},
		{"numeric transferId", `{"transferId":12345678901234567890,"status":"completed"}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "12345678901234567890", Status: "completed"}},
		{"unix timestamp", `{"transferId":"a","status":"rejected","timestamp":1740830400}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "a", Status: "rejected", Timestamp: ts}},
		{"bad timestamp ignored", `{"transferId":"a","status":"rejected","timestamp":"yesterday"}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "a", Status: "rejected"}},
		{"unknown fields kept", `{"transferId":"a","status":"x","nested":{"deep":[1,{"k":null}]},"n":1e9}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "a", Status: "x"}},
		{"TRP approved", `{"approved":{"address":"bc1qWALLET","callback":"https://b.example/trp?q=1"}}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Address: "bc1qWALLET", ApprovedCallback: "https://b.example/trp?q=1"})},
		{"TRP approved with transferId", `{"transferId":"t9","approved":{"address":"addr"}}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, TransferID: "t9", Address: "addr"})},
		{"TRP rejected", `{"rejected":"sanctions hit"}`,
			decided(travelrule.Rejected, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Reason: "sanctions hit"})},
		{"TRP rejected null", `{"rejected":null}`, decided(travelrule.Rejected, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		{"TRP txid", `{"txid":"0xbeef"}`, travelrule.Callback{Kind: travelrule.KindTransferConfirmation, TxID: "0xbeef"}},
		{"TRP canceled", `{"canceled":"user aborted"}`, travelrule.Callback{Kind: travelrule.KindCanceled, Reason: "user aborted"}},
		{"TRP cancelled (British)", `{"cancelled":"user aborted"}`, travelrule.Callback{Kind: travelrule.KindCanceled, Reason: "user aborted"}},
		{"status wins over TRP txid", `{"transferId":"a","status":"completed","txid":"0x1"}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "a", Status: "completed", TxID: "0x1"}},
		{"approved neither an object nor a boolean", `{"approved":"yes"}`, travelrule.Callback{Kind: travelrule.KindUnknown}},
		{"approved null", `{"approved":null}`, travelrule.Callback{Kind: travelrule.KindUnknown}},
		// The live service's four kinds (live-service.md, Callbacks).
		{"TRANSFER_RESOLUTION (the live vector's body)", `{"transferId":"abc","status":"APPROVED","statusComment":"ok","callback":"https://x"}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "abc", Status: "APPROVED", StatusComment: "ok"}},
		{"TRANSFER_RESOLUTION rejected", `{"transferId":"abc","status":"REJECTED","statusComment":"name does not match","callback":"https://x"}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "abc", Status: "REJECTED", StatusComment: "name does not match"}},
		{"INQUIRY_RESOLUTION as TRP sends it", `{"approved":{"address":"0xBENEFICIARYWALLET","callback":"https://svc.example/transfers/txId?q=t1"},"callback":"https://vasp.example/cb"}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Address: "0xBENEFICIARYWALLET", ApprovedCallback: "https://svc.example/transfers/txId?q=t1"})},
		{"INQUIRY_RESOLUTION approved true", `{"approved":true,"callback":"https://vasp.example/cb"}`, decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		{"INQUIRY_RESOLUTION approved \"true\"", `{"approved":"true","callback":"https://vasp.example/cb"}`, decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		{"INQUIRY_RESOLUTION approved \"TRUE\"", `{"approved":"TRUE"}`, decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		{"INQUIRY_RESOLUTION approved false", `{"approved":false,"callback":"https://vasp.example/cb"}`, decided(travelrule.Rejected, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		{"INQUIRY_RESOLUTION approved \"false\"", `{"approved":"false","callback":"https://vasp.example/cb"}`, decided(travelrule.Rejected, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		{"the wallet address at the top", `{"approved":true,"walletAddress":"0xTOPWALLET","callback":"https://vasp.example/cb"}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Address: "0xTOPWALLET"})},
		{"the wallet address nested", `{"approved":true,"data":{"beneficiary":{"WalletAddress":"0xNESTEDWALLET"}}}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Address: "0xNESTEDWALLET"})},
		{"addresses at two depths that disagree are none", `{"approved":true,"data":{"address":"0xDEEPER"},"beneficiaryWalletAddress":"0xNEARER"}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		{"approved.address wins over the top", `{"approved":{"address":"0xTRP"},"walletAddress":"0xTOP"}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Address: "0xTRP"})},
		{"an address that is not a string is not one", `{"approved":true,"address":{"line":"x"},"walletAddress":12}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		// Fail closed: yes and no in one body is neither.
		{"approved false beside an approving status", `{"approved":false,"status":"APPROVED"}`, travelrule.Callback{Kind: travelrule.KindUnknown, Status: "APPROVED"}},
		{"an approval beside a rejection", `{"approved":{"address":"bc1q"},"rejected":"sanctions hit"}`,
			travelrule.Callback{Kind: travelrule.KindUnknown, Address: "bc1q", Reason: "sanctions hit"}},
		{"approved true beside a rejecting status", `{"approved":true,"status":"rejected"}`, travelrule.Callback{Kind: travelrule.KindUnknown, Status: "rejected"}},
		{"an approving status beside a cancellation", `{"status":"completed","canceled":"x"}`, travelrule.Callback{Kind: travelrule.KindUnknown, Status: "completed", Reason: "x"}},
		{"a consistent status and rejection", `{"transferId":"t","status":"REJECTED","rejected":"no"}`,
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "t", Status: "REJECTED", Reason: "no"}},
		{"the address of the sender is not the beneficiary's", `{"approved":true,"from":{"address":"bc1-ORIGINATOR"},"to":{"address":"bc1-BENEFICIARY"}}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Address: "bc1-BENEFICIARY"})},
		{"addresses that disagree are none", `{"approved":true,"to":{"address":"bc1-ONE"},"beneficiary":{"walletAddress":"bc1-TWO"}}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution})},
		{"addresses that agree are one", `{"approved":true,"walletAddress":"bc1-ONE","beneficiary":{"walletAddress":"bc1-ONE"}}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Address: "bc1-ONE"})},
		{"an address in an array", `{"approved":true,"beneficiary":[{"walletAddress":"bc1-IN-ARRAY"}]}`,
			decided(travelrule.Approved, travelrule.Callback{Kind: travelrule.KindInquiryResolution, Address: "bc1-IN-ARRAY"})},
		{"TRANSFER_CONFIRMATION", `{"txid":"0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"}`,
			travelrule.Callback{Kind: travelrule.KindTransferConfirmation, TxID: "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"}},
		{"empty object", `{}`, travelrule.Callback{Kind: travelrule.KindUnknown}},
		{"wrong types tolerated", `{"transferId":{"a":1},"status":["x"],"txId":true}`,
			travelrule.Callback{Kind: travelrule.KindUnknown, TxID: "true"}},
		{"whitespace around", " \n{\"transferId\":\"a\",\"status\":\"received\"}\n ",
			travelrule.Callback{Kind: travelrule.KindTransferResolution, TransferID: "a", Status: "received"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := travelrule.ParseCallback([]byte(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.body, string(cb.Raw), "Raw is the body")
			assert.Nil(t, cb.Inquiry)
			got := *cb
			got.Raw, got.CallbackURL = nil, ""
			assert.True(t, tt.want.Timestamp.Equal(got.Timestamp), "timestamp %v", got.Timestamp)
			got.Timestamp, tt.want.Timestamp = time.Time{}, time.Time{}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseCallbackInquiry(t *testing.T) {
	cb, err := travelrule.ParseCallback([]byte(cbInquiryBody))
	require.NoError(t, err)
	assert.Equal(t, travelrule.KindInquiry, cb.Kind)
	assert.Equal(t, "tr-77", cb.TransferID)
	assert.Equal(t, "inquiry", cb.Status)
	require.NotNil(t, cb.Inquiry)
	in := cb.Inquiry
	assert.Equal(t, "BTC", in.Asset)
	assert.Equal(t, "0.25", in.Amount)
	assert.Equal(t, "0xabc", in.TxID)
	assert.Equal(t, "https://bank.example/cb?tr_ref=p1&tr_tag=SECRETTAGxxxxxxxxxxxxx", in.Callback)
	assert.Equal(t, travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10",
		BuildingNumber: "12", PostCode: "10115", Country: "GB", WalletAddress: "bc1qORIGINATORWALLET"}, in.Originator)
	assert.Equal(t, "NI-SECRET-99", in.Beneficiary.NationalID)
	assert.Equal(t, "Turing", in.Beneficiary.LastName)
	require.NoError(t, in.Validate(), "a flat inquiry carries a valid transfer request, dates of birth included")

	// An inquiry whose fields have the wrong types still parses.
	cb, err = travelrule.ParseCallback([]byte(`{"transferId":"t","status":"INQUIRY","asset":{"slip0044":0},"amount":1.5,"originator":"x","beneficiary":{"firstName":["a"]}}`))
	require.NoError(t, err)
	assert.Equal(t, travelrule.KindInquiry, cb.Kind)
	require.NotNil(t, cb.Inquiry)
	assert.Equal(t, "", cb.Inquiry.Asset)
	assert.Equal(t, "1.5", cb.Inquiry.Amount)
	assert.Equal(t, travelrule.Party{}, cb.Inquiry.Originator)
	assert.Equal(t, travelrule.Party{}, cb.Inquiry.Beneficiary)
}

func TestParseCallbackMalformed(t *testing.T) {
	for _, body := range []string{
		``, ` `, `null`, `[]`, `[{"transferId":"a"}]`, `"str"`, `42`, `true`,
		`{`, `{"transferId":"a",}`, `{"transferId":"Ada Lovelace"} trailing`, `{"a":1}{"b":2}`,
		"{\"transferId\":\"a\x00\"}", `{'a':1}`, strings.Repeat("[", 20000),
	} {
		t.Run(fmt.Sprintf("%.20q", body), func(t *testing.T) {
			cb, err := travelrule.ParseCallback([]byte(body))
			require.Error(t, err)
			assert.Nil(t, cb)
			assert.True(t, errors.Is(err, travelrule.ErrMalformedCallback), "%v", err)
			assert.NotContains(t, err.Error(), "Ada")
		})
	}
}

// TestParseCallbackInquiryShapes: an IVMS101 payload sent as a JSON string
// is an inquiry too; an inquiry that also carries a decision is neither.
func TestParseCallbackInquiryShapes(t *testing.T) {
	payload := `{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","nameIdentifierType":"LEGL"}]}}}]}}`
	quoted, err := json.Marshal(payload)
	require.NoError(t, err)
	cb, err := travelrule.ParseCallback([]byte(`{"asset":"BTC","amount":"1","callback":"https://s.example/transfers/inquiryResolution?q=t-1","IVMS101":` + string(quoted) + `}`))
	require.NoError(t, err)
	assert.Equal(t, travelrule.KindInquiry, cb.Kind)
	assert.Equal(t, "t-1", cb.TransferID)
	assert.Equal(t, "Hopper", cb.Inquiry.Originator.LastName)

	for _, body := range []string{
		`{"approved":false,"callback":"https://x","IVMS101":` + payload + `}`,
		`{"rejected":"no","IVMS101":` + payload + `}`,
		`{"status":"inquiry","approved":true}`,
	} {
		cb, err := travelrule.ParseCallback([]byte(body))
		require.NoError(t, err)
		assert.Equal(t, travelrule.KindUnknown, cb.Kind, body)
		assert.Nil(t, cb.Inquiry)
	}
	cb, err = travelrule.ParseCallback([]byte(`{"IVMS101":"not a payload"}`))
	require.NoError(t, err)
	assert.Equal(t, travelrule.KindUnknown, cb.Kind)
}

// cbTopLevelIVMS101Body is the live service's inbound inquiry as
// live-service.md also describes it: "an IVMS101 originator envelope with
// originator and originatingVASP keys", the payload's members at the top
// level instead of in an "IVMS101" member; made-up people.
const cbTopLevelIVMS101Body = `{"asset":"ETH","amount":"2.5",
 "callback":"https://trp.travel-rule.com/transfers/inquiryResolution?q=019ac452-top-level",
 "originator":{"originatorPersons":[{"naturalPerson":{
   "name":{"nameIdentifier":[{"primaryIdentifier":"Quillfeather","secondaryIdentifier":"Ignatia","nameIdentifierType":"LEGL"}]},
   "geographicAddress":[{"addressType":"HOME","streetName":"Via Appia","townName":"Roma","country":"IT"}],
   "dateAndPlaceOfBirth":{"dateOfBirth":"1968-07-14","placeOfBirth":"Napoli"}}}],
  "accountNumber":["0xIGNATIAWALLET"]},
 "beneficiary":{"beneficiaryPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Brackenbury","secondaryIdentifier":"Odo","nameIdentifierType":"LEGL"}]}}}],
  "accountNumber":["0xODOWALLET"]},
 "originatingVASP":{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"Originator Trust SpA","legalPersonNameIdentifierType":"LEGL"}]},"countryOfRegistration":"IT"}}}}`

// TestParseCallbackIVMS101AtTopLevel: the service's docs describe the
// inbound inquiry both as a nested {"IVMS101":{…}} and as an IVMS101
// envelope with originator and originatingVASP at the top level, so both
// are inquiries with the same parties; a body that only shares a member
// name with IVMS101 is not.
func TestParseCallbackIVMS101AtTopLevel(t *testing.T) {
	persons := `{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","secondaryIdentifier":"Grace","nameIdentifierType":"LEGL"}]}}}]}`
	vasp := `{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"Orig VASP","legalPersonNameIdentifierType":"LEGL"}]}}}}`
	tests := []struct {
		name     string
		body     string
		want     travelrule.CallbackKind
		wantLast string // the originator's last name, for an inquiry
		wantVASP bool   // the payload has the originating VASP
	}{
		{"the live envelope (live-service.md, stage 4)", cbTopLevelIVMS101Body, travelrule.KindInquiry, "Quillfeather", true},
		{"originator and originatingVASP", `{"asset":"BTC","amount":"1","originator":` + persons + `,"originatingVASP":` + vasp + `}`, travelrule.KindInquiry, "Hopper", true},
		{"originator with originatorPersons alone", `{"originator":` + persons + `}`, travelrule.KindInquiry, "Hopper", false},
		{"the 2023 edition's originatorPerson", `{"originator":{"originatorPerson":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","naturalPersonNameIdentifierType":"LEGL"}]}}}]}}`, travelrule.KindInquiry, "Hopper", false},
		{"originatingVASP alone", `{"asset":"BTC","originatingVASP":` + vasp + `}`, travelrule.KindInquiry, "", true},
		{"member names in another case", `{"Originator":` + persons + `,"OriginatingVASP":` + vasp + `}`, travelrule.KindInquiry, "Hopper", true},
		{"the nested payload wins over the top level", `{"IVMS101":{"originator":` + persons + `},"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Other","nameIdentifierType":"LEGL"}]}}}]}}`, travelrule.KindInquiry, "Hopper", false},
		{"an IVMS101 member that is no payload: the top level is not read", `{"IVMS101":null,"originator":` + persons + `}`, travelrule.KindUnknown, "", false},
		{"a flat party is no payload", `{"originator":{"firstName":"Ada","lastName":"Lovelace"}}`, travelrule.KindUnknown, "", false},
		{"originatingVASP that is no object", `{"originatingVASP":"Orig VASP"}`, travelrule.KindUnknown, "", false},
		{"persons deeper than the originator", `{"originator":{"data":` + persons + `}}`, travelrule.KindUnknown, "", false},
		{"an envelope that also carries a decision", `{"approved":true,"originator":` + persons + `,"originatingVASP":` + vasp + `}`, travelrule.KindUnknown, "", false},
		{"a flat inquiry keeps its flat parties", `{"transferId":"t","status":"inquiry","originator":{"firstName":"Ada","lastName":"Lovelace"}}`, travelrule.KindInquiry, "Lovelace", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := travelrule.ParseCallback([]byte(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.want, cb.Kind)
			assert.Equal(t, tt.body, string(cb.Raw))
			if tt.want != travelrule.KindInquiry {
				assert.Nil(t, cb.Inquiry)
				return
			}
			require.NotNil(t, cb.Inquiry)
			assert.Equal(t, tt.wantLast, cb.Inquiry.Originator.LastName)
			if tt.wantVASP {
				require.NotNil(t, cb.IVMS101)
				require.NotNil(t, cb.IVMS101.OriginatingVASP)
			}
		})
	}

	// The live envelope reads as its nested form does, but for the
	// members that are the transfer's, not the payload's.
	top, err := travelrule.ParseCallback([]byte(cbTopLevelIVMS101Body))
	require.NoError(t, err)
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(cbTopLevelIVMS101Body), &members))
	payload, err := json.Marshal(map[string]json.RawMessage{"originator": members["originator"], "beneficiary": members["beneficiary"], "originatingVASP": members["originatingVASP"]})
	require.NoError(t, err)
	nestedBody, err := json.Marshal(map[string]json.RawMessage{"asset": members["asset"], "amount": members["amount"], "callback": members["callback"], "IVMS101": payload})
	require.NoError(t, err)
	nested, err := travelrule.ParseCallback(nestedBody)
	require.NoError(t, err)
	assert.Equal(t, "019ac452-top-level", top.TransferID, "the id is the callback URL's q")
	assert.Equal(t, nested.Inquiry, top.Inquiry)
	assert.Equal(t, nested.IVMS101, top.IVMS101)
	assert.Equal(t, nested.Unmapped, top.Unmapped)
	assert.Equal(t, "0xIGNATIAWALLET", top.Inquiry.Originator.WalletAddress)
	assert.Equal(t, "Brackenbury", top.Inquiry.Beneficiary.LastName)
	assert.Empty(t, top.IVMS101.Extra, "the transfer's members are not the payload's")
}

// TestCallbackRedactsIDsHoldingPartyNames: in an inquiry the sender chose
// both the identifiers and the parties, so an identifier that holds a
// party's personal value is not shown.
func TestCallbackRedactsIDsHoldingPartyNames(t *testing.T) {
	cb, err := travelrule.ParseCallback([]byte(`{"transferId":"Quaxworth-1","status":"inquiry","txId":"Zebulon",
	 "originator":{"personType":"natural","firstName":"Zebulon","lastName":"Quaxworth"}}`))
	require.NoError(t, err)
	require.Equal(t, travelrule.KindInquiry, cb.Kind)
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("cb", "callback", cb)
	for _, out := range []string{fmt.Sprintf("%v", cb), fmt.Sprintf("%+v", *cb), logs.String()} {
		assert.NotContains(t, out, "Zebulon")
		assert.NotContains(t, out, "Quaxworth")
	}
	assert.Contains(t, fmt.Sprint(cb), "Kind:inquiry TransferID:[redacted] Status:inquiry")
}

func TestParseCallbackRawIsACopy(t *testing.T) {
	body := []byte(`{"transferId":"a","status":"received","zzz":[1,2]}`)
	cb, err := travelrule.ParseCallback(body)
	require.NoError(t, err)
	want := string(body)
	body[2] = 'X'
	assert.Equal(t, want, string(cb.Raw))
}

func TestCallbackRedaction(t *testing.T) {
	secrets := []string{
		"bc1qWALLETADDRESS", "https://b.example/trp?q=1&tr_tag=TAGTAGTAG", "Mr Smith is sanctioned",
		"Ada", "Lovelace", "1815-12-10", "bc1qORIGINATORWALLET", "NI-SECRET-99", "ada@example.com",
		"SECRETTAG", "ta1SECRETTRAVELADDR", "10115",
		"Quaxworth", "Zebulon", "Rue de Rivoli", "FR-ID-7781", "1979-04-02", "Lyon", "bc1qzebulonwallet", "Originator Exchange SAS",
		"Fairweather", "the beneficiary Odalys is not our customer",
		"Quillfeather", "Ignatia", "Via Appia", "1968-07-14", "Napoli", "0xIGNATIAWALLET", "Brackenbury", "0xODOWALLET", "Originator Trust SpA",
	}
	approved, err := travelrule.ParseCallback([]byte(`{"transferId":"tr-1","approved":{"address":"bc1qWALLETADDRESS","callback":"https://b.example/trp?q=1&tr_tag=TAGTAGTAG"}}`))
	require.NoError(t, err)
	approved.Ref = "payment-42"
	rejected, err := travelrule.ParseCallback([]byte(`{"transferId":"tr-2","rejected":"Mr Smith is sanctioned"}`))
	require.NoError(t, err)
	inquiry, err := travelrule.ParseCallback([]byte(cbInquiryBody))
	require.NoError(t, err)
	liveInquiry, err := travelrule.ParseCallback([]byte(cbLiveInquiryBody))
	require.NoError(t, err)
	require.NotNil(t, liveInquiry.IVMS101)
	require.Equal(t, "Quaxworth", liveInquiry.Inquiry.Originator.LastName, "the test plants what it looks for")
	topLevelInquiry, err := travelrule.ParseCallback([]byte(cbTopLevelIVMS101Body))
	require.NoError(t, err)
	require.Equal(t, travelrule.KindInquiry, topLevelInquiry.Kind)
	require.Equal(t, "Quillfeather", topLevelInquiry.Inquiry.Originator.LastName, "the test plants what it looks for")
	resolution, err := travelrule.ParseCallback([]byte(`{"transferId":"tr-3","status":"REJECTED","statusComment":"the beneficiary Odalys is not our customer","callback":"https://b.example/trp?q=1&tr_tag=TAGTAGTAG"}`))
	require.NoError(t, err)

	for _, cb := range []*travelrule.Callback{approved, rejected, inquiry, liveInquiry, topLevelInquiry, resolution} {
		var outs []string
		for _, verb := range []string{"%v", "%+v", "%s", "%#v", "%q"} {
			outs = append(outs, fmt.Sprintf(verb, cb), fmt.Sprintf(verb, *cb))
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, scanned)).Info("cb", "callback", cb, "value", *cb)
		slog.New(slog.NewTextHandler(&buf, scanned)).Info("cb", "callback", cb)
		outs = append(outs, buf.String())
		for _, out := range outs {
			for _, s := range secrets {
				assert.NotContains(t, out, s)
			}
			assert.Contains(t, out, cb.TransferID)
		}
		assert.Contains(t, fmt.Sprintf("%+v", cb), "Kind:"+string(cb.Kind))
		assert.Contains(t, buf.String(), `"kind":"`+string(cb.Kind)+`"`)
	}
	assert.Contains(t, fmt.Sprintf("%v", approved), "Address:[redacted]")
	assert.Contains(t, fmt.Sprintf("%v", approved), "Ref:payment-42")
	assert.Contains(t, fmt.Sprintf("%#v", approved), "travelrule.Callback{")
	assert.Contains(t, fmt.Sprintf("%v", inquiry), "Asset:BTC")
	assert.Contains(t, fmt.Sprintf("%v", resolution), "Status:REJECTED StatusComment:[redacted]")
	assert.Contains(t, fmt.Sprintf("%v", liveInquiry), "Country:FR")
	assert.Contains(t, fmt.Sprintf("%v", topLevelInquiry), "Country:IT")
	var nilCB *travelrule.Callback
	assert.NotPanics(t, func() { _ = fmt.Sprintf("%v", nilCB) })
}

func TestCallbackJSONRawRoundTrip(t *testing.T) {
	// Raw is a json.RawMessage, so a Callback re-encoded by an integrator
	// keeps the original body verbatim.
	body := `{"transferId":"a","status":"received"}`
	cb, err := travelrule.ParseCallback([]byte(body))
	require.NoError(t, err)
	out, err := json.Marshal(struct{ Raw json.RawMessage }{cb.Raw})
	require.NoError(t, err)
	assert.JSONEq(t, `{"Raw":`+body+`}`, string(out))
}

// FuzzParseCallback checks ParseCallback's contract on any input: it never
// panics, fails exactly when the body is not a JSON object or gives a name
// twice in one object (as the oracle CallbackNamesTwice finds), keeps the
// body in Raw, and redacts regardless of the personal values it decoded.
func FuzzParseCallback(f *testing.F) {
	for _, s := range []string{
		`{"transferId":"tr-1","status":"approved","txId":"0xfeed","timestamp":"2025-03-01T12:00:00Z"}`,
		`{"transferId":12,"status":"received"}`, `{"approved":{"address":"a","callback":"https://x"}}`,
		`{"rejected":"r"}`, `{"txid":"t"}`, `{"canceled":null}`, cbInquiryBody, `{}`, `[]`, `null`, ``, `{"a":`,
		`{"transferId":"a","status":"inquiry","originator":{"buildingNumber":1e999}}`,
		cbLiveInquiryBody, cbTopLevelIVMS101Body, `{"transferId":"abc","status":"APPROVED","statusComment":"ok","callback":"https://x"}`,
		`{"approved":true,"callback":"https://x"}`, `{"approved":"false"}`, `{"approved":true,"data":{"walletAddress":"w"}}`,
		`{"asset":"BTC","IVMS101":{"originator":{"originatorPerson":[{"naturalPerson":{"name":[{"nameIdentifier":[{"primaryIdentifier":1}]}]}}]}},"callback":"https://s/x?q=t1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		cb, err := travelrule.ParseCallback(body)
		var obj map[string]json.RawMessage
		isObject := json.Unmarshal(body, &obj) == nil && obj != nil
		twice := isObject && travelrule.CallbackNamesTwice(body)
		if err != nil {
			if !errors.Is(err, travelrule.ErrMalformedCallback) {
				t.Fatalf("error %v does not match ErrMalformedCallback", err)
			}
			if isObject && !twice {
				t.Fatalf("refused a JSON object: %v", err)
			}
			return
		}
		if !isObject {
			t.Fatalf("accepted a body that is not a JSON object")
		}
		if twice {
			t.Fatalf("accepted a body that gives a name twice in one object")
		}
		if !bytes.Equal(cb.Raw, body) {
			t.Fatal("Raw differs from the body")
		}
		switch d := cb.Decision(); {
		case d != "" && d != travelrule.Approved && d != travelrule.Rejected:
			t.Fatalf("decision %q", d)
		case cb.Kind == travelrule.KindInquiryResolution && d == "":
			t.Fatal("an inquiry resolution without a decision")
		case d != "" && cb.Kind != travelrule.KindInquiryResolution && cb.Kind != travelrule.KindTransferResolution:
			t.Fatalf("kind %s with decision %s", cb.Kind, d)
		}
		switch cb.Kind {
		case travelrule.KindTransferResolution, travelrule.KindInquiryResolution, travelrule.KindTransferConfirmation,
			travelrule.KindCanceled, travelrule.KindUnknown:
			if cb.Inquiry != nil {
				t.Fatalf("kind %s with an inquiry", cb.Kind)
			}
		case travelrule.KindInquiry:
			if cb.Inquiry == nil {
				t.Fatal("inquiry without Inquiry")
			}
		default:
			t.Fatalf("unknown kind %q", cb.Kind)
		}
		// Redaction: the output does not depend on the personal values.
		other := *cb
		other.Address, other.ApprovedCallback, other.Reason = cbSwap(cb.Address), cbSwap(cb.ApprovedCallback), cbSwap(cb.Reason)
		other.StatusComment = cbSwap(cb.StatusComment)
		for _, verb := range []string{"%v", "%+v", "%s"} {
			if a, b := fmt.Sprintf(verb, cb), fmt.Sprintf(verb, other); a != b {
				t.Fatalf("%s output depends on personal values:\n%s\n%s", verb, a, b)
			}
		}
		var b1, b2 bytes.Buffer
		slog.New(slog.NewJSONHandler(&b1, nil)).Info("m", "cb", cb)
		slog.New(slog.NewJSONHandler(&b2, nil)).Info("m", "cb", other)
		if cbStripTime(b1.String()) != cbStripTime(b2.String()) {
			t.Fatalf("slog output depends on personal values")
		}
	})
}

// cbSwap returns another value with the same emptiness.
func cbSwap(s string) string {
	if s == "" {
		return ""
	}
	if s == "other" {
		return "another"
	}
	return "other"
}

func cbStripTime(s string) string {
	_, rest, _ := strings.Cut(s, `"level"`)
	return rest
}

// TestCallbackDecision: the kind and decision of each form of callback,
// the live service's bodies and TRP's: a decision is read one way,
// whichever message carries it, and a body that says yes and no carries
// none.
func TestCallbackDecision(t *testing.T) {
	const (
		ir = travelrule.KindInquiryResolution
		tr = travelrule.KindTransferResolution
	)
	tests := []struct {
		name string
		body string
		kind travelrule.CallbackKind
		want travelrule.Decision
	}{
		{"live INQUIRY_RESOLUTION true", `{"approved":true,"callback":"https://x"}`, ir, travelrule.Approved},
		{"live INQUIRY_RESOLUTION false", `{"approved":false,"callback":"https://x"}`, ir, travelrule.Rejected},
		{`live INQUIRY_RESOLUTION "true"`, `{"approved":"true"}`, ir, travelrule.Approved},
		{`live INQUIRY_RESOLUTION "false"`, `{"approved":"false"}`, ir, travelrule.Rejected},
		{`live INQUIRY_RESOLUTION "False"`, `{"approved":"False"}`, ir, travelrule.Rejected},
		{"TRP approval", `{"approved":{"address":"bc1q","callback":"https://x"}}`, ir, travelrule.Approved},
		{"TRP approval, empty", `{"approved":{}}`, ir, travelrule.Approved},
		{"TRP rejection", `{"rejected":"policy"}`, ir, travelrule.Rejected},
		{"TRP rejection without reason", `{"rejected":null}`, ir, travelrule.Rejected},
		{"TRP rejection beside approved false", `{"approved":false,"rejected":"policy"}`, ir, travelrule.Rejected},
		{"TRANSFER_RESOLUTION APPROVED", `{"transferId":"t","status":"APPROVED","statusComment":"ok","callback":"https://x"}`, tr, travelrule.Approved},
		{"TRANSFER_RESOLUTION REJECTED", `{"transferId":"t","status":"REJECTED","statusComment":"no","callback":"https://x"}`, tr, travelrule.Rejected},
		{"TRANSFER_RESOLUTION approved", `{"transferId":"t","status":"approved"}`, tr, travelrule.Approved},
		{"TRANSFER_RESOLUTION completed", `{"transferId":"t","status":"completed"}`, tr, travelrule.Approved},
		{"TRANSFER_RESOLUTION Declined", `{"transferId":"t","status":"Declined"}`, tr, travelrule.Rejected},
		{"TRANSFER_RESOLUTION of an unknown status", `{"transferId":"t","status":"ON HOLD"}`, tr, ""},
		{"TRANSFER_RESOLUTION received", `{"transferId":"t","status":"received"}`, tr, ""},
		{"TRANSFER_RESOLUTION beside a consistent approval", `{"transferId":"t","status":"APPROVED","approved":true}`, tr, travelrule.Approved},
		{"TRANSFER_CONFIRMATION", `{"txid":"0xabc"}`, travelrule.KindTransferConfirmation, ""},
		{"INQUIRY", `{"asset":"BTC","amount":"1","callback":"https://x/transfers/inquiryResolution?q=t","IVMS101":{}}`, travelrule.KindInquiry, ""},
		{"cancellation", `{"canceled":"by the originator"}`, travelrule.KindCanceled, ""},
		{"approved neither a boolean nor an object", `{"approved":"yes"}`, travelrule.KindUnknown, ""},
		{"approval and rejection", `{"approved":true,"rejected":"x"}`, travelrule.KindUnknown, ""},
		{"TRP approval and rejection", `{"approved":{"address":"a"},"rejected":"x"}`, travelrule.KindUnknown, ""},
		{"approval and cancellation", `{"approved":"true","canceled":"x"}`, travelrule.KindUnknown, ""},
		{"approval and a rejecting status", `{"approved":true,"status":"REJECTED"}`, travelrule.KindUnknown, ""},
		{"rejection and an approving status", `{"approved":false,"status":"APPROVED"}`, travelrule.KindUnknown, ""},
		{"TRP rejection and an approving status", `{"rejected":"x","status":"APPROVED"}`, travelrule.KindUnknown, ""},
		{"an inquiry that decides", `{"status":"inquiry","approved":true}`, travelrule.KindUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := travelrule.ParseCallback([]byte(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.kind, cb.Kind)
			assert.Equal(t, tt.want, cb.Decision())
		})
	}
}

// TestCallbackDecisionOfHandBuilt: a TRANSFER_RESOLUTION made by hand
// decides by its status; an INQUIRY_RESOLUTION's decision is only
// ParseCallback's, so one made by hand carries none.
func TestCallbackDecisionOfHandBuilt(t *testing.T) {
	assert.Equal(t, travelrule.Approved, travelrule.Callback{Kind: travelrule.KindTransferResolution, Status: "APPROVED"}.Decision())
	assert.Equal(t, travelrule.Decision(""), travelrule.Callback{Kind: travelrule.KindInquiryResolution}.Decision())
	assert.Equal(t, travelrule.Decision(""), travelrule.Callback{Kind: travelrule.KindUnknown, Status: "APPROVED"}.Decision())
}
