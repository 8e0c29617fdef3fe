package ivms101

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks, for any input: Parse never panics and fails only with
// ErrMalformed, and only for what is not a JSON object; what MarshalJSON
// writes parses to the same Payload and is written the same again;
// Validate never panics; and the fmt and slog forms of the payload hold
// no value of the input but codes and countries.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `null`, `[]`, `"x"`, `{`, `{}`, `{"originator":null}`,
		`{"Originator":{"OriginatorPerson":[{"naturalPerson":{"name":[{"nameIdentifier":[{"primaryIdentifier":"A",` +
			`"naturalPersonNameIdentifierType":"LEGL"}]},{"nameIdentifier":"B"}]}}],"accountNumber":"0xabc"}}`,
		`{"originator":{"originatorPersons":5,"originatorPerson":[{"legalPerson":{"customerNumber":"A","customerIdentification":"B"}}]}}`,
		`{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"V","legalPersonNameIdentifierType":"LEGL"}]}}}}`,
		`{"transferPath":{"transferPath":[{"sequence":"0"},{"sequence":0,"Sequence":"x"},{"sequence":-3}]}}`,
		`{"payloadMetadata":{"payloadVersion":"101.2023","transliterationMethod":"hani"}}`,
		`{"a<b>&\u2028":"<script>","originator":{"accountNumber":["\ud83d\ude00",""]}}`,
		"{\"k\xff\":\"v\xfe\"}",
		// Codes that are not codes: the sender's free text.
		`{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Vasquez",` +
			`"nameIdentifierType":"Ingrid"}]},"countryOfResidence":"Norway","geographicAddress":[{"addressType":"Storgata",` +
			`"country":"Tromso"}]}},{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonNameIdentifierType":"Kryptobors"}]},` +
			`"nationalIdentification":{"nationalIdentifierType":"P4411907","countryOfIssue":"Lappland"}}}]},` +
			`"payloadMetadata":{"transliterationMethod":["cyrillic"],"payloadVersion":"2023.101"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("an error that is not ErrMalformed: %v", err)
			}
			if t := bytes.TrimLeft(in, " \t\r\n"); json.Valid(in) && t[0] == '{' {
				panic("a JSON object was refused")
			}
			return
		}
		out, err := p.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("parsing what MarshalJSON wrote: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(p, again) {
			t.Fatalf("not the same payload again:\n%s", out)
		}
		viaJSON, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("json.Marshal: %v", err)
		}
		if again, err = Parse(viaJSON); err != nil || !reflect.DeepEqual(p, again) {
			t.Fatalf("not the same payload again through json.Marshal (%v):\n%s", err, viaJSON)
		}
		if out2, _ := again.MarshalJSON(); !bytes.Equal(out, out2) {
			t.Fatalf("written differently again:\n%s\n%s", out, out2)
		}
		_ = p.Validate()

		for _, verb := range verbs {
			if err := onlyCodes(in, fmt.Sprintf(verb, p), formVocabulary()); err != nil {
				t.Fatalf("%s: %v", verb, err)
			}
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime})).Info("m", "p", p)
		slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime})).Info("m", "p", p)
		if err := onlyCodes(in, buf.String(), logVocabulary()); err != nil {
			t.Fatalf("slog: %v", err)
		}
	})
}

// assertOnlyCodes asserts that out, a redacted form of a payload parsed
// from in, holds no value of in but codes and countries.
func assertOnlyCodes(t *testing.T, in []byte, out string) {
	t.Helper()
	assert := onlyCodes(in, out, formVocabulary())
	if assert != nil {
		t.Error(assert)
	}
}

// separators split a redacted form into words.
const separators = "{}[]: |\"=,.\n"

// onlyCodes checks that out, a redacted form of a payload parsed from in,
// is made only of the redacted form's own words (vocab), numbers and the
// codes of the code lists (countries included), and so that no string
// value of in of 4 or more characters appears in it, unless it is a code
// or made only of parts of those words.
func onlyCodes(in []byte, out string, vocab map[string]bool) error {
	allowed := func(w string) bool { return w == "" || vocab[w] || isCodeWord(w) || isNumber(w) }
	words := strings.FieldsFunc(out, func(r rune) bool { return strings.ContainsRune(separators, r) })
	for _, w := range words {
		// "101.2023" is split at its dot.
		if !allowed(w) {
			return fmt.Errorf("a word that is not the form's own nor a code: %q in\n%s", w, out)
		}
	}
	for _, s := range stringValues(in) {
		if utf8.RuneCountInString(s) < 4 || isCodeWord(s) || !strings.Contains(out, s) {
			continue
		}
		for _, part := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(separators, r) }) {
			if !partOfAllowed(part, words, allowed) {
				return fmt.Errorf("a value of the input is shown: %q in\n%s", s, out)
			}
		}
	}
	return nil
}

// partOfAllowed reports whether part is a part of one of words that is
// allowed.
func partOfAllowed(part string, words []string, allowed func(string) bool) bool {
	for _, w := range words {
		if strings.Contains(w, part) && allowed(w) {
			return true
		}
	}
	return false
}

// isCodeWord reports whether w is a code of one of the code lists, a
// country, or a part of a payload version.
func isCodeWord(w string) bool {
	return NaturalPersonNameType(w).Valid() || LegalPersonNameType(w).Valid() || AddressType(w).Valid() ||
		NationalIdentifierType(w).Valid() || ValidTransliterationMethod(w) || Version(w).Valid() ||
		validCountryCode(w) || w == "2023"
}

func isNumber(w string) bool {
	_, err := strconv.Atoi(w)
	return err == nil
}

// stringValues returns every string value of the JSON in (not the member
// names).
func stringValues(in []byte) []string {
	var v any
	if json.Unmarshal(in, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// formVocabulary returns the words of the fmt form: the Go names of the
// types and their fields, and its own words.
var formVocabulary = sync.OnceValue(func() map[string]bool {
	vocab := map[string]bool{"Version": true, "Extra": true, "redacted": true, "member": true, "members": true}
	for t, s := range specs {
		vocab[s.goName] = true
		vocab["*"+s.goName] = true
		for _, part := range strings.Split(s.goName, ".") {
			vocab[part] = true
			vocab["*"+part] = true
		}
		for _, m := range s.members {
			vocab[t.Field(m.index).Name] = true
		}
	}
	return vocab
})

// logVocabulary returns the words of the slog forms: the JSON names of the
// members, and the handlers' and the form's own words.
var logVocabulary = sync.OnceValue(func() map[string]bool {
	vocab := map[string]bool{"version": true, "extra": true, "redacted": true, "level": true, "INFO": true, "msg": true,
		"m": true, "p": true}
	for _, s := range specs {
		for _, m := range s.members {
			vocab[m.name] = true
			if m.name23 != "" {
				vocab[m.name23] = true
			}
		}
	}
	return vocab
})
