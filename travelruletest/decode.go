package travelruletest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/internal/oneline"
)

// Strict decoding of request bodies: every known field must be a JSON
// string (null counts as absent), the parties must be objects, and unknown
// fields of any type are ignored. A value of the wrong type does not stop
// decoding: it is reported with its path and decoding goes on, so that one
// answer names every fault.

// jsonString decodes a JSON string; null leaves it unset and any other type
// marks it bad instead of failing.
type jsonString struct {
	v   string
	set bool
	bad bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *jsonString) UnmarshalJSON(b []byte) error {
	return decodeStrict(b, '"', &s.bad, func() error {
		if inner := b[1 : len(b)-1]; bytes.IndexByte(inner, '\\') < 0 {
			s.v = string(inner)
		} else if err := json.Unmarshal(b, &s.v); err != nil {
			return err
		}
		s.set = true
		return nil
	})
}

// decodeStrict is the rule of both strict decoders, by the first byte of the
// JSON value b: the one type the field accepts (the one that opens with
// opener) is decoded by decode, null leaves the field unset, and any other
// type sets *bad instead of failing.
func decodeStrict(b []byte, opener byte, bad *bool, decode func() error) error {
	switch b[0] {
	case opener:
		return decode()
	case 'n':
		return nil
	}
	*bad = true
	return nil
}

type wireParty struct {
	PersonType     jsonString `json:"personType"`
	FirstName      jsonString `json:"firstName"`
	LastName       jsonString `json:"lastName"`
	LegalName      jsonString `json:"legalName"`
	DateOfBirth    jsonString `json:"dateOfBirth"`
	Email          jsonString `json:"email"`
	AddressType    jsonString `json:"addressType"`
	StreetName     jsonString `json:"streetName"`
	BuildingNumber jsonString `json:"buildingNumber"`
	PostCode       jsonString `json:"postCode"`
	TownName       jsonString `json:"townName"`
	Country        jsonString `json:"country"`
	NationalID     jsonString `json:"nationalId"`
	NationalIDType jsonString `json:"nationalIdType"`
	AccountNumber  jsonString `json:"accountNumber"`
	WalletAddress  jsonString `json:"walletAddress"`
}

// jsonBool decodes a JSON boolean; null leaves it unset and any other type
// marks it bad instead of failing.
type jsonBool struct {
	v   bool
	bad bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *jsonBool) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		v.v = true
	case "false", "null":
	default:
		v.bad = true
	}
	return nil
}

// jsonParty decodes a party object; null leaves it unset and any other type
// marks it bad.
type jsonParty struct {
	p   wireParty
	bad bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *jsonParty) UnmarshalJSON(b []byte) error {
	return decodeStrict(b, '{', &p.bad, func() error { return json.Unmarshal(b, &p.p) })
}

type wireTransfer struct {
	TravelAddress jsonString `json:"travelAddress"`
	Email         jsonString `json:"email"`
	TxID          jsonString `json:"txId"`
	Asset         jsonString `json:"asset"`
	Amount        jsonString `json:"amount"`
	Callback      jsonString `json:"callback"`
	Originator    jsonParty  `json:"originator"`
	Beneficiary   jsonParty  `json:"beneficiary"`
}

type wireResolution struct {
	Approved jsonString `json:"approved"`
	Callback jsonString `json:"callback"`
}

// errNotObject and errNotJSON are the faults of a body as a whole.
var (
	errNotJSON   = errors.New("body is not valid JSON")
	errNotObject = errors.New("body must be a JSON object")
)

func decodeObject(body []byte, v any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return errNotJSON
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errNotObject
		}
		return errNotJSON
	}
	if trimmed[0] != '{' {
		return errNotObject // null
	}
	return nil
}

// typeFaults collects the fields of the wrong type.
type typeFaults []travelrule.FieldError

func (t *typeFaults) str(dst *string, path string, s jsonString) {
	if s.bad {
		*t = append(*t, travelrule.FieldError{Field: path, Reason: "must be a string"})
		return
	}
	*dst = s.v
}

func (t *typeFaults) boolean(dst *bool, path string, v jsonBool) {
	if v.bad {
		*t = append(*t, travelrule.FieldError{Field: path, Reason: "must be a boolean"})
		return
	}
	*dst = v.v
}

func (t *typeFaults) party(dst *travelrule.Party, path string, p jsonParty) {
	if p.bad {
		*t = append(*t, travelrule.FieldError{Field: path, Reason: "must be an object"})
		return
	}
	w := &p.p
	t.str(&dst.PersonType, path+".personType", w.PersonType)
	t.str(&dst.FirstName, path+".firstName", w.FirstName)
	t.str(&dst.LastName, path+".lastName", w.LastName)
	t.str(&dst.LegalName, path+".legalName", w.LegalName)
	t.str(&dst.DateOfBirth, path+".dateOfBirth", w.DateOfBirth)
	t.str(&dst.Email, path+".email", w.Email)
	t.str(&dst.AddressType, path+".addressType", w.AddressType)
	t.str(&dst.StreetName, path+".streetName", w.StreetName)
	t.str(&dst.BuildingNumber, path+".buildingNumber", w.BuildingNumber)
	t.str(&dst.PostCode, path+".postCode", w.PostCode)
	t.str(&dst.TownName, path+".townName", w.TownName)
	t.str(&dst.Country, path+".country", w.Country)
	t.str(&dst.NationalID, path+".nationalId", w.NationalID)
	t.str(&dst.NationalIDType, path+".nationalIdType", w.NationalIDType)
	t.str(&dst.AccountNumber, path+".accountNumber", w.AccountNumber)
	t.str(&dst.WalletAddress, path+".walletAddress", w.WalletAddress)
}

