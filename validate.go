package travelrule

import (
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/vaspkit/travelrule/internal/oneline"

	"github.com/vaspkit/travelrule/ivms101"
)

// The field checks shared by requests and parties. Each appends to a slice of
// faults and allocates nothing while the input is valid, so that validating a
// good request is free (see BenchmarkValidate).

// required appends a fault if v is empty.
func required(errs []FieldError, prefix, field, v string) []FieldError {
	return requiredBy(errs, prefix, field, v, "required")
}

// requiredBy appends a fault if v is empty, with reason saying where the
// requirement comes from.
func requiredBy(errs []FieldError, prefix, field, v, reason string) []FieldError {
	if v == "" {
		return append(errs, FieldError{Field: path(prefix, field), Reason: reason})
	}
	return errs
}

// length appends a fault if v has more than max code points, or fewer than
// min code points while set. Lengths count Unicode code points, as JSON
// Schema's maxLength does, not bytes.
func length(errs []FieldError, field, v string, min, max int) []FieldError {
	if v == "" {
		return errs
	}
	n := len(v)
	if n > max { // only count runes when bytes alone cannot decide
		n = utf8.RuneCountInString(v)
	}
	switch {
	case n > max:
		return append(errs, FieldError{Field: field, Reason: "longer than " + itoa(max) + " characters"})
	case n < min:
		return append(errs, FieldError{Field: field, Reason: "shorter than " + itoa(min) + " characters"})
	}
	return errs
}

// longer reports whether v has more than max code points. It counts them
// only when its bytes alone cannot decide.
func longer(v string, max int) bool {
	return len(v) > max && utf8.RuneCountInString(v) > max
}

// maxAmount is the description's bound on amount (part 8).
const maxAmount = 50

// amountDocs is where the amount's form comes from, for the reasons below.
const amountDocs = "the live docs' amount is a decimal string such as 0.05"

// amountForm appends the fault of an amount that is set and within its
// length but written in a form that is never right (see amountFault).
// Validate applies it; the sandbox does not (the live backend checks the
// length alone, docs/assumptions.md A17).
func amountForm(errs []FieldError, amount string) []FieldError {
	if amount == "" || longer(amount, maxAmount) {
		return errs
	}
	if reason := amountFault(amount); reason != "" {
		return append(errs, FieldError{Field: "amount", Reason: reason})
	}
	return errs
}

// amountFault returns why amount is never a right amount, "" when it may
// be: NaN or an infinity (what fmt.Sprint of such a float prints, as
// strconv.ParseFloat reads them), a sign ("-1", "+1", what a negative
// float prints), a number written with an exponent ("1e-07", what
// fmt.Sprint(1e-7) gives), zero ("0", "0.000"), each judged behind any
// white space; or white space at either end. Any other text is the
// service's to judge. The reason names the form, never the value.
func amountFault(s string) string {
	v := strings.TrimSpace(s)
	switch {
	case v == "":
		return "must not be white space: " + amountDocs
	case isNaNOrInf(v):
		return "must be a number, not NaN or an infinity: " + amountDocs
	case v[0] == '+' || v[0] == '-':
		return "must not carry a sign: " + amountDocs
	case isExponentForm(v):
		return "must not be written with an exponent: " + amountDocs + ` (format a float64 with strconv.FormatFloat(v, 'f', -1, 64))`
	case strings.Trim(v, "0.") == "" && strings.Count(v, ".") <= 1 && strings.Contains(v, "0"):
		return "must not be zero: " + amountDocs
	case v != s:
		return "must not have white space at either end: " + amountDocs
	}
	return ""
}

// isNaNOrInf reports whether s is one of the special values
// strconv.ParseFloat reads: NaN, Inf or Infinity, in any case, with an
// optional sign.
func isNaNOrInf(s string) bool {
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	return strings.EqualFold(s, "nan") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity")
}

// isExponentForm reports whether s is a number written with an exponent:
// digits with at most one point, "e" or "E", an optional sign, digits.
func isExponentForm(s string) bool {
	e := strings.IndexAny(s, "eE")
	if e <= 0 || e == len(s)-1 {
		return false
	}
	mantissa, exp := s[:e], s[e+1:]
	if exp[0] == '+' || exp[0] == '-' {
		exp = exp[1:]
	}
	return strings.Trim(mantissa, "0123456789.") == "" && strings.Count(mantissa, ".") <= 1 && mantissa != "." &&
		exp != "" && strings.Trim(exp, "0123456789") == ""
}

// strictAmount appends the fault of an amount that is set and within its
// length (Validate reports the others) but not a positive decimal (see
// isPositiveDecimal), unless amountForm reported it already. The reason
// never repeats the amount.
func strictAmount(errs []FieldError, amount string) []FieldError {
	if amount == "" || longer(amount, maxAmount) || isPositiveDecimal(amount) || amountFault(amount) != "" {
		return errs
	}
	return append(errs, FieldError{Field: "amount", Reason: "must be a positive decimal number in ASCII digits with at most one point, such as 0.05"})
}

// isPositiveDecimal reports whether s is a decimal quantity greater than
// zero as the live docs write one ("a decimal string (e.g. 0.05)"): ASCII
// digits, at most one point with digits on both sides (JSON's and the
// docs' way of writing a fraction, so "1." and ".5" are refused), no sign,
// exponent, white space or group separator, at most 50 characters, and a
// digit other than 0 somewhere.
func isPositiveDecimal(s string) bool {
	return isDecimal(s) && len(s) <= maxAmount && strings.ContainsAny(s, "123456789")
}

// plainText appends the fault of a text field v that is not plain text
// (see oneline.TextFault), naming the field, with its path under prefix.
func plainText(errs []FieldError, prefix, field, v string) []FieldError {
	if reason := oneline.TextFault(v); reason != "" {
		return append(errs, FieldError{Field: path(prefix, field), Reason: reason})
	}
	return errs
}

func path(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func isTwoLetters(s string) bool {
	return len(s) == 2 && isASCIILetter(s[0]) && isASCIILetter(s[1])
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// isISORegion reports whether s is an assigned ISO 3166-1 alpha-2 country
// code, in upper case: package ivms101 keeps the one table of them.
func isISORegion(s string) bool { return ivms101.ValidCountry(s) }

// isISODate reports whether s has the form YYYY-MM-DD with a plausible month
// and day.
func isISODate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	month := int(s[5]-'0')*10 + int(s[6]-'0')
	day := int(s[8]-'0')*10 + int(s[9]-'0')
	return month >= 1 && month <= 12 && day >= 1 && day <= 31
}

// isEmailAddress reports whether s is a bare email address, as
// net/mail reads one: "name@domain", without a display name or angle
// brackets.
func isEmailAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s && strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".")
}

func oneOf(s string, set ...string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// isAbsoluteHTTPURL reports whether s is an absolute http or https URL with a
// host and no white space or control characters. It is deliberately a
// structural check that allocates nothing; the service is the judge of
// anything finer.
func isAbsoluteHTTPURL(s string) bool {
	var rest string
	switch {
	case len(s) > 8 && strings.EqualFold(s[:8], "https://"):
		rest = s[8:]
	case len(s) > 7 && strings.EqualFold(s[:7], "http://"):
		rest = s[7:]
	default:
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	return host != "" && host[0] != ':'
}
