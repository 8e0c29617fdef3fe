package travelrule

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// This file is the fold by which a personal value is looked for in an
// ASCII identifier (secrets.go): its letters and digits, lower-cased, in
// ASCII where a reader of names would write them so.

// appendFold appends to dst the letters and digits of v, lower-cased, with
// accents dropped and the letters of no ASCII base read as collation or
// passports (ICAO 9303) read them; when spell is set, umlauts written out
// too ("Ødegård-Müller": "oedegaardmueller", else "odegardmuller").
func appendFold(dst []byte, v string, spell bool) []byte {
	for _, r := range v {
		switch {
		case r < utf8.RuneSelf:
			if isAlnum(byte(r)) {
				dst = append(dst, lower(byte(r)))
			}
		case r >= latinFirst && r < latinFirst+rune(len(latinFolds[0])):
			dst = append(dst, latinFolds[b2i(spell)][r-latinFirst]...)
		case isIdeograph(r):
			dst = utf8.AppendRune(dst, r)
		default:
			dst = appendRuneFold(dst, r, spell)
		}
	}
	return dst
}

// latinFolds holds appendRuneFold's folds of the Latin-1 letters and of
// Latin Extended-A, without and with spell, so that a European name is
// folded without the tables of x/text.
var latinFolds = func() (t [2][0x180 - latinFirst]string) {
	for i := range t[0] {
		for s := range 2 {
			t[s][i] = string(appendRuneFold(nil, latinFirst+rune(i), s == 1))
		}
	}
	return t
}()

const latinFirst = 0xc0

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendRuneFold appends to dst the fold of r, beyond ASCII (appendFold):
// nothing for a rune that is no letter or digit itself ("²" is no "2").
func appendRuneFold(dst []byte, r rune, spell bool) []byte {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return dst
	}
	if d, ok := digitValue(r); ok {
		return append(dst, '0'+d) // "٠" (Arabic-Indic) is "0"
	}
	if out, ok := spelledOut[unicode.ToLower(r)]; ok && spell {
		return append(dst, out...)
	}
	d := norm.NFKD.PropertiesString(string(r)).Decomposition()
	if d == nil {
		d = utf8.AppendRune(make([]byte, 0, utf8.UTFMax), r)
	}
	for _, d := range string(d) {
		switch d = unicode.ToLower(d); {
		case d < utf8.RuneSelf:
			if isAlnum(byte(d)) {
				dst = append(dst, byte(d))
			}
		case baseLetter[d] != 0:
			dst = append(dst, baseLetter[d])
		case spelledOut[d] != "":
			dst = append(dst, spelledOut[d]...)
		case unicode.IsLetter(d) || unicode.IsDigit(d):
			dst = utf8.AppendRune(dst, d)
		}
	}
	return dst
}

// digitValue is the value of r, a decimal digit of any script: Unicode
// lays each script's digits out 0 to 9 from a range's start.
func digitValue(r rune) (byte, bool) {
	for _, rg := range unicode.Digit.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10), true
		}
	}
	for _, rg := range unicode.Digit.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10), true
		}
	}
	return 0, false
}

// isIdeograph reports whether r is a CJK Unified Ideograph: a letter
// without case or decomposition.
func isIdeograph(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }

var spelledOut = map[rune]string{'ä': "ae", 'ö': "oe", 'ü': "ue", 'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "oe", 'å': "aa", 'þ': "th", 'ð': "d"}
var baseLetter = map[rune]byte{'ø': 'o', 'ł': 'l', 'đ': 'd', 'ħ': 'h', 'ı': 'i', 'ŧ': 't', 'ƀ': 'b', 'ƶ': 'z'}

// asciiFold is the fold of an ASCII byte: a letter lower-cased, a digit,
// or 0 for what a fold leaves out.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		if isAlnum(byte(c)) {
			t[c] = lower(byte(c))
		}
	}
	return t
}()

func isAlnum(c byte) bool { return isASCIILetter(c) || isDigit(c) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func lower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}
