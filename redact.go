package travelrule

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/search"
	"golang.org/x/text/unicode/norm"
)

// What may appear in an error string. The server's bytes and the request's
// personal values never do: error strings end up in logs, alerts and
// tickets. Error strings carry the operation, the status, a server error
// code of a strict identifier shape that contains none of the request's
// personal values, a request id of bounded length and charset, the JSON
// paths of the request's fields, and the client's own words. Everything
// else stays in the error's fields.

const (
	maxMessage   = 200 // runes of a server message kept in APIError.Message
	maxCode      = 64  // bytes of a server error code shown
	maxRequestID = 128 // bytes of a request id shown
)

// looseMatch finds a personal value in server text whatever its case, width
// or diacritics: "QUARTERFIELD", "Müller" and "MULLER" are the same name.
var looseMatch = search.New(language.Und, search.Loose)

// How a personal value is found in server text. A value of anywhereRunes
// or more letters and digits ("Smith", "Quarterfield", a date, a wallet
// address) is found wherever it occurs, inside other letters too: a server
// that writes "jsmith" or "unknownquarterfield" still echoes the name, and
// an ordinary word holding five given letters in a row is rare. A shorter
// value ("Ma", "Li", "Ng", "An", "Zoë", "135") is found only as a whole
// word: "checksum does not match", "linear", "changing", "and" and
// "invalid travel address data" hold the letters of such values without
// holding the values, and blanking them garbles the server's reasons. A
// whole word ends where wordBreak says; a short value glued to other
// values it is found with ("MaSmith", "MASMITH" with the last name Smith,
// "MALI" with the names Ma and Li) is found too (see keptHits). Bearer
// tokens and API keys are not personal values: holdsTokenPart and
// holdsKeyPart look for any part of them, anywhere.
const anywhereRunes = 5

