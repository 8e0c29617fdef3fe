package travelrule

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The answer envelopes, read in one place. The excerpt documents bare
// answers ({"status":"succes"} for an initiation, {"status":<boolean>} for
// a resolution); the live service documents success as
// {"status":true,"data":{…}} and failure as
// {"status":false,"errors":[{"code":"…","message":"…"}]}. A field of the
// answer may sit at the top level or inside "data" (data wins): each
// operation's answer type has both, and decodeLenient fills them. Unknown
// fields never fail an answer; each result keeps the raw body.

// outcome is what an answer's "status" says.
type outcome uint8

const (
	outcomeNone    outcome = iota // no status (absent or null)
	outcomeSuccess                // true, "true", "succes" or "success", in any case
	outcomeRefused                // false or "false": the service refused
	outcomeOther                  // a status that means neither
)

// envelopeStatus decodes "status" without allocating: its outcome, and
// for a success the word it was written as.
type envelopeStatus struct {
	o    outcome
	word string // "true", "succes" or "success" (lower case); "" unless o is outcomeSuccess
}

// UnmarshalJSON implements json.Unmarshaler as statusOutcome decides.
func (s *envelopeStatus) UnmarshalJSON(b []byte) error {
	s.o, s.word = statusOutcome(b)
	return nil
}

// statusOutcome is the outcome that the JSON value b of "status" says:
// the boolean true and the strings "true", "succes" (the excerpt's
// spelling) and "success" are success; false and "false" are a refusal;
// null is no status; anything else is neither. word is the success word,
// in lower case.
func statusOutcome(b []byte) (o outcome, word string) {
	switch {
	case string(b) == "true":
		return outcomeSuccess, "true"
	case string(b) == "false":
		return outcomeRefused, ""
	case string(b) == "null":
		return outcomeNone, ""
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		s := b[1 : len(b)-1]
		for _, w := range [...]string{"true", "succes", "success"} {
			if bytes.EqualFold(s, []byte(w)) {
				return outcomeSuccess, w
			}
		}
		if bytes.EqualFold(s, []byte("false")) {
			return outcomeRefused, ""
		}
	}
	return outcomeOther, ""
}

// envelope is what every answer may carry besides its operation's fields.
type envelope struct {
	Status envelopeStatus `json:"status"`
	Errors errorList      `json:"errors"`
}

// decodeLenient decodes the answer body into v, forgiving values of
// unexpected types: encoding/json goes on after one and fills the fields
// it can, so that a "data" that is not an object, say, leaves the top
// level readable. It reports false for a body that is not JSON at all.
// (A body that is JSON but not an object decodes to nothing, which the
// operation's parser finds not understood.) Every answer is decoded by it,
// in one pass, "data" and the top level at once.
func decodeLenient(body []byte, v any) bool {
	err := json.Unmarshal(body, v)
	if err == nil {
		return true
	}
	var te *json.UnmarshalTypeError // declared here: errors.As moves it to the heap
	return errors.As(err, &te)
}

// refusal judges an answer whose status may be false: outcomeRefused when
// it is the service refusing (status false, with or without an "errors"
// array), and outcomeSuccess, meaning "not a refusal; go on judging",
// otherwise. (An initiation's answer that names a transfer is judged by
// parseInitiateAnswer before this.)
func (e *envelope) refusal() outcome {
	if e.Status.o == outcomeRefused {
		return outcomeRefused
	}
	return outcomeSuccess
}

// errorItem is one entry of the live service's "errors" array. Field is
// not documented; the sandbox sends it with field faults.
type errorItem struct {
	Code    string
	Message string
	Field   string
}

// errorList decodes "errors" leniently: an array of objects with "code",
// "message" and "field" (or "path") of any type, or of strings (read as
// messages); a single object is one entry; anything else is no entry.
type errorList []errorItem

// maxErrorItems bounds the entries of "errors" the client keeps.
const maxErrorItems = 100

// UnmarshalJSON implements json.Unmarshaler as errorList's comment says.
func (l *errorList) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	switch {
	case len(b) > 0 && b[0] == '[':
		if json.Unmarshal(b, &raw) != nil {
			return nil
		}
	case len(b) > 0 && b[0] == '{':
		raw = []json.RawMessage{b}
	default:
		return nil
	}
	if len(raw) > maxErrorItems {
		raw = raw[:maxErrorItems]
	}
	for _, r := range raw {
		var it struct {
			Code    flexString `json:"code"`
			Message flexString `json:"message"`
			Field   flexString `json:"field"`
			Path    flexString `json:"path"`
		}
		var s string
		switch {
		case len(r) > 0 && r[0] == '{' && json.Unmarshal(r, &it) == nil:
			field := string(it.Field)
			if field == "" {
				field = string(it.Path)
			}
			*l = append(*l, errorItem{Code: string(it.Code), Message: string(it.Message), Field: field})
		case json.Unmarshal(r, &s) == nil && s != "":
			*l = append(*l, errorItem{Message: s})
		}
	}
	return nil
}

// codes returns the entries' codes that are identifiers, in order.
func (l errorList) codes() []string {
	var out []string
	for _, it := range l {
		if isIdentifier(it.Code, maxCode) {
			out = append(out, it.Code)
		}
	}
	return out
}

// understood is how an operation's parser judges an answer: the status it
// carried, and whether the fields the operation needs were found.
func understood(status envelopeStatus, found bool) bool {
	switch status.o {
	case outcomeSuccess:
		return true
	case outcomeNone:
		// No status: the live docs show some answers unwrapped (a travel
		// address, a token); the fields the operation needs decide.
		return found
	}
	return false
}
