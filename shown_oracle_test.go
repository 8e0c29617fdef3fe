package travelrule

// The matcher of personal values that redact.go held until the SDK stopped
// scrubbing server text: kept here only as the differential oracle of
// secrets.echoes and secrets.echoesWord (FuzzEchoesOracle).

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/search"
	"golang.org/x/text/unicode/norm"
)

// oldLooseMatch finds a personal value in server text whatever its case, width
// or diacritics: "QUARTERFIELD", "Müller" and "MULLER" are the same name.
var oldLooseMatch = search.New(language.Und, search.Loose)

// How a personal value is found in server text. A value of oldAnywhereRunes
// or more letters and digits ("Smith", "Quarterfield", a date, a wallet
// address) is found wherever it occurs, inside other letters too: a server
// that writes "jsmith" or "unknownquarterfield" still echoes the name, and
// an ordinary word holding five given letters in a row is rare. A shorter
// value ("Ma", "Li", "Ng", "An", "Zoë", "135") is found only as a whole
// word: "checksum does not match", "linear", "changing", "and" and
// "invalid travel address data" hold the letters of such values without
// holding the values, and blanking them garbles the server's reasons. A
// whole word ends where oldWordBreak says; a short value glued to other
// values it is found with ("MaSmith", "MASMITH" with the last name Smith,
// "MALI" with the names Ma and Li) is found too (see oldKeptHits). Bearer
// tokens and API keys are not personal values: holdsTokenPart and
// holdsKeyPart look for any part of them, anywhere.
const oldAnywhereRunes = 5

