package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONObjectFault: where a file stops being a JSON object, by line,
// column and byte offset, and why, never quoting a letter or a digit of
// it (a transfer file holds personal data).
func TestJSONObjectFault(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"an object", `{"a": 1}`, ""},
		{"an empty object", " {}\n", ""},
		{"empty", ``, "line 1, column 1 (byte offset 0): unexpected end of JSON input"},
		{"white space", "\n\n  ", "line 3, column 3 (byte offset 4): unexpected end of JSON input"},
		{"cut short", "{\n  \"firstName\": \"Ada", "line 2, column 20 (byte offset 21): unexpected end of JSON input"},
		{"a trailing comma", "{\n  \"a\": 1,\n}", "line 3, column 1 (byte offset 12): invalid character '}' looking for beginning of object key string"},
		{"a letter", "{\n  \"lastName\": Lovelace\n}", "line 2, column 15 (byte offset 16): invalid character (a letter) looking for beginning of value"},
		{"a digit", `{"a": 1}1815`, "line 1, column 9 (byte offset 8): invalid character (a digit) after top-level value"},
		{"a single quote", `{'a': 1}`, `line 1, column 2 (byte offset 1): invalid character '\'' looking for beginning of object key string`},
		{"a control character", "{\"a\": \"x\x01\"}", "line 1, column 9 (byte offset 8): invalid character (a control character) in a string"},
		{"columns in characters", "{\"é\": \"Zoë\" Z}", "line 1, column 13 (byte offset 14): invalid character (a letter) after object key:value pair"},
		{"a non-ASCII letter", "{\"a\": é}", "line 1, column 7 (byte offset 6): invalid character (a letter) looking for beginning of value"},
		{"a literal cut short", `{"a": tru}`, "line 1, column 10 (byte offset 9): invalid character '}' in a literal (true, false or null)"},
		// A name that starts like a literal: encoding/json's "in literal
		// true (expecting 'e')" would spell out its first letters.
		{"a name like a literal", `{"firstName": trudy}`, "line 1, column 18 (byte offset 17): invalid character (a letter) in a literal (true, false or null)"},
		{"a name like null", `{"firstName": nuñez}`, "line 1, column 17 (byte offset 16): invalid character (a letter) in a literal (true, false or null)"},
		{"an array", "\n [1, 2]", "line 2, column 2 (byte offset 2): a JSON array, not an object"},
		{"a string", `"Ada Lovelace"`, "line 1, column 1 (byte offset 0): a JSON string, not an object"},
		{"a number", ` 1815`, "line 1, column 2 (byte offset 1): a JSON number, not an object"},
		{"a bool", `true`, "line 1, column 1 (byte offset 0): a JSON bool, not an object"},
		{"null", ` null`, "line 1, column 2 (byte offset 1): null, not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jsonObjectFault([]byte(tt.data))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			// encoding/json's words after the position vary between Go
			// releases ("in string literal" became "in string").
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), "%q does not start with %q", err.Error(), tt.want)
			for _, never := range []string{"Ada", "Lovelace", "Zoë", "1815", "trud", "expecting"} {
				assert.NotContains(t, err.Error(), never)
			}
		})
	}
}
