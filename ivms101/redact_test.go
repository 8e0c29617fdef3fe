package ivms101

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretExtra is a member of Extra whose name and value are personal.
var secretExtra = map[string]json.RawMessage{"Ingrid Vasquez-Holm": raw(`{"passport":"P4411907"}`)}

// fullPayload returns a payload with every field set, in which every
// value but the codes is personal, and code fields hold both codes and
// names; personal lists those values, codes the codes that must show.
func fullPayload() (p *Payload, personal, codes []string) {
	personal = []string{
		"Vasquez-Holm", "<script>alert(1)</script>", "Ингрид", "Васкес", "Wahs-kez", "Inkrit",
		"Ingrid Vasquez-Holm", "P4411907", "Storgata", "Tromsø", "Nordlys", "Finnmark", "Postboks 77", "Room 1204",
		"Etasje 12", "Avdeling Nord", "Seksjon Sør", "Sentrum", "Kvaløya", "Line one of the address", "Line two",
		"9008", "1999-02-13", "Hammerfest", "cust-4471", "0xfeedface00112233", "bc1qsecretaccount", "T1secretperson",
		"Nordkapp Kryptobørs AS", "NKB", "Kryptobørs", "920112233", "RA000472", "Arctic Relay AB", "556677-8899",
		"Northvolt", // a code field holding a name
		"Lappland",  // a country field holding a place
		"cyrillic",  // a transliteration method that is not one
		"2023.101",  // a payload version that is not one
	}
	codes = []string{"LEGL", "ALIA", "BIRT", "MAID", "SHRT", "TRAD", "HOME", "BIZZ", "GEOG", "CCPT", "RAID", "TXID",
		"NO", "SE", "XX", "cyrl", "101.2023"}
	addr := func(t AddressType, country string) Address {
		return Address{AddressType: t, Department: "Avdeling Nord", SubDepartment: "Seksjon Sør", StreetName: "Storgata",
			BuildingNumber: "9008", BuildingName: "Nordlys", Floor: "Etasje 12", PostBox: "Postboks 77", Room: "Room 1204",
			PostCode: "9008", TownName: "Tromsø", TownLocationName: "Sentrum", DistrictName: "Kvaløya", CountrySubDivision: "Finnmark",
			AddressLines: []string{"Line one of the address", "Line two"}, Country: country, Extra: secretExtra}
	}
	natural := &NaturalPerson{
		Name: &NaturalPersonName{
			NameIdentifiers: []NaturalPersonNameID{
				{PrimaryIdentifier: "Vasquez-Holm", SecondaryIdentifier: "<script>alert(1)</script>", NameIdentifierType: NameLegal, Extra: secretExtra},
				{PrimaryIdentifier: "Vasquez-Holm", NameIdentifierType: "Northvolt"},
				{PrimaryIdentifier: "Vasquez-Holm", NameIdentifierType: NameAlias},
			},
			LocalNameIdentifiers:    []NaturalPersonNameID{{PrimaryIdentifier: "Васкес", SecondaryIdentifier: "Ингрид", NameIdentifierType: NameBirth}},
			PhoneticNameIdentifiers: []NaturalPersonNameID{{PrimaryIdentifier: "Wahs-kez", SecondaryIdentifier: "Inkrit", NameIdentifierType: NameMaiden}},
			Extra:                   secretExtra,
		},
		GeographicAddresses: []Address{addr(AddressHome, "NO"), addr("Northvolt", "Lappland")},
		NationalIdentification: &NationalIdentification{NationalIdentifier: "P4411907", NationalIdentifierType: IDPassport,
			CountryOfIssue: "NO", RegistrationAuthority: "RA000472", Extra: secretExtra},
		CustomerIdentification: "cust-4471",
		DateAndPlaceOfBirth:    &DateAndPlaceOfBirth{DateOfBirth: "1999-02-13", PlaceOfBirth: "Hammerfest", Extra: secretExtra},
		CountryOfResidence:     "XX",
		Extra:                  secretExtra,
	}
	legal := &LegalPerson{
		Name: &LegalPersonName{
			NameIdentifiers:         []LegalPersonNameID{{LegalPersonName: "Nordkapp Kryptobørs AS", LegalPersonNameIdentifierType: LegalNameLegal, Extra: secretExtra}},
			LocalNameIdentifiers:    []LegalPersonNameID{{LegalPersonName: "Kryptobørs", LegalPersonNameIdentifierType: LegalNameTrading}},
			PhoneticNameIdentifiers: []LegalPersonNameID{{LegalPersonName: "NKB", LegalPersonNameIdentifierType: LegalNameShort}, {LegalPersonName: "NKB", LegalPersonNameIdentifierType: "Northvolt"}},
			Extra:                   secretExtra,
		},
		GeographicAddresses:    []Address{addr(AddressBusiness, "NO"), addr(AddressGeographic, "SE")},
		CustomerIdentification: "cust-4471",
		NationalIdentification: &NationalIdentification{NationalIdentifier: "920112233", NationalIdentifierType: IDRegistrationAuthority,
			RegistrationAuthority: "RA000472"},
		CountryOfRegistration: "NO",
		Extra:                 secretExtra,
	}
	relay := &Person{LegalPerson: &LegalPerson{
		Name:                   &LegalPersonName{NameIdentifiers: []LegalPersonNameID{{LegalPersonName: "Arctic Relay AB", LegalPersonNameIdentifierType: LegalNameLegal}}},
		NationalIdentification: &NationalIdentification{NationalIdentifier: "556677-8899", NationalIdentifierType: IDTax, RegistrationAuthority: "RA000472"},
	}}
	p = &Payload{
		Originator: &Originator{Persons: []Person{{NaturalPerson: natural, AccountNumbers: []string{"T1secretperson"}, Extra: secretExtra}},
			AccountNumbers: []string{"0xfeedface00112233"}, Extra: secretExtra},
		Beneficiary: &Beneficiary{Persons: []Person{{LegalPerson: legal}, {NaturalPerson: natural, LegalPerson: legal}},
			AccountNumbers: []string{"bc1qsecretaccount", ""}, Extra: secretExtra},
		OriginatingVASP: &OriginatingVASP{Person: &Person{LegalPerson: legal}, Extra: secretExtra},
		BeneficiaryVASP: &BeneficiaryVASP{Person: relay, Extra: secretExtra},
		TransferPath: &TransferPath{Path: []IntermediaryVASP{{Person: relay, Sequence: 0, Extra: secretExtra}, {Person: relay, Sequence: 1}},
			Extra: secretExtra},
		PayloadMetadata: &PayloadMetadata{TransliterationMethods: []string{"cyrl", "cyrillic"}, PayloadVersion: "101.2023", Extra: secretExtra},
		Version:         Version2023,
		Extra:           secretExtra,
	}
	personal = append(personal, "passport")
	return p, personal, codes
}

