package travelrule

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendFold(t *testing.T) {
	tests := []struct{ v, spelled, plain string }{
		{"Ada Lovelace", "adalovelace", "adalovelace"},
		{"Ødegård-Müller", "oedegaardmueller", "odegardmuller"},
		{"Straße des 17. Juni", "strassedes17juni", "strassedes17juni"},
		{"Zoë", "zoe", "zoe"},
		{"Łukasz Żółć", "lukaszzolc", "lukaszzolc"},
		{"山田 美咲", "山田美咲", "山田美咲"},
		{"ＡＢＣ１", "abc1", "abc1"}, // full-width forms, by their compatibility decomposition
		{"١٩٨٤", "1984", "1984"}, // a digit of any script, by its value
		{"0²0", "00", "00"},      // "²" is no digit itself
	}
	for _, tt := range tests {
		t.Run(tt.v, func(t *testing.T) {
			assert.Equal(t, tt.spelled, string(appendFold(nil, tt.v, true)))
			assert.Equal(t, tt.plain, string(appendFold(nil, tt.v, false)))
		})
	}
}

// The fast paths of appendFold (the Latin table, CJK ideographs) fold as
// the general rule does.
func TestAppendFoldFastPathsAsTheRule(t *testing.T) {
	for _, r := range append(runeRange(latinFirst, 0x180), runeRange(0x4e00, 0x9fff)...) {
		for _, spell := range []bool{false, true} {
			if got, want := string(appendFold(nil, string(r), spell)), string(appendRuneFold(nil, r, spell)); got != want {
				t.Errorf("%U (spell %t): %q, the rule %q", r, spell, got, want)
			}
		}
	}
}

func runeRange(from, to rune) []rune {
	var rs []rune
	for r := from; r <= to; r++ {
		rs = append(rs, r)
	}
	return rs
}
