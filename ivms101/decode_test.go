package ivms101

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func mustParse(t testing.TB, s string) *Payload {
	t.Helper()
	p, err := Parse([]byte(s))
	require.NoError(t, err)
	return p
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestParseTestdata(t *testing.T) {
	t.Run("natural to natural, 2020", func(t *testing.T) {
		p, err := Parse(readTestdata(t, "natural_to_natural_2020.json"))
		require.NoError(t, err)
		assert.Equal(t, Version2020, p.Version)
		require.Len(t, p.Originator.Persons, 1)
		np := p.Originator.Persons[0].NaturalPerson
		require.NotNil(t, np)
		assert.Equal(t, []NaturalPersonNameID{
			{PrimaryIdentifier: "Dzhaksybekov", SecondaryIdentifier: "Yerlan", NameIdentifierType: NameLegal},
			{PrimaryIdentifier: "Jaksybek", SecondaryIdentifier: "Erlan", NameIdentifierType: NameAlias},
		}, np.Name.NameIdentifiers)
		assert.Equal(t, []NaturalPersonNameID{
			{PrimaryIdentifier: "Джаксыбеков", SecondaryIdentifier: "Ерлан", NameIdentifierType: NameLegal},
		}, np.Name.LocalNameIdentifiers)
		assert.Equal(t, []Address{{AddressType: AddressHome, StreetName: "Kabanbay Batyr Avenue", BuildingNumber: "417",
			Floor: "9", Room: "93", PostCode: "Z05H9X4", TownName: "Astana", Country: "KZ"}}, np.GeographicAddresses)
		assert.Equal(t, &NationalIdentification{NationalIdentifier: "N07731942", NationalIdentifierType: IDPassport,
			CountryOfIssue: "KZ"}, np.NationalIdentification)
		assert.Equal(t, "C-0048213", np.CustomerIdentification)
		assert.Equal(t, &DateAndPlaceOfBirth{DateOfBirth: "1987-03-14", PlaceOfBirth: "Karaganda"}, np.DateAndPlaceOfBirth)
		assert.Equal(t, "KZ", np.CountryOfResidence)
		assert.Equal(t, []string{"bc1qzr7d4m0ffakeorig2020x8y6v5n4tqe9wjh3l"}, p.Originator.AccountNumbers)

		bn := p.Beneficiary.Persons[0].NaturalPerson
		assert.Equal(t, "Suh", bn.Name.PhoneticNameIdentifiers[0].PrimaryIdentifier)
		assert.Equal(t, []string{"Apt 1204, 88 Banpo-daero 31-gil", "Seocho-gu"}, bn.GeographicAddresses[0].AddressLines)

		vasp := p.OriginatingVASP.Person.LegalPerson
		assert.Equal(t, []LegalPersonNameID{{LegalPersonName: "Steppe Digital Assets JSC", LegalPersonNameIdentifierType: LegalNameLegal}},
			vasp.Name.NameIdentifiers)
		assert.Equal(t, IDLEI, vasp.NationalIdentification.NationalIdentifierType)
		assert.Equal(t, "한강거래소 주식회사", p.BeneficiaryVASP.Person.LegalPerson.Name.LocalNameIdentifiers[0].LegalPersonName)
		assert.Equal(t, []string{"cyrl", "kore"}, p.PayloadMetadata.TransliterationMethods)
		assertNoExtra(t, p)
	})
	t.Run("legal to natural, 2020", func(t *testing.T) {
		p, err := Parse(readTestdata(t, "legal_to_natural_2020.json"))
		require.NoError(t, err)
		assert.Equal(t, Version2020, p.Version)
		lp := p.Originator.Persons[0].LegalPerson
		require.NotNil(t, lp)
		assert.Equal(t, "CORP-77120", lp.CustomerIdentification, "customerNumber")
		assert.Equal(t, "Treasury", lp.GeographicAddresses[0].Department)
		assert.Nil(t, p.Originator.Persons[0].NaturalPerson)
		assertNoExtra(t, p)
	})
	t.Run("2023", func(t *testing.T) {
		p, err := Parse(readTestdata(t, "natural_2023.json"))
		require.NoError(t, err)
		assert.Equal(t, Version2023, p.Version)
		require.Len(t, p.Originator.Persons, 1, "originatorPerson")
		op := p.Originator.Persons[0]
		assert.Equal(t, NameLegal, op.NaturalPerson.Name.NameIdentifiers[0].NameIdentifierType, "naturalPersonNameIdentifierType")
		assert.Equal(t, []string{"TFakeOriginator2023Tron1111111111"}, op.AccountNumbers, "accountNumber on the person")
		require.Len(t, p.Beneficiary.Persons, 1, "beneficiaryPerson")
		assert.Equal(t, "KL-2023-0091", p.Beneficiary.Persons[0].LegalPerson.CustomerIdentification)
		assert.Equal(t, "101.2023", p.PayloadMetadata.PayloadVersion)
		assertNoExtra(t, p)
	})
	t.Run("transfer path", func(t *testing.T) {
		p, err := Parse(readTestdata(t, "transfer_path_2020.json"))
		require.NoError(t, err)
		require.Len(t, p.TransferPath.Path, 2)
		assert.Equal(t, 0, p.TransferPath.Path[0].Sequence)
		assert.Equal(t, 1, p.TransferPath.Path[1].Sequence)
		assert.Equal(t, "Pacific Hop SpA", p.TransferPath.Path[1].Person.LegalPerson.Name.NameIdentifiers[0].LegalPersonName)
		assertNoExtra(t, p)
	})
	t.Run("PascalCase top level", func(t *testing.T) {
		p, err := Parse(readTestdata(t, "pascal_case.json"))
		require.NoError(t, err)
		assert.Equal(t, Version2020, p.Version, "a legal person's customerIdentification does not decide the edition")
		require.NotNil(t, p.Originator)
		assert.Equal(t, "Kang", p.Originator.Persons[0].NaturalPerson.Name.NameIdentifiers[0].PrimaryIdentifier)
		assert.Equal(t, "corp-00912", p.Beneficiary.Persons[0].LegalPerson.CustomerIdentification)
		assert.Equal(t, "03154", p.OriginatingVASP.Person.LegalPerson.GeographicAddresses[0].PostCode, "postcode")
		assert.Nil(t, p.BeneficiaryVASP)
		assert.Nil(t, p.Extra)
		// The empty secondaryIdentifier is kept, to be written back.
		assert.Equal(t, map[string]json.RawMessage{"secondaryIdentifier": raw(`""`)},
			p.Originator.Persons[0].NaturalPerson.Name.LocalNameIdentifiers[0].Extra)
	})
}

// assertNoExtra asserts that every member of p was read into the model.
func assertNoExtra(t *testing.T, p *Payload) {
	t.Helper()
	walkExtras(p, func(e map[string]json.RawMessage) {
		for k := range e {
			t.Errorf("Extra holds %q", k)
		}
	})
}

// walkExtras calls fn with the Extra of every level of p.
func walkExtras(p *Payload, fn func(map[string]json.RawMessage)) {
	var person func(*Person)
	names := func(ids []NaturalPersonNameID) {
		for _, id := range ids {
			fn(id.Extra)
		}
	}
	lnames := func(ids []LegalPersonNameID) {
		for _, id := range ids {
			fn(id.Extra)
		}
	}
	addrs := func(as []Address) {
		for _, a := range as {
			fn(a.Extra)
		}
	}
	person = func(x *Person) {
		if x == nil {
			return
		}
		fn(x.Extra)
		if n := x.NaturalPerson; n != nil {
			fn(n.Extra)
			if n.Name != nil {
				fn(n.Name.Extra)
				names(n.Name.NameIdentifiers)
				names(n.Name.LocalNameIdentifiers)
				names(n.Name.PhoneticNameIdentifiers)
			}
			addrs(n.GeographicAddresses)
			if n.NationalIdentification != nil {
				fn(n.NationalIdentification.Extra)
			}
			if n.DateAndPlaceOfBirth != nil {
				fn(n.DateAndPlaceOfBirth.Extra)
			}
		}
		if l := x.LegalPerson; l != nil {
			fn(l.Extra)
			if l.Name != nil {
				fn(l.Name.Extra)
				lnames(l.Name.NameIdentifiers)
				lnames(l.Name.LocalNameIdentifiers)
				lnames(l.Name.PhoneticNameIdentifiers)
			}
			addrs(l.GeographicAddresses)
			if l.NationalIdentification != nil {
				fn(l.NationalIdentification.Extra)
			}
		}
	}
	fn(p.Extra)
	if o := p.Originator; o != nil {
		fn(o.Extra)
		for i := range o.Persons {
			person(&o.Persons[i])
		}
	}
	if b := p.Beneficiary; b != nil {
		fn(b.Extra)
		for i := range b.Persons {
			person(&b.Persons[i])
		}
	}
	if v := p.OriginatingVASP; v != nil {
		fn(v.Extra)
		person(v.Person)
	}
	if v := p.BeneficiaryVASP; v != nil {
		fn(v.Extra)
		person(v.Person)
	}
	if tp := p.TransferPath; tp != nil {
		fn(tp.Extra)
		for _, iv := range tp.Path {
			fn(iv.Extra)
			person(iv.Person)
		}
	}
	if m := p.PayloadMetadata; m != nil {
		fn(m.Extra)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Version
	}{
		{"2020 names", `{"originator":{"originatorPersons":[{}]}}`, Version2020},
		{"no persons at all", `{}`, Version2020},
		{"originatorPerson", `{"originator":{"originatorPerson":[{}]}}`, Version2023},
		{"beneficiaryPerson", `{"beneficiary":{"beneficiaryPerson":[{}]}}`, Version2023},
		{"case-insensitive 2023 name", `{"Originator":{"OriginatorPerson":[{}]}}`, Version2023},
		{"naturalPersonNameIdentifierType",
			`{"originatingVASP":{"originatingVASP":{"naturalPerson":{"name":{"nameIdentifier":[{"naturalPersonNameIdentifierType":"LEGL"}]}}}}}`,
			Version2023},
		{"payloadVersion 101.2023", `{"payloadMetadata":{"payloadVersion":"101.2023"}}`, Version2023},
		{"payloadVersion 101", `{"payloadMetadata":{"payloadVersion":"101"}}`, Version2020},
		{"2023 names win over payloadVersion 101", `{"originator":{"originatorPerson":[{}]},"payloadMetadata":{"payloadVersion":"101"}}`,
			Version2023},
		{"a legal person's customerIdentification does not decide",
			`{"originator":{"originatorPersons":[{"legalPerson":{"customerIdentification":"c-1"}}]}}`, Version2020},
		{"naturalPersonNameIdentifierType in a local name does not decide",
			`{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"localNameIdentifier":[{"naturalPersonNameIdentifierType":"LEGL"}]}}}]}}`,
			Version2020},
		{"a 2023 name of the wrong type does not decide", `{"originator":{"originatorPerson":"x"}}`, Version2020},
		{"an empty 2023 list does not decide", `{"originator":{"originatorPerson":[]}}`, Version2020},
		{"a 2023 name in Extra does not decide", `{"x":{"originatorPerson":[{}]}}`, Version2020},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mustParse(t, tt.in).Version)
		})
	}
}

