package ivms101

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCodeLists(t *testing.T) {
	tests := []struct {
		name  string
		valid func(string) bool
		codes []string
	}{
		{"NaturalPersonNameType", func(s string) bool { return NaturalPersonNameType(s).Valid() },
			[]string{"ALIA", "BIRT", "MAID", "LEGL", "MISC"}},
		{"LegalPersonNameType", func(s string) bool { return LegalPersonNameType(s).Valid() },
			[]string{"LEGL", "SHRT", "TRAD"}},
		{"AddressType", func(s string) bool { return AddressType(s).Valid() },
			[]string{"HOME", "BIZZ", "GEOG"}},
		{"NationalIdentifierType", func(s string) bool { return NationalIdentifierType(s).Valid() },
			[]string{"ARNU", "CCPT", "RAID", "DRLC", "FIIN", "TXID", "SOCS", "IDCD", "LEIX", "MISC"}},
		{"TransliterationMethod", ValidTransliterationMethod,
			[]string{"arab", "aran", "armn", "cyrl", "deva", "geor", "grek", "hani", "hebr", "kana", "kore", "thai", "othr"}},
		{"Version", func(s string) bool { return Version(s).Valid() }, []string{"101", "101.2023"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := map[string]bool{}
			for _, c := range tt.codes {
				in[c] = true
				assert.True(t, tt.valid(c), c)
			}
			// Nothing else: not another list's codes, not another case,
			// not with white space.
			for _, s := range []string{"", "legl", "Legl", "LEGL ", " HOME", "hani ", "HANI", "Cyrl", "XXXX",
				"ALIA", "BIRT", "MAID", "LEGL", "MISC", "SHRT", "TRAD", "HOME", "BIZZ", "GEOG", "ARNU", "CCPT",
				"RAID", "DRLC", "FIIN", "TXID", "SOCS", "IDCD", "LEIX", "arab", "othr", "101", "101.2023", "2023"} {
				if !in[s] {
					assert.False(t, tt.valid(s), "%q", s)
				}
			}
		})
	}
}

func TestValidCountry(t *testing.T) {
	for _, s := range []string{"DE", "GB", "US", "KR", "TZ", "CL", "AX", "BQ", "CW", "SS", "SX", "PS", "TW", "VA"} {
		assert.True(t, ValidCountry(s), s)
	}
	for _, s := range []string{"", "D", "DEU", "de", "De", "dE", "XX", "ZZ", "UK", "EU", "UN", "EZ", "AA", "QO", "XK",
		"SU", "YU", "CS", "AN", "DD", "BU", "ZR", "TP", "FX", "AC", "CP", "DG", "EA", "IC", "TA", "1A", "Ä"} {
		assert.False(t, ValidCountry(s), s)
	}
	n := 0
	for a := byte('A'); a <= 'Z'; a++ {
		for b := byte('A'); b <= 'Z'; b++ {
			if ValidCountry(string([]byte{a, b})) {
				n++
			}
		}
	}
	assert.Equal(t, 249, n, "ISO 3166-1 assigns 249 alpha-2 codes")
	assert.True(t, validCountryCode("XX"), "IVMS101 C3 accepts XX")
}

func TestValidLEI(t *testing.T) {
	for _, s := range []string{
		"5493001KJTIIGC8Y1R12", // GLEIF's own LEI
		"529900T8BM49AURSDO55",
		"506700T7Z685VUOZL877",
	} {
		assert.True(t, validLEI(s), s)
	}
	for _, s := range []string{
		"",
		"5493001KJTIIGC8Y1R1",   // 19 characters
		"5493001KJTIIGC8Y1R123", // 21
		"5493001KJTIIGC8Y1R13",  // check digits wrong
		"5493001kjtiigc8y1r12",  // lower case
		"5493001KJTIIGC8Y1RA2",  // a letter among the check digits
		"5493001KJTIIGC8Y1R0E",  // one that leaves 1 under MOD 97-10 all the same
		"3M5E1GQKGL17HI8CPN20",  // IVMS101's example: the right form, wrong check digits
		"XXXXXXXXXXXXXXXXXXXX",
		"5493001KJTIIGC8Y1R1\u00e9",
	} {
		assert.False(t, validLEI(s), s)
	}
}

func TestValidRegistrationAuthority(t *testing.T) {
	assert.True(t, validRegistrationAuthority("RA000553"))
	for _, s := range []string{"", "RA00055", "RA0005533", "ra000553", "RB000553", "RA00055X", "RA 00553"} {
		assert.False(t, validRegistrationAuthority(s), s)
	}
}
