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
	var abcs [len(texts)]uint64
	for i, t := range texts {
		abcs[i] = alphabet(t)
		abc |= abcs[i]
	}
	s.foldFor(abc)
	for i, t := range texts {
		if len(t) > 0 && s.holds(t, abcs[i]&beyondASCII != 0, whole) {
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

// holds reports whether t, beyond ASCII or not, holds a credential part or
// a fold.
func (s *secrets) holds(t []byte, beyond, whole bool) bool {
	for _, k := range s.keys {
		if k.in(t) {
			return true
		}
	}
	if beyond {
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
		// An ASCII value's one fold, without the tables, given up at its
		// first byte beyond ASCII, or at a letter outside abc: no fold of
		// the value is then in a text of abc (every fold keeps it).
		start, ascii, fit := len(text), true, true
		for i := 0; i < len(v); i++ {
			if c := v[i]; c >= utf8.RuneSelf {
				ascii = false
				break
			} else if f := asciiFold[c]; f != 0 {
				if fit = letterBit(f)&^abc == 0; !fit {
					break
				}
				text = append(text, f)
			}
		}
		if n := len(text) - start; fit && ascii && n >= 2 {
			words = append(words, word{start, len(text), n < 5, true})
			continue
		}
		text = text[:start] // too short to look for, in no text of abc, or beyond ASCII
		if !fit || ascii || !mayFit(v, abc) {
			continue
		}
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
	}
	s.text, s.words = text, words
}

// mayFit reports whether a fold of v may be in a text of alphabet abc:
// every ASCII letter and digit of v is in abc (a fold keeps them), and v
// has no ideograph (a fold keeps them too).
func mayFit(v string, abc uint64) bool {
	if abc&beyondASCII != 0 {
		return true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < utf8.RuneSelf {
			if letterBit(c)&^abc != 0 {
				return false
			}
			continue
		}
		if c >= 0xe4 && c <= 0xe9 { // the lead bytes of the ideographs
			if r, _ := utf8.DecodeRuneInString(v[i:]); isIdeograph(r) {
				return false
			}
		}
	}
	return true
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

// keyTable finds in a text keyPart consecutive bytes of one of its keys,
// in any case, or a whole key shorter than that. It is made once per key
// (a token when the token cache takes it, the client's credential) and
// only read after.
type keyTable struct {
	short   []string   // the keys shorter than keyPart
	windows []uint64   // the keys' windows: open addressing, 0 empty, at most half full
	filter  [32]uint64 // a bit per window's hash, so that most misses read no table
}

func newKeyTable(keys ...string) *keyTable {
	n := 0
	for _, k := range keys {
		n += max(0, len(k)-keyPart+1)
	}
	kt := &keyTable{}
	if n > 0 {
		kt.windows = make([]uint64, 1<<bits.Len(uint(2*n)))
	}
	for _, k := range keys {
		if k != "" && len(k) < keyPart {
			kt.short = append(kt.short, k)
		}
		for i, w := 0, uint64(0); len(k) >= keyPart && i < len(k); i++ {
			if w = w<<8 | uint64(lower(k[i])); i >= keyPart-1 && w != 0 {
				kt.windows[kt.probe(w)] = w
				h := w * 0x9e3779b97f4a7c15 >> 53
				kt.filter[h/64] |= 1 << (h % 64)
			}
		}
	}
	return kt
}

// in reports whether t holds a key's part.
func (kt *keyTable) in(t []byte) bool {
	for _, k := range kt.short {
		for i := 0; i+len(k) <= len(t); i++ {
			if bytes.EqualFold(t[i:i+len(k)], []byte(k)) {
				return true
			}
		}
	}
	for i, w := 0, uint64(0); kt.windows != nil && i < len(t); i++ {
		if w = w<<8 | uint64(lower(t[i])); i < keyPart-1 || w == 0 {
			continue
		}
		if h := w * 0x9e3779b97f4a7c15 >> 53; kt.filter[h/64]&(1<<(h%64)) != 0 && kt.windows[kt.probe(w)] == w {
			return true
		}
	}
	return false
}

// probe returns the slot of w in the windows' table, or the empty one it
// would go in.
func (kt *keyTable) probe(w uint64) int {
	j := int(w*0x9e3779b97f4a7c15>>40) & (len(kt.windows) - 1)
	for kt.windows[j] != 0 && kt.windows[j] != w {
		j = (j + 1) & (len(kt.windows) - 1)
	}
	return j
}
