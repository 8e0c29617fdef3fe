package travelrule

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
)

// TransferRequest is the body of POST /transfers/initiate (part 2.1 of the
// interface description). Required: Asset, Amount, Callback, and the
// required fields of both parties. Its JSON form is exactly the wire form;
// unset optional fields are omitted.
//
// TransferRequest holds personal data. Its fmt and log/slog forms are
// redacted (see [Party]).
type TransferRequest struct {
	// TravelAddress identifies the beneficiary's account at its VASP
	// (1..255 characters; optional).
	TravelAddress string `json:"travelAddress,omitempty"`
	// Email is a contact address (at most 255 characters; optional).
	Email string `json:"email,omitempty"`
	// TxID is the on-chain transaction identifier (at most 255 characters;
	// optional). Set it when known: it is how an ambiguous failure is
	// reconciled.
	TxID string `json:"txId,omitempty"`
	// Asset is a ticker-like code such as "BTC" (at most 20 characters).
	Asset string `json:"asset"`
	// Amount is a decimal quantity carried as a string, such as "0.25"
	// (at most 50 characters).
	Amount string `json:"amount"`
	// Callback is the absolute http(s) URL that receives the transfer's
	// status callbacks (1..255 characters). [NewCallbackURL] makes one that
	// lets the callback handler match callbacks to this transfer.
	Callback string `json:"callback"`
	// Originator is the sending party.
	Originator Party `json:"originator"`
	// Beneficiary is the receiving party.
	Beneficiary Party `json:"beneficiary"`
}

// TransferResult is the answer to a successful InitiateTransfer.
type TransferResult struct {
	// Status is the service's status value as the answer wrote it, in
	// lower case: "true" for the live service's boolean (and for an answer
	// with a transferId but no status), or "succes" (sic, as the excerpt
	// documents) or "success". Do not compare it: ask
	// [TransferResult.OK].
	Status string
	// TransferID is the transfer identifier, if the answer carried a
	// "transferId" field. The description says the operation returns one
	// but documents no field for it, so it may be empty: match callbacks
	// with a capability callback URL (see [NewCallbackURL]) instead.
	TransferID string
	// RequestID is the answer's X-Request-Id header, if any: empty when,
	// of a request id's shape, it echoes a secret of the call; one of
	// another shape is kept as sent and masked in every printed form.
	RequestID string
	// IdempotencyKey is the Idempotency-Key the request carried, if the
	// client sent one (see [WithIdempotency]).
	IdempotencyKey string
	// Attempts is how many times the request was sent.
	Attempts int
	// Raw is the whole answer body, unknown fields included.
	Raw json.RawMessage

	hideTransferID bool // the server's transfer id echoes a secret of the call
}

// OK reports whether the service's answer said success (any of the
// spellings of Status); false for a nil result.
func (r *TransferResult) OK() bool { return r != nil && saysSuccess(r.Status) }

// saysSuccess reports whether a result's Status is a success as an
// answer's "status" is judged (see statusOutcome): "true", "succes" or
// "success", in any case.
func saysSuccess(status string) bool {
	b, err := json.Marshal(status)
	if err != nil {
		return false
	}
	o, _ := statusOutcome(b)
	return o == outcomeSuccess
}

// Validate reports every fault of the request at once as a
// [*ValidationError], or nil. It enforces what the interface description
// states (required fields, the bounds of part 8 counted in Unicode code
// points, callback an absolute http(s) URL, country exactly two letters),
// the live docs' switch of a legal person to legalName, every party text
// field at most 255 characters (docs/assumptions.md A16), and refuses what
// is never right whatever the service accepts: an amount with a sign, an
// exponent, white space at an end, NaN, an infinity or of zero (A17), and, in any field, bytes that are not UTF-8 or
// a control character, line separator or bidirectional formatting
// character (A6). Use [TransferRequest.ValidateStrict] for IVMS101 checks
// on top.
func (r *TransferRequest) Validate() error {
	if errs := r.validate(nil); len(errs) > 0 {
		return &ValidationError{Fields: errs}
	}
	return nil
}

