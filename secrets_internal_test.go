package travelrule

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A short personal value counts in a transfer id as a whole word, alone
// or glued to other personal values, and not inside another word; a value
// of five letters and digits or more counts anywhere.
func TestEchoesWord(t *testing.T) {
	tests := []struct {
		pii  []string
		id   string
		want bool
	}{
		{[]string{"Ma"}, "checksum-match", false},
		{[]string{"Ma"}, "CHECKSUM_MATCH", false},
		{[]string{"Li", "Ng", "An"}, "linear.changing.Analysis", false},
		{[]string{"Ma"}, "Ma", true},
		{[]string{"Ma"}, "unknown-ma", true},
		{[]string{"Ma"}, "firstName:Ma", true},
		{[]string{"Ma", "Smith"}, "MaSmith", true},
		{[]string{"Ma", "Smith"}, "unknown_MASMITH", true},
		{[]string{"Ma", "Smith"}, "smithma", true},
		{[]string{"Ma", "Li"}, "MALI", true},
		{[]string{"Ma", "Li"}, "tr-mali-1", true},
		{[]string{"Ma"}, "MaSmith", true}, // a case change ends a word
		{[]string{"Ma"}, "unknownMa", true},
		{[]string{"Ma"}, "Ma1984", true},
		{[]string{"Ma"}, "MAX", false},
		{[]string{"John"}, "xJohnx", false},
		{[]string{"Quarterfield"}, "unknownquarterfield", true},
		{[]string{"Smith"}, "jsmith", true},
		{[]string{"Li Na"}, "unknown-LI_NA", true},
		{[]string{"Li Na"}, "Carolina", false},
		{[]string{"Mü"}, "MUE", true},
		{[]string{"Mü"}, "MUELLER", false},
		{[]string{"Ma"}, "4d61", true}, // hex
		{[]string{"M."}, "M", false},   // one letter is not looked for
		{[]string{"Ødegård-Müller"}, "ODEGARD-MULLER", true},
		{[]string{"Ødegård-Müller"}, "OEDEGAARD_MUELLER", true},
		{[]string{"Zoë"}, "tr-zoe", true},
		{[]string{"Zoë"}, "tr-zoex", false},
		{[]string{"美咲"}, "tr-1", false},
		{[]string{"美咲"}, "576O5ZKy", true}, // base64 of the name
		// A long value's fold that a short one's equals counts anywhere,
		// though the id lacks the letters of its spelled-out fold.
		{[]string{"Groß", "Gröss"}, "tr-grossy", true},
		{[]string{"Þóra", "Thøra"}, "tr-thoray", true},
	}
	for _, tt := range tests {
		sec := newSecrets(tt.pii, nil)
		assert.Equal(t, tt.want, sec.echoesWord(tt.id), "%q in %q", tt.pii, tt.id)
	}
}

// TestEchoesKeys: a credential part is any keyPart bytes of a key, in any
// case, in the identifier or what it decodes to; a shorter key counts
// whole.
func TestEchoesKeys(t *testing.T) {
	const key = "trp_live_0123456789abcdef"
	tests := []struct {
		id   string
		want bool
	}{
		{"req-42", false},
		{"req-0123456789", true},
		{"REQ-LIVE_0123", true},
		{"req-ive_012", false},        // seven bytes of it
		{"cmVxLTAxMjM0NTY3ODk", true}, // base64 of "req-0123456789"
		{"tok", true},
		{"TOK-1", true},
		{"to-k", false},
	}
	for _, tt := range tests {
		sec := newSecrets(nil, []string{key, "tok"})
		assert.Equal(t, tt.want, sec.echoes(tt.id), "%q", tt.id)
	}
	for _, id := range []string{"", "req 1", "req\n", "réq", strings.Repeat("a", maxRequestID+1)} {
		sec := newSecrets(nil, nil)
		assert.Equal(t, id != "", sec.echoes(id), "%q: not an identifier", id)
	}
}

// The shows and hides of a code, a request id or a transfer id holding a
// short personal value.
func TestEchoesWholeWords(t *testing.T) {
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
	sec := newSecrets(pii, nil)
	for _, tt := range tests {
		assert.Equal(t, tt.want, sec.echoesWord(tt.s), "%q", tt.s)
	}
	// Shown or hidden whole: a value inside a word hides it, but a
	// documented code is always shown.
	assert.False(t, shownCode("INVALID_MATCH", pii))
	assert.False(t, shownCode("INVALID_MA", pii))
	assert.True(t, shownCode("VALIDATION_ERROR", []string{"Li"}))
	assert.True(t, shownCode("INVALID_REQUEST", []string{"Ue"}))
	assert.False(t, shownReqID("req-match-7", pii))
	assert.False(t, shownReqID("req-ma-7", pii))
	assert.True(t, shownReqID("req-42", pii))
	assert.True(t, sec.echoes("TRMAX"))
	assert.False(t, sec.echoes("tr-42"))
}

// TestEchoesCoversEchoesWord: whatever echoesWord finds, echoes finds too,
// and also a short value inside a word, in every form (folded, hex,
// base64).
func TestEchoesCoversEchoesWord(t *testing.T) {
	sec := newSecrets([]string{"Ma", "Müller", "Ødegård", "AB123456", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "美咲"}, nil)
	for _, s := range []string{
		"Ma", "unknown_MA", "MUELLER", "muller", "OEDEGAARD", "ab-123-456", "TWE", // base64 of "Ma"
		"4d61", "req_0x742d35cc6634c0532925a3b844bc454e4438f44e", "matic", "INVALID_MATCH", "TRMAX",
		"tr-42", "", "x",
	} {
		if sec.echoesWord(s) {
			assert.True(t, sec.echoes(s), "%q: echoesWord finds it, echoes must", s)
		}
	}
	for _, s := range []string{"matic", "INVALID_MATCH", "TRMAX"} {
		assert.True(t, sec.echoes(s), s)
		assert.False(t, sec.echoesWord(s), s)
	}
	for _, s := range []string{"tr-42", "req-7", ""} {
		assert.False(t, sec.echoes(s), s)
	}
}

// BenchmarkEchoesTransferID: the check a successful initiation makes of its
// transfer id, with its secrets built (built) or built already (asked).
func BenchmarkEchoesTransferID(b *testing.B) {
	personal := []string{"ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv", "compliance@vasp-a.example", "Zoë", "Ødegård-Müller", "1984-02-29",
		"Straße des 17. Juni", "135", "10623", "Berlin", "123456789", "ACC-0001", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "美咲", "山田", "1990-07-01"}
	keys := []string{"bench-token", "bench-api-key"}
	const id = "019ac452-8660-7061-9b93-8d72eaa11a89"
	b.Run("built", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sec := newSecrets(personal, keys)
			if sec.echoesWord(id) {
				b.Fatal("echoes")
			}
		}
	})
	b.Run("asked", func(b *testing.B) {
		sec := newSecrets(personal, keys)
		b.ReportAllocs()
		for b.Loop() {
			if sec.echoesWord(id) {
				b.Fatal("echoes")
			}
		}
	})
}
