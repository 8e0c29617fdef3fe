package ivms101

import (
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"
)

// The JSON members of each type, in IVMS101's order. One table drives
// reading (decode.go), writing (encode.go) and the redacted forms
// (redact.go), so that the three agree on every name.

// member is one JSON member of a type of the model.
type member struct {
	name   string // the name in the 2020 edition, and in the 2023 edition unless name23 is set
	name23 string // the name in the 2023 edition, when it differs
	marks  bool   // reading name23 makes the payload Version2023
	local  bool   // holds local or phonetic names, in which the 2023 edition keeps the 2020 names
	goName string // the Go field
	index  int    // the index of the Go field
	// show reports whether the redacted forms may show a value of this
	// string field (or of each element of a []string); nil: never.
	show func(string) bool
	// elem is the spec of the struct the field holds (through a pointer,
	// or as a slice's elements), or nil; list reports whether an array is
	// read into the field: a slice, or a name (an array of names is read
	// as one).
	elem *typeSpec
	list bool
}

// nameFor returns the member's name in edition ed; local reports whether
// the member's struct is a local or phonetic name.
func (m *member) nameFor(ed Version, local bool) string {
	if ed == Version2023 && m.name23 != "" && !local {
		return m.name23
	}
	return m.name
}

// typeSpec describes the JSON form of one type of the model.
type typeSpec struct {
	goName  string // "ivms101.Address"
	members []member
	extra   int // index of the Extra field
	// wrapper: the type is {"name": Person} and may come as the person
	// itself (OriginatingVASP, BeneficiaryVASP).
	wrapper bool
	// mergeable: an array of such objects is read as one, their lists
	// appended (the name types).
	mergeable bool
}

// match returns the index of the member of s named key, or -1: matched
// exactly (exact), else without regard to case, as encoding/json matches;
// via23 reports whether it matched by the 2023 name. A name read from
// JSON is matched as its bytes, unless it has escapes.
func match[K string | []byte](s *typeSpec, key K) (i int, via23, exact bool) {
	for i := range s.members {
		m := &s.members[i]
		if string(key) == m.name {
			return i, false, true
		}
		if m.name23 != "" && string(key) == m.name23 {
			return i, true, true
		}
	}
	for i := range s.members {
		m := &s.members[i]
		if equalFold(key, m.name) {
			return i, false, false
		}
		if m.name23 != "" && equalFold(key, m.name23) {
			return i, true, false
		}
	}
	return -1, false, false
}

// equalFold is strings.EqualFold(key, name) for name, a member's name, in
// ASCII.
func equalFold[K string | []byte](key K, name string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return strings.EqualFold(string(key), name) // a fold of a letter beyond ASCII, such as U+212A for k
		}
	}
	if len(key) != len(name) {
		return false
	}
	for i := 0; i < len(key); i++ {
		a, b := key[i], name[i]
		if a != b && (a|0x20 != b|0x20 || a|0x20 < 'a' || a|0x20 > 'z') {
			return false
		}
	}
	return true
}

// specs holds the typeSpec of every struct type of the model.
var specs = map[reflect.Type]*typeSpec{}

// specOf returns the typeSpec of t.
func specOf(t reflect.Type) *typeSpec { return specs[t] }

func register[T any](opts typeSpec, members ...member) {
	t := reflect.TypeFor[T]()
	s := opts
	s.goName = "ivms101." + t.Name()
	s.members = members
	f, ok := t.FieldByName("Extra")
	if !ok || f.Type != reflect.TypeFor[map[string]json.RawMessage]() {
		panic("ivms101: " + t.Name() + " has no Extra")
	}
	s.extra = f.Index[0]
	for i := range s.members {
		m := &s.members[i]
		f, ok := t.FieldByName(m.goName)
		if !ok {
			panic("ivms101: " + t.Name() + " has no field " + m.goName)
		}
		m.index = f.Index[0]
	}
	specs[t] = &s
}

func showNaturalNameType(s string) bool { return NaturalPersonNameType(s).Valid() }
func showLegalNameType(s string) bool   { return LegalPersonNameType(s).Valid() }
func showAddressType(s string) bool     { return AddressType(s).Valid() }
func showIDType(s string) bool          { return NationalIdentifierType(s).Valid() }
func showVersion(s string) bool         { return Version(s).Valid() }

func init() {
	registerTransfer()
	registerPersons()
	registerDetails()
	link()
}

// link sets the elem and list of every member, once every type is
// registered.
func link() {
	for t, s := range specs {
		for i := range s.members {
			m := &s.members[i]
			switch f := t.Field(m.index).Type; f.Kind() {
			case reflect.Pointer:
				m.elem = specs[f.Elem()]
				m.list = m.elem.mergeable
			case reflect.Slice:
				m.elem, m.list = specs[f.Elem()], true // no spec for []string
			}
		}
	}
}

