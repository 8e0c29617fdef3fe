package ivms101

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScan(t *testing.T) {
	tests := []struct {
		text string
		want []node
	}{
		{`{}`, []node{{0, 2, 1}}},
		{` {"a" : [1, "x\"]", {}] , "b":null} `, []node{
			{1, 35, 8}, // the object
			{2, 5, 2},  // "a"
			{8, 23, 6}, // [1, "x\"]", {}]
			{9, 10, 4}, // 1
			{12, 18, 5},
			{20, 22, 6}, // {}
			{26, 29, 7}, // "b"
			{30, 34, 8}, // null
		}},
		{`{"\\":"\\\\","k":-1.5e+3}`, []node{{0, 25, 5}, {1, 5, 2}, {6, 12, 3}, {13, 16, 4}, {17, 24, 5}}},
	}
	for _, tt := range tests {
		require.True(t, json.Valid([]byte(tt.text)), tt.text)
		assert.Equal(t, tt.want, scan([]byte(tt.text), nil), tt.text)
	}
}

// TestUnquote: a string is read as encoding/json reads it, escapes,
// surrogates and bytes that are not UTF-8 included.
func TestUnquote(t *testing.T) {
	for _, quoted := range []string{
		`""`, `"plain"`, `"Джаксыбеков"`, `"\"\\\/\b\f\n\r\t"`, `"\u0041\u00e9\u4e2d"`,
		`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`,
		"\"\xff\"", "\"a\xe2\x80\"", "\"\xed\xa0\x80\"", "\"\xe2\x80\xa8\"", `"\u2028<&>"`, "\"\\u00e9\xc3\"",
	} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(quoted), &want), quoted)
		assert.Equal(t, want, unquote([]byte(quoted)), quoted)
	}
}
