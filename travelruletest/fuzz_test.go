package travelruletest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/internal/oneline"
	"github.com/vaspkit/travelrule/travelruletest"
)

// FuzzInitiate posts arbitrary bodies to the sandbox's initiation, as a
// client in another language could through "travelrule sandbox", and
// checks that the sandbox answers with a documented status and a JSON body,
// and that it accepts only what its documented rule does (A6, A17): what the
// SDK's Validate accepts, but for the amount's form, which it judges by its
// length alone (the amount's characters are judged as every field's).
func FuzzInitiate(f *testing.F) {
	for _, s := range []string{
		`{"asset":"BTC","amount":"0.5","callback":"https://a.example/cb","originator":{"personType":"natural","firstName":"Ada","lastName":"L","dateOfBirth":"1815-12-10"},"beneficiary":{"personType":"natural","firstName":"Alan","lastName":"T","dateOfBirth":"1912-06-23"}}`,
		`{"asset":"BTC","amount":0.5,"callback":"https://a.example/cb","originator":{"personType":"natural","firstName":"Ada","lastName":"L","dateOfBirth":"1815-12-10","buildingNumber":12},"beneficiary":[]}`,
		`{"asset":"BTC","amount":"1\u0000","callback":"https://a.example/cb","originator":{"personType":"natural","firstName":"Ada","lastName":"L","dateOfBirth":"1815-12-10"},"beneficiary":{"personType":"natural","firstName":"Alan","lastName":"T","dateOfBirth":"1912-06-23"}}`,
		`{"travelAddress":"taUnknown","asset":"ETH","amount":"1","callback":"http://127.0.0.1/x","originator":null,"beneficiary":{}}`,
		`{"travelAddress":"","email":"","txId":null}`, `[]`, `null`, `"x"`, `{`, ``, `{"asset":"` + "\u00e4\u00f6" + `"}`,
	} {
		f.Add([]byte(s))
	}
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	defer srv.Close()
	tok, err := srv.TokenSource().Token()
	if err != nil {
		f.Fatal(err)
	}
	hc := &http.Client{}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/transfers/initiate", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !json.Valid(answer) {
			t.Fatalf("status %d with a body that is not JSON: %q", resp.StatusCode, answer)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			var tr travelrule.TransferRequest
			if err := json.Unmarshal(body, &tr); err != nil {
				t.Fatalf("accepted a body the SDK cannot decode: %v", err)
			}
			if reason := oneline.TextFault(tr.Amount); reason != "" || utf8.RuneCountInString(tr.Amount) > 50 {
				t.Fatalf("accepted an amount that is not plain text of at most 50 characters: %s", reason)
			}
			var ve *travelrule.ValidationError
			if errors.As(tr.Validate(), &ve) {
				for _, f := range ve.Fields {
					if f.Field != "amount" { // the amount's form, which the sandbox does not judge
						t.Fatalf("accepted a request the SDK's validation refuses: %v", ve)
					}
				}
			}
		case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("undocumented status %d: %s", resp.StatusCode, answer)
		}
	})
}