// valuesOf returns p and every value of a type of the package under it,
// by name.
func valuesOf(p *Payload) map[string]any {
	n := p.Originator.Persons[0].NaturalPerson
	l := p.Beneficiary.Persons[0].LegalPerson
	return map[string]any{
		"Payload":                *p,
		"*Payload":               p,
		"Originator":             *p.Originator,
		"Beneficiary":            *p.Beneficiary,
		"OriginatingVASP":        *p.OriginatingVASP,
		"BeneficiaryVASP":        *p.BeneficiaryVASP,
		"TransferPath":           *p.TransferPath,
		"IntermediaryVASP":       p.TransferPath.Path[0],
		"PayloadMetadata":        *p.PayloadMetadata,
		"Person":                 p.Beneficiary.Persons[1],
		"*Person":                &p.Beneficiary.Persons[1],
		"[]Person":               p.Beneficiary.Persons,
		"NaturalPerson":          *n,
		"NaturalPersonName":      *n.Name,
		"NaturalPersonNameID":    n.Name.NameIdentifiers[0],
		"[]NaturalPersonNameID":  n.Name.NameIdentifiers,
		"LegalPerson":            *l,
		"LegalPersonName":        *l.Name,
		"LegalPersonNameID":      l.Name.NameIdentifiers[0],
		"Address":                n.GeographicAddresses[1],
		"*Address":               &n.GeographicAddresses[0],
		"NationalIdentification": *n.NationalIdentification,
		"DateAndPlaceOfBirth":    *n.DateAndPlaceOfBirth,
		"NaturalPersonNameType":  n.Name.NameIdentifiers[1].NameIdentifierType,
		"LegalPersonNameType":    l.Name.PhoneticNameIdentifiers[1].LegalPersonNameIdentifierType,
		"AddressType":            n.GeographicAddresses[1].AddressType,
		"NationalIdentifierType": NationalIdentifierType("P4411907"),
		"Version":                Version("2023.101"),
	}
}

