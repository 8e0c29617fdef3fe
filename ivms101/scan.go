package ivms101

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// The one pass over a JSON text's bytes that reading makes (decode.go):
// scan finds where each value the model reads begins and ends, so that
// reading then goes from member to member without looking at the bytes of
// what it skips. A member the model does not read is one node, its insides
// skipped over.

// node is one JSON value of a text (or a member's name): its bytes are
// text[start:end], and next is the index of the node after it and after
// the nodes inside it. An object's nodes are its names and values, one
// after the other; an array's, its elements.
type node struct{ start, end, next int }

// scan appends to nodes the nodes of text, valid JSON whose top-level
// value is an object, read as a struct of spec s.
func scan(text []byte, s *typeSpec, nodes []node) []node {
	sc := scanner{text: text, nodes: nodes}
	sc.value(skipSpace(text, 0), s, false)
	return sc.nodes
}

// scanner appends to nodes the nodes of text.
type scanner struct {
	text  []byte
	nodes []node
}

// value appends the node of the value at text[i] and returns the index
// after it. The value has nodes inside only where the model reads them:
// as an object, when it is read as a struct of spec s; as an array, when
// it is read as a list (of structs of spec s, or of strings when s is nil).
func (sc *scanner) value(i int, s *typeSpec, list bool) int {
	n := len(sc.nodes)
	sc.nodes = append(sc.nodes, node{start: i})
	var end int
	switch c := sc.text[i]; {
	case c == '{' && s != nil:
		end = sc.object(i, s)
	case c == '[' && list:
		end = sc.array(n, i, s)
	default:
		end = skip(sc.text, i)
	}
	sc.nodes[n].end, sc.nodes[n].next = end, len(sc.nodes)
	return end
}

// object appends the nodes of the members of the object at text[i], read
// as a struct of spec s, and returns the index after it.
func (sc *scanner) object(i int, s *typeSpec) int {
	for i = skipSpace(sc.text, i+1); sc.text[i] != '}'; i = sc.next(i) {
		end := stringEnd(sc.text, i)
		sc.nodes = append(sc.nodes, node{i, end, len(sc.nodes) + 1})
		elem, list := target(s, sc.text[i:end])
		i = skipSpace(sc.text, skipSpace(sc.text, end)+1) // after the ':'
		i = sc.value(i, elem, list)
	}
	return i + 1
}

// array appends the nodes of the elements of the array at text[i], node
// n, read as a list of structs of spec s (or of strings, s nil), and
// returns the index after it. Of an array of more than maxObjects objects,
// which reading refuses, only node n is kept.
func (sc *scanner) array(n, i int, s *typeSpec) int {
	start := i
	for count, i := 0, skipSpace(sc.text, i+1); ; count, i = count+1, sc.next(i) {
		switch {
		case sc.text[i] == ']':
			return i + 1
		case count == maxObjects && s != nil:
			sc.nodes = sc.nodes[:n+1]
			return skip(sc.text, start)
		}
		i = sc.value(i, s, false)
	}
}

// next returns the index of what follows the ',' (if any) after a value
// that ends at text[i]: a member, an element, or the end of the object or
// array.
func (sc *scanner) next(i int) int {
	if i = skipSpace(sc.text, i); sc.text[i] == ',' {
		i = skipSpace(sc.text, i+1)
	}
	return i
}

// target returns how the value of the member named quoted (with its
// quotes) of an object read as a struct of spec s is read: its member's
// elem and list, or nil and false when the model does not read it. An
// OriginatingVASP or BeneficiaryVASP may come as the person itself: the
// person's members are read too.
func target(s *typeSpec, quoted []byte) (*typeSpec, bool) {
	i, _, _ := matchName(s, quoted)
	if i < 0 && s.wrapper {
		s = s.members[0].elem
		i, _, _ = matchName(s, quoted)
	}
	if i < 0 {
		return nil, false
	}
	return s.members[i].elem, s.members[i].list
}

// matchName is match for quoted, a member's name as JSON writes it, with
// its quotes.
func matchName(s *typeSpec, quoted []byte) (i int, via23, exact bool) {
	if plain(quoted) {
		return match(s, quoted[1:len(quoted)-1])
	}
	return match(s, unquote(quoted))
}

// skipSpace returns the index of the first byte of text from i on that is
// not white space.
func skipSpace(text []byte, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n') {
		i++
	}
	return i
}

// skip returns the index after the value at text[i], in valid JSON.
func skip(text []byte, i int) int {
	switch text[i] {
	case '"':
		return stringEnd(text, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch text[i] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			case '"':
				i = stringEnd(text, i) - 1
			}
		}
	}
	for i++; i < len(text) && !isDelimiter(text[i]); i++ { // a number, true, false or null
	}
	return i
}

// isDelimiter reports whether c ends a number or a literal.
func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ':', ']', '}':
		return true
	}
	return false
}

// stringEnd returns the index after the closing quote of the string that
// begins at text[i], in valid JSON.
func stringEnd(text []byte, i int) int {
	for j := i + 1; ; j++ {
		j += bytes.IndexByte(text[j:], '"')
		escapes := 0 // the backslashes before the quote
		for text[j-1-escapes] == '\\' {
			escapes++
		}
		if escapes%2 == 0 {
			return j + 1
		}
	}
}

// plain reports whether quoted, a JSON string with its quotes, is its own
// text: it has no escape and is valid UTF-8.
func plain(quoted []byte) bool {
	return bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted)
}

// unquote returns the text of quoted, a JSON string with its quotes, as
// encoding/json decodes it: escapes decoded, a lone surrogate or a byte
// that is not UTF-8 replaced with U+FFFD.
func unquote(quoted []byte) string {
	s := quoted[1 : len(quoted)-1]
	if plain(s) {
		return string(s)
	}
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			var n int
			b, n = appendEscape(b, s[r:])
			r += n
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b)
}

// appendEscape appends to b the text of the escape that begins s and
// returns the number of bytes of s it took.
func appendEscape(b, s []byte) ([]byte, int) {
	switch s[1] {
	case 'b':
		return append(b, '\b'), 2
	case 'f':
		return append(b, '\f'), 2
	case 'n':
		return append(b, '\n'), 2
	case 'r':
		return append(b, '\r'), 2
	case 't':
		return append(b, '\t'), 2
	case 'u':
		r := hex4(s[2:6])
		if !utf16.IsSurrogate(r) {
			return utf8.AppendRune(b, r), 6
		}
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if pair := utf16.DecodeRune(r, hex4(s[8:12])); pair != utf8.RuneError {
				return utf8.AppendRune(b, pair), 12
			}
		}
		return utf8.AppendRune(b, utf8.RuneError), 6
	}
	return append(b, s[1]), 2 // '"', '\\' or '/'
}

// hex4 decodes h, four hex digits.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
