package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// jsonObjectFault says where data stops being a JSON object, by line, column
// and byte offset, and why, or returns nil when data is one. A file of
// transfers holds personal data: the reason names a character by its kind
// ("a letter", "a digit") unless it is JSON's punctuation, and never
// quotes the file otherwise.
func jsonObjectFault(data []byte) error {
	var v map[string]json.RawMessage
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		pos, reason := int(se.Offset), syntaxReason(se.Error())
		if pos > 0 && pos <= len(data) && !strings.HasPrefix(se.Error(), "unexpected end") {
			pos-- // the offending character: the error comes after reading it
			for pos > 0 && !utf8.RuneStart(data[pos]) {
				pos-- // Go 1.27 counts the whole character read, Go 1.26 its first byte
			}
		}
		return fmt.Errorf("%s: %s", jsonPosition(data, pos), reason)
	case errors.As(err, &te):
		kind, _, _ := strings.Cut(te.Value, " ") // "number 12": the kind only
		return fmt.Errorf("%s: a JSON %s, not an object", jsonPosition(data, valueStart(data)), kind)
	case err != nil:
		return err // not a fault of the JSON
	case v == nil:
		return fmt.Errorf("%s: null, not an object", jsonPosition(data, valueStart(data)))
	}
	return nil
}

// valueStart is the offset of the first byte of data that is not JSON's
// white space.
func valueStart(data []byte) int {
	return len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
}

// jsonPosition names offset pos of data as "line L, column C (byte offset
// N)": lines and columns from 1, columns in characters, offsets in bytes
// from 0.
func jsonPosition(data []byte, pos int) string {
	pos = min(max(pos, 0), len(data))
	before := data[:pos]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := 1 + utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return fmt.Sprintf("line %d, column %d (byte offset %d)", line, col, pos)
}

// invalidCharRE is the form of encoding/json's syntax errors that quote a
// character of the input.
var invalidCharRE = regexp.MustCompile(`^invalid character ('(?:\\'|[^'])*') (.*)$`)

// syntaxReason is the text of a syntax error of encoding/json in the
// client's words: the character it quotes named by its kind unless it is
// JSON's punctuation, and where it was found in fixed words, never
// encoding/json's own (its "in literal true (expecting 'e')" spells out
// the letters of the input before it).
func syntaxReason(msg string) string {
	m := invalidCharRE.FindStringSubmatch(msg)
	if m == nil {
		if msg == "unexpected end of JSON input" {
			return msg
		}
		return "not JSON"
	}
	return "invalid character " + charKind(m[1]) + " " + syntaxContext(m[2])
}

// syntaxContexts are the places encoding/json names after "invalid
// character 'c'", with the words a reason shows for each; the first whose
// key starts the place wins.
var syntaxContexts = []struct{ prefix, words string }{
	{"in literal", "in a literal (true, false or null)"},
	{"in string escape code", "in a string's escape"},
	{"in string", "in a string"}, // Go 1.26 says "in string literal", Go 1.27 "in string"
	{"in numeric literal", "in a number"},
	{"after decimal point in numeric literal", "in a number"},
	{"in exponent of numeric literal", "in a number"},
	{"looking for beginning of value", "looking for beginning of value"},
	{"looking for beginning of object key string", "looking for beginning of object key string"},
	{"after object key:value pair", "after object key:value pair"},
	{"after object key", "after object key"},
	{"after array element", "after array element"},
	{"after top-level value", "after top-level value"},
}

// syntaxContext is the fixed words of syntaxContexts for place, or a
// general phrase for a place it does not know.
func syntaxContext(place string) string {
	for _, c := range syntaxContexts {
		if strings.HasPrefix(place, c.prefix) {
			return c.words
		}
	}
	return "where JSON does not allow it"
}

// charKind names the character of quoted, a Go character literal, as a
// reason may show it: JSON's punctuation and a space as themselves, any
// other character by its kind.
func charKind(quoted string) string {
	s, err := strconv.Unquote(quoted)
	if err != nil || s == "" {
		return "(a character)"
	}
	r, _ := utf8.DecodeRuneInString(s)
	switch {
	case strings.ContainsRune(` {}[]:,"'\`, r): // a space: also the end of the input
		return quoted
	case unicode.IsLetter(r):
		return "(a letter)"
	case unicode.IsDigit(r):
		return "(a digit)"
	case r < ' ' || r == 0x7f:
		return "(a control character)"
	}
	return "(a character)"
}

// jsonFault says what is wrong with data, which json.Unmarshal refused
// with err, without quoting it: the field of a value of the wrong type, or
// where the syntax breaks (jsonObjectFault).
func jsonFault(data []byte, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field + ": must be a " + te.Type.String()
	}
	if fault := jsonObjectFault(data); fault != nil {
		return fault.Error()
	}
	return "its fields do not decode"
}
