package travelrule

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// secrets are what no identifier a call shows may hold: personal values of
// two letters or digits or more, found in their ASCII folds (appendFold),
// and credential parts (bearer tokens, the API key), found by their
// keyTables. Built once per call; a value is folded only when an
// identifier has every ASCII letter and digit of it (foldFor).
type secrets struct {
	personal []string
	keys     []*keyTable
	foldedOf uint64 // the alphabet the words hold every fold of (foldFor)
	text     []byte // the folds, one after another
	words    []word
	textBuf  [128]byte
	wordBuf  [8]word
}

// A word is a fold of a personal value, text[start:end]; short for one of
// under five letters and digits, which echoesWord finds as a whole word.
type word struct {
	start, end   int
	short, ascii bool
}

func newSecrets(personal, keys []string) secrets {
	if len(keys) == 0 {
		return secrets{personal: personal}
	}
	return secrets{personal: personal, keys: []*keyTable{newKeyTable(keys...)}}
}

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
	if len(id) > maxRequestID {
		return true
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] >= 0x7f {
			return true
		}
	}
	// id and what it decodes to (hex, base64) as text, with their alphabets.
	var buf [3][maxRequestID]byte
	var texts [len(buf)][]byte
	n := copy(buf[0][:], id)
	texts[0] = buf[0][:n]
	if n >= 4 && n%2 == 0 {
		if m, err := hex.Decode(buf[1][:], texts[0]); err == nil && utf8.Valid(buf[1][:m]) {
			texts[1] = buf[1][:m]
		}
	}
	// Padded base64 and raw read an id without '=' alike, and only raw
	// reads it when its length is no multiple of 4; raw reads no '='.
	std, url := base64.RawStdEncoding, base64.RawURLEncoding
	if strings.IndexByte(id, '=') >= 0 {
		std, url = base64.StdEncoding, base64.URLEncoding
	}
	m, err := std.Decode(buf[2][:], texts[0])
	if err != nil { // one of them: an id that holds '+' or '/' holds no '-' or '_'
		m, err = url.Decode(buf[2][:], texts[0])
	}
	if err == nil && utf8.Valid(buf[2][:m]) {
		texts[2] = buf[2][:m]
	}
	var abc uint64
	for _, t := range texts {
		abc |= alphabet(t)
	}
	s.foldFor(abc)
	for _, t := range texts {
		if len(t) > 0 && s.holds(t, whole) {
			return true
		}
	}
	return false
}

// beyondASCII is the bit of an alphabet whose text is beyond ASCII: every
// fold may be in it.
const beyondASCII = 1 << 63

// alphabet is the set of folded letters and digits of t (a bit each), or
// of every fold when t is beyond ASCII.
func alphabet(t []byte) uint64 {
	var a uint64
	for _, c := range t {
		a |= letterBit(c)
	}
	return a
}

// letterBit is the bit in an alphabet of byte c: one for a letter (either
// case) or digit, beyondASCII and every other bit for a byte beyond ASCII,
// 0 for what a fold leaves out.
func letterBit(c byte) uint64 {
	switch l := c | 0x20; {
	case c >= utf8.RuneSelf:
		return ^uint64(0)
	case isDigit(c):
		return 1 << (c - '0')
	case l >= 'a' && l <= 'z':
		return 1 << (10 + l - 'a')
	}
	return 0
}

// holds reports whether t holds a credential part or a fold.
func (s *secrets) holds(t []byte, whole bool) bool {
	for _, k := range s.keys {
		if k.in(t) {
			return true
		}
	}
	if alphabet(t)&beyondASCII != 0 {
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

// foldFor makes the words hold every fold of a personal value that a text
// of alphabet abc may hold, folding again when abc is new: none of a value
// with an ASCII letter or digit outside abc, nor one with a letter outside
// it.
func (s *secrets) foldFor(abc uint64) {
	if abc&^s.foldedOf == 0 {
		return
	}
	s.foldedOf |= abc
	abc = s.foldedOf
	text, words := s.textBuf[:0], s.wordBuf[:0]
	for _, v := range s.personal {
		start := len(text)
		var ascii, fit bool
		text, ascii, fit = appendASCIIFold(text, v, abc)
		if n := len(text) - start; fit && ascii && n >= 2 {
			words = append(words, word{start, len(text), n < 5, true})
			continue
		}
		text = text[:start] // too short to look for, in no text of abc, or beyond ASCII
		if fit && !ascii {
			text, words = appendFolds(text, words, v, abc)
		}
	}
	s.text, s.words = text, words
}

// appendASCIIFold appends to text the one fold of v when v is ASCII
// (ascii), without the tables, and reports whether a text of alphabet abc
// may hold a fold of v (fit): none does of a value with an ASCII letter or
// digit outside abc, nor, when abc is ASCII, of one with an ideograph
// (every fold keeps them). What it appended of a value beyond ASCII is to
// be dropped.
func appendASCIIFold(text []byte, v string, abc uint64) (_ []byte, ascii, fit bool) {
	ascii, fit = true, true
	for i := 0; i < len(v) && fit; i++ {
		switch c := v[i]; {
		case c < utf8.RuneSelf:
			if f := asciiFold[c]; f != 0 {
				fit = letterBit(f)&^abc == 0
				text = append(text, f)
			}
		case abc&beyondASCII == 0 && c >= 0xe4 && c <= 0xe9: // an ideograph's lead byte
			r, _ := utf8.DecodeRuneInString(v[i:])
			fit, ascii = !isIdeograph(r), false
		default:
			ascii = false
		}
	}
	return text, ascii, fit
}

// appendFolds appends to text, and to words, the folds of v, a value
// beyond ASCII, that a text of alphabet abc may hold: with umlauts
// written out ("mueller") and, when it differs, without ("muller").
func appendFolds(text []byte, words []word, v string, abc uint64) ([]byte, []word) {
	n, spells := 0, false // spells: the folds with and without spell differ
	for _, r := range v {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
		spells = spells || r >= latinFirst && r-latinFirst < rune(len(latinFolds[0])) && latinFolds[0][r-latinFirst] != latinFolds[1][r-latinFirst]
	}
	spelled := -1 // the word of v's spelled-out fold, once kept
	for _, spell := range [2]bool{true, false} {
		if !spell && !spells {
			break
		}
		start := len(text)
		text = appendFold(text, v, spell)
		f := text[start:]
		if n < 2 || utf8.RuneCount(f) < 2 || !fits(f, abc) || !spell && spelled >= 0 && bytes.Equal(f, text[words[spelled].start:words[spelled].end]) {
			text = text[:start] // too short to look for, in no text of abc, or the same fold again
			continue
		}
		if spell {
			spelled = len(words)
		}
		words = append(words, word{start, len(text), n < 5, isASCII(string(f))})
	}
	return text, words
}

// fits reports whether a text of alphabet abc may hold the fold f.
func fits(f []byte, abc uint64) bool {
	if abc&beyondASCII != 0 {
		return true
	}
	for _, c := range f {
		if letterBit(c)&^abc != 0 {
			return false
		}
	}
	return true
}
