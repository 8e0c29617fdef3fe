package travelrule

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/vaspkit/travelrule/ivms101"
)

// The conversion between the flat [Party] of the service's model and the
// persons of IVMS101 (package ivms101), both ways. A Party holds one name,
// one address, one national identifier and one wallet address; an IVMS101
// person may hold several of each and more besides. Whatever a conversion
// cannot carry over is not dropped silently: it is named, as a path, in the
// list of unmapped fields the conversion returns.
//
// The mapping (IVMS101 breaks the ties the service's docs leave open):
//
//	Party                 IVMS101 natural person            IVMS101 legal person
//	PersonType            "natural"                         "legal"
//	FirstName, LastName   secondaryIdentifier,              -
//	                      primaryIdentifier of the first
//	                      nameIdentifier of type LEGL
//	                      (else the first)
//	LegalName             -                                 legalPersonName of the first
//	                                                        nameIdentifier of type LEGL
//	                                                        (else the first)
//	DateOfBirth           - (see below)                     -
//	AddressType, StreetName, BuildingNumber, PostCode, TownName, Country
//	                      the same fields of the first geographicAddress
//	Country (no address)  countryOfResidence                countryOfRegistration
//	NationalID, NationalIDType
//	                      nationalIdentification.nationalIdentifier, .nationalIdentifierType
//	AccountNumber         customerIdentification (the customer's id at its VASP)
//	WalletAddress         the first accountNumber of the person (as the 2023
//	                      edition places it), else of its originator or beneficiary
//	Email                 no place in IVMS101: always unmapped
//
// A date of birth is written nowhere, and named unmapped: IVMS101 takes
// one only inside dateAndPlaceOfBirth, whose placeOfBirth is required, and
// the service's party (2.2) has no place of birth. A date without a place
// is not a valid dateAndPlaceOfBirth, and no place is made up (a
// placeholder, the town of residence). Reading IVMS101, a
// dateAndPlaceOfBirth's date is DateOfBirth and its place is unmapped.
//
// The payload is in the 2020 edition, the one every network reads, unless
// a wallet address is longer than its accountNumber takes (100
// characters; Cardano's and Monero's run longer): then in the 2023
// edition, which takes 512 (docs/assumptions.md, A16).
//
// [TransferRequest.ValidateStrict] checks the payload with
// [ivms101.Payload.Validate] and reports each fault under the Party field
// it comes from (ivmsFaults), so that a request it accepts maps to a valid
// payload.

// PartyFromIVMS101 returns the flat Party of an IVMS101 person and of the
// account numbers of its originator or beneficiary, and the fields it could
// not map: paths relative to the person, such as
// "naturalPerson.name.nameIdentifier[1]",
// "naturalPerson.dateAndPlaceOfBirth.placeOfBirth" or "accountNumber[1]".
// The mapping is in the table above. A person that is neither natural nor
// legal gives an empty Party and the unmapped path "".
//
// At most 256 paths are listed; a longer list ends with "… and N more".
// Paths of fields IVMS101 names are fixed text; a member the payload
// carried that IVMS101 does not name appears under its own name, which is
// the sender's text: do not log unmapped paths unfiltered.
func PartyFromIVMS101(person ivms101.Person, accountNumbers []string) (Party, []string) {
	var m ivmsMapper
	p := m.party(person, accountNumbers)
	return p, m.list()
}

// PartiesFromIVMS101 returns the originator and the beneficiary of an
// IVMS101 payload as flat Parties (the first person of each; see
// [PartyFromIVMS101]), and the fields of the two it could not map, as paths
// from the payload's root in the payload's edition
// ("originator.originatorPersons[1]",
// "beneficiary.beneficiaryPersons[0].naturalPerson.name.localNameIdentifier[0]").
// The VASPs, the transfer path and the metadata are not parties and are
// not listed; they stay in the payload.
func PartiesFromIVMS101(p *ivms101.Payload) (originator, beneficiary Party, unmapped []string) {
	if p == nil {
		return Party{}, Party{}, nil
	}
	var m ivmsMapper
	persons := "originatorPersons"
	if p.Version == ivms101.Version2023 {
		persons = "originatorPerson"
	}
	if o := p.Originator; o != nil {
		originator = m.side("originator", persons, o.Persons, o.AccountNumbers, o.Extra)
	}
	persons = "beneficiaryPersons"
	if p.Version == ivms101.Version2023 {
		persons = "beneficiaryPerson"
	}
	if b := p.Beneficiary; b != nil {
		beneficiary = m.side("beneficiary", persons, b.Persons, b.AccountNumbers, b.Extra)
	}
	return originator, beneficiary, m.list()
}

