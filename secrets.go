package travelrule

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
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
}

// foldBuffers is where a secrets' text, words and windows start: one
// allocation when a call first asks, none when it never does.
type foldBuffers struct {
	text    [512]byte
	words   [48]word
	windows [64]uint64
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
	b := new(foldBuffers)
	s.tabulateKeys(b.windows[:])
	text, words := b.text[:0], b.words[:0]
	for _, v := range s.personal {
		start := len(text)
		if isASCII(v) {
			// Its one fold, without the tables.
			for i := 0; i < len(v); i++ {
				if c := asciiFold[v[i]]; c != 0 {
					text = append(text, c)
				}
			}
			if n := len(text) - start; n >= 2 {
				words = append(words, word{start, len(text), n < 5, true})
			} else {
				text = text[:start]
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
			start, last := len(text), len(words)-1
			text = appendFold(text, v, spell)
			f := text[start:]
			if n < 2 || utf8.RuneCount(f) < 2 || !spell && last >= 0 && words[last].end == start && bytes.Equal(f, text[words[last].start:start]) {
				text = text[:start] // too short to look for, or the same fold again
				continue
			}
			words = append(words, word{start, len(text), n < 5, isASCII(string(f))})
		}
	}
	s.text, s.words = text, words
}

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
func (s *secrets) tabulateKeys(buf []uint64) {
	n := 0
	for _, k := range s.keys {
		n += max(0, len(k)-keyPart+1)
	}
	if size := 1 << bits.Len(uint(2*n)); size <= len(buf) {
		s.windows = buf[:size]
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