// wordRunes counts the letters and digits of v.
func wordRunes(v string) int {
	n := 0
	for _, r := range v {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// significant reports whether a personal value is long enough to look for:
// a value of one letter or digit would match nearly any text.
func significant(v string) bool { return wordRunes(v) >= 2 }

// foundAnywhere reports whether a personal value is found inside other
// letters and digits too, not only as a whole word (see anywhereRunes).
func foundAnywhere(v string) bool { return wordRunes(v) >= anywhereRunes }

// wordBreak reports whether a word may end between the runes a and b of a
// text (-1 stands for the text's start or end). It does where either is
// not a letter, digit or combining mark; where either is of a script
// written without spaces between words (Chinese, Japanese, Korean with its
// particles, Thai, Lao, Khmer, Myanmar), so a name within such text is
// always found; between a lower-case and an upper-case letter
// ("MaSmith", "unknownMa"); between a digit and a letter ("Ma1984");
// between letters of two scripts ("Ngא", "NGα"); and next to a modifier
// letter or an ordinal indicator ("Ngʼs" with U+02BC, the apostrophe
// Unicode recommends, "Ngª"). Between two letters of one word ("match",
// "Maé") it does not: a short value next to an accented letter is part of
// another word.
func wordBreak(a, b rune) bool {
	switch {
	case !inWord(a) || !inWord(b), unspaced(a) || unspaced(b), apart(a) || apart(b):
		return true
	case (a >= utf8.RuneSelf || b >= utf8.RuneSelf) && otherScripts(a, b):
		return true
	case unicode.IsLower(a) && unicode.IsUpper(b):
		return true
	case unicode.IsDigit(a) != unicode.IsDigit(b) && !unicode.Is(unicode.M, a) && !unicode.Is(unicode.M, b):
		return true
	}
	return false
}

// inWord reports whether r is a letter, a digit or a combining mark.
func inWord(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// apart reports whether r, a letter, stands apart from the letters around
// it: a modifier letter (ʼ, ʰ) or an ordinal indicator (ª, º).
func apart(r rune) bool {
	return r >= 0x00aa && (r == 0x00aa || r == 0x00ba || unicode.Is(unicode.Lm, r))
}

// otherScripts reports whether a and b are of two scripts (Common and
// Inherited, which combining marks and shared signs belong to, are of
// none).
func otherScripts(a, b rune) bool {
	sa, sb := script(a), script(b)
	return sa != sb && sa != 0 && sb != 0
}

// maxScriptRune bounds the runes scriptTable covers: the planes of every
// script's letters (0 to 3; plane 1 holds historic and minority scripts,
// 2 and 3 more Han).
const maxScriptRune = 0x40000

// scriptTable numbers the script of each rune below maxScriptRune (0 for
// none, Common and Inherited): 256 KiB, made once, when a text first has
// a letter beyond ASCII next to another letter.
var scriptTable = sync.OnceValue(func() []uint8 {
	t := make([]uint8, maxScriptRune)
	n := uint8(0)
	for _, name := range slices.Sorted(maps.Keys(unicode.Scripts)) {
		if name == "Common" || name == "Inherited" {
			continue
		}
		n++
		for _, r := range unicode.Scripts[name].R16 {
			for c := int(r.Lo); c <= int(r.Hi) && c < maxScriptRune; c += int(r.Stride) {
				t[c] = n
			}
		}
		for _, r := range unicode.Scripts[name].R32 {
			for c := int(r.Lo); c <= int(r.Hi) && c < maxScriptRune; c += int(r.Stride) {
				t[c] = n
			}
		}
	}
	return t
})

// script is the number of the script of r (see scriptTable), or 0.
func script(r rune) uint8 {
	switch {
	case r < 0 || r >= maxScriptRune:
		return 0
	case r < utf8.RuneSelf:
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return scriptTable()['a']
		}
		return 0
	}
	return scriptTable()[r]
}

// unspaced reports whether r is of a script written without spaces
// between words (none of them below U+0E00, Thai).
func unspaced(r rune) bool {
	return r >= 0x0e00 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// A haystack is a text to look for personal values in, with brk[i]
// reporting whether a word may end at its byte i (len(text)+1 entries).
type haystack struct {
	text string
	brk  []bool
}

// newHaystack returns s with its word breaks (see wordBreak).
func newHaystack(s string) haystack {
	brk := make([]bool, len(s)+1)
	prev := rune(-1)
	for i, r := range s {
		brk[i] = wordBreak(prev, r)
		prev = r
	}
	brk[len(s)] = true
	return haystack{s, brk}
}

// A hit is where a value was found in a haystack: bytes [start, end).
type hit struct {
	start, end int
	anywhere   bool // the value is found anywhere (foundAnywhere)
}

// span is a part of a text, bytes [start, end), that holds a personal
// value.
type span struct{ start, end int }

// keptHits is the decision of what in a text is a personal value: of the
// hits of values found in it, every hit of a value found anywhere
// (foundAnywhere), and every hit of a shorter value that is a whole word
// (starts and ends at a word break), alone or as part of a chain of
// adjacent hits that starts and ends at a word break or at the edge of a
// hit of a value found anywhere: "MaSmith" and "MASMITH" with the names Ma
// and Smith, "MALI" with the names Ma and Li. It returns them as sorted,
// merged spans.
func keptHits(h haystack, hits []hit) []span {
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
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.start, b.start) })
	for _, x := range hits {
		if from[x.start] {
			from[x.end] = true
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(b.end, a.end) })
	for _, x := range hits {
		if to[x.end] {
			to[x.start] = true
		}
	}
	var kept []span
	for _, x := range hits {
		if x.anywhere || from[x.start] && to[x.end] {
			kept = append(kept, span{x.start, x.end})
		}
	}
	slices.SortFunc(kept, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var out []span
	for _, k := range kept {
		if n := len(out); n > 0 && k.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, k.end)
			continue
		}
		out = append(out, k)
	}
	return out
}

// personalSpans returns the spans of s that hold one of values, compared
// loosely (case, width, diacritics), by the rule of keptHits.
func personalSpans(s string, values []string) []span {
	var hits []hit
	for _, v := range values {
		if !significant(v) {
			continue
		}
		anywhere, pattern := foundAnywhere(v), looseMatch.CompileString(v)
		for from := 0; from < len(s); {
			start, end := pattern.IndexString(s[from:])
			if start < 0 {
				break
			}
			hits = append(hits, hit{from + start, from + end, anywhere})
			_, size := utf8.DecodeRuneInString(s[from+start:])
			from += start + size
		}
	}
	if len(hits) == 0 {
		return nil
	}
	return keptHits(newHaystack(s), hits)
}