// IVMS101Person returns the party as an IVMS101 person and the account
// numbers of its originator or beneficiary (its wallet address), and the
// fields of the party that IVMS101 has no place for ("email",
// "dateOfBirth": IVMS101 takes a date of birth only with a place of birth,
// which a Party has not). The mapping is in the table above; a PersonType
// other than "legal" gives a natural person.
func (p Party) IVMS101Person() (person ivms101.Person, accountNumbers []string, unmapped []string) {
	var addrs []ivms101.Address
	hasAddress := p.AddressType != "" || p.StreetName != "" || p.BuildingNumber != "" || p.PostCode != "" || p.TownName != ""
	if hasAddress {
		addrs = []ivms101.Address{{
			AddressType: ivms101.AddressType(p.AddressType), StreetName: p.StreetName,
			BuildingNumber: p.BuildingNumber, PostCode: p.PostCode, TownName: p.TownName, Country: p.Country,
		}}
	}
	var natID *ivms101.NationalIdentification
	if p.NationalID != "" || p.NationalIDType != "" {
		natID = &ivms101.NationalIdentification{NationalIdentifier: p.NationalID, NationalIdentifierType: ivms101.NationalIdentifierType(p.NationalIDType)}
	}
	country := ""
	if !hasAddress {
		country = p.Country
	}
	if p.isLegal() {
		lp := &ivms101.LegalPerson{
			GeographicAddresses: addrs, NationalIdentification: natID,
			CustomerIdentification: p.AccountNumber, CountryOfRegistration: country,
		}
		if p.LegalName != "" {
			lp.Name = &ivms101.LegalPersonName{NameIdentifiers: []ivms101.LegalPersonNameID{{
				LegalPersonName: p.LegalName, LegalPersonNameIdentifierType: ivms101.LegalNameLegal}}}
		}
		person.LegalPerson = lp
		for _, f := range []struct{ name, v string }{{"firstName", p.FirstName}, {"lastName", p.LastName}, {"dateOfBirth", p.DateOfBirth}} {
			if f.v != "" {
				unmapped = append(unmapped, f.name)
			}
		}
	} else {
		np := &ivms101.NaturalPerson{
			GeographicAddresses: addrs, NationalIdentification: natID,
			CustomerIdentification: p.AccountNumber, CountryOfResidence: country,
		}
		if p.FirstName != "" || p.LastName != "" {
			np.Name = &ivms101.NaturalPersonName{NameIdentifiers: []ivms101.NaturalPersonNameID{{
				PrimaryIdentifier: p.LastName, SecondaryIdentifier: p.FirstName, NameIdentifierType: ivms101.NameLegal}}}
		}
		person.NaturalPerson = np
		for _, f := range []struct{ name, v string }{{"legalName", p.LegalName}, {"dateOfBirth", p.DateOfBirth}} {
			if f.v != "" {
				unmapped = append(unmapped, f.name)
			}
		}
	}
	if p.WalletAddress != "" {
		accountNumbers = []string{p.WalletAddress}
	}
	if p.Email != "" {
		unmapped = append(unmapped, "email")
	}
	return person, accountNumbers, unmapped
}

// IVMS101 returns the request's originator and beneficiary as an IVMS101
// payload, as the live service's inquiry carries them, and the fields of
// the two parties that IVMS101 has no place for ("beneficiary.email",
// "originator.dateOfBirth"). The payload is in the 2020 edition, the one
// every network reads, or in the 2023 edition when a wallet address is
// longer than the 2020 edition's accountNumber takes (see the table
// above). The request's other fields (asset, amount, callback, travel
// address) travel beside the payload, not in it; the VASPs are not known
// to the request and are left out.
func (r *TransferRequest) IVMS101() (p *ivms101.Payload, unmapped []string) {
	p = &ivms101.Payload{Version: ivms101.Version2020}
	if max := ivms101.Version2020.MaxLength("accountNumber"); longer(r.Originator.WalletAddress, max) || longer(r.Beneficiary.WalletAddress, max) {
		p.Version = ivms101.Version2023
		p.PayloadMetadata = &ivms101.PayloadMetadata{PayloadVersion: string(ivms101.Version2023)}
	}
	op, oacc, ou := r.Originator.IVMS101Person()
	bp, bacc, bu := r.Beneficiary.IVMS101Person()
	p.Originator = &ivms101.Originator{Persons: []ivms101.Person{op}, AccountNumbers: oacc}
	p.Beneficiary = &ivms101.Beneficiary{Persons: []ivms101.Person{bp}, AccountNumbers: bacc}
	for _, u := range ou {
		unmapped = append(unmapped, "originator."+u)
	}
	for _, u := range bu {
		unmapped = append(unmapped, "beneficiary."+u)
	}
	return p, unmapped
}

