package travelrule

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
)

// answer is a call's 2xx answer, read whole, with what a result shows of
// the call.
type answer struct {
	status     int
	header     http.Header
	body       []byte
	transferID string       // the transfer the answer names, when its parse says (InitiateTransfer's)
	attempts   int          // the requests that left the client
	key        string       // the Idempotency-Key the request carried, or ""
	shown      *callSecrets // what the call's result may not show
}

// tally is what the attempts of one call add up to.
type tally struct {
	attempts  int         // the attempts the retry loop started
	status    int         // the last answer's status, for CallEnd
	header2xx http.Header // the headers of the 2xx answer, if one came
	acted     bool        // the service may have acted on some attempt
	actedOn   bool        // the service may have acted on an attempt that a retry followed
	refreshed bool        // a 401 or 403 was retried with a new token
	noToken   error       // after a 401 or 403: why no new token could be had
	next      decision    // the decision after the last attempt
}

// record adds an attempt's facts a and its decision d.
func (t *tally) record(a *attempt, d decision) {
	if a.status != 0 {
		t.status = a.status
	}
	t.next = d
	t.acted = t.acted || d.acted
	t.actedOn = t.actedOn || d.acted && d.retry
	if isAuthStatus(a.status) && d.retry {
		t.refreshed = true
	}
}

// reckoning is what a call's final error and its observers are told of
// the call besides its tally.
type reckoning struct {
	spec  *callSpec
	key   string       // the Idempotency-Key, or ""
	shown *callSecrets // what no string of the call may show
	sent  int          // the requests that left the client
}

// verdict is the one place a call's final error is built: from the last
// attempt's answer resp, or its failure err, it returns the 2xx answer
// that parse judges a success, or the error, an [*OutcomeUnknownError]
// whenever the service may have acted. parse may set the answer's
// transferID, which the error then reports.
func (t *tally) verdict(c *Client, r reckoning, resp *http.Response, err error, parse func(*answer) outcome) (answer, error) {
	if err != nil {
		return answer{}, t.final(c, r, newTransportError(r.spec.op, r.spec.method, r.spec.url, err))
	}
	defer resp.Body.Close()
	ans, err := t.read(c.maxResponse, r, resp)
	if err != nil {
		return answer{}, t.final(c, r, err)
	}
	o := parse(&ans)
	if ans.transferID != "" {
		r.spec.transferID = ans.transferID // what an *OutcomeUnknownError reports
	}
	switch o {
	case outcomeSuccess:
		return ans, nil
	case outcomeRefused:
		// The service said no: nothing was made, whatever the status.
		e := refusedAnswer(r.spec.op, ans.status, ans.header, ans.body, *r.shown.of())
		return answer{}, t.refused(c, r, e)
	}
	// The service said 2xx, so it may well have acted: the caller must
	// reconcile, exactly as after a dropped connection.
	e := unexpectedAnswer(r.spec.op, ans.status, ans.header, ans.body, *r.shown.of())
	return answer{}, t.final(c, r, e)
}

// read reads the final answer within the attempt's time-out (limit bytes
// at most): a 2xx answer, or the error of another.
func (t *tally) read(limit int64, r reckoning, resp *http.Response) (answer, error) {
	t.status = resp.StatusCode
	data, err := readBody(resp, limit)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := newAPIError(r.spec.op, resp.StatusCode, resp.Header, data, *r.shown.of()).withRoute(r.spec.method, r.spec.url)
		if isAuthStatus(resp.StatusCode) {
			e.cause = t.noToken
		}
		return answer{}, e
	}
	if err != nil {
		// The service answered 2xx, so it may have acted; its answer could
		// not be read.
		e := unexpectedAnswer(r.spec.op, resp.StatusCode, resp.Header, data, *r.shown.of())
		e.reason = transportText(err)
		return answer{}, e
	}
	t.header2xx = resp.Header
	return answer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// refused returns the error of a 2xx answer whose status said false: the
// refusal, or, if the service may have acted on an earlier attempt (a 502
// before it, say, whose transfer the refusal may be about), an
// *OutcomeUnknownError that wraps it.
func (t *tally) refused(c *Client, r reckoning, e *APIError) error {
	if !t.actedOn {
		return e
	}
	// An earlier attempt may have been acted on: this answer's "not
	// applied" speaks for itself only, so the error must not match
	// ErrNotApplied, which tells the caller that sending again is safe.
	e.refused, e.earlierMayHaveActed = false, true
	return t.final(c, r, e)
}

// final returns the call's final error: err, or an *OutcomeUnknownError
// that wraps it if the service may have acted on some attempt.
func (t *tally) final(c *Client, r reckoning, err error) error {
	if !t.acted {
		return err
	}
	e := r.unknown(err)
	if l := c.logger; l != nil {
		// A line that needs a person: the call may have been carried out.
		l.Warn("travelrule: outcome unknown: "+e.advice(), "op", e.Op, "attempts", e.Attempts,
			"callbackRef", shownID(e.CallbackRef), "idempotencyKey", e.IdempotencyKey, "err", e)
	}
	return e
}

// unknown is the *OutcomeUnknownError of the call that wraps err.
func (r reckoning) unknown(err error) *OutcomeUnknownError {
	s := r.spec
	return &OutcomeUnknownError{Op: s.op, Attempts: r.sent, TxID: s.txID, TransferID: s.transferID,
		hideTransferID: r.shown.hidesTransferID(s.transferID), Callback: s.callback, CallbackRef: CallbackRef(s.callback),
		IdempotencyKey: r.key, Err: err}
}

// newTransportError is the error of a call of op that got no whole
// answer to its request (method, rawURL).
func newTransportError(op, method, rawURL string, err error) error {
	shown, _, _ := strings.Cut(rawURL, "?") // the query carries the transfer id
	return &transportError{op: op, method: method, url: shown, err: sanitize(err)}
}

var errTooLarge = errors.New("answer body exceeds the size limit")

// readBody reads the answer through the client's size limit. The buffer
// grows as bytes arrive: a declared Content-Length only refuses an answer
// that would be too large, it never sizes an allocation before anything
// came (512 MiB declared and 10 bytes sent allocated 512 MiB).
func readBody(resp *http.Response, max int64) ([]byte, error) {
	if resp.ContentLength > max {
		return nil, errTooLarge
	}
	if n := resp.ContentLength; n >= 0 && n <= 32<<10 {
		// The transports end a body at its declared length.
		buf := make([]byte, n)
		read, err := io.ReadFull(resp.Body, buf)
		return buf[:read], err
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, max+1))
	data := buf.Bytes()
	if err == nil && int64(len(data)) > max {
		return data[:max], errTooLarge
	}
	return data, err
}
