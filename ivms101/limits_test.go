package ivms101

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every bounded member, at its limit and one character over, counted in
// characters: a two-byte letter fills each value, so that a count in bytes
// would refuse the value at the limit.
func TestValidateEachLimit(t *testing.T) {
	fixClock(t, "2025-06-01")
	const (
		orig = "originator.originatorPersons[0].naturalPerson"
		addr = orig + ".geographicAddress[0]"
		vasp = "originatingVASP.originatingVASP.legalPerson"
	)
	natural := func(p *Payload) *NaturalPerson { return p.Originator.Persons[0].NaturalPerson }
	address := func(p *Payload) *Address { return &natural(p).GeographicAddresses[0] }
	legal := func(p *Payload) *LegalPerson { return p.OriginatingVASP.Person.LegalPerson }
	tests := []struct {
		member string
		limit  int
		path   string
		set    func(p *Payload, v string)
	}{
		{"primaryIdentifier", 100, orig + ".name.nameIdentifier[0].primaryIdentifier",
			func(p *Payload, v string) { natural(p).Name.NameIdentifiers[0].PrimaryIdentifier = v }},
		{"secondaryIdentifier", 100, orig + ".name.nameIdentifier[0].secondaryIdentifier",
			func(p *Payload, v string) { natural(p).Name.NameIdentifiers[0].SecondaryIdentifier = v }},
		{"legalPersonName", 100, vasp + ".name.nameIdentifier[0].legalPersonName",
			func(p *Payload, v string) { legal(p).Name.NameIdentifiers[0].LegalPersonName = v }},
		{"department", 50, addr + ".department", func(p *Payload, v string) { address(p).Department = v }},
		{"subDepartment", 70, addr + ".subDepartment", func(p *Payload, v string) { address(p).SubDepartment = v }},
		{"streetName", 70, addr + ".streetName", func(p *Payload, v string) { address(p).StreetName = v }},
		{"buildingNumber", 16, addr + ".buildingNumber", func(p *Payload, v string) { address(p).BuildingNumber = v }},
		{"buildingName", 35, addr + ".buildingName", func(p *Payload, v string) { address(p).BuildingName = v }},
		{"floor", 70, addr + ".floor", func(p *Payload, v string) { address(p).Floor = v }},
		{"postBox", 16, addr + ".postBox", func(p *Payload, v string) { address(p).PostBox = v }},
		{"room", 70, addr + ".room", func(p *Payload, v string) { address(p).Room = v }},
		{"postCode", 16, addr + ".postCode", func(p *Payload, v string) { address(p).PostCode = v }},
		{"townName", 35, addr + ".townName", func(p *Payload, v string) { address(p).TownName = v }},
		{"townLocationName", 35, addr + ".townLocationName", func(p *Payload, v string) { address(p).TownLocationName = v }},
		{"districtName", 35, addr + ".districtName", func(p *Payload, v string) { address(p).DistrictName = v }},
		{"countrySubDivision", 35, addr + ".countrySubDivision", func(p *Payload, v string) { address(p).CountrySubDivision = v }},
		{"addressLine", 70, addr + ".addressLine[0]", func(p *Payload, v string) { address(p).AddressLines = []string{v} }},
		{"nationalIdentifier", 35, orig + ".nationalIdentification.nationalIdentifier",
			func(p *Payload, v string) { natural(p).NationalIdentification.NationalIdentifier = v }},
		{"customerIdentification", 50, orig + ".customerIdentification",
			func(p *Payload, v string) { natural(p).CustomerIdentification = v }},
		{"customerNumber", 50, vasp + ".customerNumber", func(p *Payload, v string) { legal(p).CustomerIdentification = v }},
		{"placeOfBirth", 70, orig + ".dateAndPlaceOfBirth.placeOfBirth",
			func(p *Payload, v string) { natural(p).DateAndPlaceOfBirth.PlaceOfBirth = v }},
		{"accountNumber", 100, "originator.accountNumber[0]", func(p *Payload, v string) { p.Originator.AccountNumbers[0] = v }},
	}
	for _, tt := range tests {
		t.Run(tt.member, func(t *testing.T) {
			assert.Equal(t, tt.limit, Version2020.MaxLength(tt.member))
			for _, n := range []int{tt.limit, tt.limit + 1} {
				p, err := Parse(readTestdata(t, "natural_to_natural_2020.json"))
				require.NoError(t, err)
				tt.set(p, strings.Repeat("é", n))
				if n == tt.limit {
					assert.NoError(t, p.Validate(), "%d characters", n)
					continue
				}
				assertFaults(t, []FieldError{{tt.path, "longer than " + strconv.Itoa(tt.limit) + " characters"}}, p.Validate())
			}
		})
	}
}

func TestMaxLength(t *testing.T) {
	for _, tt := range []struct {
		v    Version
		name string
		want int
	}{
		{Version2020, "accountNumber", 100},
		{Version2023, "accountNumber", 512},
		{"", "accountNumber", 100},
		{Version2023, "customerIdentification", 50},
		{Version2023, "townName", 35},
		{Version2020, "country", 0},
		{Version2020, "nameIdentifierType", 0},
	} {
		assert.Equal(t, tt.want, tt.v.MaxLength(tt.name), "%s %s", tt.v, tt.name)
	}
}