// containsAny reports whether s, or what it decodes to as hex or base64,
// holds one of values (see personalSpans): compared loosely, and again
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
// depends on (a code, a request id, a txId) is judged by containsAnywhere.
func containsAny(s string, values []string) bool {
	// What is found as a word is found anywhere (FuzzContainsAnywhere
	// checks it): the cheaper check without word breaks settles most texts,
	// a transfer id on every initiation among them.
	return containsAnywhere(s, values) && containsAsWord(s, values)
}

// containsAsWord is containsAny without its quick check.
func containsAsWord(s string, values []string) bool {
	if s == "" {
		return false
	}
	type squashedValue struct {
		forms    [2]haystack
		anywhere bool
	}
	var vals []squashedValue
	for _, v := range values {
		if significant(v) {
			vals = append(vals, squashedValue{squashes(v), foundAnywhere(v)})
		}
	}
	if len(vals) == 0 {
		return false
	}
	for _, f := range append([]string{s}, decodings(s)...) {
		if len(personalSpans(f, values)) > 0 {
			return true
		}
		for _, fs := range squashes(f) {
			var hits []hit
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
						hits = append(hits, hit{from + i, from + i + len(vs.text), v.anywhere})
						from += i + 1
					}
				}
			}
			if len(keptHits(fs, hits)) > 0 {
				return true
			}
		}
	}
	return false
}

