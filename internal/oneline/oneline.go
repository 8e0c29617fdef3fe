// Package oneline names what makes a one-line value (a base URL, an API
// key, a request's text field) unusable: its first character that cannot
// be there, by its class and code point and its place, never by any other
// character of the value, which may be a secret or personal data. It is
// the one place the client, the sandbox and the CLI judge characters.
package oneline

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Flaw is a character that cannot be where it is.
type Flaw struct {
	Rune    rune // the character; utf8.RuneError for a byte that is not UTF-8
	Invalid bool // a byte that is not UTF-8
	Offset  int  // its byte offset in the value
	Start   bool // it is the value's first character
	End     bool // it is the value's last character
	Breaks  int  // the line breaks (CR, LF) from it to the end, when nothing else follows it
	breaks  string
}

// String describes the flaw, such as "a newline (U+000A) at the end".
func (f Flaw) String() string {
	what := Name(f.Rune)
	if f.Invalid {
		what = "a byte that is not UTF-8"
	}
	switch {
	case f.Breaks > 3:
		return strconv.Itoa(f.Breaks) + " line breaks (CR, LF) at the end"
	case f.Breaks > 1:
		names := make([]string, 0, f.Breaks)
		for _, b := range f.breaks {
			names = append(names, Name(b))
		}
		return strings.Join(names, " and ") + " at the end"
	case f.End:
		return what + " at the end"
	case f.Start:
		return what + " at the start"
	}
	return what + " at byte offset " + strconv.Itoa(f.Offset)
}

// Trailing reports whether the flaw is a line break at the end: what
// reading a file whole (os.ReadFile) leaves after its one line.
func (f Flaw) Trailing() bool { return f.Breaks > 0 }

// Find returns the first character of s that bad refuses; edge tells bad
// that the character is the first or the last of s, and a byte that is not
// UTF-8 comes to bad as utf8.RuneError.
func Find(s string, bad func(r rune, edge bool) bool) (Flaw, bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		f := Flaw{Rune: r, Invalid: r == utf8.RuneError && size == 1, Offset: i, Start: i == 0, End: i+size == len(s)}
		if bad(r, f.Start || f.End) {
			if strings.Trim(s[i:], "\r\n") == "" {
				f.Breaks, f.breaks = len(s)-i, s[i:]
			}
			return f, true
		}
		i += size
	}
	return Flaw{}, false
}

// Secret refuses what cannot be in a secret that goes in a header: a
// control character (a line break, a tab) or an invisible format character
// (a byte order mark) anywhere, white space at either end.
func Secret(r rune, edge bool) bool {
	return invisible(r) || edge && unicode.IsSpace(r)
}

// invisible reports whether r is a control character or a format
// character (such as U+FEFF, the byte order mark an editor may write at
// the start of a file): nothing a value given as text means to hold.
func invisible(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// URL refuses what cannot be in a URL given as one: a control or format
// character or white space anywhere, a double quote, a backquote or a typographic
// quote anywhere, a single quote at either end (a value copied with its
// quotes), and what is not UTF-8.
func URL(r rune, edge bool) bool {
	switch r {
	case '"', '`', '\u2018', '\u2019', '\u201c', '\u201d':
		return true
	case '\'':
		return edge
	}
	return invisible(r) || unicode.IsSpace(r) || r == utf8.RuneError
}

// Name describes r by its class and its code point, such as "a newline
// (U+000A)".
func Name(r rune) string {
	var what string
	switch r {
	case '\n':
		what = "a newline"
	case '\r':
		what = "a carriage return"
	case '\t':
		what = "a tab"
	case ' ':
		what = "a space"
	case 0:
		what = "a NUL"
	case '"':
		what = "a double quote"
	case '\'':
		what = "a single quote"
	case '`':
		what = "a backquote"
	case '\u2018', '\u2019', '\u201c', '\u201d':
		what = "a typographic quote"
	case '\u00a0':
		what = "a no-break space"
	case '\ufeff':
		what = "a byte order mark"
	case '\u2028':
		what = "a line separator"
	case '\u2029':
		what = "a paragraph separator"
	case '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069':
		what = "a bidirectional formatting character"
	default:
		switch {
		case unicode.IsControl(r):
			what = "a control character"
		case unicode.Is(unicode.Cf, r):
			what = "an invisible format character"
		case unicode.IsSpace(r):
			what = "white space"
		default:
			what = "a character"
		}
	}
	return fmt.Sprintf("%s (%U)", what, r)
}
