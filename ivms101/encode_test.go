package ivms101

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// standardTestdata are the test payloads spelled as the standard spells
// them: written again, they are the same JSON.
var standardTestdata = []string{
	"natural_to_natural_2020.json",
	"legal_to_natural_2020.json",
	"natural_2023.json",
	"transfer_path_2020.json",
}

func TestMarshalSameJSON(t *testing.T) {
	for _, name := range standardTestdata {
		t.Run(name, func(t *testing.T) {
			in := readTestdata(t, name)
			p, err := Parse(in)
			require.NoError(t, err)
			out, err := json.Marshal(p)
			require.NoError(t, err)
			assert.JSONEq(t, string(in), string(out))
			assertRoundTrip(t, in)
		})
	}
}

// assertRoundTrip asserts that what MarshalJSON writes of Parse(in) parses
// to the same Payload, through MarshalJSON and through json.Marshal
// (which escapes HTML in what MarshalJSON returns), and is written the
// same again.
func assertRoundTrip(t *testing.T, in []byte) {
	t.Helper()
	p, err := Parse(in)
	require.NoError(t, err)
	out, err := p.MarshalJSON()
	require.NoError(t, err)
	again, err := Parse(out)
	require.NoError(t, err, "%s", out)
	assert.Equal(t, p, again, "%s", out)
	viaJSON, err := json.Marshal(p)
	require.NoError(t, err)
	again, err = Parse(viaJSON)
	require.NoError(t, err)
	assert.Equal(t, p, again)
	out2, err := again.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, string(out), string(out2), "written the same again")
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"originator":{}}`,
		`{"originator":null,"beneficiary":[],"x":{"y":[1,2,{"z":null}]}}`,
		`{"ORIGINATOR":{"accountNumber":["B"]},"originator":{"accountNumber":["A"]},"Originator":{"accountNumber":"C"}}`,
		`{"originator":{"originatorPerson":[{"legalPerson":{}}],"originatorPersons":[{"naturalPerson":{}}]}}`,
		`{"originator":{"originatorPersons":5,"originatorPerson":[{"legalPerson":{}}]}}`,
		`{"originator":{"originatorPersons":[{"naturalPerson":{"name":[{"nameIdentifier":[{"primaryIdentifier":"A"}],"x":1},` +
			`{"nameIdentifier":[{"primaryIdentifier":"B","naturalPersonNameIdentifierType":"LEGL"}],"nameIdentifier ":2}]}}]}}`,
		`{"originatingVASP":{"legalPerson":{"name":{}},"originatingVASP":null},"beneficiaryVASP":{"naturalPerson":{},"legalPerson":{}}}`,
		`{"transferPath":{"transferPath":[{"sequence":"0"},{"sequence":0,"Sequence":"x"},{"sequence":3,"sequence":"y"},{}]}}`,
		`{"transferPath":{"transferPath":[{"sequence":"x","sequence":0}]}}`,
		`{"transferPath":{"transferPath":[{"sequence":0,"sequence":0},{"sequence":0,"sequence":2},{"sequence":0,"Sequence":0}]}}`,
		`{"payloadMetadata":{"payloadVersion":"101.2023","transliterationMethod":"hani"},"originator":{"originatorPersons":[{}]}}`,
		`{"originator":{"originatorPerson":[{"legalPerson":{"customerNumber":"A","customerIdentification":"B","CUSTOMERNUMBER":7}}]}}`,
		`{"originator":{"originatorPersons":[{"legalPerson":{"customerIdentification":5,"customerNumber":"A"}}]}}`,
		`{"a<b>&\u2028":"<script>\u2029&amp;","\u00e9":"\u00e9","b":"\ud83d\ude00"}`,
		"{\"k\xff\":\"v\xfe\",\"originator\":{\"accountNumber\":[\"\xff\"]}}",
		`{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"localNameIdentifier":[` +
			`{"naturalPersonNameIdentifierType":"LEGL","nameIdentifierType":"BIRT"}]}}}]},"beneficiary":{"beneficiaryPerson":[{}]}}`,
		`{"originatingVASP":{"originatingVASP":{"naturalPerson":{"name":{"localNameIdentifier":[{"naturalPersonNameIdentifierType":"LEGL"}]}}}}}`,
		`{"originator":{"originatorPersons":[{"naturalPerson":{"geographicAddress":[{"addressLine":["",""],"townName":""}]}}]}}`,
	} {
		t.Run(in, func(t *testing.T) { assertRoundTrip(t, []byte(in)) })
	}
	for _, name := range []string{"pascal_case.json"} {
		t.Run(name, func(t *testing.T) { assertRoundTrip(t, readTestdata(t, name)) })
	}
}

func TestMarshalPascalCase(t *testing.T) {
	p, err := Parse(readTestdata(t, "pascal_case.json"))
	require.NoError(t, err)
	out, err := json.Marshal(p)
	require.NoError(t, err)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out, &top))
	assert.Contains(t, top, "originator", "member names are normalised")
	assert.Contains(t, top, "beneficiary")
	assert.Contains(t, top, "originatingVASP")
	assert.NotContains(t, top, "Originator")
	assert.Contains(t, string(out), `"customerNumber":"corp-00912"`, "the 2020 edition's name for a legal person")
	assert.Contains(t, string(out), `"postCode":"03154"`)
}

// twoEditions is a payload that holds every member whose name differs
// between the editions.
func twoEditions(v Version) Payload {
	return Payload{
		Version: v,
		Originator: &Originator{Persons: []Person{{NaturalPerson: &NaturalPerson{Name: &NaturalPersonName{
			NameIdentifiers:         []NaturalPersonNameID{{PrimaryIdentifier: "Okafor", NameIdentifierType: NameLegal}},
			LocalNameIdentifiers:    []NaturalPersonNameID{{PrimaryIdentifier: "L", NameIdentifierType: NameLegal}},
			PhoneticNameIdentifiers: []NaturalPersonNameID{{PrimaryIdentifier: "F", NameIdentifierType: NameLegal}},
		}}}}},
		Beneficiary: &Beneficiary{Persons: []Person{{LegalPerson: &LegalPerson{CustomerIdentification: "KL-1"}}}},
	}
}

func TestMarshalEdition(t *testing.T) {
	tests := []struct {
		version   Version
		want      []string
		wantNever []string
	}{
		{Version2023,
			[]string{`"originatorPerson":`, `"beneficiaryPerson":`, `"customerIdentification":"KL-1"`,
				`"nameIdentifier":[{"primaryIdentifier":"Okafor","naturalPersonNameIdentifierType":"LEGL"}]`,
				`"localNameIdentifier":[{"primaryIdentifier":"L","nameIdentifierType":"LEGL"}]`,
				`"phoneticNameIdentifier":[{"primaryIdentifier":"F","nameIdentifierType":"LEGL"}]`},
			[]string{`"originatorPersons"`, `"beneficiaryPersons"`, `"customerNumber"`}},
		{Version2020,
			[]string{`"originatorPersons":`, `"beneficiaryPersons":`, `"customerNumber":"KL-1"`,
				`"nameIdentifier":[{"primaryIdentifier":"Okafor","nameIdentifierType":"LEGL"}]`},
			[]string{`"originatorPerson"`, `"beneficiaryPerson"`, `"customerIdentification"`, `"naturalPersonNameIdentifierType"`}},
		{"", // empty: the 2020 edition
			[]string{`"originatorPersons":`, `"customerNumber":"KL-1"`},
			[]string{`"originatorPerson"`, `"naturalPersonNameIdentifierType"`}},
		{"2023", // not an edition: the 2020 edition
			[]string{`"originatorPersons":`},
			[]string{`"originatorPerson"`}},
	}
	for _, tt := range tests {
		t.Run(string(tt.version), func(t *testing.T) {
			out, err := json.Marshal(twoEditions(tt.version))
			require.NoError(t, err)
			for _, s := range tt.want {
				assert.Contains(t, string(out), s)
			}
			for _, s := range tt.wantNever {
				assert.NotContains(t, string(out), s)
			}
		})
	}
	t.Run("a 2023 payload written reads back as 2023", func(t *testing.T) {
		p := twoEditions(Version2023)
		out, err := json.Marshal(p)
		require.NoError(t, err)
		again := mustParse(t, string(out))
		assert.Equal(t, Version2023, again.Version)
		assert.Equal(t, p.Originator, again.Originator)
		assert.Equal(t, p.Beneficiary, again.Beneficiary)
	})
}

func TestMarshalNestedOnTheirOwn(t *testing.T) {
	// A nested type does not know the payload's edition: the 2020 names.
	p := twoEditions(Version2023)
	out, err := json.Marshal(p.Originator)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"originatorPersons":`)
	assert.Contains(t, string(out), `"nameIdentifierType":"LEGL"`)
	out, err = json.Marshal(p.Beneficiary.Persons[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{"legalPerson":{"customerNumber":"KL-1"}}`, string(out))
	out, err = json.Marshal([]NaturalPersonNameID{{PrimaryIdentifier: "P", NameIdentifierType: NameAlias}})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"primaryIdentifier":"P","nameIdentifierType":"ALIA"}]`, string(out))
}

