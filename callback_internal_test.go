package travelrule

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cbDecodeCases are bodies on which cbDecode must agree with
// json.Unmarshal: member names matched exactly, by case folding (the
// first field wins: "TXID" is txId), through escapes and non-ASCII folds;
// repeated members; nulls; nesting, white space and literals at the end.
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
// json.Unmarshal does, and that it refuses what json.Unmarshal refuses.
func checkCbDecode(t *testing.T, body []byte) {
	t.Helper()
	trimmed := cbSkipSpace(body, 0)
	if trimmed == len(body) || body[trimmed] != '{' {
		return // ParseCallback refuses it before decoding
	}
	var want, got callbackWire
	wantErr := json.Unmarshal(body, &want)
	err := cbDecode(body, body[trimmed:], &got)
	if wantErr != nil {
		require.ErrorIs(t, err, ErrMalformedCallback)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
