package ivms101

import "encoding/json"

// Version names the edition of IVMS101 whose field names a payload uses.
type Version string

// The editions of IVMS101. They differ in a few names only: the 2023
// edition writes originatorPerson, beneficiaryPerson,
// naturalPersonNameIdentifierType (in nameIdentifier) and (for a legal
// person) customerIdentification where the 2020 edition writes
// originatorPersons, beneficiaryPersons, nameIdentifierType and
// customerNumber; it adds payloadMetadata.payloadVersion and an
// accountNumber on each Person.
const (
	// Version2020 is IVMS101 issue 1 (2020), payload version "101".
	Version2020 Version = "101"
	// Version2023 is IVMS101.2023, payload version "101.2023".
	Version2023 Version = "101.2023"
)

// Payload is an IVMS101 payload: the parties of a transfer and their VASPs.
// Every member of the JSON it was read from that the model does not name
// is kept, at every level, in that level's Extra, and written back by
// MarshalJSON, so that a payload read and written again loses nothing.
//
// A Payload holds personal data. Its fmt and log/slog forms, and those of
// every type of this package that holds personal data, are redacted: codes
// of IVMS101's code lists and ISO 3166 countries are shown, every other
// value is shown as "[redacted]" when set. Its JSON form is not redacted.
type Payload struct {
	// Originator is the originator: its persons and account numbers.
	Originator *Originator
	// Beneficiary is the beneficiary: its persons and account numbers.
	Beneficiary *Beneficiary
	// OriginatingVASP is the VASP of the originator.
	OriginatingVASP *OriginatingVASP
	// BeneficiaryVASP is the VASP of the beneficiary.
	BeneficiaryVASP *BeneficiaryVASP
	// TransferPath lists the intermediary VASPs, if any.
	TransferPath *TransferPath
	// PayloadMetadata holds the transliteration methods and, in the 2023
	// edition, the payload version.
	PayloadMetadata *PayloadMetadata
	// Version is the edition whose field names the payload was read with
	// (Version2023 when originatorPerson, beneficiaryPerson,
	// naturalPersonNameIdentifierType or a payloadVersion of "101.2023"
	// was read, else Version2020), and the one MarshalJSON writes; empty
	// (or any other value) means Version2020.
	Version Version
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// Originator is IVMS101's Originator.
type Originator struct {
	// Persons are originatorPersons (2020) or originatorPerson (2023).
	Persons []Person
	// AccountNumbers are accountNumber: for a VASP, the wallet addresses
	// the transfer is sent from. Personal data.
	AccountNumbers []string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// Beneficiary is IVMS101's Beneficiary.
type Beneficiary struct {
	// Persons are beneficiaryPersons (2020) or beneficiaryPerson (2023).
	Persons []Person
	// AccountNumbers are accountNumber: for a VASP, the wallet addresses
	// the transfer is sent to. Personal data.
	AccountNumbers []string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// OriginatingVASP is IVMS101's OriginatingVASP: {"originatingVASP": Person}.
type OriginatingVASP struct {
	// Person is the VASP, usually a legal person.
	Person *Person
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// BeneficiaryVASP is IVMS101's BeneficiaryVASP: {"beneficiaryVASP": Person}.
type BeneficiaryVASP struct {
	// Person is the VASP, usually a legal person.
	Person *Person
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// TransferPath is IVMS101's TransferPath: {"transferPath": [...]}.
type TransferPath struct {
	// Path lists the intermediary VASPs.
	Path []IntermediaryVASP
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// IntermediaryVASP is one VASP of a transfer path.
type IntermediaryVASP struct {
	// Person is the intermediary VASP ("intermediaryVASP").
	Person *Person
	// Sequence is its place in the path, from 0 (IVMS101 C12). It is
	// always written, 0 included, since the standard requires it; only a
	// sequence of the wrong type that was read (kept in Extra, Sequence
	// left 0) is written back instead.
	Sequence int
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// PayloadMetadata is IVMS101's PayloadMetadata.
type PayloadMetadata struct {
	// TransliterationMethods are transliterationMethod codes, such as
	// "hani" or "othr".
	TransliterationMethods []string
	// PayloadVersion is the 2023 edition's payloadVersion, such as
	// "101.2023".
	PayloadVersion string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// Person is a natural person or a legal person; IVMS101 sets exactly one.
type Person struct {
	// NaturalPerson is set for a natural person.
	NaturalPerson *NaturalPerson
	// LegalPerson is set for a legal person.
	LegalPerson *LegalPerson
	// AccountNumbers are accountNumber: the 2023 edition moves the
	// account numbers from Originator and Beneficiary to each Person.
	// Either place is read and written in either edition. Personal data.
	AccountNumbers []string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// NaturalPerson is IVMS101's NaturalPerson. Personal data.
type NaturalPerson struct {
	// Name holds the person's names.
	Name *NaturalPersonName
	// GeographicAddresses are geographicAddress.
	GeographicAddresses []Address
	// NationalIdentification is the person's national identifier.
	NationalIdentification *NationalIdentification
	// CustomerIdentification is the person's identifier at its VASP.
	CustomerIdentification string
	// DateAndPlaceOfBirth is the person's date and place of birth.
	DateAndPlaceOfBirth *DateAndPlaceOfBirth
	// CountryOfResidence is an ISO 3166-1 alpha-2 code.
	CountryOfResidence string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// NaturalPersonName is IVMS101's NaturalPersonName.
type NaturalPersonName struct {
	// NameIdentifiers are nameIdentifier: the names in Latin script, one
	// of them the legal name (type LEGL).
	NameIdentifiers []NaturalPersonNameID
	// LocalNameIdentifiers are localNameIdentifier: names in a local
	// script.
	LocalNameIdentifiers []NaturalPersonNameID
	// PhoneticNameIdentifiers are phoneticNameIdentifier.
	PhoneticNameIdentifiers []NaturalPersonNameID
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// NaturalPersonNameID is one name of a natural person.
type NaturalPersonNameID struct {
	// PrimaryIdentifier is the family name (or the whole name, for a
	// person with one name).
	PrimaryIdentifier string
	// SecondaryIdentifier is the given names.
	SecondaryIdentifier string
	// NameIdentifierType is nameIdentifierType (2020) or
	// naturalPersonNameIdentifierType (2023, in nameIdentifier only: the
	// 2023 edition keeps nameIdentifierType in localNameIdentifier and
	// phoneticNameIdentifier).
	NameIdentifierType NaturalPersonNameType
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// LegalPerson is IVMS101's LegalPerson.
type LegalPerson struct {
	// Name holds the entity's names.
	Name *LegalPersonName
	// GeographicAddresses are geographicAddress.
	GeographicAddresses []Address
	// CustomerIdentification is customerNumber (2020) or
	// customerIdentification (2023): the entity's identifier at its VASP.
	// Both names are read in either edition: the 2020 standard's own
	// table spells it customerIdentification too, and networks send that.
	CustomerIdentification string
	// NationalIdentification is the entity's national identifier (an LEI
	// has type LEIX).
	NationalIdentification *NationalIdentification
	// CountryOfRegistration is an ISO 3166-1 alpha-2 code.
	CountryOfRegistration string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// LegalPersonName is IVMS101's LegalPersonName.
type LegalPersonName struct {
	// NameIdentifiers are nameIdentifier, one of them the legal name
	// (type LEGL).
	NameIdentifiers []LegalPersonNameID
	// LocalNameIdentifiers are localNameIdentifier.
	LocalNameIdentifiers []LegalPersonNameID
	// PhoneticNameIdentifiers are phoneticNameIdentifier.
	PhoneticNameIdentifiers []LegalPersonNameID
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// LegalPersonNameID is one name of a legal person.
type LegalPersonNameID struct {
	// LegalPersonName is the name.
	LegalPersonName string
	// LegalPersonNameIdentifierType is its kind.
	LegalPersonNameIdentifierType LegalPersonNameType
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// Address is IVMS101's GeographicAddress.
type Address struct {
	// AddressType is the kind of address.
	AddressType AddressType
	// Department is department.
	Department string
	// SubDepartment is subDepartment.
	SubDepartment string
	// StreetName is streetName.
	StreetName string
	// BuildingNumber is buildingNumber.
	BuildingNumber string
	// BuildingName is buildingName.
	BuildingName string
	// Floor is floor.
	Floor string
	// PostBox is postBox.
	PostBox string
	// Room is room.
	Room string
	// PostCode is postCode.
	PostCode string
	// TownName is townName.
	TownName string
	// TownLocationName is townLocationName.
	TownLocationName string
	// DistrictName is districtName.
	DistrictName string
	// CountrySubDivision is countrySubDivision.
	CountrySubDivision string
	// AddressLines are addressLine: the address in free form, at most 7
	// lines.
	AddressLines []string
	// Country is an ISO 3166-1 alpha-2 code.
	Country string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// NationalIdentification is IVMS101's NationalIdentification.
type NationalIdentification struct {
	// NationalIdentifier is the identifier.
	NationalIdentifier string
	// NationalIdentifierType is its kind.
	NationalIdentifierType NationalIdentifierType
	// CountryOfIssue is an ISO 3166-1 alpha-2 code.
	CountryOfIssue string
	// RegistrationAuthority is a GLEIF registration authority code, such
	// as "RA000553".
	RegistrationAuthority string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// DateAndPlaceOfBirth is IVMS101's DateAndPlaceOfBirth.
type DateAndPlaceOfBirth struct {
	// DateOfBirth is YYYY-MM-DD.
	DateOfBirth string
	// PlaceOfBirth is the town (and country) of birth.
	PlaceOfBirth string
	// Extra holds the members the model does not name.
	Extra map[string]json.RawMessage
}

// NaturalPersonNameType is a code of IVMS101's NaturalPersonNameTypeCode.
type NaturalPersonNameType string

// The codes of NaturalPersonNameTypeCode.
const (
	NameAlias  NaturalPersonNameType = "ALIA" // an alias
	NameBirth  NaturalPersonNameType = "BIRT" // the name at birth
	NameMaiden NaturalPersonNameType = "MAID" // the maiden name
	NameLegal  NaturalPersonNameType = "LEGL" // the legal name
	NameOther  NaturalPersonNameType = "MISC" // another name
)

// LegalPersonNameType is a code of IVMS101's LegalPersonNameTypeCode.
type LegalPersonNameType string

// The codes of LegalPersonNameTypeCode.
const (
	LegalNameLegal   LegalPersonNameType = "LEGL" // the legal name
	LegalNameShort   LegalPersonNameType = "SHRT" // a short name
	LegalNameTrading LegalPersonNameType = "TRAD" // a trading name
)

// AddressType is a code of IVMS101's AddressTypeCode.
type AddressType string

// The codes of AddressTypeCode.
const (
	AddressHome       AddressType = "HOME" // residential
	AddressBusiness   AddressType = "BIZZ" // business
	AddressGeographic AddressType = "GEOG" // geographic (a registered office, say)
)

// NationalIdentifierType is a code of IVMS101's
// NationalIdentifierTypeCode.
type NationalIdentifierType string

// The codes of NationalIdentifierTypeCode.
const (
	IDAlienRegistration     NationalIdentifierType = "ARNU" // alien registration number
	IDPassport              NationalIdentifierType = "CCPT" // passport number
	IDRegistrationAuthority NationalIdentifierType = "RAID" // registration authority identifier
	IDDriverLicense         NationalIdentifierType = "DRLC" // driver's licence number
	IDForeignInvestment     NationalIdentifierType = "FIIN" // foreign investment identity number
	IDTax                   NationalIdentifierType = "TXID" // tax identification number
	IDSocialSecurity        NationalIdentifierType = "SOCS" // social security number
	IDIdentityCard          NationalIdentifierType = "IDCD" // identity card number
	IDLEI                   NationalIdentifierType = "LEIX" // legal entity identifier
	IDMiscellaneous         NationalIdentifierType = "MISC" // another identifier
)
