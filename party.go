package travelrule

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/vaspkit/travelrule/ivms101"
)

// Party is the IVMS101-derived profile of the originator or the beneficiary
// of a transfer (part 2.2 of the interface description). Every value is a
// string on the wire, building numbers, post codes and national identifiers
// included. Required: PersonType, and for a natural person FirstName,
// LastName and DateOfBirth, for a legal person (PersonType "legal")
// LegalName instead. Email is the live service's EMAIL flow: a beneficiary
// with an email and no travel address is reached by email.
//
// Party holds personal data. Its fmt and log/slog forms are redacted: only
// PersonType, AddressType, Country and NationalIDType are shown, and the
// other fields are shown as "[redacted]" when set. Its JSON form is the wire
// form and is not redacted.
type Party struct {
	// PersonType is the kind of person: "natural" (the description's
	// sample) or "legal" (a legal entity, as the live service and IVMS101
	// have it).
	PersonType string `json:"personType"`
	// FirstName is the given name of a natural person (IVMS101
	// secondaryIdentifier).
	FirstName string `json:"firstName,omitempty"`
	// LastName is the family name of a natural person (IVMS101
	// primaryIdentifier).
	LastName string `json:"lastName,omitempty"`
	// LegalName is the name of a legal entity (PersonType "legal"); the
	// only legal-entity field the live service's pages name.
	LegalName string `json:"legalName,omitempty"`
	// DateOfBirth is the date of birth of a natural person; its format is
	// not shown by the description (IVMS101 and the live service's
	// examples use YYYY-MM-DD). The party's IVMS101 form leaves it out:
	// IVMS101 takes a date of birth only with a place of birth, which a
	// Party has not (see [Party.IVMS101Person]).
	DateOfBirth string `json:"dateOfBirth,omitempty"`
	// Email is the party's email address (at most 255 characters). On the
	// beneficiary it selects the live service's EMAIL flow, and wins over
	// the request's top-level Email.
	Email string `json:"email,omitempty"`
	// AddressType is the kind of address, such as "HOME".
	AddressType string `json:"addressType,omitempty"`
	// StreetName is the street of the address.
	StreetName string `json:"streetName,omitempty"`
	// BuildingNumber is the building number, a string.
	BuildingNumber string `json:"buildingNumber,omitempty"`
	// PostCode is the post code, a string.
	PostCode string `json:"postCode,omitempty"`
	// TownName is the town of the address.
	TownName string `json:"townName,omitempty"`
	// Country is a two-letter country code, such as "DE".
	Country string `json:"country,omitempty"`
	// NationalID is a national identifier, a string.
	NationalID string `json:"nationalId,omitempty"`
	// NationalIDType is the kind of national identifier, a short code.
	NationalIDType string `json:"nationalIdType,omitempty"`
	// AccountNumber is the party's account number at its VASP.
	AccountNumber string `json:"accountNumber,omitempty"`
	// WalletAddress is the party's wallet address.
	WalletAddress string `json:"walletAddress,omitempty"`
}

const redacted = "[redacted]"

// mask returns redacted for a non-empty value, "" otherwise, so that redacted
// output still shows which fields are set.
func mask(s string) string {
	if s == "" {
		return ""
	}
	return redacted
}

// Format implements fmt.Formatter so that %v, %+v, %s, %q and %#v never print
// personal data.
func (p Party) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.Party")
	p.format(f, false)
}

// format writes the fmt form; a party from a sender (an inbound inquiry)
// shows its codes only when they are codes of IVMS101, since they are the
// sender's text.
func (p Party) format(f io.Writer, sender bool) {
	c := p.codes(sender)
	fmt.Fprintf(f, "{PersonType:%s FirstName:%s LastName:%s LegalName:%s DateOfBirth:%s Email:%s AddressType:%s StreetName:%s BuildingNumber:%s PostCode:%s TownName:%s Country:%s NationalID:%s NationalIDType:%s AccountNumber:%s WalletAddress:%s}",
		c.personType, mask(p.FirstName), mask(p.LastName), mask(p.LegalName), mask(p.DateOfBirth), mask(p.Email), c.addressType,
		mask(p.StreetName), mask(p.BuildingNumber), mask(p.PostCode), mask(p.TownName), c.country,
		mask(p.NationalID), c.nationalIDType, mask(p.AccountNumber), mask(p.WalletAddress))
}

// LogValue implements slog.LogValuer: the non-personal fields only.
func (p Party) LogValue() slog.Value { return p.logValue(false) }

func (p Party) logValue(sender bool) slog.Value {
	c := p.codes(sender)
	return slog.GroupValue(
		slog.String("personType", c.personType),
		slog.String("country", c.country),
		slog.String("addressType", c.addressType),
		slog.String("nationalIdType", c.nationalIDType),
		slog.String("personalData", redacted),
	)
}

// partyCodes are the fields of a party that its fmt and slog forms show.
type partyCodes struct{ personType, addressType, country, nationalIDType string }

