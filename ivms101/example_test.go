package ivms101_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/vaspkit/travelrule/ivms101"
)

// Parse reads what a counterparty sent, in either edition and whatever
// the case of its member names; the originator's legal name is the name
// identifier of type LEGL.
func ExampleParse() {
	body := []byte(`{
	  "Originator": {
	    "originatorPerson": [{
	      "naturalPerson": {
	        "name": {"nameIdentifier": [
	          {"primaryIdentifier": "Jaksybek", "secondaryIdentifier": "Erlan", "naturalPersonNameIdentifierType": "ALIA"},
	          {"primaryIdentifier": "Dzhaksybekov", "secondaryIdentifier": "Yerlan", "naturalPersonNameIdentifierType": "LEGL"}
	        ]},
	        "countryOfResidence": "KZ"
	      }
	    }],
	    "accountNumber": "bc1qzr7d4m0ffakeorig2020x8y6v5n4tqe9wjh3l"
	  },
	  "payloadMetadata": {"payloadVersion": "101.2023"}
	}`)
	p, err := ivms101.Parse(body)
	if err != nil {
		log.Fatal(err) // errors.Is(err, ivms101.ErrMalformed): not a JSON object
	}
	fmt.Println("edition:", p.Version)
	for _, person := range p.Originator.Persons {
		if person.NaturalPerson == nil || person.NaturalPerson.Name == nil {
			continue
		}
		for _, id := range person.NaturalPerson.Name.NameIdentifiers {
			if id.NameIdentifierType == ivms101.NameLegal {
				fmt.Printf("legal name: %s, %s\n", id.PrimaryIdentifier, id.SecondaryIdentifier)
			}
		}
	}
	fmt.Println("account:", p.Originator.AccountNumbers[0])
	// Output:
	// edition: 101.2023
	// legal name: Dzhaksybekov, Yerlan
	// account: bc1qzr7d4m0ffakeorig2020x8y6v5n4tqe9wjh3l
}

// Validate lists every fault at once, by the JSON path of the member in
// the payload's edition; the paths and reasons hold none of its values.
func ExamplePayload_Validate() {
	p, err := ivms101.Parse([]byte(`{
	  "originator": {"originatorPersons": [{"naturalPerson": {
	    "name": {"nameIdentifier": [{"primaryIdentifier": "Okafor", "nameIdentifierType": "ALIA"}]},
	    "dateAndPlaceOfBirth": {"dateOfBirth": "1994-11-31", "placeOfBirth": "Enugu"}
	  }}]},
	  "beneficiary": {"beneficiaryPersons": [{"legalPerson": {
	    "name": {"nameIdentifier": [{"legalPersonName": "Kestrel Ledger GmbH", "legalPersonNameIdentifierType": "LEGL"}]},
	    "nationalIdentification": {"nationalIdentifier": "HRB 284117", "nationalIdentifierType": "RAID", "countryOfIssue": "DE"},
	    "countryOfRegistration": "Germany"
	  }}]}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	err = p.Validate()
	var invalid *ivms101.ValidationError
	if errors.As(err, &invalid) {
		for _, f := range invalid.Errors {
			fmt.Printf("%s: %s\n", f.Path, f.Reason)
		}
	}
	fmt.Println(errors.Is(err, ivms101.ErrInvalid))
	// Output:
	// originator.originatorPersons[0].naturalPerson.name.nameIdentifier: needs a name of type LEGL (IVMS101 C6)
	// originator.originatorPersons[0].naturalPerson.dateAndPlaceOfBirth.dateOfBirth: must be a date written YYYY-MM-DD
	// beneficiary.beneficiaryPersons[0].legalPerson.nationalIdentification.countryOfIssue: a legal person's must not be set (IVMS101 C9)
	// beneficiary.beneficiaryPersons[0].legalPerson.nationalIdentification.registrationAuthority: a legal person's is required unless the type is LEIX (IVMS101 C9)
	// beneficiary.beneficiaryPersons[0].legalPerson.countryOfRegistration: must be an ISO 3166-1 alpha-2 country code in upper case, or XX (IVMS101 C3)
	// true
}

// A payload built in Go is written in the names of its Version: here the
// 2023 edition's.
func ExamplePayload_MarshalJSON() {
	p := ivms101.Payload{
		Version: ivms101.Version2023,
		Originator: &ivms101.Originator{Persons: []ivms101.Person{{
			NaturalPerson: &ivms101.NaturalPerson{
				Name: &ivms101.NaturalPersonName{NameIdentifiers: []ivms101.NaturalPersonNameID{
					{PrimaryIdentifier: "Okafor", SecondaryIdentifier: "Chidinma", NameIdentifierType: ivms101.NameLegal},
				}},
				CustomerIdentification: "C-1994",
			},
			AccountNumbers: []string{"TFakeOriginator2023Tron1111111111"},
		}}},
		Beneficiary: &ivms101.Beneficiary{Persons: []ivms101.Person{{
			LegalPerson: &ivms101.LegalPerson{
				Name: &ivms101.LegalPersonName{NameIdentifiers: []ivms101.LegalPersonNameID{
					{LegalPersonName: "Kestrel Ledger GmbH", LegalPersonNameIdentifierType: ivms101.LegalNameLegal},
				}},
				CustomerIdentification: "KL-2023-0091",
			},
		}}},
		PayloadMetadata: &ivms101.PayloadMetadata{PayloadVersion: string(ivms101.Version2023)},
	}
	out, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(append(out, '\n'))
	// Output:
	// {
	//   "originator": {
	//     "originatorPerson": [
	//       {
	//         "naturalPerson": {
	//           "name": {
	//             "nameIdentifier": [
	//               {
	//                 "primaryIdentifier": "Okafor",
	//                 "secondaryIdentifier": "Chidinma",
	//                 "naturalPersonNameIdentifierType": "LEGL"
	//               }
	//             ]
	//           },
	//           "customerIdentification": "C-1994"
	//         },
	//         "accountNumber": [
	//           "TFakeOriginator2023Tron1111111111"
	//         ]
	//       }
	//     ]
	//   },
	//   "beneficiary": {
	//     "beneficiaryPerson": [
	//       {
	//         "legalPerson": {
	//           "name": {
	//             "nameIdentifier": [
	//               {
	//                 "legalPersonName": "Kestrel Ledger GmbH",
	//                 "legalPersonNameIdentifierType": "LEGL"
	//               }
	//             ]
	//           },
	//           "customerIdentification": "KL-2023-0091"
	//         }
	//       }
	//     ]
	//   },
	//   "payloadMetadata": {
	//     "payloadVersion": "101.2023"
	//   }
	// }
}

// The fmt (and log/slog) forms show codes and countries, and nothing
// personal.
func ExamplePayload_Format() {
	p, err := ivms101.Parse([]byte(`{"beneficiary": {"beneficiaryPersons": [{"naturalPerson": {
	  "name": {"nameIdentifier": [{"primaryIdentifier": "Seo", "secondaryIdentifier": "Minji", "nameIdentifierType": "LEGL"}]},
	  "countryOfResidence": "KR", "gender": "F"}}]}}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", p.Beneficiary)
	// Output:
	// {Persons:[{NaturalPerson:{Name:{NameIdentifiers:[{PrimaryIdentifier:[redacted] SecondaryIdentifier:[redacted] NameIdentifierType:LEGL}]} CountryOfResidence:KR Extra:[1 member]}}]}
}
