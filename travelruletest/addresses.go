package travelruletest

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/vaspkit/travelrule"
)

// The travel-address operations of the live service (stage 2 of its
// guide): POST {URL}/travel-address/generate makes (or finds again) the
// travel address of a beneficiary of the integrator's, and POST
// {URL}/travel-address/decode reads one back. The sandbox is the
// beneficiary's VASP: its addresses are in the live service's unchecked
// form, "ta" and the base58 of
// "<host:port><prefix>/transfers/inquiry/<beneficiaryId>?t=i".

// inquiryPath is the path, after the path prefix, of the inbound TRP
// endpoint a generated travel address names, before the beneficiary's id.
const inquiryPath = "/transfers/inquiry/"

// wireAddressRequest is the body of POST {URL}/travel-address/generate.
type wireAddressRequest struct {
	PersonType    jsonString `json:"personType"`
	FirstName     jsonString `json:"firstName"`
	LastName      jsonString `json:"lastName"`
	LegalName     jsonString `json:"legalName"`
	WalletAddress jsonString `json:"walletAddress"`
	ExternalID    jsonString `json:"externalId"`
	IsSelfHosted  jsonBool   `json:"isSelfHosted"`
}

// decodeAddressRequest decodes and checks a generate body: the strict types
// of decode.go, then travelrule.TravelAddressRequest.Validate.
func decodeAddressRequest(body []byte) (travelrule.TravelAddressRequest, []travelrule.FieldError, error) {
	var w wireAddressRequest
	var req travelrule.TravelAddressRequest
	if err := decodeObject(body, &w); err != nil {
		return req, nil, err
	}
	var t typeFaults
	t.str(&req.PersonType, "personType", w.PersonType)
	t.str(&req.FirstName, "firstName", w.FirstName)
	t.str(&req.LastName, "lastName", w.LastName)
	t.str(&req.LegalName, "legalName", w.LegalName)
	t.str(&req.WalletAddress, "walletAddress", w.WalletAddress)
	t.str(&req.ExternalID, "externalId", w.ExternalID)
	t.boolean(&req.IsSelfHosted, "isSelfHosted", w.IsSelfHosted)
	return req, t.merge(req.Validate()), nil
}

// generateTravelAddress is POST {URL}/travel-address/generate.
func (s *Server) generateTravelAddress(body []byte) *answer {
	req, faults, err := decodeAddressRequest(body)
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	b, err := s.beneficiaries.upsert(req, s.travelAddressOf)
	if err != nil {
		return errorAnswer(http.StatusInternalServerError, codeInternal,
			"the sandbox cannot make a travel address under its URL: "+strings.TrimPrefix(err.Error(), travelrule.ErrInvalidTravelAddress.Error()+": "))
	}
	// The travel address alone, as the live docs show the answer: the
	// beneficiary's id travels inside it, never beside it.
	return dataAnswer(struct {
		TravelAddress string `json:"travelAddress"`
	}{b.travelAddress})
}

// travelAddressOf is the travel address of the beneficiary id, in the live
// service's unchecked form. It fails only for a path prefix that makes the
// address longer than 255 characters or is not a plain URI path.
func (s *Server) travelAddressOf(id string) (string, error) {
	return travelrule.EncodeUncheckedTravelAddress(s.host + s.prefix + inquiryPath + id + "?t=i")
}

// wireTravelAddress is the body of POST {URL}/travel-address/decode.
type wireTravelAddress struct {
	TravelAddress jsonString `json:"travelAddress"`
}

// beneficiaryData is the data of a decode answer: the beneficiary as last
// generated, fields empty left out.
type beneficiaryData struct {
	PersonType    string `json:"personType,omitempty"`
	FirstName     string `json:"firstName,omitempty"`
	LastName      string `json:"lastName,omitempty"`
	LegalName     string `json:"legalName,omitempty"`
	WalletAddress string `json:"walletAddress,omitempty"`
	ExternalID    string `json:"externalId,omitempty"`
}

// decodeTravelAddress is POST {URL}/travel-address/decode: the beneficiary
// of a travel address the sandbox generated and keeps; 404
// INVALID_TRAVEL_ADDRESS for any other well-formed address (registered ones
// included: they stand for no beneficiary), 400 for one that no one could
// have made.
func (s *Server) decodeTravelAddress(body []byte) *answer {
	var w wireTravelAddress
	if err := decodeObject(body, &w); err != nil {
		return badRequest(err, nil)
	}
	var t typeFaults
	var ta string
	t.str(&ta, "travelAddress", w.TravelAddress)
	if len(t) == 0 {
		if reason := s.travelAddressFault(ta); reason != "" {
			t = append(t, travelrule.FieldError{Field: "travelAddress", Reason: reason})
		}
	}
	if len(t) > 0 {
		return badRequest(nil, t)
	}
	if b, ok := s.beneficiaries.lookup(ta); ok {
		return dataAnswer(beneficiaryData{
			PersonType: b.req.PersonType, FirstName: b.req.FirstName, LastName: b.req.LastName, LegalName: b.req.LegalName,
			WalletAddress: b.req.WalletAddress, ExternalID: b.req.ExternalID,
		})
	}
	return fieldAnswer(http.StatusNotFound, codeInvalidTravelAddress, "travelAddress",
		"unknown: the sandbox did not generate this travel address (or no longer keeps it)")
}

// travelAddressFault says why ta cannot be a travel address to decode, or
// "": it is required, at most 255 characters, and in one of the forms
// (not starting with "ta" is no form), unless registered with
// WithTravelAddresses or WithUnknownTravelAddresses.
func (s *Server) travelAddressFault(ta string) string {
	_, registered := s.cfg.travelAddresses[ta]
	switch {
	case ta == "":
		return "required"
	case utf8.RuneCountInString(ta) > 255:
		return "longer than 255 characters"
	case registered:
		return ""
	case !strings.HasPrefix(ta, "ta"):
		return notATravelAddress + `does not start with "ta"`
	}
	if v, reason := s.cfg.travelAddresses.lookup(ta); v == undecodable {
		return reason
	}
	return ""
}
