package oneline_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vaspkit/travelrule/internal/oneline"
)

// TestFind: each flaw named by class, code point and place; nothing else
// of the value.
func TestFind(t *testing.T) {
	tests := []struct {
		name     string
		s        string
		bad      func(rune, bool) bool
		want     string // "" when none
		trailing bool
	}{
		{"a key file's newline", "k3y-PLANTED\n", oneline.Secret, "a newline (U+000A) at the end", true},
		{"CRLF", "k3y-PLANTED\r\n", oneline.Secret, "a carriage return (U+000D) and a newline (U+000A) at the end", true},
		{"two newlines", "k3y-PLANTED\n\n", oneline.Secret, "a newline (U+000A) and a newline (U+000A) at the end", true},
		{"many newlines", "k3y-PLANTED\n\n\r\n", oneline.Secret, "4 line breaks (CR, LF) at the end", true},
		{"a newline then more", "k3y-PLANTED\nmore", oneline.Secret, "a newline (U+000A) at byte offset 11", false},
		{"a lone CR at the end", "k3y-PLANTED\r", oneline.Secret, "a carriage return (U+000D) at the end", true},
		{"a leading space", " k3y-PLANTED", oneline.Secret, "a space (U+0020) at the start", false},
		{"an inner tab", "k3y\tPLANTED", oneline.Secret, "a tab (U+0009) at byte offset 3", false},
		{"a NUL", "k3y\x00PLANTED", oneline.Secret, "a NUL (U+0000) at byte offset 3", false},
		{"DEL", "k3y\x7fPLANTED", oneline.Secret, "a control character (U+007F) at byte offset 3", false},
		{"a no-break space at the end", "k3y-PLANTED\u00a0", oneline.Secret, "a no-break space (U+00A0) at the end", false},
		{"a byte order mark", "\ufeffk3y-PLANTED", oneline.Secret, "a byte order mark (U+FEFF) at the start", false},
		{"a zero-width space", "k3y\u200bPLANTED", oneline.Secret, "an invisible format character (U+200B) at byte offset 3", false},
		{"an inner space in a secret", "k3y PLANTED", oneline.Secret, "", false},
		{"a good secret", "k3y-PLANTED", oneline.Secret, "", false},
		{"a URL's newline", "https://trp.example/v1\n", oneline.URL, "a newline (U+000A) at the end", true},
		{"a URL's inner space", "https://trp.example/v 1", oneline.URL, "a space (U+0020) at byte offset 21", false},
		{"a quoted URL", `"https://trp.example/v1"`, oneline.URL, "a double quote (U+0022) at the start", false},
		{"a single-quoted URL", `https://trp.example/v1'`, oneline.URL, "a single quote (U+0027) at the end", false},
		{"a single quote inside", `https://trp.example/o'brien`, oneline.URL, "", false},
		{"a typographic quote", "\u201chttps://trp.example\u201d", oneline.URL, "a typographic quote (U+201C) at the start", false},
		{"a byte that is not UTF-8", "https://trp.example/\xff/x", oneline.URL, "a byte that is not UTF-8 at byte offset 20", false},
		{"a good URL", "https://trp.example/v1", oneline.URL, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := oneline.Find(tt.s, tt.bad)
			assert.Equal(t, tt.want != "", ok)
			if ok {
				assert.Equal(t, tt.want, f.String())
				assert.Equal(t, tt.trailing, f.Trailing())
				assert.NotContains(t, f.String(), "PLANTED")
			}
		})
	}
}

func TestTextFault(t *testing.T) {
	tests := []struct{ v, want string }{
		{"Ødegård-Müller", ""},
		{"美咲\u200d", ""},
		{"a\x00", "holds a NUL (U+0000) at byte offset 1"},
		{"\xeb", "is not valid UTF-8 at byte offset 0"},
		{"ab\u2028", "holds a line separator (U+2028) at byte offset 2"},
		{"\u202e1", "holds a bidirectional formatting character (U+202E) at byte offset 0"},
		{"x\u0085", "holds a control character (U+0085) at byte offset 1"},
	}
	for _, tt := range tests {
		if got := oneline.TextFault(tt.v); got != tt.want {
			t.Errorf("TextFault(%q) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