// ivmsFaults appends the faults [ivms101.Payload.Validate] finds in the
// request's IVMS101 payload, each under the Party field it comes from (the
// table above; the party itself, "originator", for a constraint on the
// whole person), but for a field errs names already. Which IVMS101
// constraints a Party breaks is thus decided in package ivms101 alone.
func (r *TransferRequest) ivmsFaults(errs []FieldError) []FieldError {
	p, _ := r.IVMS101()
	var ve *ivms101.ValidationError
	if !errors.As(p.Validate(), &ve) {
		return errs
	}
next:
	for _, f := range ve.Errors {
		side, party := "originator", &r.Originator
		if strings.HasPrefix(f.Path, "beneficiary") {
			side, party = "beneficiary", &r.Beneficiary
		}
		name, reason := party.ivmsFault(strings.TrimPrefix(f.Path, side), f.Reason)
		field := side
		if name != "" {
			field = side + "." + name
		}
		for _, e := range errs {
			if e.Field == field {
				continue next
			}
		}
		errs = append(errs, FieldError{Field: field, Reason: reason})
	}
	return errs
}

// ivmsFault returns the Party field ("" for the party itself) of the
// IVMS101 member at path, relative to its originator or beneficiary (such
// as ".originatorPersons[0].naturalPerson.geographicAddress[0].townName"),
// and the fault's reason in the Party's terms.
func (p *Party) ivmsFault(path, reason string) (field, why string) {
	if strings.HasPrefix(path, ".accountNumber") {
		return "walletAddress", reason + " (IVMS101 accountNumber)"
	}
	if i := strings.Index(path, "]."); i >= 0 {
		path = path[i+2:]
	}
	legal := strings.HasPrefix(path, "legalPerson")
	member := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(path, "naturalPerson"), "legalPerson"), ".")
	switch {
	case member == "" && legal:
		return "", "an originator needs an address of addressType GEOG, a nationalId or an accountNumber (IVMS101 C4)"
	case member == "":
		return "", "an originator needs an address, a nationalId or an accountNumber (IVMS101 C1; a dateOfBirth does not count: " +
			"IVMS101 takes it only with a place of birth, which a party has no field for)"
	case member == "geographicAddress[0]":
		field = "buildingNumber"
		if p.StreetName == "" {
			field = "streetName"
		}
		return field, "an address needs a streetName and a buildingNumber (IVMS101 C8)"
	case member == "nationalIdentification.registrationAuthority":
		return "nationalIdType", "a legal person's must be LEIX: IVMS101 requires a registrationAuthority for any other type (C9), " +
			"which a party has no field for"
	case strings.HasSuffix(member, "secondaryIdentifier"):
		field = "firstName"
	case strings.HasPrefix(member, "name") && legal:
		field = "legalName"
	case strings.HasPrefix(member, "name"):
		field = "lastName"
	default:
		field = ivmsPartyFields[member]
	}
	if !strings.Contains(reason, "IVMS101") {
		reason += " (IVMS101 " + member[strings.LastIndexByte(member, '.')+1:] + ")"
	}
	return field, reason
}

// ivmsPartyFields names the Party field each IVMS101 member of a person
// comes from, for the members whose name does not say it (the table
// above); a member not listed is a fault of the party itself.
var ivmsPartyFields = map[string]string{
	"geographicAddress[0].addressType":              "addressType",
	"geographicAddress[0].streetName":               "streetName",
	"geographicAddress[0].buildingNumber":           "buildingNumber",
	"geographicAddress[0].postCode":                 "postCode",
	"geographicAddress[0].townName":                 "townName",
	"geographicAddress[0].country":                  "country",
	"nationalIdentification.nationalIdentifier":     "nationalId",
	"nationalIdentification.nationalIdentifierType": "nationalIdType",
	"customerIdentification":                        "accountNumber",
	"customerNumber":                                "accountNumber",
	"countryOfResidence":                            "country",
	"countryOfRegistration":                         "country",
}