// ValidateStrict reports the faults of [TransferRequest.Validate] plus the
// IVMS101 rules the description leaves open: every constraint of IVMS101
// that the parties' payload ([TransferRequest.IVMS101]) breaks, as
// [ivms101.Payload.Validate] finds it, reported under the Party field it
// comes from (such as a natural originator's address, nationalId or
// accountNumber, IVMS101 C1; a legal originator's GEOG address, nationalId
// or accountNumber, C4; an address's addressType, townName, country,
// streetName and buildingNumber; an LEI's check digits, C11; the IVMS101
// code lists and lengths); and amount a positive decimal (ASCII digits, at
// most one point with digits on both sides), personType "natural" or
// "legal", dateOfBirth as YYYY-MM-DD, country an assigned ISO 3166-1
// alpha-2 code, an email (top-level or the parties') of the form
// name@domain, and a way to reach the beneficiary (travelAddress, email or
// beneficiary.email). A travelAddress is refused only when the service
// cannot have made it ([InspectTravelAddress]: no "ta" prefix, a character
// outside the URL-safe set, more than 255 characters, or a checksummed
// address whose checksum fails), so that a mistyped TRP address never
// reaches the service while every address the service issues, its opaque
// ones included, passes: the service judges those (INVALID_TRAVEL_ADDRESS).
// A real service may accept what these checks refuse; use them where your
// own policy wants them.
func (r *TransferRequest) ValidateStrict() error {
	errs := strictAmount(r.validate(nil), r.Amount)
	if r.TravelAddress != "" {
		if reason := travelAddressFault(r.TravelAddress); reason != "" {
			errs = append(errs, FieldError{Field: "travelAddress", Reason: "not a travel address: " + reason})
		}
	}
	if r.TravelAddress == "" && r.Email == "" && r.Beneficiary.Email == "" {
		errs = append(errs, FieldError{Field: "travelAddress", Reason: "a travelAddress, an email or a beneficiary.email is required to reach the beneficiary"})
	}
	if r.Email != "" && !isEmailAddress(r.Email) {
		errs = append(errs, FieldError{Field: "email", Reason: "must be an email address (name@domain)"})
	}
	errs = r.Originator.validateStrict("originator", errs)
	errs = r.Beneficiary.validateStrict("beneficiary", errs)
	errs = r.ivmsFaults(errs)
	if len(errs) > 0 {
		return &ValidationError{Fields: errs}
	}
	return nil
}

func (r *TransferRequest) validate(errs []FieldError) []FieldError {
	errs = length(errs, "travelAddress", r.TravelAddress, 1, 255)
	errs = length(errs, "email", r.Email, 0, 255)
	errs = length(errs, "txId", r.TxID, 0, 255)
	errs = required(errs, "", "asset", r.Asset)
	errs = length(errs, "asset", r.Asset, 0, 20)
	errs = required(errs, "", "amount", r.Amount)
	errs = length(errs, "amount", r.Amount, 0, maxAmount)
	errs = amountForm(errs, r.Amount)
	errs = required(errs, "", "callback", r.Callback)
	errs = length(errs, "callback", r.Callback, 1, 255)
	if r.Callback != "" && !isAbsoluteHTTPURL(r.Callback) {
		errs = append(errs, FieldError{Field: "callback", Reason: "must be an absolute http or https URL"})
	}
	for _, f := range [...]struct{ name, v string }{
		{"travelAddress", r.TravelAddress}, {"email", r.Email}, {"txId", r.TxID},
		{"asset", r.Asset}, {"amount", r.Amount}, {"callback", r.Callback},
	} {
		errs = plainText(errs, "", f.name, f.v)
	}
	errs = r.Originator.validate("originator", errs)
	errs = r.Beneficiary.validate("beneficiary", errs)
	return errs
}

// Format implements fmt.Formatter so that %v, %+v, %s and %#v never print
// personal data.
func (r TransferRequest) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.TransferRequest")
	r.format(f, false, nil)
}

// format writes the fmt form. A request from a sender (an inbound
// inquiry) is the sender's text throughout: its txId, asset and amount are
// shown only in their own shapes, and its parties as from a sender.
func (r TransferRequest) format(f io.Writer, sender bool, extra []string) {
	txID, asset, amount := r.shownValues(sender, extra)
	fmt.Fprintf(f, "{TravelAddress:%s Email:%s TxID:%s Asset:%s Amount:%s Callback:%s Originator:",
		mask(r.TravelAddress), mask(r.Email), txID, asset, amount, mask(r.Callback))
	r.Originator.format(f, sender)
	io.WriteString(f, " Beneficiary:")
	r.Beneficiary.format(f, sender)
	io.WriteString(f, "}")
}

