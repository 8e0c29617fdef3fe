package travelrule

import (
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

var testPII = []string{"Quarterfield", "Ødegård-Müller", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "AB123456", "1984-02-29", "5"}

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
		assert.Equal(t, tt.want, showCode(tt.code, testPII), "%q", tt.code)
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
		assert.Equal(t, tt.want, showRequestID(tt.id, testPII), "%q", tt.id)
	}
}

func TestScrub(t *testing.T) {
	tests := []struct{ msg, want string }{
		{"", ""},
		{"no personal data", "no personal data"},
		{"unknown Quarterfield", "unknown [redacted]"},
		{"UNKNOWN QUARTERFIELD, quarterfield and QuArTeRfIeLd", "UNKNOWN [redacted], [redacted] and [redacted]"},
		{"name ODEGARD-MULLER", "name [redacted]"},
		{"wallet 0X742D35CC6634C0532925A3B844BC454E4438F44E!", "wallet [redacted]!"},
		{"line\nbreak\x00nul", "line break nul"},
		{"OEDEGAARD MUELLER is not welcome", "[redacted]"},
		{"id ab-123-456 refused", "[redacted]"},
		{hex.EncodeToString([]byte("Quarterfield")), "[redacted]"},
		{strings.Repeat("x", maxMessage) + "Quarterfield", strings.Repeat("x", maxMessage) + "…"},
		// A value that crosses the limit is replaced whole, the marker kept whole.
		{strings.Repeat("x", maxMessage-3) + "Quarterfield", strings.Repeat("x", maxMessage-3) + "[redacted]"},
		{strings.Repeat("x", maxMessage-3) + "Quarterfield and more", strings.Repeat("x", maxMessage-3) + "[redacted]…"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, scrub(tt.msg, testPII), "%q", tt.msg)
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

// A word may end where wordBreak says: at a rune that is no letter, digit
// or mark, at the text's edges, inside text of a script written without
// spaces, at a lower-to-upper case change and between a digit and a
// letter; never between two letters of one word.
func TestWordBreak(t *testing.T) {
	tests := []struct {
		a, b rune
		want bool
	}{
		{'g', 'ʼ', true},  // U+02BC, the apostrophe Unicode recommends: "Ngʼs"
		{'g', 'ʰ', true},  // a modifier letter
		{'g', 'ª', true},  // an ordinal indicator
		{'g', 'º', true},  //
		{'g', 'א', true},  // Latin, then Hebrew
		{'G', 'α', true},  // Latin, then Greek
		{'ж', 'a', true},  // Cyrillic, then Latin
		{'g', 'ܐ', true},  // Syriac: every script Unicode has, not a list
		{'x', 'അ', true},  // Malayalam
		{'Ꮳ', 'a', true},  // Cherokee
		{'അ', 'ന', false}, // Malayalam both
		{'𐐀', 'a', true},  // Deseret, beyond the BMP
		{'é', 'a', false}, // Latin both
		{'a', '́', false}, // a combining mark stays in the word
		{-1, 'M', true},   // the text's start
		{'a', -1, true},   // its end
		{' ', 'M', true},  //
		{'=', 'M', true},  // "firstName=Ma"
		{'a', ',', true},  //
		{'a', '.', true},  //
		{'"', 'M', true},  //
		{'a', '"', true},  //
		{'_', 'M', true},  // "INVALID_MA"
		{']', 'M', true},  // "[redacted]Ma"
		{'a', 't', false}, // "match"
		{'M', 'A', false}, // "MATCH"
		{'a', 'é', false}, // "Maé": one word
		{'é', 'a', false}, //
		{'é', 'M', true},  // "éMa": a case change
		{'a', 'S', true},  // "MaSmith"
		{'A', 'S', false}, // "MASMITH"
		{'A', 'a', false}, // "Analysis"
		{'a', '1', true},  // "Ma1984"
		{'1', 'M', true},  //
		{'1', '9', false}, //
		{'a', '\u0301', false},
		{'\u0301', 't', false},
		{'户', 'M', true},            // Chinese, no spaces between words
		{'王', '芳', true},            //
		{'수', '님', true},            // Korean, a particle glued to a name
		{'ก', 'ข', true},            // Thai
		{'a', '\u200b', true},       // a zero-width space is no letter
		{'ж', 'и', false},           // Cyrillic is written with spaces
		{'α', 'Β', true},            // a case change in Greek
		{'Ｍ', 'ａ', false},           // fullwidth letters of one word
		{'a', '\u00ad', true},       // a soft hyphen is no letter (the loose match takes it in)
		{utf8.RuneError, 'a', true}, //
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, wordBreak(tt.a, tt.b), "%q|%q", tt.a, tt.b)
	}
}

// A short personal value is replaced where it is a whole word, alone or
// glued to other personal values, and left alone inside another word; a
// value of anywhereRunes letters and digits or more is replaced anywhere.
func TestScrubWholeWords(t *testing.T) {
	tests := []struct {
		name string
		pii  []string
		msg  string
		want string
	}{
		{"a reason holding a short first name", []string{"Ma"}, "checksum does not match", "checksum does not match"},
		{"in capitals", []string{"Ma"}, "CHECKSUM DOES NOT MATCH", "CHECKSUM DOES NOT MATCH"},
		{"a reason holding a short travel address", []string{"ta"}, "invalid travel address data", "invalid travel address data"},
		{"short names in ordinary words", []string{"Li", "Ng", "An"}, "linear changing and Analysis ANALYSIS", "linear changing and Analysis ANALYSIS"},
		{"a short name alone", []string{"Ma"}, "Ma", redacted},
		{"before U+02BC, the recommended apostrophe", []string{"Ng"}, "beneficiary Ngʼs name is on a sanctions list", "beneficiary " + redacted + "ʼs name is on a sanctions list"},
		{"before an ordinal indicator", []string{"Ng"}, "Ngª", redacted + "ª"},
		{"before a letter of another script", []string{"Ng"}, "Ngא NGα Ngܐ", redacted + "א " + redacted + "α " + redacted + "ܐ"},
		{"in lower case", []string{"Ma"}, "unknown ma", "unknown " + redacted},
		{"in capitals, alone", []string{"Ma"}, "unknown MA", "unknown " + redacted},
		{"a key and value", []string{"Ma"}, "firstName=Ma, lastName missing", "firstName=" + redacted + ", lastName missing"},
		{"before a full stop", []string{"Ma"}, "unknown Ma.", "unknown " + redacted + "."},
		{"quoted", []string{"Ma"}, `name "Ma" refused`, `name "` + redacted + `" refused`},
		{"with diacritics", []string{"Ma"}, "unknown Mä", "unknown " + redacted},
		{"decomposed", []string{"Ma"}, "unknown Ma\u0301", "unknown " + redacted},
		{"glued to the last name", []string{"Ma", "Smith"}, "MaSmith", redacted},
		{"glued, in capitals", []string{"Ma", "Smith"}, "unknown MASMITH", "unknown " + redacted},
		{"glued, in lower case, after", []string{"Ma", "Smith"}, "smithma", redacted},
		{"glued to a long value inside a word", []string{"Ma", "Smith"}, "jsmithma", "j" + redacted},
		{"two short names glued", []string{"Ma", "Li"}, "MALI and mali", redacted + " and " + redacted},
		{"glued to a word by a case change", []string{"Ma"}, "MaSmith unknownMa", redacted + "Smith unknown" + redacted},
		{"glued to digits", []string{"Ma"}, "Ma1984", redacted + "1984"},
		{"a short value inside a word", []string{"John"}, "xJohnx", "xJohnx"},
		{"an accented letter after: another word", []string{"Ma"}, "Maé", "Maé"},
		{"an accented letter before, lower case: another word", []string{"Ma"}, "éma", "éma"},
		{"an accented letter before, a case change", []string{"Ma"}, "éMa", "é" + redacted},
		{"an accented word apart", []string{"Ma"}, "Ma é", redacted + " é"},
		{"in Chinese text", []string{"Ma"}, "用户Ma不存在", "用户" + redacted + "不存在"},
		{"a Chinese name in Chinese text", []string{"王芳"}, "用户王芳不存在", "用户" + redacted + "不存在"},
		{"a Korean name and its particle", []string{"김민수"}, "김민수님", redacted + "님"},
		{"a long value inside a word", []string{"Quarterfield"}, "unknownquarterfield", "unknown" + redacted},
		{"a five-letter value inside a word", []string{"Smith"}, "jsmith", "j" + redacted},
		{"a short value reshaped (separators)", []string{"Li Na"}, "unknown LI_NA here", redacted},
		{"a short value's letters inside a word", []string{"Li Na"}, "Carolina", "Carolina"},
		{"a short value reshaped (ICAO)", []string{"Mü"}, "MUE", redacted},
		{"a short value's letters written out inside a word", []string{"Mü"}, "MUELLER", "MUELLER"},
		{"a short value in hex", []string{"Ma"}, "4d61", redacted},
		{"one letter is not looked for", []string{"M."}, "M. is unknown", "M. is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, scrub(tt.msg, tt.pii))
		})
	}
}

