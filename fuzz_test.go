package travelrule

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Fuzz targets over everything the client parses from outside: answer
// bodies, error bodies, request fields and callback URLs. Seed corpora are
// in testdata/fuzz/<target>/; .ci/run runs each target briefly.

func FuzzParseAnswers(f *testing.F) {
	for _, s := range []string{
		`{"status":"succes"}`, `{"status":"success","transferId":"t-1"}`, `{"status":"succes","transferId":12}`,
		`{"status":true}`, `{"status":"false"}`, `{"error":"bad_request","message":"Alice is invalid","fields":[{"field":"originator.firstName","reason":"Alice"}]}`,
		`{"error":{"code":"x","message":"y"}}`, `{"detail":"z"}`, `[]`,
		`{"status":true,"data":{"transferId":"019ac452"}}`, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"Alice"}]}`,
		`{"status":"SUCCESS","data":"x"}`, `{"errors":"x","data":[1]}`, `null`, `"`, ``, "{\"message\":\"a\x00b\"}",
	} {
		f.Add([]byte(s), 400)
	}
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		word, transferID, o := parseInitiateAnswer(body)
		if o == outcomeSuccess {
			if word != "true" && word != "succes" && word != "success" {
				t.Fatalf("accepted status %q", word)
			}
		} else if word != "" || (transferID != "" && o != outcomeOther) {
			// A transferId comes back with an answer not understood, for
			// the OutcomeUnknownError; never with a refusal.
			t.Fatalf("values returned with outcome %d", o)
		}
		_ = parseInquiryAnswer(body)

		if status < 100 || status > 999 {
			status = 400
		}
		const secret = "Alice Example"
		req := &TransferRequest{Originator: Party{FirstName: secret}}
		e := newAPIError("InitiateTransfer", status, http.Header{}, body, newSecrets(req.appendPII(nil), nil))
		msg := e.Error()
		for _, r := range msg {
			if r < ' ' || r == 0x7f {
				t.Fatalf("control character in error string %q", msg)
			}
		}
		js, _ := e.MarshalJSON()
		printed := []string{msg, fmt.Sprintf("%v %+v %#v %s", e, e, e, js)}
		for _, fe := range e.Fields {
			fj, _ := fe.MarshalJSON()
			printed = append(printed, fe.Error(), fmt.Sprintf("%v %+v %#v %s", fe, fe, fe, fj))
		}
		for _, out := range printed {
			if strings.Contains(out, secret) {
				t.Fatalf("personal value leaked: %q", out)
			}
		}
	})
}

func FuzzValidate(f *testing.F) {
	f.Add("BTC", "0.5", "https://a.example/cb", "DE", "Ada", "ta1", "e@x", "1984-02-29")
	f.Add("", "", "", "", "", "", "", "")
	f.Add(strings.Repeat("Ä", 21), strings.Repeat("9", 51), "ftp://x", "ÄÖ", "\x00", strings.Repeat("t", 256), "\xff", "x")
	f.Add("ETH", "1", "HTTPS://[::1]:80/x?y#z", "de", "美咲", "", "", "")
	f.Fuzz(func(t *testing.T, asset, amount, callback, country, name, travelAddress, email, dob string) {
		r := &TransferRequest{
			TravelAddress: travelAddress, Email: email, Asset: asset, Amount: amount, Callback: callback,
			Originator:  Party{PersonType: "natural", FirstName: name, LastName: name, DateOfBirth: dob, Country: country},
			Beneficiary: Party{PersonType: name, FirstName: "B", LastName: "B", DateOfBirth: "x", Country: country},
		}
		err := r.Validate()
		strictErr := r.ValidateStrict()
		if err != nil && strictErr == nil {
			t.Fatal("strict validation accepted what plain validation refused")
		}
		if strictErr == nil {
			if p, _ := r.IVMS101(); p.Validate() != nil {
				t.Fatalf("strict validation accepted a request whose IVMS101 is invalid: %v", p.Validate())
			}
		}
		if err != nil {
			ve, ok := err.(*ValidationError)
			if !ok || len(ve.Fields) == 0 {
				t.Fatalf("not a ValidationError with fields: %v", err)
			}
			return
		}
		// Independently check what Validate promised.
		n := utf8.RuneCountInString
		switch {
		case asset == "" || amount == "" || callback == "" || name == "" || dob == "":
			t.Fatal("accepted a missing required field")
		case n(asset) > 20, n(amount) > 50, n(callback) > 255, n(travelAddress) > 255, n(email) > 255:
			t.Fatal("accepted a value beyond its bound")
		case country != "" && (len(country) != 2 || !isASCIILetter(country[0]) || !isASCIILetter(country[1])):
			t.Fatal("accepted a country that is not two letters")
		}
		for _, v := range []string{asset, amount, callback, name, travelAddress, email, dob} {
			if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) || strings.ContainsAny(v, "\u2028\u2029\u202e") {
				t.Fatal("accepted text that is not UTF-8 or holds a control character")
			}
		}
		u, perr := url.Parse(callback)
		if perr == nil && (u.Host == "" || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"))) {
			t.Fatalf("accepted callback %q that is not an absolute http(s) URL", callback)
		}
	})
}

func FuzzCallbackURL(f *testing.F) {
	f.Add("https://vasp.example/cb", "pay-1", []byte("0123456789abcdef"))
	f.Add("https://vasp.example/cb?tenant=7", "x", []byte("0123456789abcdef0123"))
	f.Add("http://127.0.0.1:8080/cb?", "a.b~c_d-e", []byte("kkkkkkkkkkkkkkkkkkkkkkk"))
	f.Add("https://vasp.example/cb?tr_ref=a&tr_tag=b", "pay", []byte("short"))
	f.Fuzz(func(t *testing.T, base, ref string, key []byte) {
		if u, err := url.Parse(base); err == nil {
			_, _ = VerifyCallbackURL(u, key) // never panics
		}
		_ = CallbackRef(base)
		out, err := NewCallbackURL(base, ref, key)
		if err != nil {
			return
		}
		if utf8.RuneCountInString(out) > 255 {
			t.Fatalf("callback URL longer than 255 characters: %d", len(out))
		}
		if got := CallbackRef(out); got != ref {
			t.Fatalf("CallbackRef = %q, want %q", got, ref)
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("made an unparseable URL %q: %v", out, err)
		}
		got, err := VerifyCallbackURL(u, key)
		if err != nil || got != ref {
			t.Fatalf("VerifyCallbackURL(%q) = %q, %v", out, got, err)
		}
		other := append([]byte("x"), key...)
		if _, err := VerifyCallbackURL(u, other); err == nil {
			t.Fatal("tag verified under another key")
		}
	})
}
