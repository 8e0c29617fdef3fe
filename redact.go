package travelrule

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/search"
	"golang.org/x/text/unicode/norm"
)

// What may appear in an error string. The server's bytes and the request's
// personal values never do: error strings end up in logs, alerts and
// tickets. Error strings carry the operation, the status, a server error
// code of a strict identifier shape that contains none of the request's
// personal values, a request id of bounded length and charset, the JSON
// paths of the request's fields, and the client's own words. Everything
// else stays in the error's fields.

const (
	maxMessage   = 200 // runes of a server message kept in APIError.Message
	maxCode      = 64  // bytes of a server error code shown
	maxRequestID = 128 // bytes of a request id shown
)

// looseMatch finds a personal value in server text whatever its case, width
// or diacritics: "QUARTERFIELD", "Müller" and "MULLER" are the same name.
var looseMatch = search.New(language.Und, search.Loose)

// significant reports whether a personal value is long enough to look for:
// a one-character value would match nearly any text.
func significant(v string) bool { return utf8.RuneCountInString(v) >= 2 }

// containsAny reports whether s, or what it decodes to as hex or base64,
// contains one of values: compared loosely, and again with both reduced to
// their letters and digits, with umlauts written out and accents dropped,
// so that a value reshaped into an identifier ("unknown_Anna_Maria",
// "MUELLER" for "Müller", an IBAN without its spaces) is still found.
func containsAny(s string, values []string) bool {
	if s == "" {
		return false
	}
	forms := append([]string{s}, decodings(s)...)
	squashed := make([][2]string, len(forms))
	for i, f := range forms {
		squashed[i] = squashes(f)
	}
	for _, v := range values {
		if !significant(v) {
			continue
		}
		vs := squashes(v)
		for i, f := range forms {
			if start, _ := looseMatch.IndexString(f, v); start >= 0 {
				return true
			}
			for _, fs := range squashed[i] {
				for _, v := range vs {
					if utf8.RuneCountInString(v) >= 2 && strings.Contains(fs, v) {
						return true
					}
				}
			}
		}
	}
	return false
}

// decodings returns what s decodes to as hex or as base64 (any alphabet,
// with or without padding), when it does and the result is text.
func decodings(s string) []string {
	var out []string
	add := func(b []byte, err error) {
		if err == nil && len(b) > 0 && utf8.Valid(b) {
			out = append(out, string(b))
		}
	}
	if len(s) >= 4 && len(s)%2 == 0 {
		add(hex.DecodeString(s))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		add(enc.DecodeString(s))
	}
	return out
}

// squashes returns s lower-cased and reduced to its letters and digits,
// once with umlauts and ligatures written out ("müller" → "mueller") and
// once with accents dropped ("muller").
func squashes(s string) [2]string {
	var out, bare strings.Builder
	for _, r := range norm.NFC.String(s) {
		if spelled, ok := spelledOut[unicode.ToLower(r)]; ok {
			out.WriteString(spelled)
		} else if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out.WriteRune(unicode.ToLower(r))
		}
	}
	for _, r := range norm.NFD.String(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			bare.WriteRune(unicode.ToLower(r))
		}
	}
	return [2]string{out.String(), bare.String()}
}

// spelledOut are the letters that passports and bank systems write out
// (ICAO 9303) where ASCII has none.
var spelledOut = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "oe", 'å': "aa", 'þ': "th", 'ð': "d",
}

