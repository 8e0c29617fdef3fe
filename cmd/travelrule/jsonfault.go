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
			pos-- // the offending byte: the error comes after reading it
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

// syntaxReason is the text of a syntax error of encoding/json, the
// character it quotes named by its kind unless it is JSON's punctuation.
func syntaxReason(msg string) string {
	m := invalidCharRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	return "invalid character " + charKind(m[1]) + " " + m[2]
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
