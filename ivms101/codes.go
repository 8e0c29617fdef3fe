package ivms101

import (
	"sync"

	"golang.org/x/text/language"
)

// Valid reports whether t is a code of NaturalPersonNameTypeCode: ALIA,
// BIRT, MAID, LEGL or MISC. Codes are upper case.
func (t NaturalPersonNameType) Valid() bool {
	switch t {
	case NameAlias, NameBirth, NameMaiden, NameLegal, NameOther:
		return true
	}
	return false
}

// Valid reports whether t is a code of LegalPersonNameTypeCode: LEGL,
// SHRT or TRAD.
func (t LegalPersonNameType) Valid() bool {
	switch t {
	case LegalNameLegal, LegalNameShort, LegalNameTrading:
		return true
	}
	return false
}

// Valid reports whether t is a code of AddressTypeCode: HOME, BIZZ or
// GEOG.
func (t AddressType) Valid() bool {
	switch t {
	case AddressHome, AddressBusiness, AddressGeographic:
		return true
	}
	return false
}

// Valid reports whether t is a code of NationalIdentifierTypeCode: ARNU,
// CCPT, RAID, DRLC, FIIN, TXID, SOCS, IDCD, LEIX or MISC.
func (t NationalIdentifierType) Valid() bool {
	switch t {
	case IDAlienRegistration, IDPassport, IDRegistrationAuthority, IDDriverLicense, IDForeignInvestment,
		IDTax, IDSocialSecurity, IDIdentityCard, IDLEI, IDMiscellaneous:
		return true
	}
	return false
}

// Valid reports whether v is one of the editions: "101" or "101.2023",
// the codes of the 2023 edition's PayloadVersionCode.
func (v Version) Valid() bool { return v == Version2020 || v == Version2023 }

// ValidTransliterationMethod reports whether s is a code of IVMS101's
// TransliterationMethodCode: the ISO 15924 script codes arab, aran, armn,
// cyrl, deva, geor, grek, hani, hebr, kana, kore and thai, or othr.
// Codes are lower case.
func ValidTransliterationMethod(s string) bool {
	switch s {
	case "arab", "aran", "armn", "cyrl", "deva", "geor", "grek", "hani", "hebr", "kana", "kore", "thai", "othr":
		return true
	}
	return false
}

// ValidCountry reports whether s is an ISO 3166-1 alpha-2 code assigned
// to a country, in upper case, such as "DE". Codes that are reserved,
// withdrawn or user-assigned are not valid: "UK", "EU", "SU", "XK", and
// "XX", which IVMS101 accepts for an unknown country ([Payload.Validate]
// does accept it).
func ValidCountry(s string) bool {
	if len(s) != 2 || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' {
		return false
	}
	return countries()[int(s[0]-'A')*26+int(s[1]-'A')]
}

// countries is the table of assigned ISO 3166-1 alpha-2 codes, indexed by
// their two letters, made once from golang.org/x/text's region data. Those
// tables know more codes than ISO 3166-1 assigns: the exceptionally
// reserved ones (such as UK, EU, UN) have no numeric code or an ISO3 of
// "ZZZ", withdrawn ones (such as BU, DD, ZR) canonicalize to their
// successor, and six more are named here.
var countries = sync.OnceValue(func() *[26 * 26]bool {
	var t [26 * 26]bool
	notAssigned := map[string]bool{
		"AN": true, // Netherlands Antilles, withdrawn 2010
		"CS": true, // Serbia and Montenegro, withdrawn 2006
		"NT": true, // Neutral Zone, withdrawn 1993
		"SU": true, // USSR, withdrawn 1992 (exceptionally reserved)
		"XK": true, // Kosovo: user-assigned, not ISO 3166-1
		"YU": true, // Yugoslavia, withdrawn 2003
	}
	for i := range t {
		s := string([]byte{'A' + byte(i/26), 'A' + byte(i%26)})
		r, err := language.ParseRegion(s)
		t[i] = err == nil && r.IsCountry() && r.String() == s && r.Canonicalize().String() == s &&
			r.M49() != 0 && r.ISO3() != "ZZZ" && !notAssigned[s]
	}
	return &t
})

// validCountryCode reports whether s is an IVMS101 CountryCode: an ISO
// 3166-1 alpha-2 country or "XX", IVMS101's code for an unknown country
// (constraint C3).
func validCountryCode(s string) bool { return s == "XX" || ValidCountry(s) }

// validLEI reports whether s is a legal entity identifier: IVMS101's
// LEIText (18 upper-case letters or digits and 2 digits) whose check
// digits are right under ISO 17442 (ISO 7064 MOD 97-10: the number made
// by writing each letter as 10 to 35 leaves 1 when divided by 97).
func validLEI(s string) bool {
	if len(s) != 20 {
		return false
	}
	r := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z' && i < 18:
			r = (r*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return r == 1
}

// validRegistrationAuthority reports whether s has the form of a GLEIF
// registration authority code, "RA" and six digits (IVMS101's
// RegistrationAuthority datatype). Whether the code is on GLEIF's list
// (constraint C10) is not checked.
func validRegistrationAuthority(s string) bool {
	if len(s) != 8 || s[:2] != "RA" {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