// merge appends the faults of v that do not concern a field already
// reported as being of the wrong type (such a field counts as absent, which
// Validate would report again as "required").
func (t typeFaults) merge(v error) []travelrule.FieldError {
	out := []travelrule.FieldError(t)
	var ve *travelrule.ValidationError
	if !errors.As(v, &ve) {
		return out
	}
next:
	for _, f := range ve.Fields {
		for _, bad := range t {
			if f.Field == bad.Field || strings.HasPrefix(f.Field, bad.Field+".") {
				continue next
			}
		}
		out = append(out, f)
	}
	return out
}

// decodeTransfer decodes an initiation body into req and checks it. It
// returns the faults to answer 400 with (err set for a body that is not a
// JSON object).
func decodeTransfer(body []byte, req *travelrule.TransferRequest) ([]travelrule.FieldError, error) {
	if scanTransfer(body, req) {
		var ve *travelrule.ValidationError
		if errors.As(validateTransfer(req), &ve) {
			return ve.Fields, nil
		}
		return nil, nil
	}
	*req = travelrule.TransferRequest{}
	var w wireTransfer
	if err := decodeObject(body, &w); err != nil {
		return nil, err
	}
	var t typeFaults
	t.str(&req.TravelAddress, "travelAddress", w.TravelAddress)
	t.str(&req.Email, "email", w.Email)
	t.str(&req.TxID, "txId", w.TxID)
	t.str(&req.Asset, "asset", w.Asset)
	t.str(&req.Amount, "amount", w.Amount)
	t.str(&req.Callback, "callback", w.Callback)
	t.party(&req.Originator, "originator", w.Originator)
	t.party(&req.Beneficiary, "beneficiary", w.Beneficiary)
	// Validate cannot tell an empty travelAddress from an absent one; the
	// description bounds it to 1..255 characters when present.
	if w.TravelAddress.set && w.TravelAddress.v == "" {
		t = append(t, travelrule.FieldError{Field: "travelAddress", Reason: "shorter than 1 characters"})
	}
	return t.merge(validateTransfer(req)), nil
}

// validateTransfer is req.Validate but for the amount's form: the live
// backend validates an amount's length alone (live docs; A17), so "-1",
// "1e-07" or "one BTC", which the client refuses before sending or under
// ValidateStrict, are accepted as the live service accepts them. The
// amount's characters are judged as every field's (A6).
func validateTransfer(req *travelrule.TransferRequest) error {
	if req.Amount == "" || utf8.RuneCountInString(req.Amount) > maxAmount {
		return req.Validate()
	}
	r := *req
	r.Amount = "1" // of a valid form: only the length is judged
	err := r.Validate()
	reason := oneline.TextFault(req.Amount)
	if reason == "" {
		return err
	}
	fault := travelrule.FieldError{Field: "amount", Reason: reason}
	var ve *travelrule.ValidationError
	if !errors.As(err, &ve) {
		return &travelrule.ValidationError{Fields: []travelrule.FieldError{fault}}
	}
	return &travelrule.ValidationError{Fields: append(ve.Fields, fault)}
}

// maxAmount is the description's bound on amount (part 8).
const maxAmount = 50

// CheckTransfer reports what a sandbox with default options would refuse
// in body, a transfer initiation in its wire form, without a server: nil
// if it would accept it; a [*travelrule.ValidationError] naming every fault
// it would answer 400 with, by JSON path and with the same reasons (an
// empty asset as "asset: required", which the server answers in the live
// docs' words, "Asset is required"; a known
// field whose value is not a JSON string, a party that is not an object,
// every fault of [travelrule.TransferRequest.Validate], a travelAddress
// present but empty, or starting with "ta" and in no form the service or
// TRP makes: travelrule.InspectTravelAddress says invalid); or an error
// that says why body is not a JSON object. Unknown fields are ignored, as
// the sandbox ignores them. It does not judge whether a travel address
// resolves (404), and accepts an initiation with neither a travelAddress
// nor an email, as a server without [WithTravelAddressRequired] does. It is
// what `travelrule validate` runs.
func CheckTransfer(body []byte) error {
	var req travelrule.TransferRequest
	faults, err := decodeTransfer(body, &req)
	if err != nil {
		return err
	}
	faults = directory(nil).travelAddressFaults(req.TravelAddress, faults)
	if len(faults) > 0 {
		return &travelrule.ValidationError{Fields: faults}
	}
	return nil
}

// decodeResolution decodes and checks an inquiry-resolution body and its
// transfer id.
func decodeResolution(q string, body []byte) (travelrule.InquiryResolution, []travelrule.FieldError, error) {
	var w wireResolution
	var res travelrule.InquiryResolution
	if err := decodeObject(body, &w); err != nil {
		return res, nil, err
	}
	var t typeFaults
	if q == "" {
		t = append(t, travelrule.FieldError{Field: "q", Reason: "required"})
	}
	t.str(&res.Approved, "approved", w.Approved)
	t.str(&res.Callback, "callback", w.Callback)
	return res, t.merge(res.Validate()), nil
}
