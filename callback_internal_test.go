package travelrule

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cbDecodeCases are bodies on which cbDecode must agree with the reference
// decoder below: member names matched exactly, by case folding (the first
// field wins: "TXID" is txId), through escapes and non-ASCII folds; nulls;
// nesting, white space and literals at the end; and bodies it must refuse
// (see dupNames): repeated members, a case-folded member beside an exact
// one.
var cbDecodeCases = []string{
	`{}`, " \t\r\n{ \t\r\n} ",
	`{"transferId":"6f1c2b9e","status":"approved","txId":"0x5c","timestamp":"2026-11-23T08:00:00Z"}`,
	`{ "transferId" : 12 , "status" : true , "txId" : -1.5e3 , "timestamp" : 1750000000 }`,
	`{"TXID":"a"}`, `{"txid":"b"}`, `{"TxId":"c","txid":"d"}`, `{"STATUS":"x","status":"y"}`,
	`{"ſtatus":"long s"}`, `{"st\u0061tus":"escaped"}`, `{"tr\u0061nsferID":"both"}`, `{"\u017ftatus":"escaped long s"}`,
	`{"status":"a","status":null}`, `{"status":"a","status":{}}`, `{"approved":null}`, `{"txid":null,"canceled":[]}`,
	`{"approved":{"address":"a}\"]{","callback":"https://x/?a=[1]"},"rejected":"r"}`,
	`{"cancelled":{"a":[1,{"b":"}"}]},"x":[[[]]],"canceled":"c"}`,
	`{"status":"es\"caped\\","txId":"\u00e9\ud83d\ude00"}`,
	`{"a":1,"status":"last","b":false}`, `{"status":"inquiry","originator":{"firstName":"A"}}`,
	`{"approved":{"address":1},"rejected":0}`, `{"x":"\u0000","timestamp":"2026-11-23T08:00:00+01:00"}`,
	"{\"stat\xffus\":\"bad utf-8\",\"status\xff\":1}", `{"":1,"status":""}`,
	`{"approved":false,"APPROVED":true}`, `{"APPROVED":true,"approved":false}`, `{"Approved":true}`,
	`{"IVMS101":{"a":1},"ivms101":{"b":2}}`, `{"status":"a","Status":"b","STATUS":"c"}`,
}

func TestCbDecodeMatchesUnmarshal(t *testing.T) {
	for _, body := range cbDecodeCases {
		t.Run(body, func(t *testing.T) {
			checkCbDecode(t, []byte(body))
		})
	}
}

func FuzzCbDecode(f *testing.F) {
	for _, body := range cbDecodeCases {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkCbDecode(t, body)
	})
}

// checkCbDecode checks that cbDecode decodes a JSON object as
// referenceDecode does, and that it refuses what json.Unmarshal refuses.
func checkCbDecode(t *testing.T, body []byte) {
	t.Helper()
	trimmed := cbSkipSpace(body, 0)
	if trimmed == len(body) || body[trimmed] != '{' {
		return // ParseCallback refuses it before decoding
	}
	var got callbackWire
	wantErr := json.Unmarshal(body, new(callbackWire))
	err := cbDecode(body, body[trimmed:], &got)
	if wantErr != nil || oracleDupNames(body) {
		require.ErrorIs(t, err, ErrMalformedCallback)
		return
	}
	require.NoError(t, err)
	want, ok := referenceDecode(t, body)
	if ok {
		assert.Equal(t, want, got)
	}
}

// referenceDecode decodes body's top-level members as cbDecode documents,
// through encoding/json's tokenizer instead of cbDecode's own walk: for
// each field, the last member of its exact name, else the last member that
// folds to it; each value decoded on its own into a zero field. ok is
// false for a body json.Decoder cannot walk (invalid UTF-8 in a key, which
// json.Unmarshal replaces).
func referenceDecode(t *testing.T, body []byte) (w callbackWire, ok bool) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return w, false
	}
	var exact, folded [len(cbFieldNames)]json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return w, false
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return w, false
		}
		if i := slices.Index(cbFieldNames[:], key); i >= 0 {
			exact[i] = raw
			continue
		}
		for j, name := range cbFieldNames {
			if strings.EqualFold(key, name) {
				folded[j] = raw
				break
			}
		}
	}
	for i := range cbFieldNames {
		raw := exact[i]
		if raw == nil {
			raw = folded[i]
		}
		if raw != nil {
			require.NoError(t, json.Unmarshal(raw, w.decoder(i)))
		}
	}
	return w, true
}

// A callback string reads as encoding/json reads it, whichever path
// flexString takes: invalid UTF-8 (each bad byte U+FFFD) the same without
// escapes as with them. The fast path used to keep the raw bytes.
func TestFlexStringReadsAsEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		`"plain"`, `"caf\u00e9"`, "\"caf\xc3\xa9\"", "\"ab\xffcd\"", "\"ab\xff\\u0041\"", "\"\xed\xa0\x80\"", "\"\xc3\"", `""`,
	} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(raw), &want), "%q", raw)
		var got flexString
		require.NoError(t, got.UnmarshalJSON([]byte(raw)))
		assert.Equal(t, want, string(got), "%q", raw)
	}
	cb, err := ParseCallback([]byte("{\"transferId\":\"t-1\",\"status\":\"APPROVED\",\"statusComment\":\"ok\xff\"}"))
	require.NoError(t, err)
	assert.Equal(t, "ok\uFFFD", cb.StatusComment)
}

// An inquiry that gives a field twice, in the exact name or in a case or
// fold variant, is refused, so that the party an integrator screens is the
// one every reader reads. (These bodies were once read, the exact name
// winning.)
func TestInquiryNameTwiceRefused(t *testing.T) {
	for _, body := range []string{
		`{"status":"inquiry","txId":"0xAAA","txid":"0xBBB","asset":"ETH","amount":"1"}`,
		`{"status":"inquiry","asset":"ETH","amount":"1","beneficiary":{"lastName":"Smith","lastname":"Jones"}}`,
		`{"status":"inquiry","ASSET":"XMR","asset":"ETH","amount":"1"}`,
		`{"status":"inquiry","asset":"ETH","aſſet":"XMR","amount":"1"}`,
		`{"status":"inquiry","ASSET":"XMR","Asset":"ETH","amount":"1"}`,
		`{"status":"inquiry","asset":"XMR","asset":"ETH","amount":1.5}`,
	} {
		_, err := ParseCallback([]byte(body))
		assert.ErrorIs(t, err, ErrMalformedCallback, body)
	}
}

// WithDecision returns cb carrying the INQUIRY_RESOLUTION decision d, as
// ParseCallback sets it: for the tables of package travelrule_test, which
// compare whole callbacks.
func WithDecision(cb Callback, d Decision) Callback {
	cb.decision = d
	return cb
}
