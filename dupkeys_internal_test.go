package travelrule

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dupNamesCases are bodies ParseCallback must refuse (dup) or accept for
// their names: encoding/json would match two names of one object to each
// other in the first, in none of the second.
var dupNamesCases = []struct {
	name, body string
	dup        bool
}{
	{"exact", `{"transferId":"A","status":"rejected","status":"approved"}`, true},
	{"case", `{"transferId":"A","status":"rejected","Status":"approved"}`, true},
	{"escaped", `{"transferId":"A","status":"rejected","\u0073tatus":"approved"}`, true},
	{"escaped case", `{"st\u0061tus":"rejected","STATUS":"approved"}`, true},
	{"long s", `{"status":"rejected","ſtatus":"approved"}`, true},
	{"long s escaped", `{"status":"rejected","\u017ftatus":"approved"}`, true},
	{"Kelvin sign", `{"k":1,"\u212a":2}`, true},
	{"Kelvin sign and K", "{\"K\":1,\"\u212a\":2}", true},
	{"micro sign and mu", "{\"\u00b5\":1,\"\u03bc\":2}", true},
	{"txId and txid", `{"txId":"0xA","txid":"0xB"}`, true},
	{"a later null", `{"transferId":"t","status":"APPROVED","status":null}`, true},
	{"a case variant after the exact name", `{"approved":false,"APPROVED":true}`, true},
	{"a case variant before it", `{"APPROVED":true,"approved":false}`, true},
	{"the exact name twice", `{"approved":true,"approved":false}`, true},
	{"empty names", `{"":1,"":2}`, true},
	{"invalid UTF-8 as U+FFFD", "{\"a\xff\":1,\"a\xfe\":2}", true},
	{"invalid UTF-8 and an escaped U+FFFD", "{\"a\xff\":1,\"a\\ufffd\":2}", true},
	{"lone surrogates as U+FFFD", `{"\ud800":1,"\udfff":2}`, true},
	{"after a nested object", `{"a":{"b":1,"c":[{"d":2}]},"A":2}`, true},
	{"in IVMS101", `{"asset":"BTC","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Lovelace","PrimaryIdentifier":"Turing"}]}}}]}}}`, true},
	{"in IVMS101 sent as a string", `{"asset":"BTC","IVMS101":"{\"originator\":{\"a\":1},\"Originator\":{\"b\":2}}"}`, true},
	{"in an object in an array", `{"approved":true,"data":[1,"x",{"address":"a","ADDRESS":"b"}]}`, true},
	{"deep", `{"x":[[{"y":{"z":1,"w":{"v":[{}]},"Z":2}}]]}`, true},
	{"the last of many names", manyNames(100, `"NAME7":1`), true},
	{"deeper than the stack's arrays", nested(40, `"b":1,"B":2`), true},

	{"distinct", `{"transferId":"A","status":"approved","txId":"0x1","timestamp":"2026-11-23T08:00:00Z"}`, false},
	{"a name at other levels", `{"status":"a","data":{"status":"b","x":{"status":"c"}},"list":[{"status":"d"},{"status":"e"}]}`, false},
	{"names inside strings", `{"note":"\"status\":1,\"Status\":2","status":"status","Status2":"{\"a\":1,\"a\":2}"}`, false},
	{"canceled and cancelled", `{"canceled":"a","cancelled":"b"}`, false},
	{"dotted I is not i", `{"id":1,"İd":2}`, false},
	{"sharp s is not ss", `{"ss":1,"ß":2}`, false},
	{"distinct invalid UTF-8", "{\"stat\xffus\":1,\"status\xff\":2}", false},
	{"many names", manyNames(100, ""), false},
	{"deep and distinct", nested(40, `"b":1,"c":2`), false},
	{"an empty name", `{"":1,"a":{"":2}}`, false},
}

// manyNames is an object of a status and n names "name0" to "nameN-1"
// (more names, and longer, than dupNames keeps on its stack), then extra.
func manyNames(n int, extra string) string {
	var b strings.Builder
	b.WriteString(`{"status":"received"`)
	for i := range n {
		b.WriteString(`,"name` + strconv.Itoa(i) + `":[` + strings.Repeat("{},", i%3) + `0]`)
	}
	if extra != "" {
		b.WriteString("," + extra)
	}
	return b.String() + "}"
}

