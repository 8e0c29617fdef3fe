package travelrule_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// TestCallbackIDsNeverRepeatItsSecrets: the sender chose the identifiers
// and the personal values alike, so an identifier that repeats the
// callback's wallet address, reason, capability tag, or any text of its
// IVMS101 payload (a second account number, a place of birth) is shown as
// "[redacted]" in every form.
func TestCallbackIDsNeverRepeatItsSecrets(t *testing.T) {
	tests := []struct {
		name, body, secret string
	}{
		{"the approval's wallet as txId", `{"approved":{"address":"bc1qSECRETWALLET"},"txId":"bc1qSECRETWALLET"}`, "bc1qSECRETWALLET"},
		{"the capability tag as transferId", `{"transferId":"TAGxSECRETxTAG","status":"APPROVED","callback":"https://v.example/cb?tr_ref=p&tr_tag=TAGxSECRETxTAG"}`, "TAGxSECRETxTAG"},
		{"the reason as status", `{"transferId":"t","status":"Quaxworth","statusComment":"Quaxworth"}`, "Quaxworth"},
		{"an unmapped IVMS101 account number as txId", `{"asset":"BTC","amount":"1","txId":"bc1qSECONDACCOUNT","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","nameIdentifierType":"LEGL"}]}}}],"accountNumber":["bc1qFIRST","bc1qSECONDACCOUNT"]}}}`, "bc1qSECONDACCOUNT"},
		{"an IVMS101 account number as txId, the payload at the top level", `{"asset":"BTC","amount":"1","txId":"bc1qSECONDACCOUNT","originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","nameIdentifierType":"LEGL"}]}}}],"accountNumber":["bc1qFIRST","bc1qSECONDACCOUNT"]},"originatingVASP":{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"Orig VASP","legalPersonNameIdentifierType":"LEGL"}]}}}}}`, "bc1qSECONDACCOUNT"},
		{"the originating VASP's name as transferId, the payload at the top level", `{"transferId":"OrigVASPx","asset":"BTC","amount":"1","originatingVASP":{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"OrigVASPx","legalPersonNameIdentifierType":"LEGL"}]}}}}}`, "OrigVASPx"},
		{"an unmapped place of birth as transferId", `{"transferId":"Lyonnaise","asset":"BTC","amount":"1","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"dateAndPlaceOfBirth":{"dateOfBirth":"1979-04-02","placeOfBirth":"Lyonnaise"}}}]}}}`, "Lyonnaise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := travelrule.ParseCallback([]byte(tt.body))
			require.NoError(t, err)
			var logs bytes.Buffer
			slog.New(slog.NewJSONHandler(&logs, nil)).Info("cb", "callback", cb)
			for _, out := range []string{fmt.Sprint(cb), fmt.Sprintf("%+v", *cb), fmt.Sprintf("%#v", cb), logs.String()} {
				assert.NotContains(t, out, tt.secret)
			}
		})
	}
	// An identifier that repeats none of them is still shown.
	cb, err := travelrule.ParseCallback([]byte(`{"transferId":"t-42","status":"APPROVED","statusComment":"ok, all checked","callback":"https://v.example/cb?tr_ref=p&tr_tag=TAGxSECRETxTAG"}`))
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprint(cb), "TransferID:t-42 Status:APPROVED")
}