// The shows and hides of a code, a request id or a transfer id holding a
// short personal value follow the same rule (containsAny).
func TestContainsAnyWholeWords(t *testing.T) {
	pii := []string{"Ma", "ta", "Li"}
	tests := []struct {
		s    string
		want bool
	}{
		{"INVALID_MATCH", false},
		{"INVALID_MA", true},
		{"MA_INVALID", true},
		{"INVALID_DATA", false},
		{"req-match-7", false},
		{"req-ma-7", true},
		{"req_ma7", true},
		{"tr-linear-1", false},
		{"tr-li-1", true},
		{"MATIC", false},
		{"Ma", true},
		{"TWE", true}, // base64 of "Ma"
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, containsAny(tt.s, pii), "%q", tt.s)
	}
	// Shown or hidden whole: a value inside a word hides it, but a
	// documented code is always shown.
	assert.False(t, showCode("INVALID_MATCH", pii))
	assert.False(t, showCode("INVALID_MA", pii))
	assert.True(t, showCode("VALIDATION_ERROR", []string{"Li"}))
	assert.True(t, showCode("INVALID_REQUEST", []string{"Ue"}))
	assert.False(t, showRequestID("req-match-7", pii))
	assert.False(t, showRequestID("req-ma-7", pii))
	assert.True(t, showRequestID("req-42", pii))
	assert.True(t, containsAnywhere("TRMAX", pii))
	assert.False(t, containsAnywhere("tr-42", pii))
}

