package callback_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// The four callbacks of the live service, as live-service.md describes
// them (section Callbacks), with made-up people. The INQUIRY's parties are
// a nested IVMS101 payload, in the 2020 edition's names; the root
// package's tests read the same file.
var liveInquiry = strings.TrimSpace(string(must(os.ReadFile("../testdata/callback_inquiry_live.json"))))

// liveInquiryTopLevel is the inbound inquiry as live-service.md's stage 4
// also describes it: "an IVMS101 originator envelope with originator and
// originatingVASP keys", the payload's members at the top level, with
// made-up people.
const liveInquiryTopLevel = `{"asset":"ETH","amount":"2.5",` +
	`"callback":"https://trp.travel-rule.com/transfers/inquiryResolution?q=019ac452-0000-7061-9b93-toplevel0001",` +
	`"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Quillfeather","secondaryIdentifier":"Ignatia","nameIdentifierType":"LEGL"}]},` +
	`"geographicAddress":[{"addressType":"HOME","streetName":"Via Appia","buildingNumber":"7","postCode":"00179","townName":"Roma","country":"IT"}],` +
	`"dateAndPlaceOfBirth":{"dateOfBirth":"1968-07-14","placeOfBirth":"Napoli"}}}],"accountNumber":["0xignatiawallet000000000000000000000000000"]},` +
	`"beneficiary":{"beneficiaryPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Brackenbury","secondaryIdentifier":"Odo","nameIdentifierType":"LEGL"}]}}}],` +
	`"accountNumber":["0xodowallet00000000000000000000000000000000"]},` +
	`"originatingVASP":{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"Originator Trust SpA","legalPersonNameIdentifierType":"LEGL"}]},"countryOfRegistration":"IT"}}}}`