// TestSafeTransferID: the transfer id a sender wrote is kept when the fmt
// form shows it, and "" when it repeats a personal value of the callback
// or is not an identifier.
func TestSafeTransferID(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"an identifier", `{"transferId":"019ac452-8660-7061","status":"APPROVED"}`, "019ac452-8660-7061"},
		{"the inquiry's q", `{"asset":"BTC","amount":"1","callback":"https://trp.example/transfers/inquiryResolution?q=tr-9","IVMS101":{}}`, "tr-9"},
		{"a wallet of the body", `{"transferId":"bc1qsafetransferidwallet0","approved":{"address":"bc1qsafetransferidwallet0"}}`, ""},
		{"a name of the inquiry", `{"transferId":"Wilhelmina","status":"inquiry","asset":"BTC","amount":"1","originator":{"personType":"natural","firstName":"Wilhelmina"}}`, ""},
		{"a short name of the inquiry", `{"transferId":"ma-42","status":"inquiry","asset":"BTC","amount":"1","originator":{"personType":"natural","firstName":"Ma"}}`, ""},
		{"a word holding a short name's letters: kept, it joins the transfer's records", `{"transferId":"match-42","status":"inquiry","asset":"BTC","amount":"1","originator":{"personType":"natural","firstName":"Ma"}}`, "match-42"},
		{"a short building number inside a UUID", `{"transferId":"4b1f2ae3-5c6d-4e7f-8a9b-e07fc91280a7","status":"inquiry","asset":"BTC","amount":"1","originator":{"personType":"natural","firstName":"Ada","buildingNumber":"12"}}`, "4b1f2ae3-5c6d-4e7f-8a9b-e07fc91280a7"},
		{"an id free of the short name", `{"transferId":"tr-42","status":"inquiry","asset":"BTC","amount":"1","originator":{"personType":"natural","firstName":"Ma"}}`, "tr-42"},
		{"a short name glued to the last name", `{"transferId":"MASMITH-42","status":"inquiry","asset":"BTC","amount":"1","originator":{"personType":"natural","firstName":"Ma","lastName":"Smith"}}`, ""},
		{"a text of the IVMS101 payload", `{"transferId":"Quillfeather-7","asset":"BTC","amount":"1","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","secondaryIdentifier":"Quillfeather","nameIdentifierType":"LEGL"}]}}}]}}}`, ""},
		{"an unmapped text of the IVMS101 payload", `{"transferId":"Lyonnaise","asset":"BTC","amount":"1","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"dateAndPlaceOfBirth":{"dateOfBirth":"1979-04-02","placeOfBirth":"Lyonnaise"}}}]}}}`, ""},
		{"a text the IVMS101 payload keeps in Extra", `{"transferId":"tr-Wexcombe","asset":"BTC","amount":"1","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Hopper","nameIdentifierType":"LEGL"}]},"alias":{"nick":["Wexcombe"]}}}]}}}`, ""},
		{"a code of the IVMS101 payload is no personal value", `{"transferId":"GEOG-LEGL","asset":"BTC","amount":"1","IVMS101":{"originator":{"originatorPersons":[{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"Hopper Ltd","legalPersonNameIdentifierType":"LEGL"}]},"geographicAddress":[{"addressType":"GEOG","townName":"Oslo","country":"NO"}]}}]}}}`, "GEOG-LEGL"},
		{"not an identifier", `{"transferId":"two words","status":"APPROVED"}`, ""},
		{"none", `{"status":"APPROVED"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := travelrule.ParseCallback([]byte(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.want, cb.SafeTransferID())
			if tt.want == "" && cb.TransferID != "" {
				assert.NotContains(t, fmt.Sprint(cb), cb.TransferID, "the fmt form hides it too")
			}
		})
	}
}

// TestSafeTransferIDAllocations: the journal takes the transfer id of
// every callback; SafeTransferID walks the IVMS101 payload's structs, it
// does not write the payload's JSON again and read it back (289
// allocations for the live INQUIRY, before #42).
func TestSafeTransferIDAllocations(t *testing.T) {
	cb, err := travelrule.ParseCallback([]byte(cbLiveInquiryBody))
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(20, func() {
		if cb.SafeTransferID() == "" {
			t.Fatal("the transfer id is hidden")
		}
	})
	assert.LessOrEqual(t, allocs, 16.0)
}

// BenchmarkCallbackSafeTransferID: the transfer id the journal takes of
// every callback it records, here of the live service's INQUIRY with its
// IVMS101 payload (the id repeats none of its values, so every value is
// looked at).
func BenchmarkCallbackSafeTransferID(b *testing.B) {
	cb, err := travelrule.ParseCallback([]byte(cbLiveInquiryBody))
	require.NoError(b, err)
	require.NotEmpty(b, cb.TransferID)
	measure(b, func() error {
		if cb.SafeTransferID() != cb.TransferID {
			return fmt.Errorf("the transfer id is hidden")
		}
		return nil
	})
}

// TestSafeTransferIDNumbersOfThePayload: a sender that writes a national
// identifier or an account number as a JSON number (a type error that
// the payload keeps in Extra and Validate reports) still sends that
// person's number; a transfer id that repeats it is personal, and must
// neither be kept by the journal (SafeTransferID) nor shown by fmt. Both
// forms read only the payload's string values (so on main as well: not
// a regression of #42).
func TestSafeTransferIDNumbersOfThePayload(t *testing.T) {
	for name, body := range map[string]string{
		"a national identifier as a number": `{"transferId":"tr-84512977","asset":"BTC","amount":"1","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"nationalIdentification":{"nationalIdentifier":84512977,"nationalIdentifierType":"IDCD"}}}]}}}`,
		"an account number as a number":     `{"transferId":"tr-84512977","asset":"BTC","amount":"1","IVMS101":{"originator":{"accountNumber":[84512977]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			cb, err := travelrule.ParseCallback([]byte(body))
			require.NoError(t, err)
			assert.Empty(t, cb.SafeTransferID())
			assert.NotContains(t, fmt.Sprint(cb), "84512977")
		})
	}
}
