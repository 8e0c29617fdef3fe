package travelrule

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The envelope decisions, as pure functions over answer bodies.

func TestParseInitiateAnswer(t *testing.T) {
	for _, tt := range []struct {
		name, body         string
		status, transferID string
		o                  outcome
	}{
		{"the excerpt's answer", `{"status":"succes"}`, "succes", "", outcomeSuccess},
		{"the excerpt's answer, transferId at the top", `{"status":"succes","transferId":"t-1"}`, "succes", "t-1", outcomeSuccess},
		{"the live envelope", `{"status":true,"data":{"transferId":"019ac452-8660-7061-9b93-8d72eaa11a89"}}`, "true", "019ac452-8660-7061-9b93-8d72eaa11a89", outcomeSuccess},
		{"status as the string true", `{"status":"true","data":{"transferId":"t-2"}}`, "true", "t-2", outcomeSuccess},
		{"success spelled right, any case", `{"status":"SUCCESS","transferId":"t-3"}`, "success", "t-3", outcomeSuccess},
		{"data wins over the top level", `{"status":true,"transferId":"top","data":{"transferId":"inner"}}`, "true", "inner", outcomeSuccess},
		{"a numeric transferId", `{"status":true,"data":{"transferId":12345}}`, "true", "12345", outcomeSuccess},
		{"data that is not an object", `{"status":true,"transferId":"t-4","data":"ok"}`, "true", "t-4", outcomeSuccess},
		{"unknown fields everywhere", `{"status":true,"x":[1,{"y":null}],"data":{"transferId":"t-5","flow":"OPEN_VASP","z":{}}}`, "true", "t-5", outcomeSuccess},
		{"no status but a transferId (unwrapped)", `{"transferId":"t-6"}`, "true", "t-6", outcomeSuccess},
		{"status false: a refusal", `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"Asset is required"}]}`, "", "", outcomeRefused},
		{"status \"false\" with errors: a refusal", `{"status":"false","errors":["no"]}`, "", "", outcomeRefused},
		{"status false without errors: still a refusal", `{"status":false}`, "", "", outcomeRefused},
		{"status false naming a transfer: not understood, the transfer may exist", `{"status":false,"data":{"transferId":"t-7"},"errors":[{"code":"CALLBACK_NOT_FOUND"}]}`, "", "t-7", outcomeOther},
		{"a status that means neither", `{"status":"pending","transferId":"t-8"}`, "", "t-8", outcomeOther},
		{"a numeric status", `{"status":1}`, "", "", outcomeOther},
		{"no status, no transferId", `{"data":{}}`, "", "", outcomeOther},
		{"not an object", `["succes"]`, "", "", outcomeOther},
		{"not JSON", `succes`, "", "", outcomeOther},
		{"empty", ``, "", "", outcomeOther},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, id, o := parseInitiateAnswer([]byte(tt.body))
			assert.Equal(t, tt.o, o)
			assert.Equal(t, tt.status, status)
			assert.Equal(t, tt.transferID, id)
		})
	}
}

func TestParseInquiryAnswer(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		status     bool
		o          outcome
	}{
		{"the excerpt's true", `{"status":true}`, true, outcomeSuccess},
		{"the excerpt's false: not applied (already resolved the other way)", `{"status":false}`, false, outcomeRefused},
		{"the live envelope", `{"status":true,"data":{"transferId":"t"}}`, true, outcomeSuccess},
		{"string true", `{"status":"true"}`, true, outcomeSuccess},
		{"succes", `{"status":"succes"}`, true, outcomeSuccess},
		{"false with errors: the live refusal", `{"status":false,"errors":[{"code":"TRANSFER_NOT_FOUND","message":"no transfer"}]}`, false, outcomeRefused},
		{"false with an empty errors array", `{"status":false,"errors":[]}`, false, outcomeRefused},
		{"no status", `{}`, false, outcomeOther},
		{"null status", `{"status":null}`, false, outcomeOther},
		{"a status that means neither", `{"status":"maybe"}`, false, outcomeOther},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.o, parseInquiryAnswer([]byte(tt.body)))
		})
	}
}

func TestErrorListIsLenient(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		codes      []string
		items      int
	}{
		{"the live shape", `{"errors":[{"code":"INVALID_REQUEST","message":"Asset is required"}]}`, []string{"INVALID_REQUEST"}, 1},
		{"several", `{"errors":[{"code":"A"},{"code":"B","message":"m"},{"message":"no code"}]}`, []string{"A", "B"}, 3},
		{"with a field", `{"errors":[{"code":"VALIDATION_ERROR","message":"m","field":"asset"}]}`, []string{"VALIDATION_ERROR"}, 1},
		{"strings", `{"errors":["bad asset"]}`, nil, 1},
		{"one object", `{"errors":{"code":"X"}}`, []string{"X"}, 1},
		{"codes of other types", `{"errors":[{"code":42,"message":["x"]}]}`, []string{"42"}, 1},
		{"a code that is not an identifier", `{"errors":[{"code":"Alan Turing is bad"}]}`, nil, 1},
		{"not a list", `{"errors":"x"}`, nil, 0},
		{"null", `{"errors":null}`, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var eb errorBody
			if assert.NoError(t, jsonUnmarshal(tt.body, &eb)) {
				assert.Equal(t, tt.codes, eb.Errors.codes())
				assert.Len(t, eb.Errors, tt.items)
			}
		})
	}
}

func TestKeyRefusal(t *testing.T) {
	for _, tt := range []struct {
		status int
		codes  []string
		msg    string
		want   KeyRefusal
	}{
		{401, []string{"UNAUTHORIZED"}, "API key missing", KeyUnknown},
		{401, nil, "", KeyUnknown},
		{403, []string{"FORBIDDEN"}, "API key is inactive", KeyInactive},
		{403, []string{"FORBIDDEN"}, "Customer deactivated", KeyInactive},
		{403, nil, "API key expired", KeyExpired},
		{403, []string{"FORBIDDEN"}, "forbidden", KeyForbidden},
		{200, []string{"FORBIDDEN"}, "", KeyForbidden},
		{200, []string{"UNAUTHORIZED"}, "", KeyUnknown},
		{403, []string{"UNAUTHORIZED"}, "API key expired", KeyExpired},
		{401, nil, "API key inactive", KeyUnknown},
		{400, []string{"FORBIDDEN"}, "inactive", KeyNotRefused},
		{400, []string{"INVALID_REQUEST"}, "expired", KeyNotRefused},
		{500, nil, "inactive", KeyNotRefused},
		{429, nil, "", KeyNotRefused},
	} {
		assert.Equal(t, tt.want, keyRefusal(tt.status, tt.codes, tt.msg), "%d %v %q", tt.status, tt.codes, tt.msg)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