// containsAnywhere is containsAny with every value found anywhere, as a
// part of a word too: for a value shown or hidden whole, which cannot have
// a short personal value cut out of it ("SANCTIONS_HITNG" for the name
// "Ng", "TRNGX"), so a match inside a word hides it. With no word to tell
// apart, it compares texts alone: it runs on every answer (a result's
// request id and transfer id), so it builds no word breaks.
func containsAnywhere(s string, values []string) bool {
	if s == "" {
		return false
	}
	forms := append([]string{s}, decodings(s)...)
	var squashed [][2]string // of forms, made when a value needs them
	for _, v := range values {
		if !significant(v) {
			continue
		}
		for _, f := range forms {
			if start, _ := looseMatch.IndexString(f, v); start >= 0 {
				return true
			}
		}
		if squashed == nil {
			squashed = make([][2]string, len(forms))
			for i, f := range forms {
				squashed[i] = squashedTexts(f)
			}
		}
		for _, vs := range squashedTexts(v) {
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

// squashedTexts is the texts of squashes, without their word breaks.
func squashedTexts(s string) [2]string {
	return [2]string{squashText(norm.NFC.String(s), true), squashText(norm.NFD.String(s), false)}
}

// squashText is the text of squash, without its word breaks.
func squashText(s string, spell bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		out, ok := spelledOut[unicode.ToLower(r)]
		switch {
		case spell && ok:
			b.WriteString(out)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// decodings returns what s decodes to as hex or as base64 (any alphabet,
// with or without padding), when it does and the result is text.
func decodings(s string) []string {
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

// squashes returns s lower-cased and reduced to its letters and digits,
// once with umlauts and ligatures written out ("müller" → "mueller") and
// once with accents dropped ("muller"), each with the word breaks of s
// (see wordBreak; what was dropped between two letters or digits other
// than a combining mark is a break: "Li_Na" squashes to "lina" with breaks
// at 0, 2 and 4).
func squashes(s string) [2]haystack {
	return [2]haystack{squash(norm.NFC.String(s), true), squash(norm.NFD.String(s), false)}
}

// squash is one of squashes: with umlauts written out when spell is set.
func squash(s string, spell bool) haystack {
	var b strings.Builder
	brk := make([]bool, 0, len(s)+1)
	prev, gap := rune(-1), false
	for _, r := range s {
		out, ok := spelledOut[unicode.ToLower(r)]
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
		brk = append(brk, gap || wordBreak(prev, r))
		for range len(out) - 1 {
			brk = append(brk, false)
		}
		b.WriteString(out)
		prev, gap = r, false
	}
	return haystack{b.String(), append(brk, true)}
}

// spelledOut are the letters that passports and bank systems write out
// (ICAO 9303) where ASCII has none.
var spelledOut = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "oe", 'å': "aa", 'þ': "th", 'ð': "d",
}

// scrub shortens a server message, drops control characters and replaces
// every personal value of the request it holds (see personalSpans); a
// message that still holds one in another shape (see containsAny) is
// replaced whole.
func scrub(msg string, pii []string) string {
	if msg == "" {
		return ""
	}
	// Cut to what can matter before searching (the body may be a
	// mebibyte), leaving room for a value that starts within the kept part
	// to be found whole: no value is cut in two and half kept. The cut's
	// end is a word break: a short value cut from a longer word is
	// replaced, never shown.
	longest := 0
	for _, v := range pii {
		longest = max(longest, utf8.RuneCountInString(v))
	}
	full := msg
	msg = cutRunes(msg, maxMessage+longest)
	// The kept text ends at the original text's rune maxMessage, or after
	// the replaced value that crosses it: cut after the replacements, a
	// value that replacements pulled back under the limit would be cut in
	// two and its first half kept.
	limit := len(cutRunes(msg, maxMessage))
	var b strings.Builder
	last := 0
	for _, sp := range personalSpans(msg, pii) {
		if sp.start >= limit {
			break
		}
		b.WriteString(msg[last:sp.start])
		b.WriteString(redacted)
		last = sp.end
	}
	if last < limit {
		b.WriteString(msg[last:limit])
	}
	cut := max(last, limit) < len(full) // msg is a prefix of full: the same offsets
	msg = b.String()
	if containsAny(msg, pii) {
		// A value reshaped where no span matches it loosely ("OEDEGAARD
		// MUELLER", "ab-123-456", hex or base64 of it): the text goes.
		return redacted
	}
	msg = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, msg)
	if cut {
		msg += "…"
	}
	return msg
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// isIdentifier reports whether s is a short machine-made word (an error code
// or a JSON path) of at most max bytes.
func isIdentifier(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

// showCode reports whether a server error code may appear in an error
// string: a code of the service's documented vocabulary (fixed words, whole:
// VALIDATION_ERROR shows for the name "Li"), or one of a code's shape (see
// codeShaped) that contains none of the request's personal values, even
// as a part of a word (containsAnywhere). A server may put any text where a code goes ({"error":"bc1q…"}
// echoing a wallet address, a last name, a national id), and a call such
// as ResolveInquiry sends no personal value to look for, so the shape is
// what lets a code through, never the absence of a known value.
func showCode(code string, pii []string) bool {
	return documentedCode(code) || codeShaped(code) && !codeHoldsPII(code, pii)
}

// codeHoldsPII reports whether a server's error code holds one of pii, as
// a part of a word too (a code is shown or hidden whole): never a
// documented code, whose fixed words only look like a short value
// ("VALIDATION_ERROR" and the name "Li").
func codeHoldsPII(code string, pii []string) bool {
	return !documentedCode(code) && containsAnywhere(code, pii)
}

// documentedCode reports whether code is one of the codes the service's
// error reference lists, in any case.
func documentedCode(code string) bool {
	_, ok := codeSentinels[ErrorCode(strings.ToUpper(code))]
	return ok
}

// The bounds of a code's shape: a word, a word of letters and digits, and
// the digits of a whole code. Wallet addresses, IBANs, LEIs, national ids,
// dates and phone numbers exceed one of them.
const (
	maxCodeWord   = 24
	maxMixedWord  = 6
	maxCodeDigits = 4
)

// codeShaped reports whether s has the shape of a machine-made error code:
// at most maxCode bytes, two or more words of ASCII letters and digits
// joined by '_', the first starting with a letter, all letters of one
// case, each word at most maxCodeWord bytes (maxMixedWord when it mixes
// letters and digits), at most maxCodeDigits digits in all
// ("VALIDATION_ERROR", "bad_request", "ERR_404", "V2_API"). Names, wallet
// addresses, national ids, dates and e-mail addresses do not have it: a
// one-word code the service does not document ("E42", "Smith", "bc1q…")
// is withheld. A name in one case joined to a code ("INVALID_ADA_LOVELACE")
// has the shape; the values of the request are looked for too (showCode),
// but a call that sends none (ResolveInquiry) cannot tell it from a code.
func codeShaped(s string) bool {
	if len(s) > maxCode {
		return false
	}
	words, digits, upper, lower := 0, 0, false, false
	for w := range strings.SplitSeq(s, "_") {
		if w == "" || len(w) > maxCodeWord || words == 0 && !isASCIILetter(w[0]) {
			return false
		}
		letters := false
		for i := 0; i < len(w); i++ {
			switch c := w[i]; {
			case c >= 'A' && c <= 'Z':
				upper, letters = true, true
			case c >= 'a' && c <= 'z':
				lower, letters = true, true
			case c >= '0' && c <= '9':
				digits++
			default:
				return false
			}
		}
		if letters && len(w) > maxMixedWord && strings.ContainsAny(w, "0123456789") {
			return false
		}
		words++
	}
	return words >= 2 && upper != lower && digits <= maxCodeDigits
}

// holdsTokenPart reports whether s holds keyPart or more consecutive
// characters of one of tokens (the parts of the bearer tokens a call sent,
// see tokenParts): the window check holdsKeyPart makes for an API key, so
// that a server echoing a piece of a token's signature in a request id or
// a code does not get it shown either.
func holdsTokenPart(s string, tokens []string) bool {
	for _, tok := range tokens {
		if holdsKeyPart(s, tok) {
			return true
		}
	}
	return false
}

// showRequestID reports whether a request id may appear in an error string:
// at most maxRequestID bytes of the characters request and trace ids use,
// and none of the request's personal values.
func showRequestID(id string, pii []string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || strings.IndexByte("-_.:;=+/", c) >= 0) {
			return false
		}
	}
	return !containsAnywhere(id, pii)
}

// requestPaths is the set of JSON paths of the requests' fields
// ("asset", "originator.firstName", "approved"): a server's field path is
// shown in an error string only if it is one of them.
var requestPaths = sync.OnceValue(func() map[string]bool {
	paths := map[string]bool{}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			paths[prefix+name] = true
			if ft := t.Field(i).Type; ft.Kind() == reflect.Struct {
				walk(prefix+name+".", ft)
			}
		}
	}
	walk("", reflect.TypeFor[TransferRequest]())
	walk("", reflect.TypeFor[InquiryResolution]())
	walk("", reflect.TypeFor[TravelAddressRequest]())
	walk("", reflect.TypeFor[travelAddressBody]())
	walk("", reflect.TypeFor[txIDBody]())
	return paths
})

// The fmt and slog forms of the types that hold server text: a value the
// server chose is shown only when it has an identifier's shape, and bodies
// only by their size.

// goSyntaxName writes a type's name before its redacted fields under %#v.
func goSyntaxName(f fmt.State, verb rune, name string) {
	if verb == 'v' && f.Flag('#') {
		io.WriteString(f, name)
	}
}

// shownID returns s if it is a short identifier, or "[redacted]".
func shownID(s string) string {
	if s == "" || isIdentifier(s, maxRequestID) {
		return s
	}
	return redacted
}

// shownRequestID returns a request id if it has a request id's shape, or
// "[redacted]".
func shownRequestID(s string) string {
	if s == "" || showRequestID(s, nil) {
		return s
	}
	return redacted
}

// shownIf returns s if ok, or "[redacted]".
func shownIf(s string, ok bool) string {
	if s == "" || ok {
		return s
	}
	return redacted
}

// isTicker reports whether s looks like an asset's ticker: 1 to 20
// capital letters, digits, '.', '-' or '_'.
func isTicker(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// isDecimal reports whether s is an unsigned decimal number such as
// "0.25".
func isDecimal(s string) bool {
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return s != "" && len(s) <= 50
}

// size describes a body by its length only.
func size(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return "[" + strconv.Itoa(len(b)) + " bytes]"
}
