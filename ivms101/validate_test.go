package ivms101

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixClock sets the clock of Validate to noon UTC of date for the test.
func fixClock(t *testing.T, date string) {
	t.Helper()
	d, err := time.Parse(time.DateOnly, date)
	require.NoError(t, err)
	old := now
	now = func() time.Time { return d.Add(12 * time.Hour) }
	t.Cleanup(func() { now = old })
}

func TestValidateTestdata(t *testing.T) {
	fixClock(t, "2025-06-01")
	for _, name := range append(standardTestdata, "pascal_case.json") {
		t.Run(name, func(t *testing.T) {
			p, err := Parse(readTestdata(t, name))
			require.NoError(t, err)
			assert.NoError(t, p.Validate())
		})
	}
}

func TestValidate(t *testing.T) {
	fixClock(t, "2025-06-01")
	const (
		orig = "originator.originatorPersons[0].naturalPerson"
		ben  = "beneficiary.beneficiaryPersons[0].naturalPerson"
		ovas = "originatingVASP.originatingVASP.legalPerson"
		bvas = "beneficiaryVASP.beneficiaryVASP.legalPerson"
	)
	type mutation func(p *Payload)
	on := func(f func(n *NaturalPerson)) mutation {
		return func(p *Payload) { f(p.Originator.Persons[0].NaturalPerson) }
	}
	onVASP := func(f func(l *LegalPerson)) mutation {
		return func(p *Payload) { f(p.OriginatingVASP.Person.LegalPerson) }
	}
	onAddress := func(f func(a *Address)) mutation {
		return on(func(n *NaturalPerson) { f(&n.GeographicAddresses[0]) })
	}
	tests := []struct {
		name   string
		mutate mutation
		want   []FieldError // Reason: a part of it
	}{
		{"valid", func(*Payload) {}, nil},
		{"no originator", func(p *Payload) { p.Originator = nil }, []FieldError{{"originator", "required"}}},
		{"no beneficiary", func(p *Payload) { p.Beneficiary = nil }, []FieldError{{"beneficiary", "required"}}},
		{"no persons", func(p *Payload) { p.Originator.Persons = nil },
			[]FieldError{{"originator.originatorPersons", "at least one person"}}},
		{"empty person", func(p *Payload) { p.Beneficiary.Persons[0] = Person{} },
			[]FieldError{{"beneficiary.beneficiaryPersons[0]", "must have a naturalPerson or a legalPerson"}}},
		{"both kinds of person", func(p *Payload) {
			p.Beneficiary.Persons[0].LegalPerson = p.OriginatingVASP.Person.LegalPerson
		}, []FieldError{{"beneficiary.beneficiaryPersons[0]", "not both"}}},
		{"no name", on(func(n *NaturalPerson) { n.Name = nil }), []FieldError{{orig + ".name", "required"}}},
		{"no name identifier", on(func(n *NaturalPerson) { n.Name.NameIdentifiers = nil }),
			[]FieldError{{orig + ".name.nameIdentifier", "required"}}},
		{"no legal name", on(func(n *NaturalPerson) { n.Name.NameIdentifiers[0].NameIdentifierType = NameBirth }),
			[]FieldError{{orig + ".name.nameIdentifier", "LEGL (IVMS101 C6)"}}},
		{"empty primary identifier", on(func(n *NaturalPerson) { n.Name.NameIdentifiers[1].PrimaryIdentifier = " \t" }),
			[]FieldError{{orig + ".name.nameIdentifier[1].primaryIdentifier", "required"}}},
		{"local name without primary identifier", on(func(n *NaturalPerson) { n.Name.LocalNameIdentifiers[0].PrimaryIdentifier = "" }),
			[]FieldError{{orig + ".name.localNameIdentifier[0].primaryIdentifier", "required"}}},
		{"name too long", on(func(n *NaturalPerson) {
			n.Name.NameIdentifiers[0].SecondaryIdentifier = strings.Repeat("é", 101)
			n.Name.LocalNameIdentifiers[0].PrimaryIdentifier = strings.Repeat("Д", 100) // 100 characters, 200 bytes
		}), []FieldError{{orig + ".name.nameIdentifier[0].secondaryIdentifier", "longer than 100 characters"}}},
		{"name type", on(func(n *NaturalPerson) {
			n.Name.NameIdentifiers[1].NameIdentifierType = "legl"
			n.Name.LocalNameIdentifiers[0].NameIdentifierType = ""
		}), []FieldError{
			{orig + ".name.nameIdentifier[1].nameIdentifierType", "must be one of ALIA, BIRT, MAID, LEGL, MISC"},
			{orig + ".name.localNameIdentifier[0].nameIdentifierType", "required"},
		}},
		{"customer identification", on(func(n *NaturalPerson) { n.CustomerIdentification = strings.Repeat("9", 51) }),
			[]FieldError{{orig + ".customerIdentification", "longer than 50 characters"}}},
		{"countries", func(p *Payload) {
			p.Originator.Persons[0].NaturalPerson.CountryOfResidence = "kz"
			p.Originator.Persons[0].NaturalPerson.NationalIdentification.CountryOfIssue = "UK"
			p.Originator.Persons[0].NaturalPerson.GeographicAddresses[0].Country = "Kazakhstan"
			p.OriginatingVASP.Person.LegalPerson.CountryOfRegistration = "XX" // unknown: allowed
		}, []FieldError{
			{orig + ".geographicAddress[0].country", "ISO 3166-1"},
			{orig + ".nationalIdentification.countryOfIssue", "ISO 3166-1"},
			{orig + ".countryOfResidence", "ISO 3166-1"},
		}},
		{"address type", onAddress(func(a *Address) { a.AddressType = "MAIL" }),
			[]FieldError{{orig + ".geographicAddress[0].addressType", "must be one of HOME, BIZZ, GEOG"}}},
		{"address without town and country", onAddress(func(a *Address) { a.TownName, a.Country = "", "" }), []FieldError{
			{orig + ".geographicAddress[0].townName", "required"},
			{orig + ".geographicAddress[0].country", "required"},
		}},
		{"address without street or lines", onAddress(func(a *Address) { a.BuildingNumber = "" }),
			[]FieldError{{orig + ".geographicAddress[0]", "(IVMS101 C8)"}}},
		{"address lines instead", onAddress(func(a *Address) { a.StreetName, a.AddressLines = "", []string{"Kabanbay Batyr 417"} }), nil},
		{"building name instead", onAddress(func(a *Address) { a.BuildingNumber, a.BuildingName = "", "Nurly Tower" }), nil},
		{"address lines", onAddress(func(a *Address) {
			a.AddressLines = []string{"1", "2", "3", "4", "", "6", "7", strings.Repeat("x", 71)}
		}), []FieldError{
			{orig + ".geographicAddress[0].addressLine", "at most 7 lines"},
			{orig + ".geographicAddress[0].addressLine[4]", "required"},
			{orig + ".geographicAddress[0].addressLine[7]", "longer than 70 characters"},
		}},
		{"address lengths", onAddress(func(a *Address) {
			a.Department = strings.Repeat("d", 51)
			a.SubDepartment = strings.Repeat("s", 71)
			a.StreetName = strings.Repeat("s", 71)
			a.BuildingNumber = strings.Repeat("1", 17)
			a.BuildingName = strings.Repeat("b", 36)
			a.Floor = strings.Repeat("f", 71)
			a.PostBox = strings.Repeat("p", 17)
			a.Room = strings.Repeat("r", 71)
			a.PostCode = strings.Repeat("p", 17)
			a.TownName = strings.Repeat("t", 36)
			a.TownLocationName = strings.Repeat("t", 36)
			a.DistrictName = strings.Repeat("d", 36)
			a.CountrySubDivision = strings.Repeat("c", 36)
		}), []FieldError{
			{orig + ".geographicAddress[0].department", "longer than 50"},
			{orig + ".geographicAddress[0].subDepartment", "longer than 70"},
			{orig + ".geographicAddress[0].streetName", "longer than 70"},
			{orig + ".geographicAddress[0].buildingNumber", "longer than 16"},
			{orig + ".geographicAddress[0].buildingName", "longer than 35"},
			{orig + ".geographicAddress[0].floor", "longer than 70"},
			{orig + ".geographicAddress[0].postBox", "longer than 16"},
			{orig + ".geographicAddress[0].room", "longer than 70"},
			{orig + ".geographicAddress[0].postCode", "longer than 16"},
			{orig + ".geographicAddress[0].townName", "longer than 35"},
			{orig + ".geographicAddress[0].townLocationName", "longer than 35"},
			{orig + ".geographicAddress[0].districtName", "longer than 35"},
			{orig + ".geographicAddress[0].countrySubDivision", "longer than 35"},
		}},
		{"national identification", on(func(n *NaturalPerson) {
			n.NationalIdentification = &NationalIdentification{NationalIdentifierType: "PASS", RegistrationAuthority: "RA12"}
		}), []FieldError{
			{orig + ".nationalIdentification.nationalIdentifier", "required"},
			{orig + ".nationalIdentification.nationalIdentifierType", "must be one of ARNU, CCPT"},
			{orig + ".nationalIdentification.registrationAuthority", "(IVMS101 C10)"},
		}},
		{"national identifier too long", on(func(n *NaturalPerson) {
			n.NationalIdentification.NationalIdentifier = strings.Repeat("7", 36)
		}), []FieldError{{orig + ".nationalIdentification.nationalIdentifier", "longer than 35"}}},
		{"a natural person may have a registration authority and any type", on(func(n *NaturalPerson) {
			n.NationalIdentification = &NationalIdentification{NationalIdentifier: "557301", NationalIdentifierType: IDRegistrationAuthority,
				RegistrationAuthority: "RA000553", CountryOfIssue: "TZ"}
		}), nil},
		{"date of birth in the future", on(func(n *NaturalPerson) { n.DateAndPlaceOfBirth.DateOfBirth = "2030-01-01" }),
			[]FieldError{{orig + ".dateAndPlaceOfBirth.dateOfBirth", "before today (IVMS101 C2)"}}},
		{"born today", on(func(n *NaturalPerson) { n.DateAndPlaceOfBirth.DateOfBirth = "2025-06-01" }),
			[]FieldError{{orig + ".dateAndPlaceOfBirth.dateOfBirth", "before today"}}},
		{"born yesterday", on(func(n *NaturalPerson) { n.DateAndPlaceOfBirth.DateOfBirth = "2025-05-31" }), nil},
		{"not a real date", on(func(n *NaturalPerson) { n.DateAndPlaceOfBirth.DateOfBirth = "1987-02-29" }),
			[]FieldError{{orig + ".dateAndPlaceOfBirth.dateOfBirth", "YYYY-MM-DD"}}},
		{"not the date form", on(func(n *NaturalPerson) { n.DateAndPlaceOfBirth.DateOfBirth = "14/03/1987" }),
			[]FieldError{{orig + ".dateAndPlaceOfBirth.dateOfBirth", "YYYY-MM-DD"}}},
		{"place of birth of 70 characters", on(func(n *NaturalPerson) { n.DateAndPlaceOfBirth.PlaceOfBirth = strings.Repeat("ø", 70) }), nil},
		{"place of birth too long", on(func(n *NaturalPerson) { n.DateAndPlaceOfBirth.PlaceOfBirth = strings.Repeat("x", 71) }),
			[]FieldError{{orig + ".dateAndPlaceOfBirth.placeOfBirth", "longer than 70 characters"}}},
		{"date and place of birth need both", on(func(n *NaturalPerson) { n.DateAndPlaceOfBirth = &DateAndPlaceOfBirth{} }), []FieldError{
			{orig + ".dateAndPlaceOfBirth.dateOfBirth", "required"},
			{orig + ".dateAndPlaceOfBirth.placeOfBirth", "required"},
		}},
		{"C1: an originator needs more than a name", on(func(n *NaturalPerson) {
			n.GeographicAddresses, n.NationalIdentification, n.CustomerIdentification, n.DateAndPlaceOfBirth = nil, nil, "", nil
		}), []FieldError{{orig, "(IVMS101 C1)"}}},
		{"C1: an address counts only with a valid type", on(func(n *NaturalPerson) {
			n.NationalIdentification, n.CustomerIdentification, n.DateAndPlaceOfBirth = nil, "", nil
			n.GeographicAddresses[0].AddressType = "MAIL"
		}), []FieldError{
			{orig + ".geographicAddress[0].addressType", "must be one of HOME, BIZZ, GEOG"},
			{orig, "(IVMS101 C1)"},
		}},
		{"C1: an address is enough", on(func(n *NaturalPerson) {
			n.NationalIdentification, n.CustomerIdentification, n.DateAndPlaceOfBirth = nil, "", nil
		}), nil},
		{"C1: a customer identification is enough", on(func(n *NaturalPerson) {
			n.GeographicAddresses, n.NationalIdentification, n.DateAndPlaceOfBirth = nil, nil, nil
		}), nil},
		{"C1 is about the originator only", func(p *Payload) {
			n := p.Beneficiary.Persons[0].NaturalPerson
			n.GeographicAddresses = nil
		}, nil},
		{"legal person without a legal name", onVASP(func(l *LegalPerson) {
			l.Name.NameIdentifiers[0].LegalPersonNameIdentifierType = LegalNameTrading
		}), []FieldError{{ovas + ".name.nameIdentifier", "LEGL (IVMS101 C5)"}}},
		{"legal person name", onVASP(func(l *LegalPerson) {
			l.Name.NameIdentifiers[0] = LegalPersonNameID{LegalPersonNameIdentifierType: LegalNameLegal}
		}), []FieldError{
			{ovas + ".name.nameIdentifier[0].legalPersonName", "required"},
			{ovas + ".name.nameIdentifier", "LEGL (IVMS101 C5)"},
		}},
		{"legal person name type", onVASP(func(l *LegalPerson) {
			l.Name.NameIdentifiers = append(l.Name.NameIdentifiers, LegalPersonNameID{LegalPersonName: strings.Repeat("n", 101), LegalPersonNameIdentifierType: "SHORT"})
		}), []FieldError{
			{ovas + ".name.nameIdentifier[1].legalPersonName", "longer than 100"},
			{ovas + ".name.nameIdentifier[1].legalPersonNameIdentifierType", "must be one of LEGL, SHRT, TRAD"},
		}},
		{"legal person customer number", onVASP(func(l *LegalPerson) { l.CustomerIdentification = strings.Repeat("c", 51) }),
			[]FieldError{{ovas + ".customerNumber", "longer than 50"}}},
		{"C11: LEI check digits", onVASP(func(l *LegalPerson) { l.NationalIdentification.NationalIdentifier = "894500QXVASPNORTH041" }),
			[]FieldError{{ovas + ".nationalIdentification.nationalIdentifier", "(IVMS101 C11, ISO 17442)"}}},
		{"C11: a letter among the check digits", onVASP(func(l *LegalPerson) {
			l.NationalIdentification.NationalIdentifier = "5493001KJTIIGC8Y1R0E" // leaves 1 under MOD 97-10 all the same
		}), []FieldError{{ovas + ".nationalIdentification.nationalIdentifier", "(IVMS101 C11, ISO 17442)"}}},
		{"C7: a legal person's identifier type", onVASP(func(l *LegalPerson) {
			l.NationalIdentification = &NationalIdentification{NationalIdentifier: "N0773", NationalIdentifierType: IDPassport, RegistrationAuthority: "RA000001"}
		}), []FieldError{{ovas + ".nationalIdentification.nationalIdentifierType", "RAID, MISC, LEIX or TXID (IVMS101 C7)"}}},
		{"C9: no country of issue for a legal person", onVASP(func(l *LegalPerson) { l.NationalIdentification.CountryOfIssue = "KZ" }),
			[]FieldError{{ovas + ".nationalIdentification.countryOfIssue", "(IVMS101 C9)"}}},
		{"C9: no registration authority with LEIX", onVASP(func(l *LegalPerson) { l.NationalIdentification.RegistrationAuthority = "RA000001" }),
			[]FieldError{{ovas + ".nationalIdentification.registrationAuthority", "must not be set with type LEIX (IVMS101 C9)"}}},
		{"C9: a registration authority otherwise", onVASP(func(l *LegalPerson) {
			l.NationalIdentification = &NationalIdentification{NationalIdentifier: "123-45", NationalIdentifierType: IDTax}
		}), []FieldError{{ovas + ".nationalIdentification.registrationAuthority", "unless the type is LEIX (IVMS101 C9)"}}},
		{"C4: a legal originator", func(p *Payload) {
			p.Originator.Persons[0] = Person{LegalPerson: &LegalPerson{Name: p.OriginatingVASP.Person.LegalPerson.Name,
				GeographicAddresses: []Address{{AddressType: AddressBusiness, StreetName: "S", BuildingNumber: "1", TownName: "T", Country: "KZ"}}}}
		}, []FieldError{{"originator.originatorPersons[0].legalPerson", "GEOG, nationalIdentification or customerNumber (IVMS101 C4)"}}},
		{"C4: a legal originator with a customer number", func(p *Payload) {
			p.Originator.Persons[0] = Person{LegalPerson: &LegalPerson{Name: p.OriginatingVASP.Person.LegalPerson.Name, CustomerIdentification: "c"}}
		}, nil},
		{"account numbers", func(p *Payload) {
			p.Originator.AccountNumbers = []string{"", strings.Repeat("a", 101)}
			p.Beneficiary.Persons[0].AccountNumbers = []string{strings.Repeat("a", 100)}
		}, []FieldError{
			{"originator.accountNumber[0]", "required"},
			{"originator.accountNumber[1]", "longer than 100"},
		}},
		{"transliteration method", func(p *Payload) { p.PayloadMetadata.TransliterationMethods = []string{"cyrl", "Kore", "latn"} },
			[]FieldError{
				{"payloadMetadata.transliterationMethod[1]", "must be one of arab"},
				{"payloadMetadata.transliterationMethod[2]", "must be one of arab"},
			}},
		{"payload version", func(p *Payload) { p.PayloadMetadata.PayloadVersion = "101.2024" },
			[]FieldError{{"payloadMetadata.payloadVersion", "must be 101 or 101.2023"}}},
		{"payload version of the other edition", func(p *Payload) { p.PayloadMetadata.PayloadVersion = "101.2023" },
			[]FieldError{{"payloadMetadata.payloadVersion", "does not match"}}},
		{"payload version 101 in the 2020 edition", func(p *Payload) { p.PayloadMetadata.PayloadVersion = "101" }, nil},
		{"VASPs are optional", func(p *Payload) { p.OriginatingVASP, p.BeneficiaryVASP = nil, nil }, nil},
		{"a VASP's person is optional", func(p *Payload) {
			p.OriginatingVASP = &OriginatingVASP{}
			p.BeneficiaryVASP.Person = nil
		}, nil},
		{"a VASP with other members only", func(p *Payload) {
			p.OriginatingVASP = &OriginatingVASP{Extra: map[string]json.RawMessage{"vaspId": raw(`"v"`)}}
			p.BeneficiaryVASP = &BeneficiaryVASP{Extra: map[string]json.RawMessage{"beneficiaryVASP": raw(`"VASP"`)}}
		}, []FieldError{
			{"beneficiaryVASP.beneficiaryVASP", "must be an object"},
		}},
		{"the beneficiary VASP's legal name", func(p *Payload) {
			p.BeneficiaryVASP.Person.LegalPerson.Name = nil
		}, []FieldError{{bvas + ".name", "required"}}},
		{"transfer path", func(p *Payload) {
			vasp := *p.OriginatingVASP.Person
			p.TransferPath = &TransferPath{Path: []IntermediaryVASP{{Person: &vasp, Sequence: 1}, {Sequence: 0}}}
		}, []FieldError{{"transferPath.transferPath[1].intermediaryVASP", "required"}}},
		{"C12: sequences", func(p *Payload) {
			vasp := *p.OriginatingVASP.Person
			p.TransferPath = &TransferPath{Path: []IntermediaryVASP{{Person: &vasp, Sequence: 1}, {Person: &vasp, Sequence: 1},
				{Person: &vasp, Sequence: 4}, {Person: &vasp, Sequence: -1}}}
		}, []FieldError{
			{"transferPath.transferPath[1].sequence", "(IVMS101 C12)"},
			{"transferPath.transferPath[2].sequence", "(IVMS101 C12)"},
			{"transferPath.transferPath[3].sequence", "(IVMS101 C12)"},
		}},
		{"members of the wrong type", func(p *Payload) {
			p.Extra = map[string]json.RawMessage{"beneficiaryVASP": raw(`"VASP"`), "unknown": raw(`1`)}
			p.BeneficiaryVASP = nil
			p.Originator.Persons[0].NaturalPerson.Extra = map[string]json.RawMessage{"countryOfResidence": raw(`{"a":1}`), "gender": raw(`2`)}
			p.Originator.Persons[0].NaturalPerson.CountryOfResidence = ""
			p.Originator.Persons[0].NaturalPerson.Name.NameIdentifiers[0].Extra = map[string]json.RawMessage{"SecondaryIdentifier": raw(`null`)}
			p.Beneficiary.Extra = map[string]json.RawMessage{"accountNumber": raw(`7`)}
			p.Beneficiary.AccountNumbers = nil
		}, []FieldError{
			{"beneficiaryVASP", "must be an object"},
			{orig + ".countryOfResidence", "must be a string"},
			{"beneficiary.accountNumber", "must be an array of strings"},
		}},
		{"members given twice", func(p *Payload) {
			p.Originator.Extra = map[string]json.RawMessage{"originatorPerson": raw(`[{}]`), "ORIGINATORPERSONS": raw(`[{}]`)}
			p.Beneficiary.Persons[0].NaturalPerson.Name.NameIdentifiers[0].Extra = map[string]json.RawMessage{
				"naturalPersonNameIdentifierType": raw(`"ALIA"`)}
		}, []FieldError{
			{"originator.originatorPersons", "given more than once"},
			{ben + ".name.nameIdentifier[0].nameIdentifierType", "given more than once"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(readTestdata(t, "natural_to_natural_2020.json"))
			require.NoError(t, err)
			tt.mutate(p)
			assertFaults(t, tt.want, p.Validate())
		})
	}
}

// assertFaults asserts that err lists the faults want, in order, each
// Reason holding the wanted part.
func assertFaults(t *testing.T, want []FieldError, err error) {
	t.Helper()
	if want == nil {
		assert.NoError(t, err)
		return
	}
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.ErrorIs(t, err, ErrInvalid)
	var got []string
	for _, f := range ve.Errors {
		got = append(got, f.Path+": "+f.Reason)
	}
	require.Len(t, ve.Errors, len(want), "%s", strings.Join(got, "\n"))
	for i, w := range want {
		assert.Equal(t, w.Path, ve.Errors[i].Path)
		assert.Contains(t, ve.Errors[i].Reason, w.Reason, w.Path)
	}
}

func TestValidate2023(t *testing.T) {
	fixClock(t, "2025-06-01")
	const (
		orig = "originator.originatorPerson[0]"
		ben  = "beneficiary.beneficiaryPerson[0]"
	)
	tests := []struct {
		name   string
		mutate func(p *Payload)
		want   []FieldError
	}{
		{"valid", func(*Payload) {}, nil},
		{"the 2023 names in paths", func(p *Payload) {
			p.Originator.Persons[0].NaturalPerson.Name.NameIdentifiers[0].NameIdentifierType = ""
			p.Originator.Persons[0].NaturalPerson.Name.LocalNameIdentifiers = []NaturalPersonNameID{{PrimaryIdentifier: "L"}}
			p.Beneficiary.Persons[0].LegalPerson.CustomerIdentification = strings.Repeat("c", 51)
			p.Beneficiary.Persons = append(p.Beneficiary.Persons, Person{})
		}, []FieldError{
			{orig + ".naturalPerson.name.nameIdentifier[0].naturalPersonNameIdentifierType", "required"},
			{orig + ".naturalPerson.name.nameIdentifier", "LEGL"},
			{orig + ".naturalPerson.name.localNameIdentifier[0].nameIdentifierType", "required"},
			{ben + ".legalPerson.customerIdentification", "longer than 50"},
			{"beneficiary.beneficiaryPerson[1]", "must have a naturalPerson or a legalPerson"},
		}},
		{"payload version required", func(p *Payload) { p.PayloadMetadata = nil },
			[]FieldError{{"payloadMetadata.payloadVersion", "required in the 2023 edition"}}},
		{"payload version empty", func(p *Payload) { p.PayloadMetadata.PayloadVersion = "" },
			[]FieldError{{"payloadMetadata.payloadVersion", "required in the 2023 edition"}}},
		{"payload version 101", func(p *Payload) { p.PayloadMetadata.PayloadVersion = "101" },
			[]FieldError{{"payloadMetadata.payloadVersion", "does not match"}}},
		{"account numbers of 512 characters", func(p *Payload) {
			p.Originator.Persons[0].AccountNumbers = []string{strings.Repeat("a", 512), strings.Repeat("a", 513)}
		}, []FieldError{{orig + ".accountNumber[1]", "longer than 512"}}},
		{"a legal person's customer identification given twice", func(p *Payload) {
			p.Beneficiary.Persons[0].LegalPerson.Extra = map[string]json.RawMessage{"customerNumber": raw(`"x"`)}
		}, []FieldError{{ben + ".legalPerson.customerIdentification", "given more than once"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(readTestdata(t, "natural_2023.json"))
			require.NoError(t, err)
			require.Equal(t, Version2023, p.Version)
			tt.mutate(p)
			assertFaults(t, tt.want, p.Validate())
		})
	}
}

func TestValidateParsed(t *testing.T) {
	fixClock(t, "2025-06-01")
	// A payload as senders get it wrong, read and checked.
	p := mustParse(t, `{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":5}]},`+
		`"dateAndPlaceOfBirth":{"dateOfBirth":"1990-13-01","placeOfBirth":"Leeds"}}}],"accountNumber":"0xabc"},`+
		`"beneficiary":{"beneficiaryPersons":[{"naturalPerson":{"name":[{"nameIdentifier":[{"primaryIdentifier":"B","nameIdentifierType":"LEGL"}]}]}}]}}`)
	const orig = "originator.originatorPersons[0].naturalPerson"
	assertFaults(t, []FieldError{
		{orig + ".name.nameIdentifier[0].primaryIdentifier", "must be a string"},
		{orig + ".name.nameIdentifier[0].primaryIdentifier", "required"},
		{orig + ".name.nameIdentifier[0].nameIdentifierType", "required"},
		{orig + ".name.nameIdentifier", "LEGL"},
		{orig + ".dateAndPlaceOfBirth.dateOfBirth", "YYYY-MM-DD"},
	}, p.Validate())

	assertFaults(t, []FieldError{{"", "no payload"}}, (*Payload)(nil).Validate())
	assertFaults(t, []FieldError{{"originator", "required"}, {"beneficiary", "required"}}, (&Payload{}).Validate())
}

// TestValidateEmptyVASP: both editions make the person of an originating
// and of a beneficiary VASP optional ([0..1]), so a VASP given as {} (or
// with members IVMS101 does not name) parses, validates and is written
// back as it came; a person given is still checked.
func TestValidateEmptyVASP(t *testing.T) {
	fixClock(t, "2025-06-01")
	parties := map[Version]string{
		Version2020: `"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[` +
			`{"primaryIdentifier":"A","nameIdentifierType":"LEGL"}]},"customerIdentification":"c"}}]},` +
			`"beneficiary":{"beneficiaryPersons":[{"naturalPerson":{"name":{"nameIdentifier":[` +
			`{"primaryIdentifier":"B","nameIdentifierType":"LEGL"}]}}}]}`,
		Version2023: `"originator":{"originatorPerson":[{"naturalPerson":{"name":{"nameIdentifier":[` +
			`{"primaryIdentifier":"A","naturalPersonNameIdentifierType":"LEGL"}]},"customerIdentification":"c"}}]},` +
			`"beneficiary":{"beneficiaryPerson":[{"naturalPerson":{"name":{"nameIdentifier":[` +
			`{"primaryIdentifier":"B","naturalPersonNameIdentifierType":"LEGL"}]}}}]},` +
			`"payloadMetadata":{"payloadVersion":"101.2023"}`,
	}
	tests := []struct {
		name, vasps string
		want        []FieldError
	}{
		{"an empty originating VASP", `"originatingVASP":{}`, nil},
		{"an empty beneficiary VASP", `"beneficiaryVASP":{}`, nil},
		{"both empty", `"originatingVASP":{},"beneficiaryVASP":{}`, nil},
		{"a VASP with an unknown member only", `"originatingVASP":{"vaspId":"v"},"beneficiaryVASP":{"vaspId":"w"}`, nil},
		{"a VASP's person null", `"originatingVASP":{"originatingVASP":null}`, nil},
		{"a VASP's person given is checked", `"originatingVASP":{"originatingVASP":{}},"beneficiaryVASP":{}`,
			[]FieldError{{"originatingVASP.originatingVASP", "must have a naturalPerson or a legalPerson"}}},
	}
	for _, ed := range []Version{Version2020, Version2023} {
		for _, tt := range tests {
			t.Run(string(ed)+"/"+tt.name, func(t *testing.T) {
				body := `{` + parties[ed] + `,` + tt.vasps + `}`
				p, err := Parse([]byte(body))
				require.NoError(t, err)
				require.Equal(t, ed, p.Version)
				assertFaults(t, tt.want, p.Validate())
				out, err := json.Marshal(p)
				require.NoError(t, err)
				again, err := Parse(out)
				require.NoError(t, err)
				assert.Equal(t, p.OriginatingVASP != nil, again.OriginatingVASP != nil, "the VASP is written back")
				assert.Equal(t, p.BeneficiaryVASP != nil, again.BeneficiaryVASP != nil, "the VASP is written back")
			})
		}
	}
}

func TestValidationError(t *testing.T) {
	fixClock(t, "2025-06-01")
	secrets := []string{"Ingrid", "Vasquez", "1999-01-01", "Tromsø", "N0773194", "0xfeed", "Storgata", "cust-42"}
	p := mustParse(t, `{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[`+
		`{"primaryIdentifier":"Vasquez","secondaryIdentifier":"Ingrid","nameIdentifierType":"Ingrid"}]},`+
		`"geographicAddress":[{"addressType":"Storgata","streetName":"Storgata","townName":"Tromsø","country":"Tromsø"}],`+
		`"nationalIdentification":{"nationalIdentifier":"N0773194","nationalIdentifierType":"N0773194","countryOfIssue":"Vasquez",`+
		`"registrationAuthority":"Ingrid"},"customerIdentification":"cust-42","countryOfResidence":"Ingrid",`+
		`"dateAndPlaceOfBirth":{"dateOfBirth":"1999-01-01x","placeOfBirth":"Tromsø"}}}],"accountNumber":["0xfeed"]},`+
		`"beneficiary":{"beneficiaryPersons":[{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"Ingrid",`+
		`"legalPersonNameIdentifierType":"Vasquez"}]},"customerNumber":"cust-42","countryOfRegistration":"0xfeed",`+
		`"nationalIdentification":{"nationalIdentifier":"Vasquez","nationalIdentifierType":"LEIX","countryOfIssue":"Ingrid"}}}]},`+
		`"payloadMetadata":{"transliterationMethod":["Ingrid"],"payloadVersion":"Vasquez"}}`)
	err := p.Validate()
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Greater(t, len(ve.Errors), 10)
	assert.True(t, errors.Is(err, ErrInvalid))
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "ivms101: invalid payload: originator.originatorPersons[0]"), msg)
	assert.True(t, strings.HasSuffix(msg, "; and "+strconv.Itoa(len(ve.Errors)-5)+" more"), msg)
	assert.Equal(t, 5, strings.Count(msg, "; "), "five faults, then the count of the others: %s", msg)
	for _, f := range ve.Errors {
		for _, s := range secrets {
			assert.NotContains(t, f.Path+f.Reason, s)
		}
	}

	one := &ValidationError{Errors: []FieldError{{Path: "originator", Reason: "required"}}}
	assert.Equal(t, "ivms101: invalid payload: originator: required", one.Error())
	assert.False(t, errors.Is(one, ErrMalformed))
}
