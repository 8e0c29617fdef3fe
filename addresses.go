package travelrule

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
)

// The travel-address calls of the live service: stage 2 of its guide.

// TravelAddressRequest is the body of POST /travel-address/generate: the
// beneficiary a travel address is made for. The service "creates (or
// upserts) a beneficiary applicant": the same beneficiary (same
// ExternalID, or the same names and wallet) gets the same address again.
//
// It holds personal data; its fmt and log/slog forms are redacted.
type TravelAddressRequest struct {
	// PersonType is "natural" or "legal"; required.
	PersonType string `json:"personType"`
	// FirstName is a natural person's given name; required for one.
	FirstName string `json:"firstName,omitempty"`
	// LastName is a natural person's family name; required for one.
	LastName string `json:"lastName,omitempty"`
	// LegalName names a legal entity; required for one.
	LegalName string `json:"legalName,omitempty"`
	// WalletAddress is the beneficiary's wallet; optional, and when set it
	// must contain at least one hexadecimal digit, as the service checks.
	WalletAddress string `json:"walletAddress,omitempty"`
	// ExternalID is your own identifier of the beneficiary; optional. It
	// is what makes the address stable across changes of name or wallet.
	ExternalID string `json:"externalId,omitempty"`
	// IsSelfHosted is true for a self-hosted wallet, whose transfers go by
	// the EMAIL flow; false (custodial) by default.
	IsSelfHosted bool `json:"isSelfHosted"`
}

// TravelAddressResult is the answer to a successful GenerateTravelAddress.
type TravelAddressResult struct {
	// TravelAddress is the beneficiary's travel address, "ta…". It
	// identifies the beneficiary's account: treat it as personal data.
	TravelAddress string
	// Form is the address's form ([InspectTravelAddress]); the live
	// service makes unchecked and opaque ones.
	Form TravelAddressForm
	// RequestID is the answer's X-Request-Id header, if any: empty when,
	// of a request id's shape, it echoes a secret of the call; one of
	// another shape is kept as sent and masked in every printed form.
	RequestID string
	// Attempts is how many times the request was sent.
	Attempts int
	// Raw is the whole answer body, unknown fields included.
	Raw json.RawMessage
}

// Validate reports every fault of the request as a [*ValidationError], or
// nil: personType required, a natural person's firstName and lastName or a
// legal person's legalName, a walletAddress with a hexadecimal digit, and
// at most 255 characters of plain text per field (an assumption: the
// service documents no bounds; see [TransferRequest.Validate] for what
// plain text is).
func (r *TravelAddressRequest) Validate() error {
	var errs []FieldError
	errs = required(errs, "", "personType", r.PersonType)
	if strings.EqualFold(r.PersonType, "legal") {
		errs = required(errs, "", "legalName", r.LegalName)
	} else {
		errs = required(errs, "", "firstName", r.FirstName)
		errs = required(errs, "", "lastName", r.LastName)
	}
	for _, f := range [...]struct{ name, v string }{
		{"personType", r.PersonType}, {"firstName", r.FirstName}, {"lastName", r.LastName},
		{"legalName", r.LegalName}, {"walletAddress", r.WalletAddress}, {"externalId", r.ExternalID},
	} {
		errs = length(errs, f.name, f.v, 0, 255)
		errs = plainText(errs, "", f.name, f.v)
	}
	if r.WalletAddress != "" && !strings.ContainsAny(r.WalletAddress, "0123456789abcdefABCDEF") {
		errs = append(errs, FieldError{Field: "walletAddress", Reason: "must contain at least one hexadecimal digit"})
	}
	if len(errs) > 0 {
		return &ValidationError{Fields: errs}
	}
	return nil
}

// appendPII appends the request's personal values.
func (r *TravelAddressRequest) appendPII(dst []string) []string {
	return append(dst, r.FirstName, r.LastName, r.LegalName, r.WalletAddress, r.ExternalID)
}

// Format implements fmt.Formatter so that no verb prints personal data.
func (r TravelAddressRequest) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.TravelAddressRequest")
	fmt.Fprintf(f, "{PersonType:%s FirstName:%s LastName:%s LegalName:%s WalletAddress:%s ExternalID:%s IsSelfHosted:%t}",
		shownID(r.PersonType), mask(r.FirstName), mask(r.LastName), mask(r.LegalName), mask(r.WalletAddress), mask(r.ExternalID), r.IsSelfHosted)
}

