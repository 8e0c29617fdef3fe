package travelrule

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// keyPart is the bytes of a credential no shown identifier holds ("trp_live").
const keyPart = 8

// secrets are what no identifier a call shows may hold: personal values of
// two letters or digits or more, found in their ASCII folds (appendFold),
// and credential parts (bearer tokens, the API key), found by any keyPart
// bytes in any case. Built once per call; folded when first asked.
type secrets struct {
	personal, keys []string
	folded         bool
	text           []byte // the folds, one after another
	words          []word
	windows        []uint64 // of the keys (tabulateKeys)

	// Where text, words and windows start, so that a request's secrets
	// cost no allocation.
	textBuf [512]byte
	wordBuf [48]word
	winBuf  [64]uint64
}

// A word is a fold of a personal value, text[start:end]; short for one of
// under five letters and digits, which echoesWord finds as a whole word.
type word struct {
	start, end   int
	short, ascii bool
}

func newSecrets(personal, keys []string) secrets { return secrets{personal: personal, keys: keys} }

// echoes reports whether id, a code or a request id shown or hidden whole,
// holds a secret (a personal value inside a word too), or is not printable
// ASCII of at most maxRequestID bytes.
func (s *secrets) echoes(id string) bool { return s.find(id, false) }

// echoesWord is echoes for a transfer id, which joins a transfer's records:
// a short personal value counts only as a whole word, alone or glued to
// other short ones ("tr-li-1", "MaLi"), not inside another ("trngx").
func (s *secrets) echoesWord(id string) bool { return s.find(id, true) }

// find is echoes, or echoesWord when whole, over id and its decodings.
func (s *secrets) find(id string, whole bool) bool {
	if id == "" {
		return false
	}
	if len(id) > maxRequestID || strings.IndexFunc(id, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		return true
	}
	s.fold()
	var src, dec [maxRequestID]byte
	n := copy(src[:], id)
	decoded := func(m int, err error) bool {
		return err == nil && m > 0 && utf8.Valid(dec[:m]) && s.holds(dec[:m], whole)
	}
	if s.holds(src[:n], whole) || n >= 4 && n%2 == 0 && decoded(hex.Decode(dec[:], src[:n])) {
		return true
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if decoded(enc.Decode(dec[:], src[:n])) {
			return true
		}
	}
	return false
}

// holds reports whether t holds a credential part or a fold.
func (s *secrets) holds(t []byte, whole bool) bool {
	if s.holdsKey(t) {
		return true
	}
	if bytes.IndexFunc(t, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
		// Decoded text beyond ASCII: folded as the values are; a fold counts.
		for _, spell := range [2]bool{true, false} {
			f := appendFold(nil, string(t), spell)
			for _, w := range s.words {
				if bytes.Contains(f, s.text[w.start:w.end]) {
					return true
				}
			}
		}
		return false
	}
	// t's letters and digits, lower-cased; a word breaks at a separator, a
	// lower-to-upper case change, a letter-digit change.
	var h [maxRequestID]byte
	var brk [maxRequestID + 1]bool
	n, short := 0, false
	for i, prev := 0, byte(0); i < len(t); i++ {
		if c := t[i]; isAlnum(c) {
			brk[n] = prev == 0 || isLower(prev) && isUpper(c) || isDigit(prev) != isDigit(c)
			h[n], prev, n = lower(c), c, n+1
		} else {
			prev = 0
		}
	}
	brk[n] = true
	for _, w := range s.words {
		if w.ascii && bytes.Contains(h[:n], s.text[w.start:w.end]) {
			if !whole || !w.short {
				return true
			}
			short = true
		}
	}
	// A chain of short values from a word break to a word break.
	reach := brk
	for p := 0; p < n && short; p++ {
		for _, w := range s.words {
			if v := s.text[w.start:w.end]; reach[p] && w.short && bytes.HasPrefix(h[p:n], v) {
				if brk[p+len(v)] {
					return true
				}
				reach[p+len(v)] = true
			}
		}
	}
	return false
}

