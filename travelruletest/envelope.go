package travelruletest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/vaspkit/travelrule"
)

// The answer envelopes of the live service, made in one place. A success is
// {"status":true,"data":{…}}; a refusal is
// {"status":false,"errors":[{"code":"…","message":"…"}]}, with the codes of
// the service's error reference where one applies and upper-snake codes of
// the sandbox's own for the statuses the reference does not cover. A field
// fault is one entry of its own, with the field's JSON path in an extra
// "field" member (not documented by the service; the SDK reads it into
// APIError.Fields). Messages name fields, never their values.

// The error codes the sandbox answers with. The first ten are the live
// service's (travelrule.Code*); the others are the sandbox's own.
const (
	codeInvalidRequest       = string(travelrule.CodeInvalidRequest)       // 400: a body that is not a JSON object, or cannot be read
	codeValidationError      = string(travelrule.CodeValidationError)      // 400: a field fault
	codeInvalidTravelAddress = string(travelrule.CodeInvalidTravelAddress) // 400 malformed, 404 resolves to no VASP
	codeTransferNotFound     = string(travelrule.CodeTransferNotFound)     // 404: no such transfer
	codeNotFound             = string(travelrule.CodeNotFound)             // 404: no such endpoint
	codeUnauthorized         = string(travelrule.CodeUnauthorized)         // 401: API key or bearer token missing or not recognised
	codeForbidden            = string(travelrule.CodeForbidden)            // 403: API key inactive or expired, bearer token expired
	codeInternal             = string(travelrule.CodeInternalError)        // 500

	codeMethodNotAllowed     = "METHOD_NOT_ALLOWED"     // 405
	codeIdempotencyKeyInUse  = "IDEMPOTENCY_KEY_IN_USE" // 409
	codePayloadTooLarge      = "PAYLOAD_TOO_LARGE"      // 413
	codeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE" // 415
	codeIdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED" // 422
	codeRateLimited          = "RATE_LIMITED"           // 429
	codeServiceUnavailable   = "SERVICE_UNAVAILABLE"    // 503
)

// errorEntry is one entry of the "errors" array.
type errorEntry struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// errorBody is the body of every error answer but the OAuth2 token
// endpoint's, which keeps RFC 6749's.
type errorBody struct {
	Status bool         `json:"status"`
	Errors []errorEntry `json:"errors"`
}

// errorAnswer is an answer with one error entry.
func errorAnswer(status int, code, msg string) *answer {
	return entriesAnswer(status, []errorEntry{{Code: code, Message: msg}})
}

// fieldAnswer is an answer with one error entry about the field at path,
// whose message is "<path>: <reason>".
func fieldAnswer(status int, code, path, reason string) *answer {
	f := travelrule.FieldError{Field: path, Reason: reason}
	return entriesAnswer(status, []errorEntry{{Code: code, Message: faultMessage(f), Field: path}})
}

// entriesAnswer is an answer with the error entries es.
func entriesAnswer(status int, es []errorEntry) *answer {
	body, _ := json.Marshal(errorBody{Status: false, Errors: es})
	return &answer{status: status, body: body}
}

// badRequest is the 400 answer to a body that is not a JSON object (err:
// INVALID_REQUEST) or has field faults: one entry per fault, the one the
// live docs show for a fault they give by example (documentedFaults), else
// VALIDATION_ERROR but for a travelAddress that is not a travel address
// (INVALID_TRAVEL_ADDRESS), with its field and a message "<path>:
// <reason>".
func badRequest(err error, faults []travelrule.FieldError) *answer {
	if err != nil {
		return errorAnswer(http.StatusBadRequest, codeInvalidRequest, err.Error())
	}
	es := make([]errorEntry, len(faults))
	for i, f := range faults {
		es[i] = faultEntry(f)
	}
	return entriesAnswer(http.StatusBadRequest, es)
}

// documentedFaults are the field faults the live docs show the answer to,
// by example, each with its entry as shown there, word for word and without
// a "field" member: an empty asset (missing, "" or null) is
// {"code":"INVALID_REQUEST","message":"Asset is required"}.
var documentedFaults = map[travelrule.FieldError]errorEntry{
	{Field: "asset", Reason: "required"}: {Code: codeInvalidRequest, Message: "Asset is required"},
}

// faultEntry is the error entry of the field fault f.
func faultEntry(f travelrule.FieldError) errorEntry {
	if e, ok := documentedFaults[f]; ok {
		return e
	}
	return errorEntry{Code: faultCode(f), Message: faultMessage(f), Field: f.Field}
}

// faultCode is the code of the entry of the field fault f.
func faultCode(f travelrule.FieldError) string {
	if f.Field == "travelAddress" && strings.HasPrefix(f.Reason, notATravelAddress) {
		return codeInvalidTravelAddress
	}
	return codeValidationError
}

// faultMessage is the message of the entry of the field fault f: its path
// and its reason, or the reason alone for a fault of the body as a whole
// (no path).
func faultMessage(f travelrule.FieldError) string {
	if f.Field == "" {
		return f.Reason
	}
	return f.Field + ": " + f.Reason
}

// dataAnswer is a 200 answer {"status":true,"data":data}.
func dataAnswer(data any) *answer {
	body, err := json.Marshal(struct {
		Status bool `json:"status"`
		Data   any  `json:"data"`
	}{true, data})
	if err != nil {
		return errorAnswer(http.StatusInternalServerError, codeInternal, "the answer could not be encoded")
	}
	return &answer{status: http.StatusOK, body: body}
}

// methodNotAllowed is the 405 answer to a method other than allow.
func methodNotAllowed(allow string) *answer {
	a := errorAnswer(http.StatusMethodNotAllowed, codeMethodNotAllowed, "use "+allow)
	a.header = []string{"Allow", allow}
	return a
}