// LogValue implements slog.LogValuer: the person type and custody only.
func (r TravelAddressRequest) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("personType", shownID(r.PersonType)),
		slog.Bool("isSelfHosted", r.IsSelfHosted),
		slog.String("personalData", redacted),
	)
}

// Format implements fmt.Formatter so that no verb prints the address or
// the answer's body.
func (r TravelAddressResult) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.TravelAddressResult")
	fmt.Fprintf(f, "{TravelAddress:%s Form:%s RequestID:%s Attempts:%d Raw:%s}",
		mask(r.TravelAddress), r.Form, shownRequestID(r.RequestID), r.Attempts, size(r.Raw))
}

// MarshalJSON implements json.Marshaler with the fields of LogValue: no
// form of a result carries its Raw body or an identifier it hides.
func (r TravelAddressResult) MarshalJSON() ([]byte, error) { return logJSON(r.LogValue()) }

// LogValue implements slog.LogValuer, with the same fields as Format.
func (r TravelAddressResult) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("travelAddress", mask(r.TravelAddress)),
		slog.String("form", r.Form.String()),
		slog.String("requestId", shownRequestID(r.RequestID)),
		slog.Int("attempts", r.Attempts),
		slog.Int("rawBytes", len(r.Raw)),
	)
}

type travelAddressFields struct {
	TravelAddress flexString `json:"travelAddress"`
}

// generateAnswer is the answer of generate, wrapped in data or not (the
// docs show both).
type generateAnswer struct {
	envelope
	travelAddressFields
	Data travelAddressFields `json:"data"`
}

// GenerateTravelAddress makes (or finds again) the travel address of a
// beneficiary with POST {base}/travel-address/generate: stage 2 of the
// live service's guide. An invalid req returns a [*ValidationError] and
// nothing is sent.
//
// The service returns the same address for the same beneficiary, so the
// call is retried like [Client.ResolveInquiry]: besides what
// InitiateTransfer retries, also 5xx answers (but 501) and connections
// dropped after the request was written, within the retry budget; if the
// budget runs out after such a failure, the error is an
// [*OutcomeUnknownError], and sending the same request again is safe.
// opts set this call's own settings (see [CallOption]).
func (c *Client) GenerateTravelAddress(ctx context.Context, req *TravelAddressRequest, opts ...CallOption) (*TravelAddressResult, error) {
	const op = "GenerateTravelAddress"
	if req == nil {
		return nil, c.invalid(ctx, op, &ValidationError{Fields: []FieldError{{Field: "", Reason: "request is nil"}}})
	}
	if err := req.Validate(); err != nil {
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
	var ta string
	spec := callSpec{op: op, url: c.baseURL + "/travel-address/generate", body: body, repeatable: true, pii: req}
	ans, err := c.do(ctx, spec, co, func(got *answer) outcome {
		var a generateAnswer
		if !decodeLenient(got.body, &a) {
			return outcomeOther
		}
		ta = first(a.Data.TravelAddress, a.TravelAddress)
		if o := a.refusal(); o != outcomeSuccess {
			return o
		}
		if !understood(a.Status, ta != "") || ta == "" {
			return outcomeOther
		}
		return outcomeSuccess
	})
	if err != nil {
		return nil, err
	}
	form, _ := InspectTravelAddress(ta)
	return &TravelAddressResult{
		TravelAddress: ta,
		Form:          form,
		RequestID:     ans.shown.requestID(ans.header, ta),
		Attempts:      ans.attempts,
		Raw:           ans.body,
	}, nil
}

// TravelAddressInfo is the answer to a successful LookupTravelAddress: the
// beneficiary a travel address of the service's stands for. Fields the
// answer does not carry are empty.
//
// It holds personal data; its fmt and log/slog forms are redacted.
type TravelAddressInfo struct {
	// PersonType is "natural" or "legal", when the answer says.
	PersonType string
	// FirstName, LastName and LegalName name the beneficiary.
	FirstName, LastName, LegalName string
	// WalletAddress is the beneficiary's wallet.
	WalletAddress string
	// ExternalID is the identifier given when the address was made.
	ExternalID string
	// RequestID is the answer's X-Request-Id header, if any: empty when,
	// of a request id's shape, it echoes a secret of the call; one of
	// another shape is kept as sent and masked in every printed form.
	RequestID string
	// Attempts is how many times the request was sent.
	Attempts int
	// Raw is the whole answer body, unknown fields included.
	Raw json.RawMessage
}

// Format implements fmt.Formatter so that no verb prints personal data.
func (r TravelAddressInfo) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.TravelAddressInfo")
	fmt.Fprintf(f, "{PersonType:%s FirstName:%s LastName:%s LegalName:%s WalletAddress:%s ExternalID:%s RequestID:%s Attempts:%d Raw:%s}",
		shownID(r.PersonType), mask(r.FirstName), mask(r.LastName), mask(r.LegalName), mask(r.WalletAddress), mask(r.ExternalID),
		shownRequestID(r.RequestID), r.Attempts, size(r.Raw))
}

