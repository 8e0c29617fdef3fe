package ivms101

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseSameAsBefore checks, for any input, that Parse and
// Person.UnmarshalJSON read what the decoder before #42 (oracle_test.go)
// read: the same error, the same payload.
func FuzzParseSameAsBefore(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ids := strings.Repeat(`{"primaryIdentifier":"X","naturalPersonNameIdentifierType":"LEGL"},`, maxObjects-5)
	for _, s := range []string{
		``, ` `, `null`, ` null `, `[]`, `"x"`, `{`, `{}`, ` {} `, `{"originator":null}`, `{"a":1,}`,
		`{"Originator":{"OriginatorPerson":[{"naturalPerson":{"name":[{"nameIdentifier":[{"primaryIdentifier":"A",` +
			`"naturalPersonNameIdentifierType":"LEGL"}]},{"nameIdentifier":"B","x":1},{"localNameIdentifier":[{}],"x":2,"y":[3]}]}}],"accountNumber":"0xabc"}}`,
		`{"originator":{"originatorPersons":5,"originatorPerson":[{"legalPerson":{"customerNumber":"A","customerIdentification":"B"}}]}}`,
		`{"originatingVASP":{"legalPerson":{"name":{"nameIdentifier":[{"legalPersonName":"V","legalPersonNameIdentifierType":"LEGL"}]}}},"beneficiaryVASP":{"naturalPerson":5}}`,
		`{"transferPath":{"transferPath":[{"sequence":"0"},{"sequence":0,"Sequence":"x"},{"sequence":-3},{"sequence":1e2}]}}`,
		`{"payloadMetadata":{"payloadVersion":"101.2023","transliterationMethod":"hani","PAYLOADVERSION":"101"}}`,
		`{"a<b>&\u2028":"<script>","originator":{"accountNumber":["\ud83d\ude00","\ud800","\udc00\u0041",""]}}`,
		"{\"k\xff\":\"v\xfe\",\"originator\":{\"accountNumber\":[\"\xe2\x80\xa8\",\"\xed\xa0\x80\"]}}",
		`{"originator":{"accountNumber":7,"accountNumber":["A"],"ACCOUNTNUMBER":["B"],"accountNumber":["C"],"AccountNumber":{}}}`,
		`{"originator":{"\u0061ccountNumber":["A"],"accountNumber":"B","originatorPer\u017fons":[{}],"originatorPerſons":[{"x":{ "y" : [ 1 , 2 ] }}]}}`,
		`{"payloadMetadata":{"payloadver\u017fion":"101","paylöadVersion":"x","payloadVersion":"\"\\\/\b\f\n\r\t"}}`,
		`{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[` + ids[:len(ids)-1] + `]}}},{"naturalPerson":{}}]}}`,
		`{"originator":{"originatorPersons":[{"naturalPerson":{"name":[{"nameIdentifier":[` + ids[:len(ids)-1] + `]},{"x":1}]}}]}}`,
		`{"originatingVASP":{"originatingVASP":5,"legalPerson":{"name":{"nameIdentifier":[{"naturalPersonNameIdentifierType":"LEGL"}]}}}}`,
		`{"beneficiary":{"beneficiaryPerson":[{"legalPerson":{},"naturalPerson":{"countryOfResidence":"DE","dateAndPlaceOfBirth":{"dateOfBirth":"1990-01-01"}}}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := Parse(in)
		old, oldErr := oldParse(in)
		if err != oldErr || !reflect.DeepEqual(p, old) {
			t.Fatalf("Parse differs from before:\nnow    %s (%v)\nbefore %s (%v)", jsonOf(p), err, jsonOf(old), oldErr)
		}
		var person, oldPerson Person
		err, oldErr = person.UnmarshalJSON(in), oldUnmarshal(in, &oldPerson)
		if err != oldErr || !reflect.DeepEqual(person, oldPerson) {
			t.Fatalf("Person.UnmarshalJSON differs from before (%v, %v)", err, oldErr)
		}
	})
}

// jsonOf is p's JSON, to show in a failure.
func jsonOf(p *Payload) string {
	if p == nil {
		return "<nil>"
	}
	b, _ := p.MarshalJSON()
	return string(b)
}