// nested is depth objects, each in member "a" of the one above, the
// innermost holding members.
func nested(depth int, members string) string {
	return strings.Repeat(`{"a":`, depth) + "{" + members + "}" + strings.Repeat("}", depth)
}

func TestParseCallbackRefusesNameTwice(t *testing.T) {
	for _, tt := range dupNamesCases {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			require.True(t, json.Valid(body))
			require.Equal(t, tt.dup, oracleCallbackDupNames(body), "the oracle disagrees with the table")
			cb, err := ParseCallback(body)
			if !tt.dup {
				require.NoError(t, err)
				assert.Equal(t, body, []byte(cb.Raw))
				return
			}
			require.ErrorIs(t, err, ErrMalformedCallback)
			assert.Nil(t, cb)
			assert.Equal(t, "travelrule: malformed callback: an object names a member twice (in some case or spelling)", err.Error(),
				"the error never repeats a name or the body")
		})
	}
}

// encoding/json is the judge: a pair of names is a duplicate exactly when
// json.Unmarshal fills a field tagged with one from a member of the other.
func TestDupNamesAsEncodingJSONMatches(t *testing.T) {
	for _, p := range []struct{ tag, member string }{
		{"status", `"status"`}, {"status", `"Status"`}, {"status", `"\u0073tatus"`}, {"status", `"ſtatus"`},
		{"k", `"\u212a"`}, {"K", "\"\u212a\""}, {"\u00b5", `"\u03bc"`}, {"\u01c4", "\"\u01c5\""}, {"ω", "\"\u2126\""},
		{"id", `"İd"`}, {"i", `"ı"`}, {"ss", `"ß"`}, {"txId", `"txid"`}, {"canceled", `"cancelled"`}, {"a", `"a\u0000"`},
	} {
		typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[int](), Tag: reflect.StructTag(`json:"` + p.tag + `"`)}})
		v := reflect.New(typ)
		require.NoError(t, json.Unmarshal([]byte(`{`+p.member+`:1}`), v.Interface()))
		matched := v.Elem().Field(0).Int() == 1
		tag, _ := json.Marshal(p.tag)
		assert.Equal(t, matched, dupNames([]byte(`{`+string(tag)+`:0,`+p.member+`:1}`)), "%s and %s", p.tag, p.member)
	}
}

// FuzzDupNames checks dupNames against the oracle on any JSON document.
func FuzzDupNames(f *testing.F) {
	for _, tt := range dupNamesCases {
		f.Add([]byte(tt.body))
	}
	f.Add([]byte(`[{"a":1,"A":2}]`))
	f.Add([]byte(`"x"`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			return
		}
		if got, want := dupNames(doc), oracleDupNames(doc); got != want {
			t.Fatalf("dupNames = %v, the oracle %v", got, want)
		}
	})
}

// oracleCallbackDupNames is what ParseCallback refuses for its names: a
// name twice in an object of body (oracleDupNames), or in the IVMS101
// payload that a top-level "IVMS101" member holds as a JSON string.
func oracleCallbackDupNames(body []byte) bool {
	if oracleDupNames(body) {
		return true
	}
	var top map[string]json.RawMessage
	_ = json.Unmarshal(body, &top)
	for k, v := range top {
		var s string
		if strings.EqualFold(k, "IVMS101") && json.Unmarshal(v, &s) == nil {
			p := []byte(strings.TrimSpace(s))
			return len(p) > 0 && p[0] == '{' && json.Valid(p) && oracleDupNames(p)
		}
	}
	return false
}

// oracleDupNames is dupNames written another way: the names of each object
// as json.Decoder's tokens give them (unescaped as json.Unmarshal does),
// compared pairwise with strings.EqualFold, which is what encoding/json's
// fold compares (its foldName's doc says so).
func oracleDupNames(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	type frame struct {
		names        []string
		object, name bool // an object, whose next token is a name or '}'
	}
	var stack []frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].name = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].name {
			if s, ok := tok.(string); ok {
				for _, seen := range stack[n-1].names {
					if strings.EqualFold(seen, s) {
						return true
					}
				}
				stack[n-1].names, stack[n-1].name = append(stack[n-1].names, s), false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, name: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