// oldWordRunes counts the letters and digits of v.
func oldWordRunes(v string) int {
	n := 0
	for _, r := range v {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// oldSignificant reports whether a personal value is long enough to look for:
// a value of one letter or digit would match nearly any text.
func oldSignificant(v string) bool { return oldWordRunes(v) >= 2 }

// oldFoundAnywhere reports whether a personal value is found inside other
// letters and digits too, not only as a whole word (see oldAnywhereRunes).
func oldFoundAnywhere(v string) bool { return oldWordRunes(v) >= oldAnywhereRunes }

// oldWordBreak reports whether a word may end between the runes a and b of a
// text (-1 stands for the text's start or end). It does where either is
// not a letter, digit or combining mark; where either is of a oldScript
// written without spaces between words (Chinese, Japanese, Korean with its
// particles, Thai, Lao, Khmer, Myanmar), so a name within such text is
// always found; between a lower-case and an upper-case letter
// ("MaSmith", "unknownMa"); between a digit and a letter ("Ma1984");
// between letters of two scripts ("Ngא", "NGα"); and next to a modifier
// letter or an ordinal indicator ("Ngʼs" with U+02BC, the apostrophe
// Unicode recommends, "Ngª"). Between two letters of one word ("match",
// "Maé") it does not: a short value next to an accented letter is part of
// another word.
func oldWordBreak(a, b rune) bool {
	switch {
	case !oldInWord(a) || !oldInWord(b), oldUnspaced(a) || oldUnspaced(b), oldApart(a) || oldApart(b):
		return true
	case (a >= utf8.RuneSelf || b >= utf8.RuneSelf) && oldOtherScripts(a, b):
		return true
	case unicode.IsLower(a) && unicode.IsUpper(b):
		return true
	case unicode.IsDigit(a) != unicode.IsDigit(b) && !unicode.Is(unicode.M, a) && !unicode.Is(unicode.M, b):
		return true
	}
	return false
}

// oldInWord reports whether r is a letter, a digit or a combining mark.
func oldInWord(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// oldApart reports whether r, a letter, stands oldApart from the letters around
// it: a modifier letter (ʼ, ʰ) or an ordinal indicator (ª, º).
func oldApart(r rune) bool {
	return r >= 0x00aa && (r == 0x00aa || r == 0x00ba || unicode.Is(unicode.Lm, r))
}

// oldOtherScripts reports whether a and b are of two scripts (Common and
// Inherited, which combining marks and shared signs belong to, are of
// none).
func oldOtherScripts(a, b rune) bool {
	sa, sb := oldScript(a), oldScript(b)
	return sa != sb && sa != 0 && sb != 0
}

// oldMaxScriptRune bounds the runes oldScriptTable covers: the planes of every
// oldScript's letters (0 to 3; plane 1 holds historic and minority scripts,
// 2 and 3 more Han).
const oldMaxScriptRune = 0x40000

// oldScriptTable numbers the oldScript of each rune below oldMaxScriptRune (0 for
// none, Common and Inherited): 256 KiB, made once, when a text first has
// a letter beyond ASCII next to another letter.
var oldScriptTable = sync.OnceValue(func() []uint8 {
	t := make([]uint8, oldMaxScriptRune)
	n := uint8(0)
	for _, name := range slices.Sorted(maps.Keys(unicode.Scripts)) {
		if name == "Common" || name == "Inherited" {
			continue
		}
		n++
		for _, r := range unicode.Scripts[name].R16 {
			for c := int(r.Lo); c <= int(r.Hi) && c < oldMaxScriptRune; c += int(r.Stride) {
				t[c] = n
			}
		}
		for _, r := range unicode.Scripts[name].R32 {
			for c := int(r.Lo); c <= int(r.Hi) && c < oldMaxScriptRune; c += int(r.Stride) {
				t[c] = n
			}
		}
	}
	return t
})

// oldScript is the number of the oldScript of r (see oldScriptTable), or 0.
func oldScript(r rune) uint8 {
	switch {
	case r < 0 || r >= oldMaxScriptRune:
		return 0
	case r < utf8.RuneSelf:
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return oldScriptTable()['a']
		}
		return 0
	}
	return oldScriptTable()[r]
}

// oldUnspaced reports whether r is of a oldScript written without spaces
// between words (none of them below U+0E00, Thai).
func oldUnspaced(r rune) bool {
	return r >= 0x0e00 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// A oldHaystack is a text to look for personal values in, with brk[i]
// reporting whether a word may end at its byte i (len(text)+1 entries).
type oldHaystack struct {
	text string
	brk  []bool
}

// oldNewHaystack returns s with its word breaks (see oldWordBreak).
func oldNewHaystack(s string) oldHaystack {
	brk := make([]bool, len(s)+1)
	prev := rune(-1)
	for i, r := range s {
		brk[i] = oldWordBreak(prev, r)
		prev = r
	}
	brk[len(s)] = true
	return oldHaystack{s, brk}
}

// A oldHit is where a value was found in a oldHaystack: bytes [start, end).
type oldHit struct {
	start, end int
	anywhere   bool // the value is found anywhere (oldFoundAnywhere)
}

// oldSpan is a part of a text, bytes [start, end), that holds a personal
// value.
type oldSpan struct{ start, end int }

// oldKeptHits is the decision of what in a text is a personal value: of the
// hits of values found in it, every oldHit of a value found anywhere
// (oldFoundAnywhere), and every oldHit of a shorter value that is a whole word
// (starts and ends at a word break), alone or as part of a chain of
// adjacent hits that starts and ends at a word break or at the edge of a
// oldHit of a value found anywhere: "MaSmith" and "MASMITH" with the names Ma
// and Smith, "MALI" with the names Ma and Li. It returns them as sorted,
// merged spans.
func oldKeptHits(h oldHaystack, hits []oldHit) []oldSpan {
	if len(hits) == 0 {
		return nil
	}
	edge := slices.Clone(h.brk)
	for _, x := range hits {
		if x.anywhere {
			edge[x.start], edge[x.end] = true, true
		}
	}
	// Positions reached from an edge through adjacent hits (forward, in
	// order of start), and positions an edge is reached from (backward, in
	// order of end).
	from, to := slices.Clone(edge), slices.Clone(edge)
	slices.SortFunc(hits, func(a, b oldHit) int { return cmp.Compare(a.start, b.start) })
	for _, x := range hits {
		if from[x.start] {
			from[x.end] = true
		}
	}
	slices.SortFunc(hits, func(a, b oldHit) int { return cmp.Compare(b.end, a.end) })
	for _, x := range hits {
		if to[x.end] {
			to[x.start] = true
		}
	}
	var kept []oldSpan
	for _, x := range hits {
		if x.anywhere || from[x.start] && to[x.end] {
			kept = append(kept, oldSpan{x.start, x.end})
		}
	}
	slices.SortFunc(kept, func(a, b oldSpan) int { return cmp.Compare(a.start, b.start) })
	var out []oldSpan
	for _, k := range kept {
		if n := len(out); n > 0 && k.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, k.end)
			continue
		}
		out = append(out, k)
	}
	return out
}

// oldPersonalSpans returns the spans of s that hold one of values, compared
// loosely (case, width, diacritics), by the rule of oldKeptHits.
func oldPersonalSpans(s string, values []string) []oldSpan {
	var hits []oldHit
	for _, v := range values {
		if !oldSignificant(v) {
			continue
		}
		anywhere, pattern := oldFoundAnywhere(v), oldLooseMatch.CompileString(v)
		for from := 0; from < len(s); {
			start, end := pattern.IndexString(s[from:])
			if start < 0 {
				break
			}
			hits = append(hits, oldHit{from + start, from + end, anywhere})
			_, size := utf8.DecodeRuneInString(s[from+start:])
			from += start + size
		}
	}
	if len(hits) == 0 {
		return nil
	}
	return oldKeptHits(oldNewHaystack(s), hits)
}

// oldContainsAny reports whether s, or what it decodes to as hex or base64,
// holds one of values (see oldPersonalSpans): compared loosely, and again
// with both reduced to their letters and digits, with umlauts written out
// and accents dropped, so that a value reshaped into an identifier
// ("unknown_Anna_Maria", "MUELLER" for "Müller", an IBAN without its
// spaces) is still found. A short value is found in these forms as a whole
// word too: "LI_NA" holds "Li Na", "carolina" does not.
//
// It decides whether a text may be shown with its values cut out (scrub),
// and whether a transfer id may be kept and shown: a transfer id is what
// joins a transfer's records and callbacks (package journal), so it is lost
// only when it holds a personal value as a word ("tr-li-1"), not when a
// short value's characters fall inside it (the building number "12" in
// "4b1f…e07fc91280a7"). A value shown or hidden whole that nothing
// depends on (a code, a request id, a txId) is judged by oldContainsAnywhere.
func oldContainsAny(s string, values []string) bool {
	// What is found as a word is found anywhere (FuzzContainsAnywhere
	// checks it): the cheaper check without word breaks settles most texts,
	// a transfer id on every initiation among them.
	return oldContainsAnywhere(s, values) && oldContainsAsWord(s, values)
}

// oldContainsAsWord is oldContainsAny without its quick check.
func oldContainsAsWord(s string, values []string) bool {
	if s == "" {
		return false
	}
	type squashedValue struct {
		forms    [2]oldHaystack
		anywhere bool
	}
	var vals []squashedValue
	for _, v := range values {
		if oldSignificant(v) {
			vals = append(vals, squashedValue{oldSquashes(v), oldFoundAnywhere(v)})
		}
	}
	if len(vals) == 0 {
		return false
	}
	for _, f := range append([]string{s}, oldDecodings(s)...) {
		if len(oldPersonalSpans(f, values)) > 0 {
			return true
		}
		for _, fs := range oldSquashes(f) {
			var hits []oldHit
			for _, v := range vals {
				for _, vs := range v.forms {
					if utf8.RuneCountInString(vs.text) < 2 {
						continue
					}
					for from := 0; ; {
						i := strings.Index(fs.text[from:], vs.text)
						if i < 0 {
							break
						}
						hits = append(hits, oldHit{from + i, from + i + len(vs.text), v.anywhere})
						from += i + 1
					}
				}
			}
			if len(oldKeptHits(fs, hits)) > 0 {
				return true
			}
		}
	}
	return false
}

// oldContainsAnywhere is oldContainsAny with every value found anywhere, as a
// part of a word too: for a value shown or hidden whole, which cannot have
// a short personal value cut out of it ("SANCTIONS_HITNG" for the name
// "Ng", "TRNGX"), so a match inside a word hides it. With no word to tell
// oldApart, it compares texts alone: it runs on every answer (a result's
// request id and transfer id), so it builds no word breaks.
func oldContainsAnywhere(s string, values []string) bool {
	if s == "" {
		return false
	}
	forms := append([]string{s}, oldDecodings(s)...)
	var squashed [][2]string // of forms, made when a value needs them
	for _, v := range values {
		if !oldSignificant(v) {
			continue
		}
		for _, f := range forms {
			if start, _ := oldLooseMatch.IndexString(f, v); start >= 0 {
				return true
			}
		}
		if squashed == nil {
			squashed = make([][2]string, len(forms))
			for i, f := range forms {
				squashed[i] = oldSquashedTexts(f)
			}
		}
		for _, vs := range oldSquashedTexts(v) {
			if utf8.RuneCountInString(vs) < 2 {
				continue
			}
			for _, fs := range squashed {
				if strings.Contains(fs[0], vs) || strings.Contains(fs[1], vs) {
					return true
				}
			}
		}
	}
	return false
}

// oldSquashedTexts is the texts of oldSquashes, without their word breaks.
func oldSquashedTexts(s string) [2]string {
	return [2]string{oldSquashText(norm.NFC.String(s), true), oldSquashText(norm.NFD.String(s), false)}
}

// oldSquashText is the text of oldSquash, without its word breaks.
func oldSquashText(s string, spell bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		out, ok := oldSpelledOut[unicode.ToLower(r)]
		switch {
		case spell && ok:
			b.WriteString(out)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// oldDecodings returns what s decodes to as hex or as base64 (any alphabet,
// with or without padding), when it does and the result is text.
func oldDecodings(s string) []string {
	var out []string
	add := func(b []byte, err error) {
		if err == nil && len(b) > 0 && utf8.Valid(b) {
			out = append(out, string(b))
		}
	}
	if len(s) >= 4 && len(s)%2 == 0 {
		add(hex.DecodeString(s))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		add(enc.DecodeString(s))
	}
	return out
}

// oldSquashes returns s lower-cased and reduced to its letters and digits,
// once with umlauts and ligatures written out ("müller" → "mueller") and
// once with accents dropped ("muller"), each with the word breaks of s
// (see oldWordBreak; what was dropped between two letters or digits other
// than a combining mark is a break: "Li_Na" oldSquashes to "lina" with breaks
// at 0, 2 and 4).
func oldSquashes(s string) [2]oldHaystack {
	return [2]oldHaystack{oldSquash(norm.NFC.String(s), true), oldSquash(norm.NFD.String(s), false)}
}

// oldSquash is one of oldSquashes: with umlauts written out when spell is set.
func oldSquash(s string, spell bool) oldHaystack {
	var b strings.Builder
	brk := make([]bool, 0, len(s)+1)
	prev, gap := rune(-1), false
	for _, r := range s {
		out, ok := oldSpelledOut[unicode.ToLower(r)]
		switch {
		case spell && ok:
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			out = string(unicode.ToLower(r))
		case unicode.Is(unicode.M, r):
			continue
		default:
			gap = true
			continue
		}
		brk = append(brk, gap || oldWordBreak(prev, r))
		for range len(out) - 1 {
			brk = append(brk, false)
		}
		b.WriteString(out)
		prev, gap = r, false
	}
	return oldHaystack{b.String(), append(brk, true)}
}

// oldSpelledOut are the letters that passports and bank systems write out
// (ICAO 9303) where ASCII has none.
var oldSpelledOut = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "oe", 'å': "aa", 'þ': "th", 'ð': "d",
}

// FuzzEchoesOracle runs the old matcher beside secrets: on an identifier,
// whatever the old one found (as a word or anywhere), echoesWord and echoes
// find too; with ASCII values they find nothing it did not but where
// foldsFurther says.
func FuzzEchoesOracle(f *testing.F) {
	for _, seed := range [][3]string{
		{"unknown_MA", "Ma", "Li"}, {"MUELLER", "Müller", ""}, {"TWE", "Ma", ""}, {"4d61", "Ma", ""}, {"MALI", "Ma", "Li"},
		{"OEDEGAARD", "Ødegård", ""}, {"576O5ZKy", "美咲", ""}, {"ab-123-456", "AB123456", ""}, {"tr-istanbul", "İstanbul", ""},
		{"odegard-muller", "Ødegård-Müller", "Zoë"}, {"tr-drik", "Ðrik", "Ｍａ"}, {"tr-lodz-1", "Łódź", "Straße"},
		{"tr-dzx", "ǆx", "Ḥasan"}, {"TWHDqQ", "Ma", ""}, {"4b1f2ae3-5c6d-4e7f-8a9b-e07fc91280a7", "12", "135"}, {"MaSmith", "Ma", "Smith"},
		{"00", "0²0", "0"}, {"tr-grossy", "Groß", "Gröss"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, id, v1, v2 string) {
		if !showRequestID(id) && !isIdentifier(id, maxRequestID) {
			return
		}
		vals := []string{v1, v2}
		sec := newSecrets(vals, nil)
		for _, c := range []struct {
			mode     string
			old, new bool
		}{
			{"anywhere", oldContainsAnywhere(id, vals), sec.echoes(id)},
			{"as a word", oldContainsAny(id, vals), sec.echoesWord(id)},
		} {
			if c.old && !c.new && !collationIgnores(vals) {
				t.Fatalf("%s: the old matcher finds %q in %q, secrets does not", c.mode, vals, id)
			}
			if c.new && !c.old && !foldsFurther(id, vals) {
				t.Fatalf("%s: secrets finds %q in %q, the old matcher does not", c.mode, vals, id)
			}
		}
	})
}

// collationIgnores reports whether a value holds a rune that the old
// matcher's collation search read as nothing (Arabic presentation forms
// such as "ﳳ"), so that it looked for the rest of the value alone: "ﳳ0"
// as "0", which no fold of it is.
func collationIgnores(vals []string) bool {
	for _, v := range vals {
		for _, r := range v {
			if r >= utf8.RuneSelf {
				if start, _ := oldLooseMatch.IndexString("0", string(r)+"0"); start >= 0 {
					return true
				}
			}
		}
	}
	return false
}

// foldsFurther reports whether secrets may find more than the old matcher
// did, hiding an identifier it showed: where a value is beyond ASCII (the
// folds read "Ł" as "l", which the collation keeps apart), or id decodes
// (hex, base64) to text beyond ASCII (every fold found there counts, as a
// word or not, where the old matcher read word breaks by script).
func foldsFurther(id string, vals []string) bool {
	for _, v := range vals {
		if strings.IndexFunc(v, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
			return true
		}
	}
	for _, d := range oldDecodings(id) {
		if strings.IndexFunc(d, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 && oldContainsAnywhere(d, vals) {
			return true
		}
	}
	return false
}