// LogValue implements slog.LogValuer: no personal data and no callback URL
// (it may carry a capability tag).
func (r TransferRequest) LogValue() slog.Value { return r.logValue(false, nil) }

func (r TransferRequest) logValue(sender bool, extra []string) slog.Value {
	txID, asset, amount := r.shownValues(sender, extra)
	return slog.GroupValue(
		slog.String("asset", asset),
		slog.String("amount", amount),
		slog.String("txId", txID),
		slog.Attr{Key: "originator", Value: r.Originator.logValue(sender)},
		slog.Attr{Key: "beneficiary", Value: r.Beneficiary.logValue(sender)},
	)
}

// shownValues returns the txId, asset and amount as the fmt and slog forms
// show them: a sender's only when the txId is an identifier free of the
// request's personal values and of extra (the other secrets of the
// callback that carried the request), the asset a ticker and the amount a
// number.
func (r TransferRequest) shownValues(sender bool, extra []string) (txID, asset, amount string) {
	if !sender {
		return r.TxID, r.Asset, r.Amount
	}
	sec := newSecrets(append(r.appendPII(nil), extra...), nil)
	txID = shownIf(r.TxID, isIdentifier(r.TxID, maxRequestID) && !sec.echoes(r.TxID))
	return txID, shownIf(r.Asset, isTicker(r.Asset) && !sec.echoes(r.Asset)), shownIf(r.Amount, isDecimal(r.Amount))
}

// Format implements fmt.Formatter so that no verb prints the answer's body
// or a value of the server's that is not an identifier.
func (r TransferResult) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.TransferResult")
	fmt.Fprintf(f, "{Status:%s TransferID:%s RequestID:%s IdempotencyKey:%s Attempts:%d Raw:%s}",
		shownID(r.Status), r.shownTransferID(), shownRequestID(r.RequestID), r.IdempotencyKey, r.Attempts, size(r.Raw))
}

// shownTransferID is the transfer id as the fmt and slog forms show it:
// never one that repeats a personal value of the request.
func (r TransferResult) shownTransferID() string {
	return shownTransferID(r.TransferID, r.hideTransferID)
}

// shownTransferID is a transfer id as fmt and slog forms show it:
// "[redacted]" when hide (see call.hidesTransferID) or when it is not a
// short identifier.
func shownTransferID(id string, hide bool) string {
	if hide {
		return redacted
	}
	return shownID(id)
}

// MarshalJSON implements json.Marshaler with the fields of LogValue: no
// form of a result carries its Raw body or an identifier it hides.
func (r TransferResult) MarshalJSON() ([]byte, error) { return logJSON(r.LogValue()) }

// LogValue implements slog.LogValuer, with the same fields as Format.
func (r TransferResult) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("status", shownID(r.Status)),
		slog.String("transferId", r.shownTransferID()),
		slog.String("requestId", shownRequestID(r.RequestID)),
		slog.String("idempotencyKey", r.IdempotencyKey),
		slog.Int("attempts", r.Attempts),
		slog.Int("rawBytes", len(r.Raw)),
	)
}

// appendPII appends the request's personal values and its callback's
// capability tags: what no identifier the call shows may echo.
func (r *TransferRequest) appendPII(dst []string) []string {
	dst = append(dst, r.TravelAddress, r.Email)
	dst = appendURLSecrets(dst, r.Callback)
	dst = r.Originator.piiValues(dst)
	return r.Beneficiary.piiValues(dst)
}

// initiateAnswer is an initiation answer in any of its documented shapes:
// the excerpt's {"status":"succes"}, and the live service's
// {"status":true,"data":{"transferId":"…"}}, with transferId at the top
// level or inside data.
type initiateAnswer struct {
	envelope
	TransferID flexString `json:"transferId"`
	Data       struct {
		TransferID flexString `json:"transferId"`
	} `json:"data"` // a data that is not an object is a type error decodeLenient forgives
}