const (
	liveInquiryResolution    = `{"approved":{"address":"bc1qodalyswallet00000000000000000000000","callback":"https://trp.travel-rule.com/transfers/txId?q=t-42"},"callback":"https://vasp.example/travelrule/callback"}`
	liveTransferResolution   = `{"transferId":"t-42","status":"REJECTED","statusComment":"the beneficiary is not our customer","callback":"https://vasp.example/travelrule/callback"}`
	liveTransferConfirmation = `{"txid":"0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"}`
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// liveMux mounts one handler, verifying x-data-integrity with secrets,
// where a VASP mounts it: at the inbound-inquiry path its travel addresses
// name, and at its callback path.
func liveMux(t *testing.T, rc *recorder, secrets ...string) *httptest.Server {
	t.Helper()
	v, err := callback.NewDataIntegrityVerifier(secrets...)
	require.NoError(t, err)
	h := callback.NewHandler(rc.fn, callback.WithVerifier(v))
	require.NoError(t, h.Err())
	mux := http.NewServeMux()
	mux.Handle("POST /transfers/inquiry/{beneficiaryId}", h)
	mux.Handle("/travelrule/callback", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// postSigned posts body to url with the given x-data-integrity header
// (none when empty) and extra headers.
func postSigned(t *testing.T, url, body, signature string, extra ...string) int {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}}
	if signature != "" {
		h.Set(callback.HeaderDataIntegrity, signature)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return send(t, http.MethodPost, url, body, h).code
}

// TestLiveCallbacksAccepted: each of the four kinds, signed as the service
// signs, is accepted and decoded; sent again (the service's redelivery, or
// a replay, with or without a made-up webhook-id) it is acknowledged
// without calling the function again.
func TestLiveCallbacksAccepted(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		body  string
		check func(t *testing.T, cb *travelrule.Callback)
	}{
		{"INQUIRY", "/transfers/inquiry/019ac452-beneficiary", liveInquiry, func(t *testing.T, cb *travelrule.Callback) {
			assert.Equal(t, travelrule.KindInquiry, cb.Kind)
			assert.Equal(t, "019ac452-8660-7061-9b93-8d72eaa11a89", cb.TransferID, "the id is the callback URL's q")
			require.NotNil(t, cb.Inquiry)
			assert.Equal(t, "BTC", cb.Inquiry.Asset)
			assert.Equal(t, "0.0425", cb.Inquiry.Amount)
			assert.Equal(t, "https://trp.travel-rule.com/transfers/inquiryResolution?q=019ac452-8660-7061-9b93-8d72eaa11a89", cb.Inquiry.Callback)
			assert.Equal(t, travelrule.Party{PersonType: "natural", FirstName: "Zebulon", LastName: "Quaxworth", DateOfBirth: "1979-04-02",
				AddressType: "HOME", StreetName: "Rue de Rivoli", BuildingNumber: "99", PostCode: "75001", TownName: "Paris", Country: "FR",
				NationalID: "FR-ID-7781", NationalIDType: "IDCD", WalletAddress: "bc1qzebulonwallet0000000000000000000000"}, cb.Inquiry.Originator)
			assert.Equal(t, travelrule.Party{PersonType: "natural", FirstName: "Odalys", LastName: "Fairweather",
				WalletAddress: "bc1qodalyswallet00000000000000000000000"}, cb.Inquiry.Beneficiary)
			require.NotNil(t, cb.IVMS101)
			require.NotNil(t, cb.IVMS101.OriginatingVASP)
			assert.Equal(t, "Originator Exchange SAS", cb.IVMS101.OriginatingVASP.Person.LegalPerson.Name.NameIdentifiers[0].LegalPersonName)
			assert.Equal(t, []string{
				"originator.originatorPersons[0].naturalPerson.nationalIdentification.countryOfIssue",
				"originator.originatorPersons[0].naturalPerson.dateAndPlaceOfBirth.placeOfBirth",
			}, cb.Unmapped)
		}},
		{"INQUIRY, the IVMS101 envelope at the top level", "/transfers/inquiry/019ac452-beneficiary", liveInquiryTopLevel, func(t *testing.T, cb *travelrule.Callback) {
			assert.Equal(t, travelrule.KindInquiry, cb.Kind)
			assert.Equal(t, "019ac452-0000-7061-9b93-toplevel0001", cb.TransferID, "the id is the callback URL's q")
			require.NotNil(t, cb.Inquiry)
			assert.Equal(t, "ETH", cb.Inquiry.Asset)
			assert.Equal(t, "2.5", cb.Inquiry.Amount)
			assert.Equal(t, travelrule.Party{PersonType: "natural", FirstName: "Ignatia", LastName: "Quillfeather", DateOfBirth: "1968-07-14",
				AddressType: "HOME", StreetName: "Via Appia", BuildingNumber: "7", PostCode: "00179", TownName: "Roma", Country: "IT",
				WalletAddress: "0xignatiawallet000000000000000000000000000"}, cb.Inquiry.Originator)
			assert.Equal(t, travelrule.Party{PersonType: "natural", FirstName: "Odo", LastName: "Brackenbury",
				WalletAddress: "0xodowallet00000000000000000000000000000000"}, cb.Inquiry.Beneficiary)
			require.NotNil(t, cb.IVMS101)
			require.NotNil(t, cb.IVMS101.OriginatingVASP)
			assert.Equal(t, "Originator Trust SpA", cb.IVMS101.OriginatingVASP.Person.LegalPerson.Name.NameIdentifiers[0].LegalPersonName)
			assert.Empty(t, cb.IVMS101.Extra, "the transfer's members are not the payload's")
			assert.Equal(t, []string{"originator.originatorPersons[0].naturalPerson.dateAndPlaceOfBirth.placeOfBirth"}, cb.Unmapped)
		}},
		{"INQUIRY_RESOLUTION", "/travelrule/callback", liveInquiryResolution, func(t *testing.T, cb *travelrule.Callback) {
			assert.Equal(t, travelrule.KindInquiryResolution, cb.Kind)
			assert.Equal(t, travelrule.Approved, cb.Decision())
			assert.Equal(t, "bc1qodalyswallet00000000000000000000000", cb.Address)
			assert.Equal(t, "https://trp.travel-rule.com/transfers/txId?q=t-42", cb.ApprovedCallback)
		}},
		{"TRANSFER_RESOLUTION", "/travelrule/callback", liveTransferResolution, func(t *testing.T, cb *travelrule.Callback) {
			assert.Equal(t, travelrule.KindTransferResolution, cb.Kind)
			assert.Equal(t, travelrule.Rejected, cb.Decision())
			assert.Equal(t, "t-42", cb.TransferID)
			assert.Equal(t, "REJECTED", cb.Status)
			assert.Equal(t, "the beneficiary is not our customer", cb.StatusComment)
		}},
		{"TRANSFER_CONFIRMATION", "/travelrule/callback", liveTransferConfirmation, func(t *testing.T, cb *travelrule.Callback) {
			assert.Equal(t, travelrule.KindTransferConfirmation, cb.Kind)
			assert.Empty(t, cb.Decision())
			assert.Equal(t, "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060", cb.TxID)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rc recorder
			srv := liveMux(t, &rc, liveSecret)
			sig := callback.SignDataIntegrity([]byte(liveSecret), []byte(tt.body))
			require.Equal(t, http.StatusNoContent, postSigned(t, srv.URL+tt.path, tt.body, sig))
			require.Equal(t, 1, rc.count())
			cb := rc.last(t)
			assert.Equal(t, tt.body, string(cb.Raw))
			tt.check(t, cb)

			// The service's redelivery, and a replay with a made-up
			// webhook-id, which the signature does not cover.
			assert.Equal(t, http.StatusNoContent, postSigned(t, srv.URL+tt.path, tt.body, sig))
			assert.Equal(t, http.StatusNoContent, postSigned(t, srv.URL+tt.path, tt.body, sig, callback.HeaderID, "msg_made_up"))
			assert.Equal(t, 1, rc.count(), "a redelivered or replayed callback calls the function once")
		})
	}
}

// TestLiveCallbacksRefused: forged, altered, unsigned and wrongly-keyed
// callbacks of each kind are answered 401 and never reach the function.
func TestLiveCallbacksRefused(t *testing.T) {
	const otherSecret = "whsec-someone-elses-signing-secret"
	for _, body := range []string{liveInquiry, liveInquiryTopLevel, liveInquiryResolution, liveTransferResolution, liveTransferConfirmation} {
		good := callback.SignDataIntegrity([]byte(liveSecret), []byte(body))
		altered := strings.Replace(body, `"`, `" `, 1) // one byte more: a space in a key
		other := liveTransferConfirmation
		if body == other {
			other = liveTransferResolution
		}
		cases := []struct {
			name, body, sig string
			extra           []string
		}{
			{"unsigned", body, "", nil},
			{"wrongly keyed", body, callback.SignDataIntegrity([]byte(otherSecret), []byte(body)), nil},
			{"altered after signing", altered, good, nil},
			{"another callback's signature", body, callback.SignDataIntegrity([]byte(liveSecret), []byte(other)), nil},
			{"the signature of the raw body, not of its base64", body, rawBodyMAC(liveSecret, body), nil},
			{"a Standard Webhooks signature instead", body, "", []string{callback.HeaderID, "msg_1", callback.HeaderTimestamp, "1700000000", callback.HeaderSignature, "v1,AAAA"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var rc recorder
				srv := liveMux(t, &rc, liveSecret)
				for _, path := range []string{"/transfers/inquiry/b-1", "/travelrule/callback"} {
					assert.Equal(t, http.StatusUnauthorized, postSigned(t, srv.URL+path, c.body, c.sig, c.extra...))
				}
				assert.Zero(t, rc.count())
			})
		}
	}
}

// TestLiveCallbacksRotation: while a handler holds the old and the new
// signing secret, callbacks signed with either are accepted.
func TestLiveCallbacksRotation(t *testing.T) {
	const newSecret = "whsec-the-new-secret-after-rotation"
	var rc recorder
	srv := liveMux(t, &rc, newSecret, liveSecret)
	assert.Equal(t, http.StatusNoContent, postSigned(t, srv.URL+"/travelrule/callback", liveBody, liveHeader))
	assert.Equal(t, http.StatusNoContent, postSigned(t, srv.URL+"/travelrule/callback", liveTransferConfirmation,
		callback.SignDataIntegrity([]byte(newSecret), []byte(liveTransferConfirmation))))
	assert.Equal(t, 2, rc.count())
}

// TestLiveCallbackReplayedToAnotherTransfer: x-data-integrity covers the
// body, not the URL, so a signed resolution about one payment replayed to
// another payment's capability URL must not reach the function as that
// payment's: the body's own callback URL names its transfer.
func TestLiveCallbackReplayedToAnotherTransfer(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	v, err := callback.NewDataIntegrityVerifier(liveSecret)
	require.NoError(t, err)
	var rc recorder
	h := callback.NewHandler(rc.fn, callback.WithVerifier(v), callback.WithCapabilityKey(key))
	srv := httptest.NewServer(h)
	defer srv.Close()
	urlA, err := travelrule.NewCallbackURL(srv.URL+"/travelrule/callback", "payment-A", key)
	require.NoError(t, err)
	urlB, err := travelrule.NewCallbackURL(srv.URL+"/travelrule/callback", "payment-B", key)
	require.NoError(t, err)
	for _, body := range []string{
		`{"approved":{"address":"bc1qA","callback":"https://svc.example/transfers/txId?q=tA"},"callback":"` + urlA + `"}`,
		`{"transferId":"tA","status":"APPROVED","statusComment":"ok","callback":"` + urlA + `"}`,
	} {
		sig := callback.SignDataIntegrity([]byte(liveSecret), []byte(body))
		require.Equal(t, http.StatusNoContent, postSigned(t, urlA, body, sig))
		assert.Equal(t, http.StatusUnauthorized, postSigned(t, urlB, body, sig), "replayed to another payment's URL")
	}
	require.Equal(t, 2, rc.count())
	assert.Equal(t, "payment-A", rc.last(t).Ref)
}