func TestParseEditionNames(t *testing.T) {
	np := func(typeName string) string {
		return `{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"P","` + typeName + `":"LEGL"}],` +
			`"localNameIdentifier":[{"primaryIdentifier":"L","` + typeName + `":"LEGL"}]}}}`
	}
	for _, tt := range []struct{ persons, typeName, customer string }{
		{"originatorPersons", "nameIdentifierType", "customerNumber"},
		{"originatorPerson", "naturalPersonNameIdentifierType", "customerIdentification"},
	} {
		t.Run(tt.persons, func(t *testing.T) {
			p := mustParse(t, `{"originator":{"`+tt.persons+`":[`+np(tt.typeName)+`,{"legalPerson":{"`+tt.customer+`":"C1"}}]}}`)
			require.Len(t, p.Originator.Persons, 2)
			name := p.Originator.Persons[0].NaturalPerson.Name
			assert.Equal(t, NameLegal, name.NameIdentifiers[0].NameIdentifierType)
			assert.Equal(t, NameLegal, name.LocalNameIdentifiers[0].NameIdentifierType)
			assert.Equal(t, "C1", p.Originator.Persons[1].LegalPerson.CustomerIdentification)
			assertNoExtra(t, p)
		})
	}
}

func TestParseMemberNames(t *testing.T) {
	t.Run("case-insensitive", func(t *testing.T) {
		p := mustParse(t, `{"ORIGINATOR":{"ORIGINATORPERSONS":[{"NaturalPerson":{"Name":{"NameIdentifier":[{"PrimaryIdentifier":"P"}]}}}]},`+
			`"BeneficiaryVasp":{"beneficiaryvasp":{"LEGALPERSON":{}}}}`)
		assert.Equal(t, "P", p.Originator.Persons[0].NaturalPerson.Name.NameIdentifiers[0].PrimaryIdentifier)
		assert.NotNil(t, p.BeneficiaryVASP.Person.LegalPerson)
		assert.Nil(t, p.Extra)
	})
	t.Run("Unicode case folding, as encoding/json", func(t *testing.T) {
		// U+212A KELVIN SIGN folds to k; U+017F LONG S to s.
		p := mustParse(t, `{"originator":{"accountNumber":["a"]},"beneficiary":{"accountNumber":["b"]},`+
			`"payloadMetadata":{"transliterationMethod":["hani"],"payloadver\u017fion":"101"}}`)
		assert.Equal(t, "101", p.PayloadMetadata.PayloadVersion)
		var std struct{ PayloadVersion string }
		require.NoError(t, json.Unmarshal([]byte(`{"payloadver\u017fion":"101"}`), &std))
		assert.Equal(t, "101", std.PayloadVersion, "encoding/json folds the same way")
	})
	t.Run("the standard's spelling wins over another case", func(t *testing.T) {
		p := mustParse(t, `{"ORIGINATOR":{"accountNumber":["B"]},"originator":{"accountNumber":["A"]}}`)
		assert.Equal(t, []string{"A"}, p.Originator.AccountNumbers)
		assert.Equal(t, map[string]json.RawMessage{"ORIGINATOR": raw(`{"accountNumber":["B"]}`)}, p.Extra)
	})
	t.Run("the first of two spellings wins, the other is kept", func(t *testing.T) {
		p := mustParse(t, `{"originator":{"originatorPerson":[{"legalPerson":{}}],"originatorPersons":[{"naturalPerson":{}}]}}`)
		require.Len(t, p.Originator.Persons, 1)
		assert.NotNil(t, p.Originator.Persons[0].LegalPerson)
		assert.Equal(t, map[string]json.RawMessage{"originatorPersons": raw(`[{"naturalPerson":{}}]`)}, p.Originator.Extra)
		assert.Equal(t, Version2023, p.Version)
	})
	t.Run("a member of the wrong type does not hide a later spelling", func(t *testing.T) {
		p := mustParse(t, `{"originator":{"originatorPersons":5,"originatorPerson":[{"legalPerson":{}}]}}`)
		require.Len(t, p.Originator.Persons, 1)
		assert.Equal(t, map[string]json.RawMessage{"originatorPersons": raw(`5`)}, p.Originator.Extra)
	})
	t.Run("a member given twice: the last counts, as the sender's parser reads it", func(t *testing.T) {
		// The model writes accountNumber; an earlier accountNumber could
		// not be written back, and JSON.parse would not see it either.
		p := mustParse(t, `{"originator":{"accountNumber":7,"accountNumber":["A"],"accountNumber":["B"]}}`)
		assert.Equal(t, []string{"B"}, p.Originator.AccountNumbers)
		assert.Nil(t, p.Originator.Extra)
	})
}

