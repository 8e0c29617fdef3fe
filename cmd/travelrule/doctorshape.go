package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The shapes the doctor knows, each answer's fields checked against them.
// Shapes are named with the answer's structure only: field names, and the
// status as one of the words the SDK reads as success (true, "true",
// "succes", "success") or false; never another value.

// shapeReport is the shape an answer matched and the fields that shape
// does not have.
type shapeReport struct {
	// Shape names the answer's structure, such as "unwrapped, camelCase"
	// or {"status":true,"data":{"travelAddress":…}}.
	Shape string `json:"shape"`
	// Documented says whether the shape is one the service documents.
	Documented bool `json:"documented"`
	// Unexpected are the answer's fields that the shape does not have, by
	// JSON path, such as "data.beneficiaryId".
	Unexpected []string `json:"unexpectedFields"`
	// Missing are the shape's fields that the answer does not have.
	Missing []string `json:"missingFields"`

	notes []string // remarks that are no problem
}

// The token answer's fields, in the live service's camelCase and in
// OAuth2's snake_case (the SDK reads both; expiresAt only in camelCase).
var (
	camelTokenFields = []string{"accessToken", "expiresIn", "expiresAt", "tokenType"}
	snakeTokenFields = []string{"access_token", "expires_in", "token_type"}
)

// arrayItems is the key of a schema that holds the schema of each item of
// an array.
const arrayItems = "[]"

// errorSchema is the live service's error envelope.
var errorSchema = schema{"status": nil, "errors": schema{arrayItems: schema{"code": nil, "message": nil}}}

// classify returns the shape of an answer of a step ("login", "generate"
// or "other"): an error envelope for a status outside 2xx or a status
// false, otherwise the step's own shapes.
func classify(step string, status int, body []byte, secrets []string) shapeReport {
	obj, what := jsonObject(body)
	if obj == nil {
		return shapeReport{Shape: what, Unexpected: []string{}, Missing: []string{}}
	}
	if status < 200 || status > 299 || statusWord(obj) == "false" {
		return classifyError(obj, secrets)
	}
	switch step {
	case "login":
		return classifyToken(obj, secrets)
	case "generate":
		return classifyGenerate(obj, secrets)
	}
	return shapeReport{Shape: "an answer to a call the doctor did not make", Unexpected: []string{}, Missing: []string{}}
}

// classifyToken returns the shape of a 2xx token answer: its fields
// unwrapped or wrapped in data, camelCase or snake_case.
func classifyToken(obj map[string]json.RawMessage, secrets []string) shapeReport {
	fields, wrapped := obj, false
	if d, _ := jsonObject(obj["data"]); d != nil && (has(d, "accessToken") || has(d, "access_token")) {
		fields, wrapped = d, true
	}
	var names []string
	var naming string
	switch camel, snake := has(fields, "accessToken"), has(fields, "access_token"); {
	case camel && snake:
		names, naming = append(slices.Clone(camelTokenFields), snakeTokenFields...), "camelCase and snake_case"
	case camel:
		names, naming = camelTokenFields, "camelCase"
	case snake:
		names, naming = snakeTokenFields, "snake_case"
	default:
		return shapeReport{
			Shape:      "no accessToken (nor access_token), at the top level or in data",
			Unexpected: unexpectedFields(obj, schema{"status": nil}, "", secrets, nil),
			Missing:    []string{"accessToken"},
		}
	}
	want := schema{}
	for _, n := range names {
		want[n] = nil
	}
	r := shapeReport{Unexpected: []string{}, Missing: []string{}}
	for _, n := range names {
		if !has(fields, n) {
			r.Missing = append(r.Missing, n)
		}
	}
	st := statusWord(obj)
	where := "unwrapped"
	if wrapped {
		where = "wrapped in data"
		r.Unexpected = unexpectedFields(obj, schema{"status": nil, "data": want}, "", secrets, r.Unexpected)
		r.Documented = isSuccessWord(st) // the documented wrapper carries its status
	} else {
		want["status"] = nil
		r.Unexpected = unexpectedFields(obj, want, "", secrets, r.Unexpected)
		r.Documented = st == "" || isSuccessWord(st)
	}
	r.Shape = where + ", " + naming
	if st != "" {
		r.Shape += `, "status":` + st
	}
	if r.Documented && r.Shape != "unwrapped, camelCase" {
		r.notes = append(r.notes, "the docs show the token answer unwrapped in camelCase; the SDK reads this shape too")
	}
	if !has(fields, "expiresIn") && !has(fields, "expires_in") && !has(fields, "expiresAt") {
		r.notes = append(r.notes, "the token has no lifetime (expiresIn, expiresAt): the SDK keeps it until the service refuses it")
	}
	return r
}