func TestMarshalOrder(t *testing.T) {
	a := Address{
		Country:        "DE",
		TownName:       "Berlin",
		AddressType:    AddressHome,
		AddressLines:   []string{"Ackerstr. 9"},
		BuildingNumber: "9",
		Extra: map[string]json.RawMessage{
			"zeta":     raw(`1`),
			"alpha":    raw(` { "b" : 2 } `),
			"country":  raw(`"FR"`), // the model writes country: its value wins
			"townName": raw(`"X"`),
			"postCode": raw(`null`), // the model does not write postCode
		},
	}
	out, err := json.Marshal(a)
	require.NoError(t, err)
	assert.Equal(t, `{"addressType":"HOME","buildingNumber":"9","townName":"Berlin","addressLine":["Ackerstr. 9"],"country":"DE",`+
		`"alpha":{"b":2},"postCode":null,"zeta":1}`, string(out))
}

func TestMarshalEmpty(t *testing.T) {
	out, err := json.Marshal(Payload{})
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(out))

	// Empty strings and slices are left out, set pointers are written.
	out, err = json.Marshal(Payload{Originator: &Originator{Persons: []Person{}, AccountNumbers: []string{}},
		PayloadMetadata: &PayloadMetadata{}})
	require.NoError(t, err)
	assert.Equal(t, `{"originator":{},"payloadMetadata":{}}`, string(out))

	// The sequence is required and 0 is the first intermediary.
	out, err = json.Marshal(TransferPath{Path: []IntermediaryVASP{{}, {Sequence: 1}}})
	require.NoError(t, err)
	assert.Equal(t, `{"transferPath":[{"sequence":0},{"sequence":1}]}`, string(out))
	out, err = json.Marshal(IntermediaryVASP{Extra: map[string]json.RawMessage{"sequence": raw(`"0"`)}})
	require.NoError(t, err)
	assert.Equal(t, `{"sequence":"0"}`, string(out), "a sequence of the wrong type that was read is written back")
}

func TestMarshalBadExtra(t *testing.T) {
	secret := "Lieve Moreau"
	_, err := json.Marshal(Payload{Originator: &Originator{Extra: map[string]json.RawMessage{secret: raw(`{`)}}})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "Lieve")
	_, err = Address{Extra: map[string]json.RawMessage{"x": nil}}.MarshalJSON()
	require.Error(t, err)
}

func TestMarshalEscapes(t *testing.T) {
	out, err := Address{TownName: "<b>&\u2028", Extra: map[string]json.RawMessage{"<k>": raw(`"<v>"`)}}.MarshalJSON()
	require.NoError(t, err)
	assert.True(t, json.Valid(out))
	assert.False(t, strings.ContainsAny(string(out), "<>&\u2028"), "%s", out)
}
