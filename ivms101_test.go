package travelrule_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/ivms101"
)

// ada is a natural person with one of every field a Party holds.
func ada() ivms101.Person {
	return ivms101.Person{NaturalPerson: &ivms101.NaturalPerson{
		Name: &ivms101.NaturalPersonName{NameIdentifiers: []ivms101.NaturalPersonNameID{
			{PrimaryIdentifier: "Lovelace", SecondaryIdentifier: "Ada", NameIdentifierType: ivms101.NameLegal},
		}},
		GeographicAddresses: []ivms101.Address{{AddressType: ivms101.AddressHome, StreetName: "St James's Square",
			BuildingNumber: "12", PostCode: "SW1Y 4JH", TownName: "London", Country: "GB"}},
		NationalIdentification: &ivms101.NationalIdentification{NationalIdentifier: "AB123456C", NationalIdentifierType: ivms101.IDSocialSecurity},
		CustomerIdentification: "cust-1815",
		DateAndPlaceOfBirth:    &ivms101.DateAndPlaceOfBirth{DateOfBirth: "1815-12-10"},
		CountryOfResidence:     "GB",
	}}
}

var adaParty = travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10",
	AddressType: "HOME", StreetName: "St James's Square", BuildingNumber: "12", PostCode: "SW1Y 4JH", TownName: "London",
	Country: "GB", NationalID: "AB123456C", NationalIDType: "SOCS", AccountNumber: "cust-1815", WalletAddress: "bc1qada"}