// InitiateTransfer validates req and, if it is valid, submits it with
// POST {base}/transfers/initiate. Invalid input returns a [*ValidationError]
// and nothing is sent.
//
// The answer may be the excerpt's {"status":"succes"} or the live service's
// {"status":true,"data":{"transferId":"…"}}; the transferId is read at the
// top level or inside data. A 2xx answer whose status is false is the
// service refusing: an [*APIError] with its codes, never success and never
// [ErrOutcomeUnknown].
//
// Initiation is not idempotent: it is retried only where the service cannot
// have acted (a 429, the live service's rate limit, after its Retry-After
// or the backoff; a 401 or 403 that a fresh token may cure; connection
// failures before anything was written; and an HTTP/2 stream above a
// GOAWAY's last stream id); no transport below the client sends it again
// on its own. A failure after the service may have acted is an
// [*OutcomeUnknownError]: a 503, with Retry-After or without (gateways
// answer it after the upstream acted too; see
// [WithTrust503RetryAfterNotForwarded]), any other 5xx but 501, a final
// 1xx, and a dropped connection or reset stream (REFUSED_STREAM included: a
// proxy sends it after forwarding) after the request was written. See
// [WithIdempotency] for a service that honours Idempotency-Key.
//
// opts set this call's own retry budget, attempt time-out, extra headers
// or idempotency key (see [CallOption]); none of them makes the call
// repeatable.
func (c *Client) InitiateTransfer(ctx context.Context, req *TransferRequest, opts ...CallOption) (*TransferResult, error) {
	const op = "InitiateTransfer"
	if req == nil {
		return nil, c.invalid(ctx, op, &ValidationError{Fields: []FieldError{{Field: "", Reason: "request is nil"}}})
	}
	if err := c.validate(req); err != nil {
		return nil, c.invalid(ctx, op, err)
	}
	co, err := settleCall(opts)
	if err != nil {
		return nil, c.invalid(ctx, op, err)
	}
	body, err := encodeBody(op, req)
	if err != nil {
		return nil, err
	}
	spec := callSpec{op: op, url: c.initiateURL, body: body, repeatable: c.idempotency, pii: req, txID: req.TxID, callback: req.Callback}
	if c.idempotency && (co == nil || co.key == "") {
		spec.key = idempotencyKeyFrom(ctx)
		if !isIdentifier(spec.key, 255) {
			// Nothing was sent: net/http would refuse a key that cannot go
			// in a header, after the call had been counted as sent.
			return nil, c.invalid(ctx, op, &ValidationError{Fields: []FieldError{{Field: "Idempotency-Key", Reason: "must be 1..255 letters, digits and -_.:"}}})
		}
	}
	var status string
	ans, err := c.do(ctx, spec, co, func(a *answer) outcome {
		var o outcome
		status, a.transferID, o = parseInitiateAnswer(a.body)
		return o
	})
	if err != nil {
		return nil, err
	}
	return &TransferResult{
		Status:         status,
		TransferID:     ans.transferID,
		RequestID:      ans.shown.requestID(ans.header),
		IdempotencyKey: ans.key,
		Attempts:       ans.attempts,
		Raw:            ans.body,
		hideTransferID: ans.shown.hidesTransferID(ans.transferID),
	}, nil
}

// parseInitiateAnswer decodes an initiation answer. Its outcome is
// outcomeSuccess for a JSON object whose status means success (or that has
// no status but a transferId), outcomeRefused for one whose status is
// false and no transferId, and outcomeOther otherwise (a false status that
// names a transfer is not understood: the transfer may exist). status is the status as the answer
// wrote it ("succes", "true", ...); transferID is the answer's, whatever
// the outcome. Unknown fields are ignored.
func parseInitiateAnswer(body []byte) (status, transferID string, o outcome) {
	var ans initiateAnswer
	if !decodeLenient(body, &ans) {
		return "", "", outcomeOther
	}
	transferID = first(ans.Data.TransferID, ans.TransferID)
	if o := ans.refusal(); o != outcomeSuccess {
		if transferID != "" {
			// A refusal that names a transfer may be about one it made:
			// not understood, so that the caller reconciles.
			return "", transferID, outcomeOther
		}
		return "", "", o
	}
	if !understood(ans.Status, transferID != "") {
		return "", transferID, outcomeOther
	}
	return statusText(ans.Status), transferID, outcomeSuccess
}

func (c *Client) validate(req *TransferRequest) error {
	if c.strict {
		return req.ValidateStrict()
	}
	return req.Validate()
}

// statusText is the status of a successful answer as a result shows it:
// the word it was written as, in lower case, or "true" for an answer
// without status.
func statusText(st envelopeStatus) string {
	if st.word == "" {
		return "true"
	}
	return st.word
}
