package travelruletest

import (
	"errors"
	"mime"
	"net/http"
)

// jsonMediaType is the media type of every request body the sandbox reads
// as JSON: the description's "Content-Type: application/json".
const jsonMediaType = "application/json"

// requireJSON checks that r declares a JSON body: a Content-Type of
// application/json, in any case, with any parameters (such as
// "; charset=utf-8"). It returns nil if so, else the 415 answer, which says
// what to send and names it in an Accept-Post header (W3C Linked Data
// Platform 1.0, section 7.1).
func requireJSON(r *http.Request) *answer {
	if isJSON(r.Header.Get("Content-Type")) {
		return nil
	}
	a := errorAnswer(http.StatusUnsupportedMediaType, codeUnsupportedMediaType,
		"send the body as JSON with Content-Type: application/json")
	a.header = append(a.header, "Accept-Post", jsonMediaType)
	return a
}

// isJSON reports whether the Content-Type value ct names application/json.
// A parameter that does not parse does not change the media type.
func isJSON(ct string) bool {
	if ct == jsonMediaType {
		return true // what clients send, without parsing
	}
	mt, _, err := mime.ParseMediaType(ct)
	return (err == nil || errors.Is(err, mime.ErrInvalidMediaParameter)) && mt == jsonMediaType
}