func TestPartyFromIVMS101(t *testing.T) {
	withAll := ada()
	np := withAll.NaturalPerson
	np.Name.NameIdentifiers = append([]ivms101.NaturalPersonNameID{{PrimaryIdentifier: "Byron", NameIdentifierType: ivms101.NameBirth}}, np.Name.NameIdentifiers...)
	np.Name.LocalNameIdentifiers = []ivms101.NaturalPersonNameID{{PrimaryIdentifier: "ラブレス"}}
	np.Name.PhoneticNameIdentifiers = []ivms101.NaturalPersonNameID{{PrimaryIdentifier: "LUV-lace"}}
	np.GeographicAddresses[0].AddressLines = []string{"Flat 2", "Second floor"}
	np.GeographicAddresses[0].Floor = "2"
	np.GeographicAddresses = append(np.GeographicAddresses, ivms101.Address{TownName: "Ockham", Country: "GB"})
	np.NationalIdentification.CountryOfIssue = "GB"
	np.DateAndPlaceOfBirth.PlaceOfBirth = "London"
	np.CountryOfResidence = "IT"
	np.Extra = map[string]json.RawMessage{"title": json.RawMessage(`"Countess"`)}

	// A member IVMS101 does not name, at every level of a person: each is
	// named in the unmapped paths, under its level.
	extra := func(k string) map[string]json.RawMessage { return map[string]json.RawMessage{k: json.RawMessage(`1`)} }
	naturalExtra := ada()
	naturalExtra.Extra = map[string]json.RawMessage{"zPerson": json.RawMessage(`1`), "aPerson": json.RawMessage(`2`)}
	ne := naturalExtra.NaturalPerson
	ne.Extra = extra("xNatural")
	ne.Name.Extra = extra("xName")
	ne.Name.NameIdentifiers[0].Extra = extra("xNameID")
	ne.GeographicAddresses[0].Extra = extra("xAddress")
	ne.NationalIdentification.Extra = extra("xNationalID")
	ne.NationalIdentification.RegistrationAuthority = "RA000585"
	ne.DateAndPlaceOfBirth.Extra = extra("xBirth")
	legalExtra := ivms101.Person{LegalPerson: &ivms101.LegalPerson{
		Name: &ivms101.LegalPersonName{NameIdentifiers: []ivms101.LegalPersonNameID{
			{LegalPersonName: "Analytical Engine Works Ltd", LegalPersonNameIdentifierType: ivms101.LegalNameLegal, Extra: extra("xNameID")},
		}, Extra: extra("xName")},
		GeographicAddresses: []ivms101.Address{{AddressType: ivms101.AddressGeographic, StreetName: "Dorset Street", BuildingNumber: "1",
			TownName: "London", Country: "GB", Extra: extra("xAddress")}},
		NationalIdentification: &ivms101.NationalIdentification{NationalIdentifier: "213800ABCDEF", NationalIdentifierType: ivms101.IDRegistrationAuthority,
			RegistrationAuthority: "RA000585", Extra: extra("xNationalID")},
		Extra: extra("xLegal"),
	}, Extra: extra("xPerson")}

	noName := ada()
	noName.NaturalPerson.Name.NameIdentifiers = []ivms101.NaturalPersonNameID{{PrimaryIdentifier: "Lovelace", SecondaryIdentifier: "Ada", NameIdentifierType: ivms101.NameAlias}}
	noAddress := ada()
	noAddress.NaturalPerson.GeographicAddresses = nil

	tests := []struct {
		name     string
		person   ivms101.Person
		accounts []string
		want     travelrule.Party
		unmapped []string
	}{
		{"everything a Party holds", ada(), []string{"bc1qada"}, adaParty, nil},
		{"and more: each loss is named", withAll, []string{"bc1qada", "bc1qsecond"}, adaParty, []string{
			"naturalPerson.name.nameIdentifier[0]",
			"naturalPerson.name.localNameIdentifier[0]",
			"naturalPerson.name.phoneticNameIdentifier[0]",
			"naturalPerson.geographicAddress[0].floor",
			"naturalPerson.geographicAddress[0].addressLine[0]",
			"naturalPerson.geographicAddress[0].addressLine[1]",
			"naturalPerson.geographicAddress[1]",
			"naturalPerson.nationalIdentification.countryOfIssue",
			"naturalPerson.dateAndPlaceOfBirth.placeOfBirth",
			"naturalPerson.countryOfResidence",
			"naturalPerson.title",
			"accountNumber[1]",
		}},
		{"a natural person's unknown members, at every level", naturalExtra, []string{"bc1qada"}, adaParty, []string{
			"naturalPerson.name.nameIdentifier[0].xNameID",
			"naturalPerson.name.xName",
			"naturalPerson.geographicAddress[0].xAddress",
			"naturalPerson.nationalIdentification.registrationAuthority",
			"naturalPerson.nationalIdentification.xNationalID",
			"naturalPerson.dateAndPlaceOfBirth.xBirth",
			"naturalPerson.xNatural",
			"aPerson", "zPerson",
		}},
		{"a legal person's unknown members, at every level", legalExtra, nil, travelrule.Party{PersonType: "legal",
			LegalName: "Analytical Engine Works Ltd", AddressType: "GEOG", StreetName: "Dorset Street", BuildingNumber: "1",
			TownName: "London", Country: "GB", NationalID: "213800ABCDEF", NationalIDType: "RAID"}, []string{
			"legalPerson.name.nameIdentifier[0].xNameID",
			"legalPerson.name.xName",
			"legalPerson.geographicAddress[0].xAddress",
			"legalPerson.nationalIdentification.registrationAuthority",
			"legalPerson.nationalIdentification.xNationalID",
			"legalPerson.xLegal",
			"xPerson",
		}},
		{"no LEGL name: the first is used", noName, []string{"bc1qada"}, adaParty, nil},
		{"no address: the country of residence", noAddress, []string{"bc1qada"}, func() travelrule.Party {
			p := adaParty
			p.AddressType, p.StreetName, p.BuildingNumber, p.PostCode, p.TownName = "", "", "", "", ""
			return p
		}(), nil},
		{"a legal person", ivms101.Person{LegalPerson: &ivms101.LegalPerson{
			Name: &ivms101.LegalPersonName{NameIdentifiers: []ivms101.LegalPersonNameID{
				{LegalPersonName: "Babbage Engines", LegalPersonNameIdentifierType: ivms101.LegalNameTrading},
				{LegalPersonName: "Analytical Engine Works Ltd", LegalPersonNameIdentifierType: ivms101.LegalNameLegal},
			}},
			NationalIdentification: &ivms101.NationalIdentification{NationalIdentifier: "5493001KJTIIGC8Y1R12", NationalIdentifierType: ivms101.IDLEI},
			CountryOfRegistration:  "GB",
			CustomerIdentification: "corp-9",
		}}, nil, travelrule.Party{PersonType: "legal", LegalName: "Analytical Engine Works Ltd", Country: "GB",
			NationalID: "5493001KJTIIGC8Y1R12", NationalIDType: "LEIX", AccountNumber: "corp-9"},
			[]string{"legalPerson.name.nameIdentifier[0]"}},
		{"both kinds of person: the natural one", ivms101.Person{NaturalPerson: ada().NaturalPerson, LegalPerson: &ivms101.LegalPerson{}},
			[]string{"bc1qada"}, adaParty, []string{"legalPerson"}},
		{"neither kind", ivms101.Person{}, nil, travelrule.Party{}, []string{""}},
		{"the person's account numbers (2023) come first", func() ivms101.Person {
			p := ada()
			p.AccountNumbers = []string{"bc1qada", "bc1qperson2"}
			return p
		}(), []string{"bc1qside"}, adaParty, []string{"accountNumber[1]", "accountNumber[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unmapped := travelrule.PartyFromIVMS101(tt.person, tt.accounts)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.unmapped, unmapped)
		})
	}
}