var verbs = []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%[1]T %[1]v", "%10.4v", "%-30s|", "% x", "%#x", "%U", "%t"}

// assertNoPersonal asserts that out holds none of personal, as they are
// or hex-encoded.
func assertNoPersonal(t *testing.T, out string, personal []string, msg string) {
	t.Helper()
	lower := strings.ToLower(out)
	for _, s := range personal {
		assert.NotContains(t, out, s, msg)
		assert.NotContains(t, lower, hex.EncodeToString([]byte(s)), msg)
	}
}

func TestRedactedFmt(t *testing.T) {
	p, personal, codes := fullPayload()
	for name, v := range valuesOf(p) {
		for _, verb := range verbs {
			out := fmt.Sprintf(verb, v)
			assertNoPersonal(t, out, personal, name+" "+verb+": "+out)
		}
	}
	out := fmt.Sprintf("%+v", p)
	for _, c := range codes {
		assert.Contains(t, out, c)
	}
	for _, s := range []string{"PrimaryIdentifier:[redacted]", "NameIdentifierType:LEGL", "NameIdentifierType:[redacted]",
		"Country:NO", "Country:[redacted]", "CountryOfResidence:XX", "Sequence:0", "Sequence:1", "Version:101.2023",
		"TransliterationMethods:[cyrl [redacted]]", "AccountNumbers:[[redacted] [redacted]]", "Extra:[1 member]",
		"RegistrationAuthority:[redacted]", "PayloadVersion:101.2023"} {
		assert.Contains(t, out, s)
	}
	assert.True(t, strings.HasPrefix(fmt.Sprintf("%#v", *p), "ivms101.Payload{Originator:{"), "%#v")
	assert.True(t, strings.HasPrefix(fmt.Sprintf("%#v", p.Originator.Persons[0]), "ivms101.Person{NaturalPerson:{"))
	assert.Equal(t, `{}`, fmt.Sprint(Address{}), "empty fields are left out")
	assert.Equal(t, `{Sequence:0}`, fmt.Sprint(IntermediaryVASP{}))
	assert.Equal(t, `{Country:DE Extra:[2 members]}`, fmt.Sprint(Address{Country: "DE", Extra: map[string]json.RawMessage{"a": nil, "b": nil}}))
}

