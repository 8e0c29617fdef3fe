package travelrule

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// What a printed form (an error string, fmt, slog, JSON, an observer, the
// journal) may show of an answer: the SDK's own words and three server
// identifiers, each in its shape (here) and echoing none of the call's
// secrets (secrets.go). The server's free text is never shown
// (docs/redaction.md).

const (
	maxCode      = 64  // bytes of a server error code shown
	maxRequestID = 128 // bytes of a request id or transfer id shown
)

// isIdentifier reports whether s is a short machine-made word (a code, a
// transfer id or a JSON path) of at most max bytes of [A-Za-z0-9_.:[\]-].
func isIdentifier(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && strings.IndexByte("_.-:[]", c) < 0 {
			return false
		}
	}
	return true
}

// showCode reports whether a server error code has a shape that may be
// shown: a documented code, or one of a code's shape (codeShaped). Whether
// it echoes a secret of the call is asked apart (secrets.echoes).
func showCode(code string) bool { return documentedCode(code) || codeShaped(code) }

// documentedCode reports whether code is one of the codes the service's
// error reference lists, in any case.
func documentedCode(code string) bool {
	_, ok := codeSentinels[ErrorCode(strings.ToUpper(code))]
	return ok
}

// The bounds of a code's shape: a word, a word of letters and digits, and
// the digits of a whole code.
const (
	maxCodeWord   = 24
	maxMixedWord  = 6
	maxCodeDigits = 4
)

// codeShaped reports whether s has the shape of a machine-made error code:
// at most maxCode bytes, two or more words of ASCII letters and digits
// joined by '_', the first starting with a letter, all letters of one
// case, each word at most maxCodeWord bytes (maxMixedWord when it mixes
// letters and digits), at most maxCodeDigits digits ("VALIDATION_ERROR",
// "bad_request", "ERR_404"). Names, wallet addresses, national ids and
// dates do not have it.
func codeShaped(s string) bool {
	if len(s) > maxCode {
		return false
	}
	words, digits, upper, lower := 0, 0, false, false
	for w := range strings.SplitSeq(s, "_") {
		if w == "" || len(w) > maxCodeWord || words == 0 && !isASCIILetter(w[0]) {
			return false
		}
		letters := false
		for i := 0; i < len(w); i++ {
			switch c := w[i]; {
			case isUpper(c):
				upper, letters = true, true
			case isLower(c):
				lower, letters = true, true
			case isDigit(c):
				digits++
			default:
				return false
			}
		}
		if letters && len(w) > maxMixedWord && strings.ContainsAny(w, "0123456789") {
			return false
		}
		words++
	}
	return words >= 2 && upper != lower && digits <= maxCodeDigits
}

// showRequestID reports whether a request id has a request id's shape: at
// most maxRequestID bytes of letters, digits and "-_.:;=+/".
func showRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && strings.IndexByte("-_.:;=+/", c) < 0 {
			return false
		}
	}
	return true
}

// requestPaths is the set of JSON paths of the requests' fields
// ("asset", "originator.firstName", "approved"): a server's field path is
// shown only if it is one of them.
var requestPaths = sync.OnceValue(func() map[string]bool {
	paths := map[string]bool{}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			paths[prefix+name] = true
			if ft := t.Field(i).Type; ft.Kind() == reflect.Struct {
				walk(prefix+name+".", ft)
			}
		}
	}
	for _, t := range []reflect.Type{reflect.TypeFor[TransferRequest](), reflect.TypeFor[InquiryResolution](),
		reflect.TypeFor[TravelAddressRequest](), reflect.TypeFor[travelAddressBody](), reflect.TypeFor[txIDBody]()} {
		walk("", t)
	}
	return paths
})

// goSyntaxName writes a type's name before its redacted fields under %#v.
func goSyntaxName(f fmt.State, verb rune, name string) {
	if verb == 'v' && f.Flag('#') {
		io.WriteString(f, name)
	}
}

// shownID returns s if it is a short identifier, or "[redacted]".
func shownID(s string) string { return shownIf(s, isIdentifier(s, maxRequestID)) }

// shownRequestID returns s if it has a request id's shape, or "[redacted]".
func shownRequestID(s string) string { return shownIf(s, showRequestID(s)) }

// shownIf returns s if ok, or "[redacted]".
func shownIf(s string, ok bool) string {
	if s == "" || ok {
		return s
	}
	return redacted
}

// isTicker reports whether s looks like an asset's ticker: 1 to 20
// capital letters, digits, '.', '-' or '_'.
func isTicker(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isUpper(c) && !isDigit(c) && strings.IndexByte(".-_", c) < 0 {
			return false
		}
	}
	return true
}

// isDecimal reports whether s is an unsigned decimal number such as "0.25".
func isDecimal(s string) bool {
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
		case c == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return s != "" && len(s) <= 50
}

// size describes a body by its length only.
func size(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return "[" + strconv.Itoa(len(b)) + " bytes]"
}

// logJSON is the JSON form of a type's slog form v: its attributes as an
// object, so that a result's MarshalJSON shows what LogValue shows and no
// more (not its Raw body).
func logJSON(v slog.Value) ([]byte, error) { return json.Marshal(logAny(v)) }

func logAny(v slog.Value) any {
	v = v.Resolve()
	if v.Kind() != slog.KindGroup {
		return v.Any()
	}
	m := make(map[string]any, len(v.Group()))
	for _, a := range v.Group() {
		m[a.Key] = logAny(a.Value)
	}
	return m
}
