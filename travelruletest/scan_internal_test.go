package travelruletest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// scanSDKBody is an initiation as the SDK sends it.
const scanSDKBody = `{"travelAddress":"ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv","asset":"BTC","amount":"0.5","callback":"https://vasp-a.example/cb?t=1&u=2",` +
	`"originator":{"personType":"natural","firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1815-12-10"},` +
	`"beneficiary":{"personType":"legal","legalName":"Zürich Ltd","walletAddress":"0xabc","country":"CH"}}`

func TestScanTransfer(t *testing.T) {
	for _, tt := range []struct {
		name string
		body string
		ok   bool
	}{
		{"the SDK's", scanSDKBody, true},
		{"white space", " \t\r\n{ \"asset\" : \"BTC\" ,\n\"originator\" : { \"firstName\" : \"Ada\" } } \n", true},
		{"empty object", `{}`, true},
		{"nulls", `{"asset":null,"originator":null,"beneficiary":{"firstName":null}}`, true},
		{"a name twice", `{"asset":"BTC","asset":"ETH","originator":{"firstName":"A"},"originator":{"lastName":"B"}}`, true},
		{"null after a value", `{"asset":"BTC","asset":null,"travelAddress":"ta1","travelAddress":null}`, true},
		{"DEL and non-ASCII", "{\"asset\":\"\x7f\u00e4\u4e16\U0001F600\"}", true},

		{"empty travelAddress", `{"travelAddress":""}`, false},
		{"unknown name", `{"asset":"BTC","network":"mainnet"}`, false},
		{"unknown party name", `{"originator":{"nickname":"A"}}`, false},
		{"case-folded name", `{"Asset":"BTC"}`, false},
		{"escape in a value", `{"asset":"B\u0054C"}`, false},
		{"escaped quote", `{"asset":"B\"TC"}`, false},
		{"escape in a name", `{"\u0061sset":"BTC"}`, false},
		{"control character", "{\"asset\":\"B\tTC\"}", false},
		{"invalid UTF-8", "{\"asset\":\"B\xffTC\"}", false},
		{"number", `{"amount":0.5}`, false},
		{"boolean", `{"asset":true}`, false},
		{"party not an object", `{"originator":"Ada"}`, false},
		{"party array", `{"beneficiary":[]}`, false},
		{"nested object", `{"originator":{"firstName":{"x":1}}}`, false},
		{"trailing data", `{"asset":"BTC"}x`, false},
		{"two objects", `{}{}`, false},
		{"trailing comma", `{"asset":"BTC",}`, false},
		{"missing colon", `{"asset" "BTC"}`, false},
		{"missing comma", `{"asset":"BTC" "amount":"1"}`, false},
		{"unterminated", `{"asset":"BTC`, false},
		{"unclosed", `{"asset":"BTC"`, false},
		{"nul", `{"asset":nul}`, false},
		{"nullx", `{"asset":nullx}`, false},
		{"array", `[]`, false},
		{"null body", `null`, false},
		{"empty body", ``, false},
		{"byte order mark", "\ufeff{}", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got travelrule.TransferRequest
			ok := scanTransfer([]byte(tt.body), &got)
			require.Equal(t, tt.ok, ok)
			if ok {
				assertDecodedAlike(t, []byte(tt.body), got)
			}
		})
	}
}

// assertDecodedAlike checks that got, what scanTransfer made of body, is
// what encoding/json makes of it, and what the strict decoder, with no
// fault of type, makes of it.
func assertDecodedAlike(t *testing.T, body []byte, got travelrule.TransferRequest) {
	t.Helper()
	var want travelrule.TransferRequest
	require.NoError(t, json.Unmarshal(body, &want), "scanned a body encoding/json refuses")
	assert.Equal(t, want, got)
	var w wireTransfer
	require.NoError(t, decodeObject(body, &w))
	var strict travelrule.TransferRequest
	var faults typeFaults
	faults.str(&strict.TravelAddress, "travelAddress", w.TravelAddress)
	faults.str(&strict.Email, "email", w.Email)
	faults.str(&strict.TxID, "txId", w.TxID)
	faults.str(&strict.Asset, "asset", w.Asset)
	faults.str(&strict.Amount, "amount", w.Amount)
	faults.str(&strict.Callback, "callback", w.Callback)
	faults.party(&strict.Originator, "originator", w.Originator)
	faults.party(&strict.Beneficiary, "beneficiary", w.Beneficiary)
	assert.Empty(t, faults)
	assert.Equal(t, want, strict)
	assert.False(t, w.TravelAddress.set && w.TravelAddress.v == "", "scanned an empty travelAddress")
}

// FuzzScanTransfer checks that whatever scanTransfer accepts decodes as
// encoding/json and the strict decoder decode it.
func FuzzScanTransfer(f *testing.F) {
	for _, s := range []string{
		scanSDKBody, `{}`, `{"asset":null}`, `{"travelAddress":""}`, `{"originator":{"firstName":"A"},"originator":null}`,
		`{"Asset":"x"}`, `{"asset":"\u00e4"}`, "{\"asset\":\"\xc3\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got travelrule.TransferRequest
		if scanTransfer(body, &got) {
			assertDecodedAlike(t, body, got)
		}
	})
}
