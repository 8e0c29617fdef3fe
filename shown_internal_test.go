package travelrule

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

var testPII = []string{"Quarterfield", "Ødegård-Müller", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "AB123456", "1984-02-29", "5"}

// shownCode and shownReqID are what an error string shows of a code and a
// request id of a call that sent pii.
func shownCode(code string, pii []string) bool {
	sec := newSecrets(pii, nil)
	return documentedCode(code) || codeShaped(code) && !sec.echoes(code)
}

func shownReqID(id string, pii []string) bool {
	sec := newSecrets(pii, nil)
	return showRequestID(id) && !sec.echoes(id)
}

func TestShowCode(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"bad_request", true},
		{"VALIDATION_ERROR", true},
		{"forbidden", true},          // documented, in any case
		{"TRANSFER_NOT_FOUND", true}, // documented
		{"ERR_404", true},            //
		{"E42", false},               // one word the service does not document
		{"Smith", false},             // a last name the call did not send (ResolveInquiry sends none)
		{"SMITH", false},             //
		{"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", false}, // a wallet address
		{"Bad_Request", false},                                // mixed case: a name, not a code
		{"van_Dijk", false},                                   //
		{"_LEADING", false},                                   //
		{"TRAILING_", false},                                  //
		{"DOUBLE__SEP", false},                                //
		{"1_CODE", false},                                     //
		{"ada@example.com", false},                            //
		{"invalid-travel-address", false},                     // '-' joins names too
		{"john.smith", false},                                 // '.' too
		{"V2_API", true},
		{"invalid_beneficiary_bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", false}, // a wallet address, lower case
		{"INVALID_BENEFICIARY_0X742D35CC6634C0532925A3B844BC454E", false},         // an Ethereum address, upper case
		{"INVALID_IBAN_DE89370400440532013000", false},                            // an IBAN
		{"born_19840229", false},                  // a date of birth
		{"SSN_123_45_6789", false},                // a national id in pieces
		{"PHONE_4915112345678", false},            // a phone number
		{"LEI_529900T8BM49AURSDO55", false},       // an LEI
		{"NINO_QQ123456C", false},                 // a national insurance number
		{"ERR_" + strings.Repeat("X", 25), false}, // a word too long to be a code's
		{"", false},
		{"has space", false},
		{strings.Repeat("a", maxCode+1), false},
		{"Quarterfield", false},
		{"QUARTERFIELD", false},                                         // case-insensitive
		{"unknown_quarterfield", false},                                 // contained
		{"0x742D35CC6634C0532925A3B844BC454E4438F44E", false},           // a wallet address, other case
		{"id_ab123456_rejected", false},                                 // a national id
		{"odegard-muller", false},                                       // without diacritics
		{"E_5", true},                                                   // a one-character value is not looked for
		{"1984-02-29", false},                                           // a date of birth
		{"born_" + strings.ToUpper("1984-02-29"), false},                //
		{"\u0130STANBUL", false},                                        // not an identifier (non-ASCII)
		{"ok_code_with_digits_123", true},                               //
		{"<script>", false},                                             //
		{"code\nInjected: header", false},                               //
		{"a.b:c[0]", false},                                             // a path, not a code
		{"0X742D35CC6634C0532925A3B844BC454E4438F44E_FORBIDDEN", false}, //
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, shownCode(tt.code, testPII), "%q", tt.code)
	}
}

func TestShowRequestID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"req_01HZX3", true},
		{"5f0c6a3e-7c1b-4a8e-9d2a-3b1c0e9f8a7d", true},
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", true},
		{"", false},
		{strings.Repeat("a", maxRequestID), true},
		{strings.Repeat("a", maxRequestID+1), false},
		{"id with spaces", false},
		{"ada@example.com", false},
		{"QUARTERFIELD-7", false},
		{"trace:ab123456", false},
		{"\x1b[31mred", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, shownReqID(tt.id, testPII), "%q", tt.id)
	}
}

func TestRequestPaths(t *testing.T) {
	for _, p := range []string{"asset", "amount", "callback", "travelAddress", "originator", "originator.firstName", "beneficiary.walletAddress", "beneficiary.nationalIdType", "approved"} {
		assert.True(t, requestPaths()[p], p)
	}
	for _, p := range []string{"", "Quarterfield", "originator.Quarterfield", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "originator.firstName.x"} {
		assert.False(t, requestPaths()[p], p)
	}
}
