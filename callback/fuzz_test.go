package callback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// FuzzHandler drives the handler with any body, signed or not (with
// Standard Webhooks, and with the live service's x-data-integrity), checks
// its contract: it never panics; an unsigned or oversized body, or one that
// ParseCallback refuses (not a JSON object, or a name given twice in one
// object: its own fuzz test checks which), never reaches the function and
// is never answered 2xx; a good delivery reaches the function once, with
// Raw equal to the body, unless the function failed; error answers never
// echo the body.
// Seeds are in testdata/fuzz/FuzzHandler/.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		statusBody, `{"transferId":1,"status":"received"}`, `{"approved":{"address":"a"}}`, `{"rejected":null}`,
		`{"transferId":"t","status":"inquiry","originator":{"firstName":"A"}}`, `{}`, `[]`, `null`, ``, `{"a":`, "\xff",
	} {
		f.Add([]byte(s), true, false, "msg_1")
		f.Add([]byte(s), false, false, "msg_1")
		f.Add([]byte(s), true, true, "")
	}
	const limit = 4096
	secret := []byte("fuzz-secret-0123456789")

	f.Fuzz(func(t *testing.T, body []byte, sign, fail bool, id string) {
		var calls int
		var got *travelrule.Callback
		fn := func(_ context.Context, cb *travelrule.Callback) error {
			calls++
			got = cb
			if fail {
				return errors.New("integrator failure")
			}
			return nil
		}
		signed := callback.NewHandler(fn, callback.WithMaxBodyBytes(limit),
			callback.WithVerifier(&callback.WebhookVerifier{Secrets: [][]byte{secret}, Now: fixedClock}))
		open := callback.NewHandler(fn, callback.WithMaxBodyBytes(limit), noAuth)
		dv, err := callback.NewDataIntegrityVerifier(string(secret))
		if err != nil {
			t.Fatal(err)
		}
		live := callback.NewHandler(fn, callback.WithMaxBodyBytes(limit), callback.WithVerifier(dv))
		if signed.Err() != nil || open.Err() != nil || live.Err() != nil {
			t.Fatal(signed.Err(), open.Err(), live.Err())
		}
		deliver := func(h http.Handler, scheme string) int {
			r := httptest.NewRequest(http.MethodPost, "/cb", bytes.NewReader(body))
			switch scheme {
			case "webhook":
				setSignatureHeaders(r.Header, secret, id, fixedNow, body)
			case "live":
				r.Header.Set(callback.HeaderDataIntegrity, callback.SignDataIntegrity(secret, body))
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			code := w.Code
			if code != http.StatusNoContent && w.Body.String() != http.StatusText(code)+"\n" {
				t.Fatalf("answer %d with body %q", code, w.Body.String())
			}
			return code
		}

		var obj map[string]json.RawMessage
		_, parseErr := travelrule.ParseCallback(body)
		wellFormed := len(body) <= limit && json.Unmarshal(body, &obj) == nil && obj != nil && parseErr == nil
		authentic := sign && id != ""

		scheme := func(name string) string {
			if sign {
				return name
			}
			return ""
		}
		for _, h := range []struct {
			handler http.Handler
			ok      bool
			sign    string
		}{{signed, authentic, scheme("webhook")}, {open, true, ""}, {live, sign, scheme("live")}} {
			calls, got = 0, nil
			code := deliver(h.handler, h.sign)
			switch {
			case !h.ok:
				if code != http.StatusUnauthorized && code != http.StatusRequestEntityTooLarge {
					t.Fatalf("unauthenticated delivery answered %d", code)
				}
			case len(body) > limit:
				if code != http.StatusRequestEntityTooLarge {
					t.Fatalf("oversized body answered %d", code)
				}
			case !wellFormed:
				if code != http.StatusBadRequest {
					t.Fatalf("malformed body answered %d", code)
				}
			case fail:
				if code != http.StatusInternalServerError {
					t.Fatalf("failed function answered %d", code)
				}
			default:
				if code != http.StatusNoContent {
					t.Fatalf("good delivery answered %d", code)
				}
			}
			if !h.ok || !wellFormed {
				if calls != 0 {
					t.Fatal("the function saw a refused delivery")
				}
				continue
			}
			if calls != 1 || !bytes.Equal(got.Raw, body) {
				t.Fatalf("calls = %d; Raw equal: %v", calls, got != nil && bytes.Equal(got.Raw, body))
			}
			// The redelivery reaches the function again only if it failed.
			code = deliver(h.handler, h.sign)
			want, wantCalls := http.StatusNoContent, 1
			if fail {
				want, wantCalls = http.StatusInternalServerError, 2
			}
			if code != want || calls != wantCalls {
				t.Fatalf("redelivery answered %d after %d calls", code, calls)
			}
		}
	})
}
