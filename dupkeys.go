package travelrule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"
)

// errDuplicateName is ParseCallback's refusal of a body that dupNames
// finds a pair of names in. It never names the member: a name may be
// personal data.
var errDuplicateName = fmt.Errorf("%w: an object names a member twice (in some case or spelling)", ErrMalformedCallback)

// dupNames reports whether an object of doc, a JSON document json.Valid
// accepted, at any depth, has two member names that encoding/json matches
// to each other: equal once unescaped (invalid UTF-8 read as U+FFFD) and
// folded as encoding/json folds them (jsonFoldName). It walks doc once and
// allocates only for names with escapes, or for many or long names.
func dupNames(doc []byte) bool {
	type open struct{ names, folded int } // where an open object's names start
	var folded0 [512]byte                 // the folded names of the open objects, end to end
	var names0 [32]span
	var opens0 [16]open
	folded, names, opens := folded0[:0], names0[:0], opens0[:0]
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '{':
			opens = append(opens, open{len(names), len(folded)})
		case '}':
			o := opens[len(opens)-1]
			if spansRepeat(folded, names[o.names:]) {
				return true
			}
			folded, names, opens = folded[:o.folded], names[:o.names], opens[:len(opens)-1]
		case '"':
			start := i
			for i++; ; i++ { // to the closing quote: one after an even run of backslashes
				i += bytes.IndexByte(doc[i:], '"')
				n := 0
				for doc[i-1-n] == '\\' {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
			if j := cbSkipSpace(doc, i+1); j == len(doc) || doc[j] != ':' {
				continue // a value, not a name
			}
			name := doc[start+1 : i]
			if bytes.IndexByte(name, '\\') >= 0 {
				var s string
				_ = json.Unmarshal(doc[start:i+1], &s) // valid: json.Valid accepted it
				name = []byte(s)
			}
			lo := len(folded)
			folded = jsonFoldName(folded, name)
			names = append(names, span{lo, len(folded)})
		}
	}
	return false
}

// span is where a name is in dupNames' folded names.
type span struct{ lo, hi int }

// spansRepeat reports whether two of the names in folded at obj are equal.
// It sorts obj when there are many.
func spansRepeat(folded []byte, obj []span) bool {
	if len(obj) <= 16 {
		for k, a := range obj {
			for _, b := range obj[:k] {
				if string(folded[a.lo:a.hi]) == string(folded[b.lo:b.hi]) {
					return true
				}
			}
		}
		return false
	}
	slices.SortFunc(obj, func(a, b span) int { return bytes.Compare(folded[a.lo:a.hi], folded[b.lo:b.hi]) })
	for k := 1; k < len(obj); k++ {
		if string(folded[obj[k-1].lo:obj[k-1].hi]) == string(folded[obj[k].lo:obj[k].hi]) {
			return true
		}
	}
	return false
}

// jsonFoldName appends to out the name in, folded as encoding/json folds
// member names to match them to fields (its fold.go, appendFoldedName):
// ASCII upper-cased, any other rune the least of its case-folding orbit.
func jsonFoldName(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		for { // the least rune of r's orbit (encoding/json's foldRune)
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}