func TestRedactedCodes(t *testing.T) {
	tests := []struct {
		v    any
		verb string
		want string
	}{
		{NameLegal, "%v", "LEGL"},
		{NameLegal, "%q", `"LEGL"`},
		{NameLegal, "%#v", `"LEGL"`},
		{NaturalPersonNameType("<script>"), "%v", redacted},
		{NaturalPersonNameType("<script>"), "%q", `"[redacted]"`},
		{NaturalPersonNameType("<script>"), "%x", hex.EncodeToString([]byte(redacted))},
		{NaturalPersonNameType(""), "%q", `""`},
		{LegalNameShort, "%s", "SHRT"},
		{LegalPersonNameType("Kryptobørs"), "%s", redacted},
		{AddressGeographic, "%v", "GEOG"},
		{AddressType("Storgata 1"), "%v", redacted},
		{IDLEI, "%v", "LEIX"},
		{NationalIdentifierType("P4411907"), "%v", redacted},
		{Version2023, "%v", "101.2023"},
		{Version("Vasquez"), "%v", redacted},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, fmt.Sprintf(tt.verb, tt.v), "%s of %T", tt.verb, tt.v)
	}
}

// noTime drops a log line's timestamp, whose digits could spell a
// digit-only personal value (a postcode) by chance.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func TestRedactedSlog(t *testing.T) {
	p, personal, codes := fullPayload()
	for _, handler := range []struct {
		name string
		new  func(*bytes.Buffer) slog.Handler
	}{
		{"JSON", func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{ReplaceAttr: noTime})
		}},
		{"text", func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{ReplaceAttr: noTime})
		}},
	} {
		t.Run(handler.name, func(t *testing.T) {
			for name, v := range valuesOf(p) {
				if strings.HasPrefix(name, "[]") {
					continue // a slice is not a LogValuer: the handler formats it (JSON: with MarshalJSON)
				}
				var buf bytes.Buffer
				slog.New(handler.new(&buf)).Info("transfer", "v", v)
				assertNoPersonal(t, buf.String(), personal, name+": "+buf.String())
			}
			var buf bytes.Buffer
			slog.New(handler.new(&buf)).Info("transfer", "payload", p)
			for _, c := range codes {
				assert.Contains(t, buf.String(), c)
			}
			assert.Contains(t, buf.String(), "redacted")
		})
	}
	t.Run("groups", func(t *testing.T) {
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("transfer", "payload", p)
		var line struct {
			Payload struct {
				Version    string
				Originator struct {
					OriginatorPersons map[string]struct {
						NaturalPerson struct {
							Name struct {
								NameIdentifier map[string]map[string]any
							}
							CountryOfResidence string
						}
						Extra int
					}
					AccountNumber map[string]string
					Extra         int
				}
				TransferPath struct {
					TransferPath map[string]struct{ Sequence int }
				}
			}
		}
		require.NoError(t, json.Unmarshal(buf.Bytes(), &line), buf.String())
		assert.Equal(t, "101.2023", line.Payload.Version)
		o := line.Payload.Originator
		assert.Equal(t, map[string]string{"0": redacted}, o.AccountNumber)
		assert.Equal(t, 1, o.Extra)
		person := o.OriginatorPersons["0"]
		assert.Equal(t, 1, person.Extra)
		assert.Equal(t, "XX", person.NaturalPerson.CountryOfResidence)
		assert.Equal(t, map[string]any{"primaryIdentifier": redacted, "nameIdentifierType": redacted},
			person.NaturalPerson.Name.NameIdentifier["1"])
		assert.Equal(t, float64(1), person.NaturalPerson.Name.NameIdentifier["0"]["extra"])
		assert.Equal(t, "LEGL", person.NaturalPerson.Name.NameIdentifier["0"]["nameIdentifierType"])
		assert.Equal(t, 1, line.Payload.TransferPath.TransferPath["1"].Sequence)
	})
}

func TestRedactedParsed(t *testing.T) {
	// A parsed payload prints no value of its JSON but codes and
	// countries.
	for _, name := range append(standardTestdata, "pascal_case.json") {
		t.Run(name, func(t *testing.T) {
			in := readTestdata(t, name)
			p, err := Parse(in)
			require.NoError(t, err)
			for _, verb := range verbs {
				assertOnlyCodes(t, in, fmt.Sprintf(verb, p))
			}
		})
	}
}
