package ivms101

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// The one pass over a JSON text's bytes that reading makes (decode.go):
// scan finds where each value begins and ends, so that reading then goes
// from member to member without looking at the bytes of what it skips.

// node is one JSON value of a text (or a member's name): its bytes are
// text[start:end], and next is the index of the node after it and after
// everything inside it. An object's nodes are its names and values, one
// after the other.
type node struct{ start, end, next int }

// scan appends to nodes a node for every value and every member name of
// text, valid JSON, in their order.
func scan(text []byte, nodes []node) []node {
	var stackBuf [32]int
	open := stackBuf[:0] // the nodes of the objects and arrays not yet closed
	for i := 0; i < len(text); {
		switch c := text[i]; c {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		case '{', '[':
			open = append(open, len(nodes))
			nodes = append(nodes, node{start: i})
			i++
		case '}', ']':
			n := open[len(open)-1]
			open = open[:len(open)-1]
			i++
			nodes[n].end, nodes[n].next = i, len(nodes)
		case '"':
			end := stringEnd(text, i)
			nodes = append(nodes, node{i, end, len(nodes) + 1})
			i = end
		default: // a number, true, false or null
			end := i + 1
			for end < len(text) && !isDelimiter(text[end]) {
				end++
			}
			nodes = append(nodes, node{i, end, len(nodes) + 1})
			i = end
		}
	}
	return nodes
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
