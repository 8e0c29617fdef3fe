package oneline

import (
	"strconv"
	"unicode/utf8"
)

// TextFault returns why v is not plain text, "" when it is: bytes that are
// not UTF-8 (encoding/json would send each as U+FFFD), or a character that
// is never part of a name, an address, an identifier or a URL and that
// changes how a log line or a screen shows the text around it: a control
// character (Unicode Cc: C0, DEL, C1; a tab and a newline included), a line
// or paragraph separator (U+2028, U+2029), or a bidirectional embedding,
// override or isolate (U+202A to U+202E, U+2066 to U+2069: the "Trojan
// Source" characters). Other format characters (Cf) stay: the zero-width
// joiner and non-joiner spell names in Persian and Indic scripts, and the
// left-to-right and right-to-left marks are ordinary in right-to-left
// text. The reason names the character class, the code point and its byte
// offset, never the text. It allocates nothing for plain text.
func TextFault(v string) string {
	for i := 0; i < len(v); {
		c := v[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := rune(c), 1
		if c >= 0x80 {
			r, n = utf8.DecodeRuneInString(v[i:])
			if r == utf8.RuneError && n == 1 {
				return "is not valid UTF-8 at byte offset " + strconv.Itoa(i)
			}
		}
		if unplain(r) {
			return "holds " + Name(r) + " at byte offset " + strconv.Itoa(i)
		}
		i += n
	}
	return ""
}

// unplain reports whether TextFault refuses r.
func unplain(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
