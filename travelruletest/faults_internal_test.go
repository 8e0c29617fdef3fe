package travelruletest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRequestID is the table of the client X-Request-Id values the sandbox
// puts in its log: short identifiers only.
func TestRequestID(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"a-1", "a-1"},
		{"req_42.7", "req_42.7"},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{strings.Repeat("x", 65), ""},
		{"Ada Lovelace", ""},
		{"id\nforged=1", ""},
		{"ünicode", ""},
	} {
		assert.Equal(t, tt.want, requestID(tt.in), "%q", tt.in)
	}
}