// ivmsMapper collects the unmapped paths of a conversion from IVMS101.
type ivmsMapper struct {
	unmapped []string
	more     int    // paths beyond maxUnmapped, not listed
	prefix   string // the path of the person being mapped, with a trailing dot, or ""
}

// maxUnmapped is how many unmapped paths a conversion lists; a payload
// that loses more (a hostile one: thousands of account numbers, say) ends
// its list with "… and N more".
const maxUnmapped = 256

// lost records the path, under the current prefix, of a field not mapped.
func (m *ivmsMapper) lost(path string) { m.add(m.prefix + path) }

// add records path, or counts it once the list is full.
func (m *ivmsMapper) add(path string) {
	if len(m.unmapped) >= maxUnmapped {
		m.more++
		return
	}
	m.unmapped = append(m.unmapped, path)
}

// list returns the unmapped paths, ending with "… and N more" when some
// were only counted.
func (m *ivmsMapper) list() []string {
	if m.more > 0 {
		return append(m.unmapped, "… and "+strconv.Itoa(m.more)+" more")
	}
	return m.unmapped
}

// lostIf records path if v is set.
func (m *ivmsMapper) lostIf(path, v string) {
	if v != "" {
		m.lost(path)
	}
}

// lostExtra records the members of extra, in order, under path.
func (m *ivmsMapper) lostExtra(path string, extra map[string]json.RawMessage) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m.lost(path + k)
	}
}

// side maps the first person of an originator or beneficiary; the others,
// the account numbers after the first and the unknown members are lost.
func (m *ivmsMapper) side(name, persons string, ps []ivms101.Person, accounts []string, extra map[string]json.RawMessage) Party {
	var p Party
	for i, person := range ps {
		path := name + "." + persons + "[" + strconv.Itoa(i) + "]"
		if i > 0 {
			m.add(path)
			continue
		}
		m.prefix = path + "."
		p = m.party(person, nil)
	}
	m.prefix = name + "."
	m.accounts(&p, accounts)
	m.lostExtra("", extra)
	m.prefix = ""
	return p
}

// party maps one person, and the account numbers given with it.
func (m *ivmsMapper) party(person ivms101.Person, accounts []string) Party {
	var p Party
	switch {
	case person.NaturalPerson != nil:
		m.natural(&p, person.NaturalPerson)
		if person.LegalPerson != nil {
			m.lost("legalPerson")
		}
	case person.LegalPerson != nil:
		m.legal(&p, person.LegalPerson)
	default:
		m.add(trimDot(m.prefix))
	}
	m.accounts(&p, person.AccountNumbers)
	m.accounts(&p, accounts)
	m.lostExtra("", person.Extra)
	return p
}

// accounts maps the first account number into p.WalletAddress, unless it
// already holds one; the others are lost.
func (m *ivmsMapper) accounts(p *Party, accounts []string) {
	for i, a := range accounts {
		if i == 0 && p.WalletAddress == "" {
			p.WalletAddress = a
			continue
		}
		m.lost("accountNumber[" + strconv.Itoa(i) + "]")
	}
}

func trimDot(s string) string {
	if n := len(s); n > 0 && s[n-1] == '.' {
		return s[:n-1]
	}
	return s
}

// natural maps a natural person.
func (m *ivmsMapper) natural(p *Party, np *ivms101.NaturalPerson) {
	const at = "naturalPerson."
	p.PersonType = "natural"
	if n := np.Name; n != nil {
		chosen := legalFirst(n.NameIdentifiers, func(id ivms101.NaturalPersonNameID) bool { return id.NameIdentifierType == ivms101.NameLegal })
		if chosen >= 0 {
			id := n.NameIdentifiers[chosen]
			p.LastName, p.FirstName = id.PrimaryIdentifier, id.SecondaryIdentifier
			m.lostExtra(at+"name.nameIdentifier["+strconv.Itoa(chosen)+"].", id.Extra)
		}
		m.otherNames(at, chosen, len(n.NameIdentifiers), len(n.LocalNameIdentifiers), len(n.PhoneticNameIdentifiers), n.Extra)
	}
	m.addresses(p, at, np.GeographicAddresses)
	m.nationalID(p, at, np.NationalIdentification)
	p.AccountNumber = np.CustomerIdentification
	if b := np.DateAndPlaceOfBirth; b != nil {
		p.DateOfBirth = b.DateOfBirth
		m.lostIf(at+"dateAndPlaceOfBirth.placeOfBirth", b.PlaceOfBirth)
		m.lostExtra(at+"dateAndPlaceOfBirth.", b.Extra)
	}
	m.country(p, at+"countryOfResidence", np.CountryOfResidence)
	m.lostExtra(at, np.Extra)
}

