package travelrule

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
)

// InquiryResolution is the body of POST /transfers/inquiryResolution
// (part 2.4 of the interface description): the beneficiary VASP's decision
// on an inquiry. Make one with [Approve] or [Reject].
type InquiryResolution struct {
	// Approved carries the decision as the service reads it: "true"
	// approves, "false" rejects; required. [Client.ResolveInquiry] and
	// [InquiryResolution.Validate] refuse any other value ("yes", "TRUE",
	// "1", …) before anything is sent. The description types it as a
	// string without showing its meaning (see docs/assumptions.md, A9).
	Approved string `json:"approved"`
	// Callback is an optional absolute http(s) URL: where the service
	// sends the transfer's confirmation (TRANSFER_CONFIRMATION) once the
	// originator submitted the transaction. A capability URL (see
	// [NewCallbackURL]) lets the callback handler match it.
	Callback string `json:"callback,omitempty"`
}

// Approve returns the resolution that approves an inquiry, with the
// callback URL for the transfer's confirmation (the Callback field of
// [InquiryResolution]; "" for none):
//
//	res, err := client.ResolveInquiry(ctx, cb.TransferID, travelrule.Approve(confirmURL))
func Approve(callbackURL string) *InquiryResolution {
	return &InquiryResolution{Approved: wireApproved, Callback: callbackURL}
}

// Reject returns the resolution that rejects an inquiry.
func Reject() *InquiryResolution {
	return &InquiryResolution{Approved: wireRejected}
}

// wireApproved and wireRejected are the values of "approved" the service
// reads as a decision.
const (
	wireApproved = "true"
	wireRejected = "false"
)

// InquiryResult is the answer to a successful ResolveInquiry: the service
// applied the resolution.
type InquiryResult struct {
	// Status is the service's boolean status: always true, since an
	// answer whose status is false is an error matching [ErrNotApplied].
	// Ask [InquiryResult.OK].
	Status bool
	// RequestID is the answer's X-Request-Id header, if any: empty when,
	// of a request id's shape, it echoes a secret of the call; one of
	// another shape is kept as sent and masked in every printed form.
	RequestID string
	// Attempts is how many times the request was sent.
	Attempts int
	// Raw is the whole answer body, unknown fields included.
	Raw json.RawMessage
}

// Validate reports every fault of the resolution as a [*ValidationError],
// or nil: approved is required and must be "true" or "false", exactly,
// and callback, when set, must be an absolute http(s) URL of at most 255
// characters of plain text (see [TransferRequest.Validate]).
func (r *InquiryResolution) Validate() error {
	var errs []FieldError
	errs = required(errs, "", "approved", r.Approved)
	if r.Approved != "" && decisionOf(r.Approved) == "" {
		errs = append(errs, FieldError{Field: "approved", Reason: `must be "true" or "false"`})
	}
	errs = length(errs, "callback", r.Callback, 1, 255)
	if r.Callback != "" && !isAbsoluteHTTPURL(r.Callback) {
		errs = append(errs, FieldError{Field: "callback", Reason: "must be an absolute http or https URL"})
	}
	errs = plainText(errs, "", "callback", r.Callback)
	if len(errs) > 0 {
		return &ValidationError{Fields: errs}
	}
	return nil
}

// Format implements fmt.Formatter so that no verb prints the callback URL,
// which may carry a capability tag.
func (r InquiryResolution) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.InquiryResolution")
	fmt.Fprintf(f, "{Approved:%s Callback:%s}", shownID(r.Approved), mask(r.Callback))
}

// LogValue implements slog.LogValuer: the decision, not the callback URL.
func (r InquiryResolution) LogValue() slog.Value {
	return slog.GroupValue(slog.String("approved", shownID(r.Approved)))
}

// OK reports whether the service's answer said it applied the decision;
// false for a nil result.
func (r *InquiryResult) OK() bool { return r != nil && r.Status }

// Format implements fmt.Formatter so that no verb prints the answer's body.
func (r InquiryResult) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.InquiryResult")
	fmt.Fprintf(f, "{Status:%t RequestID:%s Attempts:%d Raw:%s}", r.Status, shownRequestID(r.RequestID), r.Attempts, size(r.Raw))
}

