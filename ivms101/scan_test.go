package ivms101

import (
	"encoding/json"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScan: the nodes of a text are those of the values the model reads,
// each given as its text and the index of the node after it; what the
// model does not read is one node.
func TestScan(t *testing.T) {
	type want struct {
		text string
		next int
	}
	address := specOf(reflect.TypeFor[Address]())
	tests := []struct {
		name string
		spec *typeSpec
		text string
		want []want
	}{
		{"empty", address, ` {} `, []want{{`{}`, 1}}},
		{"a list, a value of the wrong type, a member the model does not name", address,
			`{"addressLine" : [1, "x\"]", {"a":[2]}] , "unit":{"a":[1, {}]}, "townName":null,"country":"DE"}`,
			[]want{
				{`{"addressLine" : [1, "x\"]", {"a":[2]}] , "unit":{"a":[1, {}]}, "townName":null,"country":"DE"}`, 12},
				{`"addressLine"`, 2}, {`[1, "x\"]", {"a":[2]}]`, 6}, {`1`, 4}, {`"x\"]"`, 5}, {`{"a":[2]}`, 6},
				{`"unit"`, 7}, {`{"a":[1, {}]}`, 8},
				{`"townName"`, 9}, {`null`, 10},
				{`"country"`, 11}, {`"DE"`, 12},
			}},
		{"escapes, numbers", address, `{"\\":"\\\\","k":-1.5e+3,"po\u0073tCode":[{"x":1}]}`, []want{
			{`{"\\":"\\\\","k":-1.5e+3,"po\u0073tCode":[{"x":1}]}`, 7},
			{`"\\"`, 2}, {`"\\\\"`, 3}, {`"k"`, 4}, {`-1.5e+3`, 5}, {`"po\u0073tCode"`, 6}, {`[{"x":1}]`, 7},
		}},
		{"a VASP as the person itself", specOf(reflect.TypeFor[OriginatingVASP]()),
			`{"legalPerson":{"x":[1]},"originatingVASP":[{}]}`, []want{
				{`{"legalPerson":{"x":[1]},"originatingVASP":[{}]}`, 7},
				{`"legalPerson"`, 2}, {`{"x":[1]}`, 5}, {`"x"`, 4}, {`[1]`, 5},
				{`"originatingVASP"`, 6}, {`[{}]`, 7},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, json.Valid([]byte(tt.text)), tt.text)
			var got []want
			for _, n := range scan([]byte(tt.text), tt.spec, nil) {
				got = append(got, want{tt.text[n.start:n.end], n.next})
			}
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("an array of more objects than reading takes", func(t *testing.T) {
		name := specOf(reflect.TypeFor[NaturalPersonName]())
		for _, n := range []int{maxObjects, maxObjects + 1} {
			text := `{"nameIdentifier":[` + strings.Repeat(`{},`, n-1) + `{}]}`
			nodes := scan([]byte(text), name, nil)
			if n > maxObjects {
				assert.Len(t, nodes, 3, "the object, the name, the array")
			} else {
				assert.Len(t, nodes, 3+n)
			}
			assert.Equal(t, len(text), nodes[0].end)
			assert.Equal(t, len(nodes), nodes[2].next)
		}
	})
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

// TestParseCostOfWhatTheModelDoesNotRead: a member the model does not read
// costs about its bytes (its copy in Extra), not a node for each value in
// it: a megabyte of numbers allocated 71 MB when every value had a node,
// 5 MB before #42.
func TestParseCostOfWhatTheModelDoesNotRead(t *testing.T) {
	in := []byte(`{"originator":{"x":[` + strings.Repeat("0,", 500_000) + `0]}}`)
	_, err := Parse(in) // the pool of nodes filled
	require.NoError(t, err)
	// The least of a few parses: a collection between two may empty the
	// pool, which the next parse fills again.
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p, err := Parse(in)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		assert.Len(t, p.Originator.Extra["x"], len(in)-len(`{"originator":{"x":}}`))
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	assert.Less(t, least, uint64(3*len(in)))
}