// TestParseDuplicatesAsJavaScriptReadsThem: a payload that names one
// person twice is read as the sender's JSON.parse reads it (the last
// occurrence), so that the identity screened is the one the service saw.
func TestParseDuplicatesAsJavaScriptReadsThem(t *testing.T) {
	person := func(name string) string {
		return `{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"` + name + `","nameIdentifierType":"LEGL"}]}}}]}`
	}
	tests := []struct{ name, body string }{
		{"the originator twice", `{"originator":` + person("Innocent") + `,"originator":` + person("Sanctioned") + `}`},
		{"a name twice", `{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Innocent","primaryIdentifier":"Sanctioned","nameIdentifierType":"LEGL"}]}}}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.body)
			var js struct {
				Originator struct {
					OriginatorPersons []struct {
						NaturalPerson struct {
							Name struct {
								NameIdentifier []struct{ PrimaryIdentifier string }
							}
						}
					}
				}
			}
			require.NoError(t, json.Unmarshal([]byte(tt.body), &js))
			want := js.Originator.OriginatorPersons[0].NaturalPerson.Name.NameIdentifier[0].PrimaryIdentifier
			assert.Equal(t, "Sanctioned", want, "encoding/json, like JSON.parse, takes the last")
			assert.Equal(t, want, p.Originator.Persons[0].NaturalPerson.Name.NameIdentifiers[0].PrimaryIdentifier)
		})
	}
}

func TestParseUnknownMembers(t *testing.T) {
	p := mustParse(t, `{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"P",`+
		`"nickname":"Pip"}],"title":"Dr"},"gender":"x","geographicAddress":[{"addressType":"HOME","unit":{"a":[1, 2]}}]},`+
		`"kyc":{"level":2}}],"memo":"m"},"transactionId":"t-1","amount":0.25}`)
	assert.Equal(t, map[string]json.RawMessage{"transactionId": raw(`"t-1"`), "amount": raw(`0.25`)}, p.Extra)
	assert.Equal(t, map[string]json.RawMessage{"memo": raw(`"m"`)}, p.Originator.Extra)
	person := p.Originator.Persons[0]
	assert.Equal(t, map[string]json.RawMessage{"kyc": raw(`{"level":2}`)}, person.Extra)
	assert.Equal(t, map[string]json.RawMessage{"gender": raw(`"x"`)}, person.NaturalPerson.Extra)
	assert.Equal(t, map[string]json.RawMessage{"title": raw(`"Dr"`)}, person.NaturalPerson.Name.Extra)
	assert.Equal(t, map[string]json.RawMessage{"nickname": raw(`"Pip"`)}, person.NaturalPerson.Name.NameIdentifiers[0].Extra)
	assert.Equal(t, map[string]json.RawMessage{"unit": raw(`{"a":[1,2]}`)}, person.NaturalPerson.GeographicAddresses[0].Extra,
		"kept compacted")
}

func TestParseWrongTypes(t *testing.T) {
	tests := []struct {
		name  string
		in    string                     // an address
		check func(*testing.T, *Address) // the field stays empty
		extra map[string]json.RawMessage
	}{
		{"number for a string", `{"townName":42}`, func(t *testing.T, a *Address) { assert.Empty(t, a.TownName) },
			map[string]json.RawMessage{"townName": raw(`42`)}},
		{"null", `{"townName":null}`, func(t *testing.T, a *Address) { assert.Empty(t, a.TownName) },
			map[string]json.RawMessage{"townName": raw(`null`)}},
		{"empty string", `{"townName":""}`, func(t *testing.T, a *Address) { assert.Empty(t, a.TownName) },
			map[string]json.RawMessage{"townName": raw(`""`)}},
		{"object for a string", `{"country":{"code":"DE"}}`, func(t *testing.T, a *Address) { assert.Empty(t, a.Country) },
			map[string]json.RawMessage{"country": raw(`{"code":"DE"}`)}},
		{"bool for a code", `{"addressType":true}`, func(t *testing.T, a *Address) { assert.Empty(t, a.AddressType) },
			map[string]json.RawMessage{"addressType": raw(`true`)}},
		{"object for an array", `{"addressLine":{"0":"x"}}`, func(t *testing.T, a *Address) { assert.Nil(t, a.AddressLines) },
			map[string]json.RawMessage{"addressLine": raw(`{"0":"x"}`)}},
		{"number in an array of strings", `{"addressLine":["x",5]}`, func(t *testing.T, a *Address) { assert.Nil(t, a.AddressLines) },
			map[string]json.RawMessage{"addressLine": raw(`["x",5]`)}},
		{"empty array", `{"addressLine":[]}`, func(t *testing.T, a *Address) { assert.Nil(t, a.AddressLines) },
			map[string]json.RawMessage{"addressLine": raw(`[]`)}},
		{"HTML in a kept value is escaped as encoding/json writes it", `{"townName":["<b>&"]}`,
			func(t *testing.T, a *Address) { assert.Empty(t, a.TownName) },
			map[string]json.RawMessage{"townName": raw(`["\u003cb\u003e\u0026"]`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, `{"originator":{"originatorPersons":[{"naturalPerson":{"geographicAddress":[`+tt.in+`]}}]}}`)
			a := &p.Originator.Persons[0].NaturalPerson.GeographicAddresses[0]
			tt.check(t, a)
			assert.Equal(t, tt.extra, a.Extra)
		})
	}

	t.Run("every level", func(t *testing.T) {
		p := mustParse(t, `{"originator":[],"beneficiary":{"beneficiaryPersons":{"naturalPerson":{}},"accountNumber":{}},`+
			`"originatingVASP":{"originatingVASP":"VASP"},"transferPath":{"transferPath":[{"intermediaryVASP":[],"sequence":"1"},5]},`+
			`"payloadMetadata":{"transliterationMethod":7,"payloadVersion":101.2023}}`)
		assert.Nil(t, p.Originator)
		assert.Equal(t, raw(`[]`), p.Extra["originator"])
		assert.Nil(t, p.Beneficiary.Persons)
		assert.Nil(t, p.Beneficiary.AccountNumbers)
		assert.Equal(t, map[string]json.RawMessage{"beneficiaryPersons": raw(`{"naturalPerson":{}}`), "accountNumber": raw(`{}`)},
			p.Beneficiary.Extra)
		assert.Nil(t, p.OriginatingVASP.Person)
		assert.Equal(t, map[string]json.RawMessage{"originatingVASP": raw(`"VASP"`)}, p.OriginatingVASP.Extra)
		assert.Nil(t, p.TransferPath.Path, "an element that is not an object: the array is kept whole")
		assert.Equal(t, map[string]json.RawMessage{"transferPath": raw(`[{"intermediaryVASP":[],"sequence":"1"},5]`)}, p.TransferPath.Extra)
		assert.Equal(t, map[string]json.RawMessage{"transliterationMethod": raw(`7`), "payloadVersion": raw(`101.2023`)},
			p.PayloadMetadata.Extra)
		assert.Equal(t, Version2020, p.Version, "a payloadVersion that is not a string does not decide")
	})
	t.Run("sequence", func(t *testing.T) {
		for in, want := range map[string]struct {
			seq   int
			extra map[string]json.RawMessage
		}{
			`{"sequence":2}`:                       {2, nil},
			`{"sequence":0}`:                       {0, nil},
			`{"sequence":-1}`:                      {-1, nil},
			`{}`:                                   {0, nil},
			`{"sequence":"1"}`:                     {0, map[string]json.RawMessage{"sequence": raw(`"1"`)}},
			`{"sequence":1.5}`:                     {0, map[string]json.RawMessage{"sequence": raw(`1.5`)}},
			`{"sequence":1e2}`:                     {0, map[string]json.RawMessage{"sequence": raw(`1e2`)}},
			`{"sequence":null}`:                    {0, map[string]json.RawMessage{"sequence": raw(`null`)}},
			`{"sequence":99999999999999999999999}`: {0, map[string]json.RawMessage{"sequence": raw(`99999999999999999999999`)}},
		} {
			p := mustParse(t, `{"transferPath":{"transferPath":[`+in+`]}}`)
			iv := p.TransferPath.Path[0]
			assert.Equal(t, want.seq, iv.Sequence, in)
			assert.Equal(t, want.extra, iv.Extra, in)
		}
	})
}

func TestParseSingleStringAsArray(t *testing.T) {
	p := mustParse(t, `{"originator":{"accountNumber":"0xabc","originatorPersons":[{"naturalPerson":{"geographicAddress":[`+
		`{"addressLine":"12 Quayside Row"}]},"accountNumber":"T1"}]},"payloadMetadata":{"transliterationMethod":"hani"}}`)
	assert.Equal(t, []string{"0xabc"}, p.Originator.AccountNumbers)
	assert.Equal(t, []string{"T1"}, p.Originator.Persons[0].AccountNumbers)
	assert.Equal(t, []string{"12 Quayside Row"}, p.Originator.Persons[0].NaturalPerson.GeographicAddresses[0].AddressLines)
	assert.Equal(t, []string{"hani"}, p.PayloadMetadata.TransliterationMethods)
	assert.Nil(t, p.Originator.Extra)
}

func TestParseNameAsArray(t *testing.T) {
	p := mustParse(t, `{"originator":{"originatorPersons":[{"naturalPerson":{"name":[`+
		`{"nameIdentifier":[{"primaryIdentifier":"A","nameIdentifierType":"LEGL"}],"x":1},`+
		`{"nameIdentifier":[{"primaryIdentifier":"B","nameIdentifierType":"ALIA"}],"localNameIdentifier":[{"primaryIdentifier":"L"}],"x":2,"y":3}`+
		`]}},{"legalPerson":{"name":[{"nameIdentifier":[{"legalPersonName":"C"}]}]}}]}}`)
	name := p.Originator.Persons[0].NaturalPerson.Name
	require.NotNil(t, name)
	assert.Equal(t, []NaturalPersonNameID{{PrimaryIdentifier: "A", NameIdentifierType: NameLegal},
		{PrimaryIdentifier: "B", NameIdentifierType: NameAlias}}, name.NameIdentifiers)
	assert.Equal(t, []NaturalPersonNameID{{PrimaryIdentifier: "L"}}, name.LocalNameIdentifiers)
	assert.Equal(t, map[string]json.RawMessage{"x": raw(`1`), "y": raw(`3`)}, name.Extra, "the first of the other members")
	assert.Nil(t, p.Originator.Persons[0].NaturalPerson.Extra)
	assert.Equal(t, "C", p.Originator.Persons[1].LegalPerson.Name.NameIdentifiers[0].LegalPersonName)

	for _, in := range []string{`[]`, `[{"nameIdentifier":[]},5]`, `["A"]`} {
		p := mustParse(t, `{"originator":{"originatorPersons":[{"naturalPerson":{"name":`+in+`}}]}}`)
		np := p.Originator.Persons[0].NaturalPerson
		assert.Nil(t, np.Name, in)
		assert.Equal(t, map[string]json.RawMessage{"name": raw(in)}, np.Extra, in)
	}
}

func TestParseFlatVASP(t *testing.T) {
	p := mustParse(t, `{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"V"}]}},"x":1},`+
		`"beneficiaryVASP":{"naturalPerson":{}},`+
		`"BeneficiaryVASP":{"beneficiaryVASP":{"legalPerson":{}}}}`)
	require.NotNil(t, p.OriginatingVASP.Person)
	assert.Equal(t, "V", p.OriginatingVASP.Person.LegalPerson.Name.NameIdentifiers[0].LegalPersonName)
	assert.Equal(t, map[string]json.RawMessage{"x": raw(`1`)}, p.OriginatingVASP.Person.Extra)
	assert.Nil(t, p.OriginatingVASP.Extra)
	assert.NotNil(t, p.BeneficiaryVASP.Person.NaturalPerson, "the exact spelling, flat, wins")
	assert.Equal(t, raw(`{"beneficiaryVASP":{"legalPerson":{}}}`), p.Extra["BeneficiaryVASP"])

	// Without a person in it, it stays as it is.
	p = mustParse(t, `{"originatingVASP":{"legalPerson":5,"vaspId":"v"}}`)
	assert.Nil(t, p.OriginatingVASP.Person)
	assert.Equal(t, map[string]json.RawMessage{"legalPerson": raw(`5`), "vaspId": raw(`"v"`)}, p.OriginatingVASP.Extra)
}

func TestParseMalformed(t *testing.T) {
	secret := "Seo Minji 1990-01-01"
	tests := []struct {
		in   string
		want string
	}{
		{``, "not valid JSON"},
		{`   `, "not valid JSON"},
		{`{"originator":`, "not valid JSON"},
		{`{"name":"` + secret + `"`, "not valid JSON"},
		{`{"name":"` + secret + `"} trailing`, "not valid JSON"},
		{`{"a":1,}`, "not valid JSON"},
		{"{\"a\":\"\x01" + secret + "\"}", "not valid JSON"},
		{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), "not valid JSON"},
		{`null`, "not a JSON object"},
		{`[{"originator":{}}]`, "not a JSON object"},
		{`"` + secret + `"`, "not a JSON object"},
		{`42`, "not a JSON object"},
		{` true `, "not a JSON object"},
	}
	for _, tt := range tests {
		p, err := Parse([]byte(tt.in))
		assert.Nil(t, p)
		require.Error(t, err, tt.in)
		assert.True(t, errors.Is(err, ErrMalformed), tt.in)
		assert.Contains(t, err.Error(), tt.want)
		assert.NotContains(t, err.Error(), "Minji")
		assert.NotContains(t, err.Error(), "1990")
	}
}

func TestParseDeepExtra(t *testing.T) {
	// Deep nesting the model does not name is kept without being looked
	// into; encoding/json's limit (10000) is the only bound.
	deep := strings.Repeat(`{"a":`, 9000) + `1` + strings.Repeat(`}`, 9000)
	p := mustParse(t, `{"originator":{"originatorPersons":[{"naturalPerson":{"x":`+deep+`}}]}}`)
	assert.Len(t, p.Originator.Persons[0].NaturalPerson.Extra["x"], len(deep))
}

func TestUnmarshalJSON(t *testing.T) {
	t.Run("nested types on their own", func(t *testing.T) {
		var people []Person
		require.NoError(t, json.Unmarshal([]byte(`[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"P",`+
			`"naturalPersonNameIdentifierType":"LEGL"}]}}},{"LegalPerson":{"customerIdentification":"C"}}]`), &people))
		require.Len(t, people, 2)
		assert.Equal(t, NameLegal, people[0].NaturalPerson.Name.NameIdentifiers[0].NameIdentifierType)
		assert.Equal(t, "C", people[1].LegalPerson.CustomerIdentification)
	})
	t.Run("replaces what was there", func(t *testing.T) {
		a := Address{TownName: "old", Extra: map[string]json.RawMessage{"x": raw(`1`)}}
		require.NoError(t, json.Unmarshal([]byte(`{"country":"DE"}`), &a))
		assert.Equal(t, Address{Country: "DE"}, a)
	})
	t.Run("null leaves it as it is", func(t *testing.T) {
		a := Address{TownName: "old"}
		require.NoError(t, a.UnmarshalJSON([]byte(` null `)))
		assert.Equal(t, Address{TownName: "old"}, a)
		var p Payload
		require.NoError(t, p.UnmarshalJSON([]byte(`null`)))
		assert.Equal(t, Payload{}, p)
	})
	t.Run("in a struct of the caller", func(t *testing.T) {
		var msg struct {
			IVMS101 *Payload `json:"ivms101"`
		}
		require.NoError(t, json.Unmarshal([]byte(`{"ivms101":{"originator":{"originatorPerson":[{}]}}}`), &msg))
		assert.Equal(t, Version2023, msg.IVMS101.Version)
	})
	t.Run("malformed", func(t *testing.T) {
		var a Address
		err := a.UnmarshalJSON([]byte(`["x"]`))
		assert.ErrorIs(t, err, ErrMalformed)
		err = (&Payload{}).UnmarshalJSON([]byte(`{`))
		assert.ErrorIs(t, err, ErrMalformed)
	})
}

func TestParseLinear(t *testing.T) {
	// The work grows with the input, not with its square: the allocations
	// of n persons are about n times those of one.
	person := `{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Okafor","nameIdentifierType":"LEGL"}]},` +
		`"geographicAddress":[{"addressType":"HOME","addressLine":"1 Admiralty Way","townName":"Lagos","country":"NG","x":[1]}]}}`
	payload := func(n int) []byte {
		return []byte(`{"originator":{"originatorPersons":[` + strings.TrimSuffix(strings.Repeat(person+",", n), ",") + `]}}`)
	}
	allocs := func(n int) float64 {
		in := payload(n)
		return testing.AllocsPerRun(3, func() {
			if _, err := Parse(in); err != nil {
				t.Fatal(err)
			}
		})
	}
	one, many := allocs(10), allocs(1000)
	assert.Less(t, many/one, 110.0, "1000 persons cost %v allocations, 10 cost %v", many, one)
}

func BenchmarkParse(b *testing.B) {
	in := readTestdata(b, "natural_to_natural_2020.json")
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Parse(in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParseBoundsTheObjectsRead: a payload of thousands of (empty) name
// identifiers is not read into thousands of structs: past maxObjects the
// member stays, as its JSON text, in Extra, where Validate finds it
// (BenchmarkParse measures what a payload costs).
func TestParseBoundsTheObjectsRead(t *testing.T) {
	for _, n := range []int{maxObjects - 10, 200_000} {
		ids := strings.Repeat(`{"primaryIdentifier":"X"},`, n)
		body := `{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[` + ids[:len(ids)-1] + `]}}}]}}`
		p, err := Parse([]byte(body))
		require.NoError(t, err)
		name := p.Originator.Persons[0].NaturalPerson.Name
		if n < maxObjects {
			assert.Len(t, name.NameIdentifiers, n, "within the bound, everything is read")
			continue
		}
		assert.Empty(t, name.NameIdentifiers)
		assert.Contains(t, name.Extra, "nameIdentifier", "kept, not lost")
		assert.ErrorIs(t, p.Validate(), ErrInvalid)
	}
}

// TestParseBoundKeepsWholeMembers: once the objects read reach maxObjects,
// an array member whose later elements cannot be read is kept whole in
// Extra, where Validate reports it, not read with those elements left
// zero (a name object, a person dropped without a trace). Whether an
// element can be read is decided by object's own count: the array's
// check counts its elements only, not the objects inside them.
func TestParseBoundKeepsWholeMembers(t *testing.T) {
	ids := func(n int) string {
		s := strings.Repeat(`{"primaryIdentifier":"X","nameIdentifierType":"LEGL"},`, n)
		return s[:len(s)-1]
	}
	ids2023 := func(n int) string {
		return strings.ReplaceAll(ids(n), "nameIdentifierType", "naturalPersonNameIdentifierType")
	}
	// Objects before the big array: the payload, originator, the person,
	// naturalPerson and the (first) name object.
	const before = 5
	const np = "originator.originatorPersons[0].naturalPerson"
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, p *Payload)
		fault FieldError // the fault Validate reports, if any
	}{
		{"name objects: the second beyond the bound",
			`{"originator":{"originatorPersons":[{"naturalPerson":{"name":[{"nameIdentifier":[` + ids(maxObjects-before) +
				`]},{"x":1}],"customerIdentification":"c"}}]}}`,
			func(t *testing.T, p *Payload) {
				n := p.Originator.Persons[0].NaturalPerson
				assert.Nil(t, n.Name)
				assert.Contains(t, n.Extra, "name", "kept whole, not lost")
			},
			FieldError{np + ".name", "must be an object"}},
		{"name objects: the last within the bound",
			`{"originator":{"originatorPersons":[{"naturalPerson":{"name":[{"nameIdentifier":[` + ids(maxObjects-before-1) +
				`]},{"x":1}],"customerIdentification":"c"}}]}}`,
			func(t *testing.T, p *Payload) {
				n := p.Originator.Persons[0].NaturalPerson
				require.NotNil(t, n.Name)
				assert.Len(t, n.Name.NameIdentifiers, maxObjects-before-1)
				assert.Equal(t, map[string]json.RawMessage{"x": raw(`1`)}, n.Name.Extra)
				assert.Nil(t, n.Extra)
			},
			FieldError{}},
		{"persons: the second beyond the bound",
			`{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[` + ids(maxObjects-before) +
				`]},"customerIdentification":"c"}},{"naturalPerson":{}}]}}`,
			func(t *testing.T, p *Payload) {
				assert.Empty(t, p.Originator.Persons)
				assert.Contains(t, p.Originator.Extra, "originatorPersons", "kept whole, not lost")
			},
			FieldError{"originator.originatorPersons", "must be an array of objects"}},
		{"persons beyond the bound: their 2023 names do not set the edition",
			`{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[` + ids2023(maxObjects-before) +
				`]},"customerIdentification":"c"}},{"naturalPerson":{}}]}}`,
			func(t *testing.T, p *Payload) {
				assert.Empty(t, p.Originator.Persons)
				assert.Contains(t, p.Originator.Extra, "originatorPersons", "kept whole, not lost")
				assert.Equal(t, Version2020, p.Version, "as when the array is refused before reading")
			},
			FieldError{"originator.originatorPersons", "must be an array of objects"}},
		{"name objects beyond the bound: their 2023 names do not set the edition",
			`{"originator":{"originatorPersons":[{"naturalPerson":{"name":[{"nameIdentifier":[` + ids2023(maxObjects-before) +
				`]},{"x":1}],"customerIdentification":"c"}}]}}`,
			func(t *testing.T, p *Payload) {
				assert.Nil(t, p.Originator.Persons[0].NaturalPerson.Name)
				assert.Equal(t, Version2020, p.Version, "as when the array is refused before reading")
			},
			FieldError{np + ".name", "must be an object"}},
		{"persons: the last within the bound",
			`{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[` + ids(maxObjects-before-1) +
				`]},"customerIdentification":"c"}},{"accountNumber":"a"}]}}`,
			func(t *testing.T, p *Payload) {
				require.Len(t, p.Originator.Persons, 2)
				assert.Equal(t, []string{"a"}, p.Originator.Persons[1].AccountNumbers)
				assert.Nil(t, p.Originator.Extra)
			},
			FieldError{"originator.originatorPersons[1]", "must have a naturalPerson or a legalPerson"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.body)
			tt.check(t, p)
			var ve *ValidationError
			require.ErrorAs(t, p.Validate(), &ve, "beneficiary missing")
			var faults []FieldError
			for _, f := range ve.Errors {
				if strings.HasPrefix(f.Path, "originator") {
					faults = append(faults, f)
				}
			}
			if tt.fault == (FieldError{}) {
				assert.Empty(t, faults)
				return
			}
			require.NotEmpty(t, faults)
			assert.Equal(t, tt.fault.Path, faults[0].Path)
			assert.Contains(t, faults[0].Reason, tt.fault.Reason)
		})
	}
}