// classifyGenerate returns the shape of a 2xx answer to generate: its
// travelAddress wrapped in data or at the top level, and how the status
// is written.
func classifyGenerate(obj map[string]json.RawMessage, secrets []string) shapeReport {
	st := statusWord(obj)
	status := ""
	if st != "" {
		status = `"status":` + st + ","
	}
	r := shapeReport{Unexpected: []string{}, Missing: []string{}}
	d, _ := jsonObject(obj["data"])
	switch {
	case d != nil && has(d, "travelAddress"):
		r.Shape = "{" + status + `"data":{"travelAddress":…}}`
		r.Documented = isSuccessWord(st) // the documented wrapper carries its status
		r.Unexpected = unexpectedFields(obj, schema{"status": nil, "data": schema{"travelAddress": nil}}, "", secrets, r.Unexpected)
	case has(obj, "travelAddress"):
		r.Shape = "{" + status + `"travelAddress":…}`
		r.Documented = st == "" || isSuccessWord(st)
		r.Unexpected = unexpectedFields(obj, schema{"status": nil, "travelAddress": nil}, "", secrets, r.Unexpected)
	default:
		r.Shape = "no travelAddress, at the top level or in data"
		r.Missing = []string{"travelAddress"}
		r.Unexpected = unexpectedFields(obj, schema{"status": nil}, "", secrets, r.Unexpected)
	}
	return r
}

// classifyError returns the shape of an error answer: documented when it
// is {"status":false,"errors":[{"code":…,"message":…}, …]}.
func classifyError(obj map[string]json.RawMessage, secrets []string) shapeReport {
	r := shapeReport{
		Shape:      `{"status":false,"errors":[{"code":…,"message":…}]}`,
		Documented: statusWord(obj) == "false",
		Unexpected: unexpectedFields(obj, errorSchema, "", secrets, []string{}),
		Missing:    []string{},
	}
	var items []json.RawMessage
	if json.Unmarshal(obj["errors"], &items) != nil || len(items) == 0 {
		r.Documented = false
		r.Missing = append(r.Missing, "errors")
	}
	for i, it := range items {
		o, _ := jsonObject(it)
		for _, n := range []string{"code", "message"} {
			if o == nil || !has(o, n) {
				r.Documented = false
				r.Missing = append(r.Missing, fmt.Sprintf("errors[%d].%s", i, n))
			}
		}
	}
	if !has(obj, "status") {
		r.Missing = append(r.Missing, "status")
	}
	if !r.Documented {
		r.Shape = `an error answer without the envelope {"status":false,"errors":[{"code":…,"message":…}]}`
	}
	return r
}

// unexpectedFields appends to out the path of every field of obj that want
// does not name, at any depth, in the order of their names: the fields of
// a known object are checked against its schema, the items of a known
// array against the schema under arrayItems. Names are shown as fieldName
// shows them.
func unexpectedFields(obj map[string]json.RawMessage, want schema, prefix string, secrets []string, out []string) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		sub, known := want[k]
		path := prefix + fieldName(k, secrets)
		switch {
		case !known:
			out = append(out, path)
		case sub == nil:
		case sub[arrayItems] != nil:
			var items []json.RawMessage
			if json.Unmarshal(obj[k], &items) == nil {
				for i, it := range items {
					if o, _ := jsonObject(it); o != nil {
						out = unexpectedFields(o, sub[arrayItems], fmt.Sprintf("%s[%d].", path, i), secrets, out)
					}
				}
			}
		default:
			if o, _ := jsonObject(obj[k]); o != nil {
				out = unexpectedFields(o, sub, path+".", secrets, out)
			}
		}
	}
	return out
}

