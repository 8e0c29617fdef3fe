package ivms101

// The one table of IVMS101's text lengths. Payload.Validate reads it; the
// flat Party's strict validation in package travelrule runs Payload.Validate
// over the Party's mapping, so that the two never disagree on a bound.

// maxLengths holds the most characters each bounded text member of IVMS101
// takes, by the member's name in either edition: the standard's datatypes
// Max16Text, Max35Text, Max50Text, Max70Text and Max100Text. An account
// number is Max100Text in the 2020 edition and Max512Text in the 2023
// edition (see Version.MaxLength).
var maxLengths = map[string]int{
	// Names (NaturalPersonNameID, LegalPersonNameID).
	"primaryIdentifier":   100,
	"secondaryIdentifier": 100,
	"legalPersonName":     100,
	// Address.
	"department":         50,
	"subDepartment":      70,
	"streetName":         70,
	"buildingNumber":     16,
	"buildingName":       35,
	"floor":              70,
	"postBox":            16,
	"room":               70,
	"postCode":           16,
	"townName":           35,
	"townLocationName":   35,
	"districtName":       35,
	"countrySubDivision": 35,
	"addressLine":        70,
	// Identification.
	"nationalIdentifier":     35,
	"customerIdentification": 50,
	"customerNumber":         50, // the 2020 edition's name for a legal person's
	"placeOfBirth":           70,
	"accountNumber":          100,
}

// maxAddressLines is the most addressLine an Address takes.
const maxAddressLines = 7

// MaxLength returns the most characters (Unicode code points) IVMS101, in
// edition v, allows in the text member named name, a name of either
// edition such as "primaryIdentifier", "townName" or
// "customerIdentification"; 0 for a name that is not a bounded text member.
// Every edition but Version2023 counts as Version2020, whose accountNumber
// takes 100 characters (512 in the 2023 edition).
func (v Version) MaxLength(name string) int {
	if name == "accountNumber" && v == Version2023 {
		return 512
	}
	return maxLengths[name]
}
