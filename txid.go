package travelrule

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
)

// The txId call of the live service: stage 5 of its guide, after the
// on-chain broadcast.

// TxIDResult is the answer to a successful SubmitTxID. The service
// documents no answer body: Status is its status when it sent one.
type TxIDResult struct {
	// Status is the answer's status as written, in lower case ("true",
	// "success"), or "true" when the answer had none (an empty body, or
	// one of unknown shape, is success; Raw keeps it). Do not compare it:
	// ask [TxIDResult.OK].
	Status string
	// RequestID is the answer's X-Request-Id header, if any: empty when,
	// of a request id's shape, it echoes a secret of the call; one of
	// another shape is kept as sent and masked in every printed form.
	RequestID string
	// Attempts is how many times the request was sent.
	Attempts int
	// Raw is the whole answer body, unknown fields included.
	Raw json.RawMessage
}

// OK reports whether the service's answer said success (any of the
// spellings of Status); false for a nil result.
func (r *TxIDResult) OK() bool { return r != nil && saysSuccess(r.Status) }

// Format implements fmt.Formatter so that no verb prints the answer's body.
func (r TxIDResult) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.TxIDResult")
	fmt.Fprintf(f, "{Status:%s RequestID:%s Attempts:%d Raw:%s}", shownID(r.Status), shownRequestID(r.RequestID), r.Attempts, size(r.Raw))
}

// MarshalJSON implements json.Marshaler with the fields of LogValue: no
// form of a result carries its Raw body or an identifier it hides.
func (r TxIDResult) MarshalJSON() ([]byte, error) { return logJSON(r.LogValue()) }

// LogValue implements slog.LogValuer, with the same fields as Format.
func (r TxIDResult) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("status", shownID(r.Status)),
		slog.String("requestId", shownRequestID(r.RequestID)),
		slog.Int("attempts", r.Attempts),
		slog.Int("rawBytes", len(r.Raw)),
	)
}

// txIDBody is the body of POST /transfers/txId.
type txIDBody struct {
	TxID string `json:"txId"`
}

// SubmitTxID tells the service the on-chain transaction hash of the
// transfer transferID, with POST {base}/transfers/txId?q=<transferID> and
// {"txId": txID}; the service then sends a confirmation callback to the
// beneficiary's VASP. An empty transferID or txID, a txID longer than 255
// characters, or either not plain text (see [TransferRequest.Validate]),
// returns a [*ValidationError] and nothing is sent.
//
// A transfer has one transaction, so the call always carries the same value
// for it and sending it again changes no state: it is retried like
// [Client.ResolveInquiry] (also after 5xx answers but 501 and connections
// dropped after the request was written, within the retry budget), and an
// [*OutcomeUnknownError] after the budget means the same call may be sent
// again. A retry after the service acted may make it send the
// beneficiary's VASP a second confirmation callback with the same txid,
// which that VASP's de-duplication absorbs. The answer's shape is not documented: any 2xx JSON object (or
// empty body) whose status is not false is success, its body kept in Raw.
// opts set this call's own settings (see [CallOption]).
func (c *Client) SubmitTxID(ctx context.Context, transferID, txID string, opts ...CallOption) (*TxIDResult, error) {
	const op = "SubmitTxID"
	var errs []FieldError
	if transferID == "" {
		errs = append(errs, FieldError{Field: "q", Reason: "transfer id required"})
	}
	errs = plainText(errs, "", "q", transferID)
	errs = required(errs, "", "txId", txID)
	errs = length(errs, "txId", txID, 0, 255)
	errs = plainText(errs, "", "txId", txID)
	if len(errs) > 0 {
		return nil, c.invalid(ctx, op, &ValidationError{Fields: errs})
	}
	co, err := settleCall(opts)
	if err != nil {
		return nil, c.invalid(ctx, op, err)
	}
	body, err := encodeBody(op, txIDBody{txID})
	if err != nil {
		return nil, err
	}
	var status string
	spec := callSpec{op: op, url: c.baseURL + "/transfers/txId?q=" + url.QueryEscape(transferID), body: body,
		repeatable: true, pii: noPII{}, txID: txID, transferID: transferID}
	ans, err := c.do(ctx, spec, co, func(got *answer) outcome {
		b := got.body
		status = "true" // an answer without status, as statusText has it
		trimmed := bytes.TrimLeft(b, " \t\r\n")
		if len(trimmed) == 0 {
			return outcomeSuccess
		}
		var a envelope
		if trimmed[0] != '{' || json.Unmarshal(b, &a) != nil {
			return outcomeOther
		}
		if a.Status.word != "" {
			status = a.Status.word
		}
		if o := a.refusal(); o != outcomeSuccess {
			return o
		}
		if a.Status.o == outcomeNone {
			return outcomeSuccess // an answer of unknown shape, kept whole in Raw
		}
		return a.Status.o
	})
	if err != nil {
		return nil, err
	}
	return &TxIDResult{Status: status, RequestID: ans.shown.requestID(ans.header), Attempts: ans.attempts, Raw: ans.body}, nil
}