// jsonObject decodes b as a JSON object; for anything else it returns nil
// and what b is instead, in the doctor's words.
func jsonObject(b []byte) (map[string]json.RawMessage, string) {
	t := bytes.TrimSpace(b)
	var obj map[string]json.RawMessage
	switch {
	case len(t) == 0:
		return nil, "an empty body"
	case t[0] == '{' && json.Unmarshal(t, &obj) == nil:
		return obj, ""
	case json.Valid(t):
		return nil, "JSON, but not an object"
	}
	return nil, "not JSON"
}

// has reports whether obj has the field name with a value that is not
// null.
func has(obj map[string]json.RawMessage, name string) bool {
	v, ok := obj[name]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// statusWord returns how obj's status is written, as one of a closed set
// of words and never the value itself: "" (absent or null), "true" (the
// boolean), `"true"`, `"succes"`, `"success"` (strings, any case), "false"
// (the boolean or the string), or "(another value)".
func statusWord(obj map[string]json.RawMessage) string {
	raw := bytes.TrimSpace(obj["status"])
	switch string(raw) {
	case "", "null":
		return ""
	case "true", "false":
		return string(raw)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		for _, w := range []string{"true", "succes", "success"} {
			if strings.EqualFold(s, w) {
				return `"` + w + `"`
			}
		}
		if strings.EqualFold(s, "false") {
			return "false"
		}
	}
	return "(another value)"
}

// isSuccessWord reports whether a statusWord says success.
func isSuccessWord(w string) bool {
	switch w {
	case "true", `"true"`, `"succes"`, `"success"`:
		return true
	}
	return false
}

// secretPart is the length of the pieces of a secret that holdsSecretPart
// looks for.
const secretPart = 8

// holdsSecretPart reports whether s holds, in any case, a secret of at
// least 4 bytes whole or any 8 consecutive bytes of a longer one: a
// deployment that echoes the API key re-cased (a header name, a media type
// lower-cased by the parser) or cut (a prefix as a JSON field name) shows
// none of it.
func holdsSecretPart(s string, secrets []string) bool {
	ls := strings.ToLower(s)
	for _, sec := range secrets {
		if len(sec) < 4 {
			continue
		}
		lk := strings.ToLower(sec)
		if len(lk) <= secretPart {
			if strings.Contains(ls, lk) {
				return true
			}
			continue
		}
		for i := 0; i+secretPart <= len(lk); i++ {
			if strings.Contains(ls, lk[i:i+secretPart]) {
				return true
			}
		}
	}
	return false
}

// fieldName is how the doctor shows a field's (or a header's) name: as it
// is when it is a plain identifier (letters, digits, '_', '-', '$', at
// most 64 bytes) that contains no secret, "[redacted]" otherwise, since a
// service may use values as names.
func fieldName(name string, secrets []string) string {
	if name == "" || len(name) > 64 {
		return "[redacted]"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '$') {
			return "[redacted]"
		}
	}
	if holdsSecretPart(name, secrets) {
		return "[redacted]"
	}
	return name
}

// secretValues returns the values of an answer that must never be shown
// even by accident: its access token and its travel address, at the top
// level or in data.
func secretValues(body []byte) []string {
	obj, _ := jsonObject(body)
	if obj == nil {
		return nil
	}
	var out []string
	for _, o := range []map[string]json.RawMessage{obj, must(jsonObject(obj["data"]))} {
		for _, n := range []string{"accessToken", "access_token", "travelAddress"} {
			var s string
			if json.Unmarshal(o[n], &s) == nil && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// must returns the object of jsonObject, nil for anything else.
func must(obj map[string]json.RawMessage, _ string) map[string]json.RawMessage { return obj }
