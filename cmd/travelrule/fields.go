package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/vaspkit/travelrule"
)

// The unknown fields of a transfer file. The known names come from the
// json tags of travelrule.TransferRequest and the types it holds, so that
// they follow the SDK.

// schema holds the field names of a JSON object, each with the schema of
// its value when that is an object itself (nil otherwise).
type schema map[string]schema

var transferSchema = schemaOf(reflect.TypeFor[travelrule.TransferRequest]())

// schemaOf returns the JSON field names of the struct type t, as
// encoding/json names them.
func schemaOf(t reflect.Type) schema {
	s := schema{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		var sub schema
		if f.Type.Kind() == reflect.Struct {
			sub = schemaOf(f.Type)
		}
		s[name] = sub
	}
	return s
}

// unknownFields returns a fault for each field of the JSON object data
// that s does not name, at any depth, in the order of the file. Names are
// compared exactly: a service need not match them ignoring case, as
// encoding/json does.
func unknownFields(data []byte) []travelrule.FieldError {
	return transferSchema.unknown(data, "", nil)
}

func (s schema) unknown(data []byte, prefix string, faults []travelrule.FieldError) []travelrule.FieldError {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return faults // not an object: the check of types reports it
	}
	for dec.More() {
		tok, err := dec.Token()
		var value json.RawMessage
		if err != nil || dec.Decode(&value) != nil {
			return faults
		}
		key, _ := tok.(string)
		sub, known := s[key]
		switch {
		case !known:
			faults = append(faults, travelrule.FieldError{Field: prefix + key, Reason: "unknown field" + s.hint(key)})
		case sub != nil:
			faults = sub.unknown(value, prefix+key+".", faults)
		}
	}
	return faults
}

// hint names the known field that key most likely meant: the one it
// spells in other case, else the one suggest (the commands' did-you-mean)
// finds near it; "" when none is.
func (s schema) hint(key string) string {
	names := slices.Sorted(maps.Keys(s))
	near := ""
	for _, name := range names {
		if strings.EqualFold(name, key) {
			near = name
		}
	}
	if near == "" {
		near = suggest(key, names)
	}
	if near == "" {
		return ""
	}
	return ` (did you mean "` + near + `"?)`
}