// TestPartyIVMS101RoundTrip: a Party made into an IVMS101 person and back
// is the same Party; only Email, which IVMS101 has no place for, and a
// DateOfBirth, which it takes only with a place of birth, are lost, and
// said to be.
func TestPartyIVMS101RoundTrip(t *testing.T) {
	legal := travelrule.Party{PersonType: "legal", LegalName: "Analytical Engine Works Ltd", AddressType: "GEOG",
		StreetName: "Dorset Street", BuildingNumber: "1", TownName: "London", Country: "GB",
		NationalID: "5493001KJTIIGC8Y1R12", NationalIDType: "LEIX", WalletAddress: "0xcorp"}
	noAddress := travelrule.Party{PersonType: "natural", FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09", Country: "US"}
	withEmail := adaParty
	withEmail.Email = "ada@example.com"
	tests := []struct {
		name     string
		party    travelrule.Party
		unmapped []string
	}{
		{"natural", adaParty, []string{"dateOfBirth"}},
		{"legal", legal, nil},
		{"no address", noAddress, []string{"dateOfBirth"}},
		{"an email", withEmail, []string{"dateOfBirth", "email"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			person, accounts, unmapped := tt.party.IVMS101Person()
			assert.Equal(t, tt.unmapped, unmapped)
			if np := person.NaturalPerson; np != nil {
				assert.Nil(t, np.DateAndPlaceOfBirth, "no dateAndPlaceOfBirth without a place")
			}
			back, lost := travelrule.PartyFromIVMS101(person, accounts)
			assert.Empty(t, lost)
			want := tt.party
			want.Email, want.DateOfBirth = "", ""
			assert.Equal(t, want, back)
		})
	}
}

// TestIVMS101PersonUnmapped: the fields of a Party that its kind of
// IVMS101 person has no place for are named.
func TestIVMS101PersonUnmapped(t *testing.T) {
	tests := []struct {
		name     string
		party    travelrule.Party
		unmapped []string
	}{
		{"a natural person's legal name", travelrule.Party{PersonType: "natural", FirstName: "Ada", LegalName: "Lovelace Ltd"},
			[]string{"legalName"}},
		{"a natural person's date of birth", travelrule.Party{PersonType: "natural", FirstName: "Ada", DateOfBirth: "1815-12-10"},
			[]string{"dateOfBirth"}},
		{"a legal person's names and date of birth", travelrule.Party{PersonType: "legal", LegalName: "Lovelace Ltd",
			FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", Email: "ada@example.com"},
			[]string{"firstName", "lastName", "dateOfBirth", "email"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, unmapped := tt.party.IVMS101Person()
			assert.Equal(t, tt.unmapped, unmapped)
		})
	}
}

// TestTransferRequestIVMS101: a request's parties go into an IVMS101
// payload and come back out of it.
func TestTransferRequestIVMS101(t *testing.T) {
	req := &travelrule.TransferRequest{Asset: "ETH", Amount: "1", Callback: "https://vasp.example/cb",
		Originator: adaParty, Beneficiary: travelrule.Party{PersonType: "legal", LegalName: "Engine Works", Email: "ops@example.com", WalletAddress: "0xbeef"}}
	p, unmapped := req.IVMS101()
	assert.Equal(t, []string{"originator.dateOfBirth", "beneficiary.email"}, unmapped)
	assert.Equal(t, ivms101.Version2020, p.Version)
	require.Len(t, p.Originator.Persons, 1)
	assert.Equal(t, "Lovelace", p.Originator.Persons[0].NaturalPerson.Name.NameIdentifiers[0].PrimaryIdentifier)
	assert.Equal(t, []string{"0xbeef"}, p.Beneficiary.AccountNumbers)

	o, b, lost := travelrule.PartiesFromIVMS101(p)
	assert.Empty(t, lost)
	wantOriginator := req.Originator
	wantOriginator.DateOfBirth = ""
	assert.Equal(t, wantOriginator, o)
	want := req.Beneficiary
	want.Email = ""
	assert.Equal(t, want, b)
}

// TestPartiesFromIVMS101Paths: paths start at the payload's root, in its
// edition's names.
func TestPartiesFromIVMS101Paths(t *testing.T) {
	second := ada()
	payload := func(v ivms101.Version) *ivms101.Payload {
		return &ivms101.Payload{
			Version:     v,
			Originator:  &ivms101.Originator{Persons: []ivms101.Person{ada(), second}, AccountNumbers: []string{"bc1qada", "bc1qother"}},
			Beneficiary: &ivms101.Beneficiary{Persons: []ivms101.Person{{}}, Extra: map[string]json.RawMessage{"note": json.RawMessage(`1`)}},
		}
	}
	tests := []struct {
		version  ivms101.Version
		unmapped []string
	}{
		{ivms101.Version2020, []string{"originator.originatorPersons[1]", "originator.accountNumber[1]", "beneficiary.beneficiaryPersons[0]", "beneficiary.note"}},
		{ivms101.Version2023, []string{"originator.originatorPerson[1]", "originator.accountNumber[1]", "beneficiary.beneficiaryPerson[0]", "beneficiary.note"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.version), func(t *testing.T) {
			o, b, unmapped := travelrule.PartiesFromIVMS101(payload(tt.version))
			assert.Equal(t, adaParty, o)
			assert.Equal(t, travelrule.Party{}, b)
			assert.Equal(t, tt.unmapped, unmapped)
		})
	}
	o, b, unmapped := travelrule.PartiesFromIVMS101(nil)
	assert.Zero(t, o)
	assert.Zero(t, b)
	assert.Nil(t, unmapped)
}

// TestUnmappedIsBounded: a payload that loses thousands of fields (a
// hostile list of account numbers) lists 256 of them and counts the rest.
func TestUnmappedIsBounded(t *testing.T) {
	accounts := make([]string, 10_000)
	for i := range accounts {
		accounts[i] = "bc1q" + strconv.Itoa(i)
	}
	p := &ivms101.Payload{Originator: &ivms101.Originator{Persons: []ivms101.Person{ada()}, AccountNumbers: accounts}}
	o, _, unmapped := travelrule.PartiesFromIVMS101(p)
	assert.Equal(t, "bc1q0", o.WalletAddress)
	require.Len(t, unmapped, 257)
	assert.Equal(t, "originator.accountNumber[1]", unmapped[0])
	assert.Equal(t, "… and 9743 more", unmapped[256])
}

// TestValidateStrictAppliesIVMS101: ValidateStrict refuses what IVMS101
// refuses in the request's payload (TransferRequest.IVMS101), each fault
// under the Party field it comes from, once; every request it accepts
// maps to a payload that ivms101.Payload.Validate accepts, in either
// edition; no reason repeats a value.
func TestValidateStrictAppliesIVMS101(t *testing.T) {
	const lei = "5493001KJTIIGC8Y1R12" // valid check digits
	legal := func(p travelrule.Party) func(r *travelrule.TransferRequest) {
		return func(r *travelrule.TransferRequest) {
			p.PersonType = "legal"
			if p.LegalName == "" {
				p.LegalName = "Analytical Engine Works Ltd"
			}
			r.Originator = p
		}
	}
	geog := travelrule.Party{AddressType: "GEOG", StreetName: "Dorset Street", BuildingNumber: "1", TownName: "London", Country: "GB"}
	withLEI := func(id string) travelrule.Party { return travelrule.Party{NationalID: id, NationalIDType: "LEIX"} }
	tests := []struct {
		name   string
		mutate func(r *travelrule.TransferRequest)
		fields []string // nil: valid
	}{
		{"a full natural originator", func(*travelrule.TransferRequest) {}, nil},
		// C1: a natural originator is located or identified; a date of
		// birth does not count, having no place of birth to go with.
		{"C1: a natural originator with a name and date of birth only", func(r *travelrule.TransferRequest) {
			r.Originator = travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", Country: "GB"}
		}, []string{"originator"}},
		{"C1: an account number (customer identification) is enough", func(r *travelrule.TransferRequest) {
			r.Originator = travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", AccountNumber: "c-1815"}
		}, nil},
		{"C1: a national id is enough", func(r *travelrule.TransferRequest) {
			r.Originator = travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10",
				NationalID: "AB123456C", NationalIDType: "SOCS"}
		}, nil},
		{"C1 is the originator's: a beneficiary with a name only", func(r *travelrule.TransferRequest) {
			r.Beneficiary = travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"}
		}, nil},
		// C4: a legal originator has a GEOG address, a national id or a
		// customer number.
		{"C4: a legal originator with a name only", legal(travelrule.Party{}), []string{"originator"}},
		{"C4: and a country", legal(travelrule.Party{Country: "GB"}), []string{"originator"}},
		{"C4: a HOME address does not count", legal(travelrule.Party{AddressType: "HOME", StreetName: "Dorset Street",
			BuildingNumber: "1", TownName: "London", Country: "GB"}), []string{"originator"}},
		{"C4: a GEOG address", legal(geog), nil},
		{"C4: an account number", legal(travelrule.Party{AccountNumber: "c-7"}), nil},
		{"C4: an LEI", legal(withLEI(lei)), nil},
		{"C4 is the originator's: a legal beneficiary with a name only", func(r *travelrule.TransferRequest) {
			r.Beneficiary = travelrule.Party{PersonType: "legal", LegalName: "Engine Works"}
		}, nil},
		// C11: an LEI's check digits.
		{"C11: an LEI of three letters", legal(withLEI("ABC")), []string{"originator.nationalId"}},
		{"C11: an LEI with wrong check digits", legal(withLEI(lei[:18] + "13")), []string{"originator.nationalId"}},
		{"C11: a natural person's LEI too", func(r *travelrule.TransferRequest) { r.Originator.NationalIDType = "LEIX" },
			[]string{"originator.nationalId"}},
		// C7, C9: a legal person's national identification.
		{"C7: a legal person's identity card", legal(travelrule.Party{AccountNumber: "c-7", NationalID: "X1", NationalIDType: "IDCD"}),
			[]string{"originator.nationalIdType"}},
		{"C9: a registration number needs a registration authority, which a party has not", legal(travelrule.Party{
			AccountNumber: "c-7", NationalID: "HRB 1234", NationalIDType: "RAID"}), []string{"originator.nationalIdType"}},
		// An address: its type, town and country, and C8.
		{"an address without its type", func(r *travelrule.TransferRequest) { r.Beneficiary.AddressType = "" },
			[]string{"beneficiary.addressType"}},
		{"an address type outside the list", func(r *travelrule.TransferRequest) { r.Beneficiary.AddressType = "CASTLE" },
			[]string{"beneficiary.addressType"}},
		{"an address without a town", func(r *travelrule.TransferRequest) { r.Originator.TownName = "" }, []string{"originator.townName"}},
		{"an address without a country", func(r *travelrule.TransferRequest) { r.Originator.Country = "" }, []string{"originator.country"}},
		{"C8: a street without a number", func(r *travelrule.TransferRequest) { r.Originator.BuildingNumber = "" },
			[]string{"originator.buildingNumber"}},
		{"C8: a number without a street", func(r *travelrule.TransferRequest) { r.Beneficiary.StreetName = "" },
			[]string{"beneficiary.streetName"}},
		{"a post code alone is an address", func(r *travelrule.TransferRequest) {
			r.Beneficiary = travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23", PostCode: "SW1"}
		}, []string{"beneficiary.addressType", "beneficiary.streetName", "beneficiary.townName", "beneficiary.country"}},
		// A national identification has both parts.
		{"a national id without its type", func(r *travelrule.TransferRequest) { r.Originator.NationalIDType = "" },
			[]string{"originator.nationalIdType"}},
		{"a national id type without the id", func(r *travelrule.TransferRequest) { r.Originator.NationalID = "" },
			[]string{"originator.nationalId"}},
		{"a national id type outside the list", func(r *travelrule.TransferRequest) { r.Originator.NationalIDType = "PASSPORT" },
			[]string{"originator.nationalIdType"}},
		// What IVMS101 counts as missing: white space.
		{"a last name of white space", func(r *travelrule.TransferRequest) { r.Beneficiary.LastName = "   " },
			[]string{"beneficiary.lastName"}},
		{"a legal name of white space", legal(travelrule.Party{LegalName: "   ", AccountNumber: "c-7"}), []string{"originator.legalName"}},
		// Lengths, once per field.
		{"a first name over IVMS101's 100", func(r *travelrule.TransferRequest) { r.Originator.FirstName = strings.Repeat("é", 101) },
			[]string{"originator.firstName"}},
		{"a town over IVMS101's 35 and the 255", func(r *travelrule.TransferRequest) { r.Originator.TownName = strings.Repeat("é", 256) },
			[]string{"originator.townName"}},
		// A wallet longer than the 2020 edition's accountNumber: the 2023
		// edition (A16).
		{"a Cardano wallet", func(r *travelrule.TransferRequest) {
			r.Beneficiary.WalletAddress = "addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgse35a3x"
		}, nil},
		// The party's own checks, where IVMS101 is more lenient.
		{"country XX (IVMS101's unknown) is not an assigned code", func(r *travelrule.TransferRequest) { r.Originator.Country = "XX" },
			[]string{"originator.country"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fullRequest()
			tt.mutate(r)
			err := r.ValidateStrict()
			assertFaults(t, err, tt.fields)
			p, _ := r.IVMS101()
			if tt.fields == nil {
				assert.NoError(t, p.Validate(), "a request ValidateStrict accepts maps to valid IVMS101")
				return
			}
			shown := err.Error()
			for _, party := range []travelrule.Party{r.Originator, r.Beneficiary} {
				for _, v := range []string{party.FirstName, party.LastName, party.LegalName, party.StreetName, party.TownName,
					party.NationalID, party.AccountNumber, party.WalletAddress} {
					if len(strings.TrimSpace(v)) > 3 {
						assert.NotContains(t, shown, v)
					}
				}
			}
		})
	}
}