// MarshalJSON implements json.Marshaler with the fields of LogValue: no
// form of a result carries its Raw body or an identifier it hides.
func (r InquiryResult) MarshalJSON() ([]byte, error) { return logJSON(r.LogValue()) }

// LogValue implements slog.LogValuer, with the same fields as Format.
func (r InquiryResult) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("status", r.Status),
		slog.String("requestId", shownRequestID(r.RequestID)),
		slog.Int("attempts", r.Attempts),
		slog.Int("rawBytes", len(r.Raw)),
	)
}

// inquiryAnswer is a resolution answer: the excerpt's {"status":<boolean>}
// or the live service's envelope.
type inquiryAnswer struct {
	envelope
}

// ResolveInquiry resolves the inquiry of the transfer transferID with
// POST {base}/transfers/inquiryResolution?q=<transferID>. An empty
// transferID, one that is not plain text (see [TransferRequest.Validate]),
// or an invalid r returns a [*ValidationError] and nothing is sent.
//
// Resolving an inquiry sets a decision; sending the same decision twice
// leaves the same state, so the client treats this operation as idempotent:
// besides what InitiateTransfer retries, it also retries 5xx answers (but
// 501) and connections dropped after the request was written, within the
// retry budget. If the budget runs out after such a failure, the error is an
// [*OutcomeUnknownError]: sending the same resolution again is safe.
//
// An answer whose status is false ({"status":false}, with or without the
// live service's "errors") means the service did not apply the decision:
// the error is an [*APIError] that matches [ErrNotApplied]; a bare false,
// without the service's error code, most likely means the inquiry was
// already resolved (the other way, or this way by an earlier attempt after
// an [ErrOutcomeUnknown], if the service refuses a repeat), and its text
// says so. A nil error
// means the decision was applied. opts set this call's own settings (see
// [CallOption]).
func (c *Client) ResolveInquiry(ctx context.Context, transferID string, r *InquiryResolution, opts ...CallOption) (*InquiryResult, error) {
	const op = "ResolveInquiry"
	var errs []FieldError
	if transferID == "" {
		errs = append(errs, FieldError{Field: "q", Reason: "transfer id required"})
	}
	errs = plainText(errs, "", "q", transferID)
	if r == nil {
		errs = append(errs, FieldError{Field: "approved", Reason: "required"})
	} else if err := r.Validate(); err != nil {
		errs = append(errs, err.(*ValidationError).Fields...)
	}
	if len(errs) > 0 {
		return nil, c.invalid(ctx, op, &ValidationError{Fields: errs})
	}
	co, err := settleCall(opts)
	if err != nil {
		return nil, c.invalid(ctx, op, err)
	}
	body, err := encodeJSON(r)
	if err != nil {
		return nil, err
	}
	spec := callSpec{op: op, url: c.inquiryURL + "?q=" + url.QueryEscape(transferID), body: body,
		repeatable: true, pii: r, transferID: transferID, callback: r.Callback, decision: decisionOf(r.Approved)}
	ans, err := c.do(ctx, spec, co, func(a *answer) outcome { return parseInquiryAnswer(a.body) })
	if err != nil {
		return nil, err
	}
	return &InquiryResult{Status: true, RequestID: ans.shown.requestID(ans.header), Attempts: ans.attempts, Raw: ans.body}, nil
}

// appendPII appends the resolution's personal values: its callback URL and
// the capability tag it may carry.
func (r *InquiryResolution) appendPII(dst []string) []string {
	return appendURLSecrets(dst, r.Callback)
}

// parseInquiryAnswer judges an inquiry-resolution answer: outcomeSuccess
// for a status that means success; outcomeRefused for a false status, the
// excerpt's bare {"status":false} (docs/assumptions.md, A3) and the live
// service's envelope with "errors" alike, since neither applied the
// decision; outcomeOther for anything else, no status included.
func parseInquiryAnswer(body []byte) outcome {
	var ans inquiryAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return outcomeOther
	}
	if o := ans.Status.o; o == outcomeSuccess || o == outcomeRefused {
		return o
	}
	return outcomeOther
}