// legal maps a legal person.
func (m *ivmsMapper) legal(p *Party, lp *ivms101.LegalPerson) {
	const at = "legalPerson."
	p.PersonType = "legal"
	if n := lp.Name; n != nil {
		chosen := legalFirst(n.NameIdentifiers, func(id ivms101.LegalPersonNameID) bool {
			return id.LegalPersonNameIdentifierType == ivms101.LegalNameLegal
		})
		if chosen >= 0 {
			id := n.NameIdentifiers[chosen]
			p.LegalName = id.LegalPersonName
			m.lostExtra(at+"name.nameIdentifier["+strconv.Itoa(chosen)+"].", id.Extra)
		}
		m.otherNames(at, chosen, len(n.NameIdentifiers), len(n.LocalNameIdentifiers), len(n.PhoneticNameIdentifiers), n.Extra)
	}
	m.addresses(p, at, lp.GeographicAddresses)
	m.nationalID(p, at, lp.NationalIdentification)
	p.AccountNumber = lp.CustomerIdentification
	m.country(p, at+"countryOfRegistration", lp.CountryOfRegistration)
	m.lostExtra(at, lp.Extra)
}

// legalFirst returns the index of the first name identifier that legal
// accepts, else 0, or -1 when there is none.
func legalFirst[T any](ids []T, legal func(T) bool) int {
	for i, id := range ids {
		if legal(id) {
			return i
		}
	}
	if len(ids) > 0 {
		return 0
	}
	return -1
}

// otherNames records as lost, under at + "name.", the name identifiers
// other than the chosen one, every local and phonetic one, and the name's
// unknown members.
func (m *ivmsMapper) otherNames(at string, chosen, ids, local, phonetic int, extra map[string]json.RawMessage) {
	for i := range ids {
		if i != chosen {
			m.lost(at + "name.nameIdentifier[" + strconv.Itoa(i) + "]")
		}
	}
	for i := range local {
		m.lost(at + "name.localNameIdentifier[" + strconv.Itoa(i) + "]")
	}
	for i := range phonetic {
		m.lost(at + "name.phoneticNameIdentifier[" + strconv.Itoa(i) + "]")
	}
	m.lostExtra(at+"name.", extra)
}

// addresses maps the first address; the others, and the fields a Party
// has no place for, are lost.
func (m *ivmsMapper) addresses(p *Party, at string, addrs []ivms101.Address) {
	for i, a := range addrs {
		path := at + "geographicAddress[" + strconv.Itoa(i) + "]"
		if i > 0 {
			m.lost(path)
			continue
		}
		p.AddressType, p.StreetName, p.BuildingNumber = string(a.AddressType), a.StreetName, a.BuildingNumber
		p.PostCode, p.TownName, p.Country = a.PostCode, a.TownName, a.Country
		path += "."
		for _, f := range [...]struct{ name, v string }{
			{"department", a.Department}, {"subDepartment", a.SubDepartment}, {"buildingName", a.BuildingName},
			{"floor", a.Floor}, {"postBox", a.PostBox}, {"room", a.Room}, {"townLocationName", a.TownLocationName},
			{"districtName", a.DistrictName}, {"countrySubDivision", a.CountrySubDivision},
		} {
			m.lostIf(path+f.name, f.v)
		}
		for j := range a.AddressLines {
			m.lost(path + "addressLine[" + strconv.Itoa(j) + "]")
		}
		m.lostExtra(path, a.Extra)
	}
}

// nationalID maps a national identification; its country of issue and
// registration authority are lost.
func (m *ivmsMapper) nationalID(p *Party, at string, n *ivms101.NationalIdentification) {
	if n == nil {
		return
	}
	p.NationalID, p.NationalIDType = n.NationalIdentifier, string(n.NationalIdentifierType)
	path := at + "nationalIdentification."
	m.lostIf(path+"countryOfIssue", n.CountryOfIssue)
	m.lostIf(path+"registrationAuthority", n.RegistrationAuthority)
	m.lostExtra(path, n.Extra)
}

// country maps a country of residence or registration into Party.Country
// when the address gave none; one that differs from the address's country
// is lost.
func (m *ivmsMapper) country(p *Party, path, c string) {
	switch {
	case c == "" || c == p.Country:
	case p.Country == "":
		p.Country = c
	default:
		m.lost(path)
	}
}