// registerTransfer registers the payload and the parts of a transfer: its
// parties, their VASPs, the transfer path and the metadata.
func registerTransfer() {
	register[Payload](typeSpec{},
		member{name: "originator", goName: "Originator"},
		member{name: "beneficiary", goName: "Beneficiary"},
		member{name: "originatingVASP", goName: "OriginatingVASP"},
		member{name: "beneficiaryVASP", goName: "BeneficiaryVASP"},
		member{name: "transferPath", goName: "TransferPath"},
		member{name: "payloadMetadata", goName: "PayloadMetadata"},
	)
	register[Originator](typeSpec{},
		member{name: "originatorPersons", name23: "originatorPerson", marks: true, goName: "Persons"},
		member{name: "accountNumber", goName: "AccountNumbers"},
	)
	register[Beneficiary](typeSpec{},
		member{name: "beneficiaryPersons", name23: "beneficiaryPerson", marks: true, goName: "Persons"},
		member{name: "accountNumber", goName: "AccountNumbers"},
	)
	register[OriginatingVASP](typeSpec{wrapper: true},
		member{name: "originatingVASP", goName: "Person"},
	)
	register[BeneficiaryVASP](typeSpec{wrapper: true},
		member{name: "beneficiaryVASP", goName: "Person"},
	)
	register[TransferPath](typeSpec{},
		member{name: "transferPath", goName: "Path"},
	)
	register[IntermediaryVASP](typeSpec{},
		member{name: "intermediaryVASP", goName: "Person"},
		member{name: "sequence", goName: "Sequence"},
	)
	register[PayloadMetadata](typeSpec{},
		member{name: "transliterationMethod", goName: "TransliterationMethods", show: ValidTransliterationMethod},
		member{name: "payloadVersion", goName: "PayloadVersion", show: showVersion},
	)
}

// registerPersons registers the persons, natural and legal, and their
// names.
func registerPersons() {
	register[Person](typeSpec{},
		member{name: "naturalPerson", goName: "NaturalPerson"},
		member{name: "legalPerson", goName: "LegalPerson"},
		member{name: "accountNumber", goName: "AccountNumbers"},
	)
	register[NaturalPerson](typeSpec{},
		member{name: "name", goName: "Name"},
		member{name: "geographicAddress", goName: "GeographicAddresses"},
		member{name: "nationalIdentification", goName: "NationalIdentification"},
		member{name: "customerIdentification", goName: "CustomerIdentification"},
		member{name: "dateAndPlaceOfBirth", goName: "DateAndPlaceOfBirth"},
		member{name: "countryOfResidence", goName: "CountryOfResidence", show: validCountryCode},
	)
	register[NaturalPersonName](typeSpec{mergeable: true},
		member{name: "nameIdentifier", goName: "NameIdentifiers"},
		member{name: "localNameIdentifier", goName: "LocalNameIdentifiers", local: true},
		member{name: "phoneticNameIdentifier", goName: "PhoneticNameIdentifiers", local: true},
	)
	register[NaturalPersonNameID](typeSpec{},
		member{name: "primaryIdentifier", goName: "PrimaryIdentifier"},
		member{name: "secondaryIdentifier", goName: "SecondaryIdentifier"},
		member{name: "nameIdentifierType", name23: "naturalPersonNameIdentifierType", marks: true,
			goName: "NameIdentifierType", show: showNaturalNameType},
	)
	register[LegalPerson](typeSpec{},
		member{name: "name", goName: "Name"},
		member{name: "geographicAddress", goName: "GeographicAddresses"},
		// Read in either edition; it does not decide the edition (see
		// the package documentation).
		member{name: "customerNumber", name23: "customerIdentification", goName: "CustomerIdentification"},
		member{name: "nationalIdentification", goName: "NationalIdentification"},
		member{name: "countryOfRegistration", goName: "CountryOfRegistration", show: validCountryCode},
	)
	register[LegalPersonName](typeSpec{mergeable: true},
		member{name: "nameIdentifier", goName: "NameIdentifiers"},
		member{name: "localNameIdentifier", goName: "LocalNameIdentifiers", local: true},
		member{name: "phoneticNameIdentifier", goName: "PhoneticNameIdentifiers", local: true},
	)
	register[LegalPersonNameID](typeSpec{},
		member{name: "legalPersonName", goName: "LegalPersonName"},
		member{name: "legalPersonNameIdentifierType", goName: "LegalPersonNameIdentifierType", show: showLegalNameType},
	)
}

// registerDetails registers what a person is known by besides its names:
// addresses, national identifiers, date and place of birth.
func registerDetails() {
	register[Address](typeSpec{},
		member{name: "addressType", goName: "AddressType", show: showAddressType},
		member{name: "department", goName: "Department"},
		member{name: "subDepartment", goName: "SubDepartment"},
		member{name: "streetName", goName: "StreetName"},
		member{name: "buildingNumber", goName: "BuildingNumber"},
		member{name: "buildingName", goName: "BuildingName"},
		member{name: "floor", goName: "Floor"},
		member{name: "postBox", goName: "PostBox"},
		member{name: "room", goName: "Room"},
		member{name: "postCode", goName: "PostCode"},
		member{name: "townName", goName: "TownName"},
		member{name: "townLocationName", goName: "TownLocationName"},
		member{name: "districtName", goName: "DistrictName"},
		member{name: "countrySubDivision", goName: "CountrySubDivision"},
		member{name: "addressLine", goName: "AddressLines"},
		member{name: "country", goName: "Country", show: validCountryCode},
	)
	register[NationalIdentification](typeSpec{},
		member{name: "nationalIdentifier", goName: "NationalIdentifier"},
		member{name: "nationalIdentifierType", goName: "NationalIdentifierType", show: showIDType},
		member{name: "countryOfIssue", goName: "CountryOfIssue", show: validCountryCode},
		member{name: "registrationAuthority", goName: "RegistrationAuthority"},
	)
	register[DateAndPlaceOfBirth](typeSpec{},
		member{name: "dateOfBirth", goName: "DateOfBirth"},
		member{name: "placeOfBirth", goName: "PlaceOfBirth"},
	)
}
