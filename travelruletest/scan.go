package travelruletest

import (
	"strings"
	"unicode/utf8"

	"github.com/vaspkit/travelrule"
)

// scanTransfer decodes an initiation body into req as json.Unmarshal does,
// at a fraction of its cost, when the body has the shape the SDK sends:
// one object whose members have the field names exactly, each a string
// with no escape sequence or null (the parties: objects of such members,
// or null), and no empty travelAddress. It reports false for any other
// body (an unknown or case-folded name, an escape, a number, invalid
// UTF-8, bad JSON...), leaving req partly written: decodeTransfer then
// decodes it with encoding/json, which judges it.
func scanTransfer(body []byte, req *travelrule.TransferRequest) bool {
	// One string for the body, of which the fields are parts: one
	// allocation, not one a field.
	s := scanner{b: string(body)}
	ok := s.object(func(name string) bool {
		switch string(name) {
		case "originator":
			return s.party(&req.Originator)
		case "beneficiary":
			return s.party(&req.Beneficiary)
		case "travelAddress":
			s.space()
			if s.null() {
				return true
			}
			v, ok := s.raw()
			req.TravelAddress = v
			return ok && v != "" // an empty one is a fault, which the slow path reports
		}
		f := transferField(req, name)
		return f != nil && s.string(f)
	})
	s.space()
	return ok && s.i == len(body)
}

// transferField is the string field of req named name, but the travel
// address, or nil.
func transferField(req *travelrule.TransferRequest, name string) *string {
	switch name {
	case "email":
		return &req.Email
	case "txId":
		return &req.TxID
	case "asset":
		return &req.Asset
	case "amount":
		return &req.Amount
	case "callback":
		return &req.Callback
	}
	return nil
}

// partyField is the field of p named name, or nil.
func partyField(p *travelrule.Party, name string) *string {
	switch name {
	case "personType":
		return &p.PersonType
	case "firstName":
		return &p.FirstName
	case "lastName":
		return &p.LastName
	case "legalName":
		return &p.LegalName
	case "dateOfBirth":
		return &p.DateOfBirth
	case "email":
		return &p.Email
	case "addressType":
		return &p.AddressType
	case "streetName":
		return &p.StreetName
	case "buildingNumber":
		return &p.BuildingNumber
	case "postCode":
		return &p.PostCode
	case "townName":
		return &p.TownName
	case "country":
		return &p.Country
	case "nationalId":
		return &p.NationalID
	case "nationalIdType":
		return &p.NationalIDType
	case "accountNumber":
		return &p.AccountNumber
	case "walletAddress":
		return &p.WalletAddress
	}
	return nil
}

// scanner reads the JSON of scanTransfer's bodies: each method reads one
// token at i, after any white space, and reports false for anything else.
type scanner struct {
	b string
	i int
}

// space skips JSON's white space.
func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// byte reads c.
func (s *scanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// raw reads a string without escape sequences, control characters or
// invalid UTF-8, and returns its characters.
func (s *scanner) raw() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	for j := s.i; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			v := s.b[s.i:j]
			s.i = j + 1
			return v, utf8.ValidString(v)
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// string reads a string into dst, or null, which leaves dst as it is.
func (s *scanner) string(dst *string) bool {
	s.space()
	if s.null() {
		return true
	}
	v, ok := s.raw()
	*dst = v
	return ok
}

// null reads null.
func (s *scanner) null() bool {
	if strings.HasPrefix(s.b[s.i:], "null") {
		s.i += 4
		return true
	}
	return false
}

// object reads an object, calling member with the name of each of its
// members once the scanner is at its value, which member reads.
func (s *scanner) object(member func(name string) bool) bool {
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return true
	}
	for {
		name, ok := s.raw()
		if !ok || !s.byte(':') || !member(name) {
			return false
		}
		if s.byte('}') {
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

// party reads a party object into p, or null, which leaves p as it is.
func (s *scanner) party(p *travelrule.Party) bool {
	s.space()
	if s.null() {
		return true
	}
	return s.object(func(name string) bool {
		f := partyField(p, name)
		return f != nil && s.string(f)
	})
}