// MarshalJSON implements json.Marshaler with the fields of LogValue: no
// form of a result carries its Raw body or an identifier it hides.
func (r TravelAddressInfo) MarshalJSON() ([]byte, error) { return logJSON(r.LogValue()) }

// LogValue implements slog.LogValuer: no personal data.
func (r TravelAddressInfo) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("personType", shownID(r.PersonType)),
		slog.String("personalData", redacted),
		slog.String("requestId", shownRequestID(r.RequestID)),
		slog.Int("attempts", r.Attempts),
		slog.Int("rawBytes", len(r.Raw)),
	)
}

type beneficiaryFields struct {
	PersonType    flexString `json:"personType"`
	FirstName     flexString `json:"firstName"`
	LastName      flexString `json:"lastName"`
	LegalName     flexString `json:"legalName"`
	WalletAddress flexString `json:"walletAddress"`
	ExternalID    flexString `json:"externalId"`
}

type decodeAnswer struct {
	envelope
	beneficiaryFields
	Data beneficiaryFields `json:"data"`
}

// travelAddressBody is the body of POST /travel-address/decode (an
// assumption: the docs show the call, not its body).
type travelAddressBody struct {
	TravelAddress string `json:"travelAddress"`
}

// LookupTravelAddress asks the service for the beneficiary a travel address
// it made stands for, with POST {base}/travel-address/decode and
// {"travelAddress": ta}. An empty address, one longer than 255
// characters, or one that is not plain text (see
// [TransferRequest.Validate]), returns a [*ValidationError] and nothing is
// sent; the service
// judges the rest (an address it did not make is an [*APIError] matching
// [ErrInvalidTravelAddress] or [ErrNotFound]). To read an address's URI
// without asking, use [DecodeTravelAddress].
//
// It changes nothing, so it is retried like [Client.ResolveInquiry]. opts
// set this call's own settings (see [CallOption]).
func (c *Client) LookupTravelAddress(ctx context.Context, travelAddress string, opts ...CallOption) (*TravelAddressInfo, error) {
	const op = "LookupTravelAddress"
	var errs []FieldError
	errs = required(errs, "", "travelAddress", travelAddress)
	errs = length(errs, "travelAddress", travelAddress, 1, maxTravelAddress)
	errs = plainText(errs, "", "travelAddress", travelAddress)
	if len(errs) > 0 {
		return nil, c.invalid(ctx, op, &ValidationError{Fields: errs})
	}
	co, err := settleCall(opts)
	if err != nil {
		return nil, c.invalid(ctx, op, err)
	}
	body, err := encodeBody(op, travelAddressBody{travelAddress})
	if err != nil {
		return nil, err
	}
	var info TravelAddressInfo
	spec := callSpec{op: op, url: c.baseURL + "/travel-address/decode", body: body, repeatable: true, pii: piiList{travelAddress}}
	ans, err := c.do(ctx, spec, co, func(got *answer) outcome {
		var a decodeAnswer
		if !decodeLenient(got.body, &a) {
			return outcomeOther
		}
		top, d := &a.beneficiaryFields, &a.Data
		info = TravelAddressInfo{
			PersonType:    first(d.PersonType, top.PersonType),
			FirstName:     first(d.FirstName, top.FirstName),
			LastName:      first(d.LastName, top.LastName),
			LegalName:     first(d.LegalName, top.LegalName),
			WalletAddress: first(d.WalletAddress, top.WalletAddress),
			ExternalID:    first(d.ExternalID, top.ExternalID),
		}
		if o := a.refusal(); o != outcomeSuccess {
			return o
		}
		found := info.FirstName != "" || info.LastName != "" || info.LegalName != "" || info.WalletAddress != "" || info.ExternalID != ""
		if !understood(a.Status, found) {
			return outcomeOther
		}
		return outcomeSuccess
	})
	if err != nil {
		return nil, err
	}
	info.RequestID = ans.shown.requestID(ans.header, info.FirstName, info.LastName, info.LegalName, info.WalletAddress, info.ExternalID)
	info.Attempts, info.Raw = ans.attempts, ans.body
	return &info, nil
}