// fold folds the personal values and tabulates the keys, once.
func (s *secrets) fold() {
	if s.folded {
		return
	}
	s.folded = true
	s.tabulateKeys()
	s.text, s.words = s.textBuf[:0], s.wordBuf[:0]
	for _, v := range s.personal {
		if isASCII(v) {
			// Its one fold, without the tables.
			start := len(s.text)
			for i := 0; i < len(v); i++ {
				if isAlnum(v[i]) {
					s.text = append(s.text, lower(v[i]))
				}
			}
			if n := len(s.text) - start; n >= 2 {
				s.words = append(s.words, word{start, len(s.text), n < 5, true})
			} else {
				s.text = s.text[:start]
			}
			continue
		}
		n, spells := 0, false // spells: the folds with and without spell differ
		for _, r := range v {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				n++
			}
			spells = spells || r >= latinFirst && r-latinFirst < rune(len(latinFolds[0])) && latinFolds[0][r-latinFirst] != latinFolds[1][r-latinFirst]
		}
		for _, spell := range [2]bool{true, false} {
			if !spell && !spells {
				break
			}
			start, last := len(s.text), len(s.words)-1
			s.text = appendFold(s.text, v, spell)
			f := s.text[start:]
			if n < 2 || utf8.RuneCount(f) < 2 || !spell && last >= 0 && s.words[last].end == start && bytes.Equal(f, s.text[s.words[last].start:start]) {
				s.text = s.text[:start] // too short to look for, or the same fold again
				continue
			}
			s.words = append(s.words, word{start, len(s.text), n < 5, bytes.IndexFunc(f, func(r rune) bool { return r >= utf8.RuneSelf }) < 0})
		}
	}
}

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
		case r >= 0x4e00 && r <= 0x9fff:
			// CJK Unified Ideographs: letters without case or decomposition.
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

// appendRuneFold appends to dst the fold of r, beyond ASCII (appendFold).
func appendRuneFold(dst []byte, r rune, spell bool) []byte {
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

var spelledOut = map[rune]string{'ä': "ae", 'ö': "oe", 'ü': "ue", 'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "oe", 'å': "aa", 'þ': "th", 'ð': "d"}
var baseLetter = map[rune]byte{'ø': 'o', 'ł': 'l', 'đ': 'd', 'ħ': 'h', 'ı': 'i', 'ŧ': 't', 'ƀ': 'b', 'ƶ': 'z'}

// holdsKey reports whether t holds keyPart consecutive bytes of one of
// the keys, in any case (looked up in the table of their windows), or a
// whole key shorter than that.
func (s *secrets) holdsKey(t []byte) bool {
	for _, k := range s.keys {
		for i := 0; len(k) < keyPart && k != "" && i+len(k) <= len(t); i++ {
			if bytes.EqualFold(t[i:i+len(k)], []byte(k)) {
				return true
			}
		}
	}
	for i, w := 0, uint64(0); i < len(t); i++ {
		if w = w<<8 | uint64(lower(t[i])); i >= keyPart-1 && w != 0 {
			if s.windows[s.probe(w)] == w {
				return true
			}
		}
	}
	return false
}

// tabulateKeys fills the table of the keys' windows: open addressing, 0
// empty, at most half full.
func (s *secrets) tabulateKeys() {
	n := 0
	for _, k := range s.keys {
		n += max(0, len(k)-keyPart+1)
	}
	if size := 1 << bits.Len(uint(2*n)); size <= len(s.winBuf) {
		s.windows = s.winBuf[:size]
	} else {
		s.windows = make([]uint64, size)
	}
	for _, k := range s.keys {
		for i, w := 0, uint64(0); len(k) >= keyPart && i < len(k); i++ {
			if w = w<<8 | uint64(lower(k[i])); i >= keyPart-1 && w != 0 {
				s.windows[s.probe(w)] = w
			}
		}
	}
}

// probe returns the slot of w in the windows' table, or the empty one it
// would go in.
func (s *secrets) probe(w uint64) int {
	j := int(w*0x9e3779b97f4a7c15>>40) & (len(s.windows) - 1)
	for s.windows[j] != 0 && s.windows[j] != w {
		j = (j + 1) & (len(s.windows) - 1)
	}
	return j
}

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
