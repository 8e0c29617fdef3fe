package travelrule

import (
	"context"
	"fmt"
	"net/http"
)

// run sends a repeatable call and judges its 2xx answer with parse: the
// answer when parse says success, an [*APIError] when the service refused
// (status false), and otherwise the error of an answer not understood,
// wrapped in an [*OutcomeUnknownError] when the service may have acted
// (for these calls, sending the same request again is safe).
func (c *Client) run(ctx context.Context, cl *call, parse func(body []byte) outcome) (answer, error) {
	cl.client, cl.repeatable = c, true
	defer cl.endOnPanic()
	ans, err := cl.send(ctx)
	if err != nil {
		return answer{}, cl.finish(cl.end(err))
	}
	switch parse(ans.body) {
	case outcomeSuccess:
		return ans, cl.finish(nil)
	case outcomeRefused:
		return answer{}, cl.finish(cl.refused(cl.refusedAnswer(ans)))
	}
	return answer{}, cl.finish(cl.end(cl.unexpectedAnswer(ans)))
}

// refusedAnswer is the error of the call's 2xx answer whose status said
// false (see refusedAnswer).
func (cl *call) refusedAnswer(ans answer) *APIError {
	return refusedAnswer(cl.op, ans.status, ans.header, ans.body, cl.secrets())
}

// unexpectedAnswer is the error of the call's 2xx answer that does not
// mean success (see unexpectedAnswer).
func (cl *call) unexpectedAnswer(ans answer) *APIError {
	return unexpectedAnswer(cl.op, ans.status, ans.header, ans.body, cl.secrets())
}

// requestID is the answer's X-Request-Id for a result, or "" when, of a
// request id's shape, it echoes one of sec (a server that echoes what it
// was sent, or said); a result's fmt and slog forms check its shape.
func requestID(ans answer, sec secrets) string {
	id := ans.header.Get("X-Request-Id")
	if showRequestID(id) && sec.echoes(id) {
		return ""
	}
	return id
}

// encodeBody encodes a call's request body, or says why it cannot.
func encodeBody(op string, v any) ([]byte, error) {
	body, err := encodeJSON(v)
	if err != nil {
		return nil, fmt.Errorf("travelrule: %s: encoding request: %w", op, err)
	}
	return body, nil
}

// noPII is the personal data of a call that carries none.
type noPII struct{}

func (noPII) piiValues() []string { return nil }

// piiList is a call's personal values, listed.
type piiList []string

func (p piiList) piiValues() []string { return p }

// methodGet is GET, for the one call that sends it (with a body).
const methodGet = http.MethodGet
