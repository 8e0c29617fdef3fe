package pgstore

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndexName checks that the index's name is the table's with a suffix,
// and that a name too long for that is cut to 63 bytes, on a character
// boundary, keeping two long names that start alike apart.
func TestIndexName(t *testing.T) {
	assert.Equal(t, "travelrule_callback_deliveries_expires_at_idx", indexName(DefaultTable))
	assert.Equal(t, strings.Repeat("x", 48)+"_expires_at_idx", indexName(strings.Repeat("x", 48)))
	a, b := strings.Repeat("x", 62)+"a", strings.Repeat("x", 62)+"b"
	e := strings.Repeat("é", 31) // 62 bytes
	for _, name := range []string{a, b, e, strings.Repeat("x", 49)} {
		got := indexName(name)
		assert.LessOrEqual(t, len(got), maxName, got)
		assert.True(t, utf8.ValidString(got), got)
		assert.True(t, strings.HasSuffix(got, indexSuffix), got)
	}
	assert.NotEqual(t, indexName(a), indexName(b))
}

// TestParseTable checks the quoting of table names, and that a name
// without a schema is qualified once its schema is known.
func TestParseTable(t *testing.T) {
	tests := []struct{ in, name, index, schema, resolved string }{
		{"deliveries", `"deliveries"`, `"deliveries_expires_at_idx"`, "", `"s"."deliveries"`},
		{`we"ird`, `"we""ird"`, `"we""ird_expires_at_idx"`, "", `"s"."we""ird"`},
		{"s.Mixed Case", `"s"."Mixed Case"`, `"Mixed Case_expires_at_idx"`, "s", `"s"."Mixed Case"`},
		{`a"b.t`, `"a""b"."t"`, `"t_expires_at_idx"`, `a"b`, `"s"."t"`},
	}
	for _, tt := range tests {
		got, err := parseTable(tt.in)
		require.NoError(t, err)
		assert.Equal(t, tt.name, got.name, tt.in)
		assert.Equal(t, tt.index, got.index, tt.in)
		assert.Equal(t, tt.schema, got.schema, tt.in)
		assert.Equal(t, tt.resolved, got.in("s").name, tt.in)
		assert.Equal(t, tt.index, got.in("s").index, tt.in)
	}
}