// TestContainsAnywhereCoversContainsAny: whatever containsAny finds (as a
// word), containsAnywhere finds too, and it also finds a short value
// inside a word, in every form containsAny reads (loose, squashed, hex,
// base64).
func TestContainsAnywhereCoversContainsAny(t *testing.T) {
	values := []string{"Ma", "Müller", "Ødegård", "AB123456", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "美咲"}
	for _, s := range []string{
		"Ma", "unknown MA", "MUELLER", "muller", "OEDEGAARD", "ab-123-456", "TWE", // base64 of "Ma"
		"4d61", "req_0x742d35cc6634c0532925a3b844bc454e4438f44e", "美咲様", "matic", "INVALID_MATCH", "TRMAX",
		"tr-42", "", "x",
	} {
		if containsAsWord(s, values) {
			assert.True(t, containsAnywhere(s, values), "%q: containsAsWord finds it, containsAnywhere must", s)
		}
	}
	for _, s := range []string{"matic", "INVALID_MATCH", "TRMAX"} {
		assert.True(t, containsAnywhere(s, values), s)
		assert.False(t, containsAny(s, values), s)
	}
	for _, s := range []string{"tr-42", "req-7", ""} {
		assert.False(t, containsAnywhere(s, values), s)
	}
}

// TestScrubCutsNoValueInTwo: values replaced before the cut pull a later
// value back under the limit; it is replaced whole or left out, never cut
// in two with its first half kept.
func TestScrubCutsNoValueInTwo(t *testing.T) {
	const addr = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	for n := 1; n <= 12; n++ {
		msg := strings.TrimSpace(strings.Repeat(addr+" ", n))
		got := scrub(msg, []string{addr})
		assert.NotContains(t, got, "bc1q", "%d values: %q", n, got)
		assert.LessOrEqual(t, utf8.RuneCountInString(got), maxMessage+len(redacted)+1)
	}
	assert.Equal(t, "short text", scrub("short text", []string{addr}))
	long := strings.Repeat("x", maxMessage+50)
	assert.Equal(t, strings.Repeat("x", maxMessage)+"…", scrub(long, nil))
}