// codes returns the party's codes as they are shown: as they are in a
// request the integrator built; from a sender, only values of the IVMS101
// code lists, anything else "[redacted]".
func (p Party) codes(sender bool) partyCodes {
	c := partyCodes{p.PersonType, p.AddressType, p.Country, p.NationalIDType}
	if !sender {
		return c
	}
	only := func(v string, ok bool) string {
		if v == "" || ok {
			return v
		}
		return redacted
	}
	return partyCodes{
		personType:     only(c.personType, oneOf(c.personType, "natural", "legal")),
		addressType:    only(c.addressType, ivms101.AddressType(c.addressType).Valid()),
		country:        only(c.country, isTwoLetters(c.country) && isISORegion(c.country)),
		nationalIDType: only(c.nationalIDType, ivms101.NationalIdentifierType(c.nationalIDType).Valid()),
	}
}

// piiValues appends the party's personal values to dst; they are scrubbed
// from any server message that is put into an error string.
func (p *Party) piiValues(dst []string) []string {
	return append(dst, p.FirstName, p.LastName, p.LegalName, p.DateOfBirth, p.Email, p.StreetName, p.BuildingNumber,
		p.PostCode, p.TownName, p.NationalID, p.AccountNumber, p.WalletAddress)
}

// isLegal reports whether the party is a legal entity.
func (p *Party) isLegal() bool { return strings.EqualFold(p.PersonType, "legal") }

// validate appends the party's faults, with paths under prefix, to errs. It
// allocates nothing when the party is valid.
func (p *Party) validate(prefix string, errs []FieldError) []FieldError {
	errs = requiredBy(errs, prefix, "personType", p.PersonType, requiredByDescription)
	if p.isLegal() {
		errs = requiredBy(errs, prefix, "legalName", p.LegalName, requiredForLegal)
	} else {
		errs = requiredBy(errs, prefix, "firstName", p.FirstName, requiredByDescription)
		errs = requiredBy(errs, prefix, "lastName", p.LastName, requiredByDescription)
		errs = requiredBy(errs, prefix, "dateOfBirth", p.DateOfBirth, requiredByDescription)
	}
	for _, f := range p.texts() {
		if longer(f.v, maxPartyText) {
			errs = append(errs, FieldError{Field: path(prefix, f.name), Reason: "longer than " + itoa(maxPartyText) + " characters"})
		}
		errs = plainText(errs, prefix, f.name, f.v)
	}
	if p.Country != "" && !isTwoLetters(p.Country) {
		errs = append(errs, FieldError{Field: prefix + ".country", Reason: "must be exactly 2 letters"})
	}
	return errs
}

// The reasons of a party's required fields say where each requirement
// comes from: the interface description's party profile (2.2) requires
// personType, firstName, lastName and dateOfBirth of both parties; the live
// docs switch a legal person (personType "legal") to legalName instead.
const (
	requiredByDescription = "required for both parties by the interface description (2.2)"
	requiredForLegal      = `required for a legal person (personType "legal") by the live docs, in place of firstName, lastName and dateOfBirth`
)

// validateStrict appends the faults [TransferRequest.ValidateStrict] adds
// to the description's own checks for the party's fields that IVMS101 does
// not judge (its personType, which the mapping reads as "legal" or not;
// its dateOfBirth and email, which IVMS101 has no place for) and a country
// that is an assigned ISO 3166-1 code (IVMS101 also takes XX, unknown).
// The IVMS101 constraints are TransferRequest.ivmsFaults'.
func (p *Party) validateStrict(prefix string, errs []FieldError) []FieldError {
	if p.PersonType != "" && p.PersonType != "natural" && p.PersonType != "legal" {
		errs = append(errs, FieldError{Field: prefix + ".personType", Reason: `must be "natural" or "legal"`})
	}
	if p.DateOfBirth != "" && !isISODate(p.DateOfBirth) {
		errs = append(errs, FieldError{Field: prefix + ".dateOfBirth", Reason: "must be a date in the form YYYY-MM-DD"})
	}
	if p.Country != "" && isTwoLetters(p.Country) && !isISORegion(p.Country) {
		errs = append(errs, FieldError{Field: prefix + ".country", Reason: "must be an ISO 3166-1 alpha-2 country code"})
	}
	if p.Email != "" && !isEmailAddress(p.Email) {
		errs = append(errs, FieldError{Field: prefix + ".email", Reason: "must be an email address (name@domain)"})
	}
	return errs
}

// maxPartyText bounds every text field of a party in [TransferRequest.Validate]:
// the description bounds none of them but email and country, and 255 is its
// bound on every other free text (travelAddress, email, txId, callback). It
// is above every IVMS101 limit, so it refuses only absurd sizes.
const maxPartyText = 255

// texts returns the party's text fields, country aside (exactly two
// letters): their JSON names and values. It allocates nothing.
func (p *Party) texts() [15]struct{ name, v string } {
	return [...]struct{ name, v string }{
		{"personType", p.PersonType},
		{"firstName", p.FirstName},
		{"lastName", p.LastName},
		{"legalName", p.LegalName},
		{"dateOfBirth", p.DateOfBirth},
		{"email", p.Email},
		{"addressType", p.AddressType},
		{"streetName", p.StreetName},
		{"buildingNumber", p.BuildingNumber},
		{"postCode", p.PostCode},
		{"townName", p.TownName},
		{"nationalId", p.NationalID},
		{"nationalIdType", p.NationalIDType},
		{"accountNumber", p.AccountNumber},
		{"walletAddress", p.WalletAddress},
	}
}