// scrub shortens a server message, drops control characters and replaces
// every personal value of the request it contains, compared loosely; a
// message that still holds one in another shape (see containsAny) is
// replaced whole.
func scrub(msg string, pii []string) string {
	if msg == "" {
		return ""
	}
	// Cut to what can matter before searching (the body may be a
	// mebibyte), leaving room for a value that starts within the kept part
	// to be found whole: no value is cut in two and half kept.
	longest := 0
	for _, v := range pii {
		longest = max(longest, utf8.RuneCountInString(v))
	}
	msg = cutRunes(msg, maxMessage+longest)
	for _, v := range pii {
		if !significant(v) {
			continue
		}
		var b strings.Builder
		rest := msg
		for {
			start, end := looseMatch.IndexString(rest, v)
			if start < 0 {
				break
			}
			b.WriteString(rest[:start])
			b.WriteString(redacted)
			rest = rest[end:]
		}
		if b.Len() > 0 {
			b.WriteString(rest)
			msg = b.String()
		}
	}
	if containsAny(msg, pii) {
		// A value reshaped where no span matches it loosely ("OEDEGAARD
		// MUELLER", "ab-123-456", hex or base64 of it): the text goes.
		return redacted
	}
	msg = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, msg)
	if utf8.RuneCountInString(msg) > maxMessage {
		msg = cutRunes(msg, maxMessage) + "…"
	}
	return msg
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// isIdentifier reports whether s is a short machine-made word (an error code
// or a JSON path) of at most max bytes.
func isIdentifier(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

// showCode reports whether a server error code may appear in an error
// string: a code of the service's documented vocabulary or of a code's
// shape (see codeShaped), that contains none of the request's personal
// values. A server may put any text where a code goes ({"error":"bc1q…"}
// echoing a wallet address, a last name, a national id), and a call such
// as ResolveInquiry sends no personal value to look for, so the shape is
// what lets a code through, never the absence of a known value.
func showCode(code string, pii []string) bool {
	return (documentedCode(code) || codeShaped(code)) && !containsAny(code, pii)
}

// documentedCode reports whether code is one of the codes the service's
// error reference lists, in any case.
func documentedCode(code string) bool {
	_, ok := codeSentinels[ErrorCode(strings.ToUpper(code))]
	return ok
}

// The bounds of a code's shape: a word, a word of letters and digits, and
// the digits of a whole code. Wallet addresses, IBANs, LEIs, national ids,
// dates and phone numbers exceed one of them.
const (
	maxCodeWord   = 24
	maxMixedWord  = 6
	maxCodeDigits = 4
)

// codeShaped reports whether s has the shape of a machine-made error code:
// at most maxCode bytes, two or more words of ASCII letters and digits
// joined by '_', the first starting with a letter, all letters of one
// case, each word at most maxCodeWord bytes (maxMixedWord when it mixes
// letters and digits), at most maxCodeDigits digits in all
// ("VALIDATION_ERROR", "bad_request", "ERR_404", "V2_API"). Names, wallet
// addresses, national ids, dates and e-mail addresses do not have it: a
// one-word code the service does not document ("E42", "Smith", "bc1q…")
// is withheld. A name in one case joined to a code ("INVALID_ADA_LOVELACE")
// has the shape; the values of the request are looked for too (showCode),
// but a call that sends none (ResolveInquiry) cannot tell it from a code.
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
			case c >= 'A' && c <= 'Z':
				upper, letters = true, true
			case c >= 'a' && c <= 'z':
				lower, letters = true, true
			case c >= '0' && c <= '9':
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

// holdsTokenPart reports whether s holds keyPart or more consecutive
// characters of one of tokens (the parts of the bearer tokens a call sent,
// see tokenParts): the window check holdsKeyPart makes for an API key, so
// that a server echoing a piece of a token's signature in a request id or
// a code does not get it shown either.
func holdsTokenPart(s string, tokens []string) bool {
	for _, tok := range tokens {
		if holdsKeyPart(s, tok) {
			return true
		}
	}
	return false
}

// showRequestID reports whether a request id may appear in an error string:
// at most maxRequestID bytes of the characters request and trace ids use,
// and none of the request's personal values.
func showRequestID(id string, pii []string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || strings.IndexByte("-_.:;=+/", c) >= 0) {
			return false
		}
	}
	return !containsAny(id, pii)
}

// requestPaths is the set of JSON paths of the requests' fields
// ("asset", "originator.firstName", "approved"): a server's field path is
// shown in an error string only if it is one of them.
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
	walk("", reflect.TypeFor[TransferRequest]())
	walk("", reflect.TypeFor[InquiryResolution]())
	walk("", reflect.TypeFor[TravelAddressRequest]())
	walk("", reflect.TypeFor[travelAddressBody]())
	walk("", reflect.TypeFor[txIDBody]())
	return paths
})

// transportText describes a failure below HTTP in the client's own words.
// The transports' own texts can quote what the server sent (a malformed
// status line or Location header, the debug data of an HTTP/2 GOAWAY, the
// names in a certificate), so they are never used; the error itself stays
// reachable with errors.Is and errors.As.
func transportText(err error) string {
	var (
		te      *tokenError
		dnsErr  *net.DNSError
		opErr   *net.OpError
		alert   tls.AlertError
		recErr  tls.RecordHeaderError
		errno   syscall.Errno
		timeout interface{ Timeout() bool }
	)
	switch {
	case errors.As(err, &te):
		return te.Error()
	case errors.Is(err, context.Canceled):
		return "context canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context deadline exceeded or attempt timed out"
	case errors.Is(err, errNotReplayed):
		return errNotReplayed.Error()
	case errors.Is(err, errTooLarge):
		return errTooLarge.Error()
	case isCertError(err):
		return "the server's certificate is not trusted"
	case errors.As(err, &recErr):
		return "TLS handshake failed: the server does not speak TLS"
	case errors.As(err, &alert):
		return "TLS handshake failed: " + alert.Error()
	case strings.HasPrefix(innermost(err).Error(), "tls: "):
		// Not its text: crypto/tls appends x509's parse errors, which quote
		// the certificate, and a proxy's refusal can spell anything.
		return "TLS handshake failed"
	case errors.As(err, &dnsErr):
		return "DNS lookup failed"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		if errors.As(err, &errno) {
			return "connection failed: " + errno.Error()
		}
		return "connection failed"
	case errors.As(err, &errno):
		return "connection failed: " + errno.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before the answer was complete"
	case errors.As(err, &timeout) && timeout.Timeout():
		return "timed out"
	}
	return "connection or protocol failure"
}

// innermost follows err's chain of single causes to its end.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// The fmt and slog forms of the types that hold server text: a value the
// server chose is shown only when it has an identifier's shape, and bodies
// only by their size.

// goSyntaxName writes a type's name before its redacted fields under %#v.
func goSyntaxName(f fmt.State, verb rune, name string) {
	if verb == 'v' && f.Flag('#') {
		io.WriteString(f, name)
	}
}

// shownID returns s if it is a short identifier, or "[redacted]".
func shownID(s string) string {
	if s == "" || isIdentifier(s, maxRequestID) {
		return s
	}
	return redacted
}

// shownRequestID returns a request id if it has a request id's shape, or
// "[redacted]".
func shownRequestID(s string) string {
	if s == "" || showRequestID(s, nil) {
		return s
	}
	return redacted
}

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
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// isDecimal reports whether s is an unsigned decimal number such as
// "0.25".
func isDecimal(s string) bool {
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
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
