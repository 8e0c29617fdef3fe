package ivms101

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrInvalid is matched (with errors.Is) by the *ValidationError that
// Payload.Validate returns.
var ErrInvalid = errors.New("ivms101: invalid payload")

// FieldError is one fault of a payload.
type FieldError struct {
	// Path is the JSON path of the member at fault, in the names of the
	// payload's edition, such as
	// "originator.originatorPersons[0].naturalPerson.name.nameIdentifier[0].primaryIdentifier".
	Path string
	// Reason says what is wrong. It holds none of the payload's values.
	Reason string
}

// ValidationError lists every fault Payload.Validate found, in the
// payload's order. It matches ErrInvalid. Its paths and reasons, and so
// its Error text, hold none of the payload's values.
type ValidationError struct {
	// Errors lists every fault found, in the payload's order.
	Errors []FieldError
}

// maxShown is the number of faults an error string lists.
const maxShown = 5

// Error lists the first faults and the number of the others.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(ErrInvalid.Error())
	for i, f := range e.Errors {
		if i == maxShown {
			b.WriteString("; and " + strconv.Itoa(len(e.Errors)-maxShown) + " more")
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if f.Path != "" {
			b.WriteString(f.Path + ": ")
		}
		b.WriteString(f.Reason)
	}
	return b.String()
}

// Is reports whether target is ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// now is the clock of the check that a date of birth is in the past.
var now = time.Now

// Validate checks p against IVMS101 in the edition of p.Version and
// returns nil or a *ValidationError listing every fault. It checks:
//
//   - the members the standard requires: originator and beneficiary with
//     at least one person each, a person's name, a natural person's
//     primaryIdentifier and name type, a legal person's legalPersonName and
//     name type, an address's addressType, townName and country, a
//     national identification's identifier and type, a date and place of
//     birth's both parts, the person of an intermediary VASP (not of an
//     originating or beneficiary VASP, which both editions make optional:
//     "originatingVASP": {} is valid), and the 2023 edition's
//     payloadVersion;
//   - that a person is a natural person or a legal person, not both;
//   - the code lists (name types, address types, national identifier
//     types, transliteration methods, payload versions), in upper case
//     (transliteration methods in lower case) as the standard lists them;
//   - countries (country, countryOfResidence, countryOfRegistration,
//     countryOfIssue): ISO 3166-1 alpha-2, or XX for an unknown country
//     (C3);
//   - the lengths of IVMS101's text datatypes, in characters (the table
//     Version.MaxLength reads): names 100,
//     customer identification 50, national identifier 35, place of birth
//     70, account numbers 100 (512 in the 2023 edition), and an address's
//     parts (department 50; subDepartment, streetName, floor, room and
//     each addressLine 70; buildingName, townName, townLocationName,
//     districtName and countrySubDivision 35; buildingNumber, postBox and
//     postCode 16), at most 7 addressLine;
//   - dateOfBirth: a real date written YYYY-MM-DD, before today (C2);
//   - the constraints: an originator that is a natural person has a
//     geographic address, a national identification, a customer
//     identification or a date and place of birth (C1), one that is a
//     legal person a GEOG address, a national identification or a
//     customer identification (C4); a legal person has a name of type
//     LEGL (C5), a natural person too (C6); a legal person's national
//     identifier type is RAID, MISC, LEIX or TXID (C7); an address has an
//     addressLine, or a streetName with a buildingNumber or buildingName
//     (C8); a legal person's national identification has no countryOfIssue,
//     and a registrationAuthority unless its type is LEIX, when it has
//     none (C9); a registrationAuthority has the form RA000000 (C10: the
//     GLEIF list itself is not consulted); an identifier of type LEIX is
//     an LEI with valid check digits (C11); the intermediary VASPs are
//     numbered from 0 without gaps (C12);
//   - that no member the model names was kept in Extra because its value
//     had the wrong type, or because it was given twice (in another case,
//     or in both editions' names): the payload then says something the
//     model does not hold.
//
// A value of only white space counts as missing where a value is
// required. Validate does not check the characters the standard allows in
// its text datatypes (the sources disagree, and real names carry accents),
// nor the GLEIF register of registration authorities.
func (p *Payload) Validate() error {
	if p == nil {
		return &ValidationError{Errors: []FieldError{{Reason: "no payload"}}}
	}
	v := validator{ed: Version2020, today: today()}
	if p.Version == Version2023 {
		v.ed = Version2023
	}
	v.payload(p)
	if len(v.errs) == 0 {
		return nil
	}
	return &ValidationError{Errors: v.errs}
}

// today returns the date of now, in UTC.
func today() time.Time {
	y, m, d := now().UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// validator collects the faults of a payload.
type validator struct {
	ed    Version
	today time.Time
	errs  []FieldError
}

func (v *validator) fault(at *path, reason string) {
	v.errs = append(v.errs, FieldError{Path: at.String(), Reason: reason})
}

// name returns the name of a member whose name differs between the
// editions.
func (v *validator) name(n2020, n2023 string) string {
	if v.ed == Version2023 {
		return n2023
	}
	return n2020
}

// path is the JSON path of a member, spelled out only for a fault: the
// path of its parent (nil at the top) and its name, or, when name is "",
// its index in its parent, an array.
type path struct {
	parent *path
	name   string
	index  int
}

// join returns the path of member name of the object at p.
func (p *path) join(name string) *path { return &path{parent: p, name: name} }

// at returns the path of element i of the array at p.
func (p *path) at(i int) *path { return &path{parent: p, index: i} }

// String returns p as FieldError.Path spells it, such as
// "originator.originatorPersons[0].naturalPerson".
func (p *path) String() string {
	if p == nil {
		return ""
	}
	return string(p.append(nil))
}

func (p *path) append(b []byte) []byte {
	if p.parent != nil {
		b = p.parent.append(b)
	}
	if p.name == "" {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(p.index), 10)
		return append(b, ']')
	}
	if len(b) > 0 {
		b = append(b, '.')
	}
	return append(b, p.name...)
}

// text checks the optional text member name of the object at p against
// its length in the table of limits (limits.go).
func (v *validator) text(p *path, name, s string) {
	v.bound(p.join(name), s, v.ed.MaxLength(name))
}

// required checks the required text member name of the object at p
// against its length in the table of limits.
func (v *validator) required(p *path, name, s string) {
	v.requiredAt(p.join(name), s, v.ed.MaxLength(name))
}

// each checks every element of the list member name of the object at p:
// each is required and bounded by the table of limits.
func (v *validator) each(p *path, name string, list []string) {
	max := v.ed.MaxLength(name)
	for i, s := range list {
		v.requiredAt(p.join(name).at(i), s, max)
	}
}

func (v *validator) requiredAt(p *path, s string, max int) {
	if strings.TrimSpace(s) == "" {
		v.fault(p, "required")
		return
	}
	v.bound(p, s, max)
}

// bound checks that s has at most max characters.
func (v *validator) bound(p *path, s string, max int) {
	if s != "" && len(s) > max && utf8.RuneCountInString(s) > max {
		v.fault(p, "longer than "+strconv.Itoa(max)+" characters")
	}
}

// country checks an optional IVMS101 CountryCode.
func (v *validator) country(p *path, s string) {
	if s != "" && !validCountryCode(s) {
		v.fault(p, "must be an ISO 3166-1 alpha-2 country code in upper case, or XX (IVMS101 C3)")
	}
}

// code checks a required code of a code list.
func (v *validator) code(p *path, s string, valid bool, list string) {
	switch {
	case s == "":
		v.fault(p, "required")
	case !valid:
		v.fault(p, "must be one of "+list)
	}
}

func (v *validator) payload(p *Payload) {
	var top *path
	v.extra(top, reflect.ValueOf(p).Elem(), false)
	if p.Originator == nil {
		v.fault(top.join("originator"), "required")
	} else {
		o := p.Originator
		at := top.join("originator")
		v.extra(at, reflect.ValueOf(o).Elem(), false)
		v.persons(at.join(v.name("originatorPersons", "originatorPerson")), o.Persons, true)
		v.each(at, "accountNumber", o.AccountNumbers)
	}
	if p.Beneficiary == nil {
		v.fault(top.join("beneficiary"), "required")
	} else {
		b := p.Beneficiary
		at := top.join("beneficiary")
		v.extra(at, reflect.ValueOf(b).Elem(), false)
		v.persons(at.join(v.name("beneficiaryPersons", "beneficiaryPerson")), b.Persons, false)
		v.each(at, "accountNumber", b.AccountNumbers)
	}
	if o := p.OriginatingVASP; o != nil {
		v.vasp(top.join("originatingVASP"), reflect.ValueOf(o).Elem(), o.Person)
	}
	if b := p.BeneficiaryVASP; b != nil {
		v.vasp(top.join("beneficiaryVASP"), reflect.ValueOf(b).Elem(), b.Person)
	}
	if t := p.TransferPath; t != nil {
		v.transferPath(top.join("transferPath"), t)
	}
	v.metadata(top.join("payloadMetadata"), p.PayloadMetadata)
}

// vasp checks the originating or the beneficiary VASP, val, at p. Both
// editions make its person, the member of the same name, optional
// ([0..1]): {} is a valid VASP.
func (v *validator) vasp(p *path, val reflect.Value, person *Person) {
	v.extra(p, val, false)
	if person != nil {
		v.person(p.join(p.name), person, false)
	}
}

// persons checks the persons of the originator or the beneficiary.
func (v *validator) persons(at *path, persons []Person, originator bool) {
	if len(persons) == 0 {
		v.fault(at, "required: at least one person")
	}
	for i := range persons {
		v.person(at.at(i), &persons[i], originator)
	}
}

func (v *validator) person(at *path, p *Person, originator bool) {
	v.extra(at, reflect.ValueOf(p).Elem(), false)
	switch {
	case p.NaturalPerson == nil && p.LegalPerson == nil:
		v.fault(at, "must have a naturalPerson or a legalPerson")
	case p.NaturalPerson != nil && p.LegalPerson != nil:
		v.fault(at, "must have a naturalPerson or a legalPerson, not both")
	}
	if p.NaturalPerson != nil {
		v.naturalPerson(at.join("naturalPerson"), p.NaturalPerson, originator)
	}
	if p.LegalPerson != nil {
		v.legalPerson(at.join("legalPerson"), p.LegalPerson, originator)
	}
	v.each(at, "accountNumber", p.AccountNumbers)
}

func (v *validator) naturalPerson(at *path, n *NaturalPerson, originator bool) {
	v.extra(at, reflect.ValueOf(n).Elem(), false)
	if n.Name == nil {
		v.fault(at.join("name"), "required")
	} else {
		v.naturalName(at.join("name"), n.Name)
	}
	located := false
	for i := range n.GeographicAddresses {
		a := &n.GeographicAddresses[i]
		v.address(at.join("geographicAddress").at(i), a)
		located = located || a.AddressType.Valid()
	}
	if n.NationalIdentification != nil {
		v.nationalID(at.join("nationalIdentification"), n.NationalIdentification, false)
	}
	v.text(at, "customerIdentification", n.CustomerIdentification)
	if n.DateAndPlaceOfBirth != nil {
		v.birth(at.join("dateAndPlaceOfBirth"), n.DateAndPlaceOfBirth)
	}
	v.country(at.join("countryOfResidence"), n.CountryOfResidence)
	if originator && !located && n.NationalIdentification == nil && n.CustomerIdentification == "" && n.DateAndPlaceOfBirth == nil {
		v.fault(at, "an originator needs a geographicAddress, nationalIdentification, customerIdentification "+
			"or dateAndPlaceOfBirth (IVMS101 C1)")
	}
}

func (v *validator) naturalName(at *path, n *NaturalPersonName) {
	v.extra(at, reflect.ValueOf(n).Elem(), false)
	ids := at.join("nameIdentifier")
	legal := false
	for i := range n.NameIdentifiers {
		id := &n.NameIdentifiers[i]
		v.naturalNameID(ids.at(i), id, false)
		legal = legal || id.NameIdentifierType == NameLegal
	}
	switch {
	case len(n.NameIdentifiers) == 0:
		v.fault(ids, "required")
	case !legal:
		v.fault(ids, "needs a name of type LEGL (IVMS101 C6)")
	}
	for i := range n.LocalNameIdentifiers {
		v.naturalNameID(at.join("localNameIdentifier").at(i), &n.LocalNameIdentifiers[i], true)
	}
	for i := range n.PhoneticNameIdentifiers {
		v.naturalNameID(at.join("phoneticNameIdentifier").at(i), &n.PhoneticNameIdentifiers[i], true)
	}
}

func (v *validator) naturalNameID(at *path, id *NaturalPersonNameID, local bool) {
	v.extra(at, reflect.ValueOf(id).Elem(), local)
	v.required(at, "primaryIdentifier", id.PrimaryIdentifier)
	v.text(at, "secondaryIdentifier", id.SecondaryIdentifier)
	typeName := "nameIdentifierType"
	if !local {
		typeName = v.name(typeName, "naturalPersonNameIdentifierType")
	}
	v.code(at.join(typeName), string(id.NameIdentifierType), id.NameIdentifierType.Valid(), "ALIA, BIRT, MAID, LEGL, MISC")
}

func (v *validator) legalPerson(at *path, l *LegalPerson, originator bool) {
	v.extra(at, reflect.ValueOf(l).Elem(), false)
	if l.Name == nil {
		v.fault(at.join("name"), "required")
	} else {
		v.legalName(at.join("name"), l.Name)
	}
	geog := false
	for i := range l.GeographicAddresses {
		a := &l.GeographicAddresses[i]
		v.address(at.join("geographicAddress").at(i), a)
		geog = geog || a.AddressType == AddressGeographic
	}
	v.text(at, v.name("customerNumber", "customerIdentification"), l.CustomerIdentification)
	if l.NationalIdentification != nil {
		v.nationalID(at.join("nationalIdentification"), l.NationalIdentification, true)
	}
	v.country(at.join("countryOfRegistration"), l.CountryOfRegistration)
	if originator && !geog && l.NationalIdentification == nil && l.CustomerIdentification == "" {
		v.fault(at, "an originator needs a geographicAddress of type GEOG, nationalIdentification or "+
			v.name("customerNumber", "customerIdentification")+" (IVMS101 C4)")
	}
}

func (v *validator) legalName(at *path, n *LegalPersonName) {
	v.extra(at, reflect.ValueOf(n).Elem(), false)
	ids := at.join("nameIdentifier")
	legal := false
	for i := range n.NameIdentifiers {
		id := &n.NameIdentifiers[i]
		v.legalNameID(ids.at(i), id)
		legal = legal || id.LegalPersonNameIdentifierType == LegalNameLegal && strings.TrimSpace(id.LegalPersonName) != ""
	}
	switch {
	case len(n.NameIdentifiers) == 0:
		v.fault(ids, "required")
	case !legal:
		v.fault(ids, "needs a name of type LEGL (IVMS101 C5)")
	}
	for i := range n.LocalNameIdentifiers {
		v.legalNameID(at.join("localNameIdentifier").at(i), &n.LocalNameIdentifiers[i])
	}
	for i := range n.PhoneticNameIdentifiers {
		v.legalNameID(at.join("phoneticNameIdentifier").at(i), &n.PhoneticNameIdentifiers[i])
	}
}

func (v *validator) legalNameID(at *path, id *LegalPersonNameID) {
	v.extra(at, reflect.ValueOf(id).Elem(), false)
	v.required(at, "legalPersonName", id.LegalPersonName)
	v.code(at.join("legalPersonNameIdentifierType"), string(id.LegalPersonNameIdentifierType),
		id.LegalPersonNameIdentifierType.Valid(), "LEGL, SHRT, TRAD")
}

func (v *validator) address(at *path, a *Address) {
	v.extra(at, reflect.ValueOf(a).Elem(), false)
	v.code(at.join("addressType"), string(a.AddressType), a.AddressType.Valid(), "HOME, BIZZ, GEOG")
	v.text(at, "department", a.Department)
	v.text(at, "subDepartment", a.SubDepartment)
	v.text(at, "streetName", a.StreetName)
	v.text(at, "buildingNumber", a.BuildingNumber)
	v.text(at, "buildingName", a.BuildingName)
	v.text(at, "floor", a.Floor)
	v.text(at, "postBox", a.PostBox)
	v.text(at, "room", a.Room)
	v.text(at, "postCode", a.PostCode)
	v.required(at, "townName", a.TownName)
	v.text(at, "townLocationName", a.TownLocationName)
	v.text(at, "districtName", a.DistrictName)
	v.text(at, "countrySubDivision", a.CountrySubDivision)
	if len(a.AddressLines) > maxAddressLines {
		v.fault(at.join("addressLine"), "at most "+strconv.Itoa(maxAddressLines)+" lines")
	}
	v.each(at, "addressLine", a.AddressLines)
	if len(a.AddressLines) == 0 && (a.StreetName == "" || a.BuildingNumber == "" && a.BuildingName == "") {
		v.fault(at, "needs an addressLine, or a streetName with a buildingNumber or buildingName (IVMS101 C8)")
	}
	if a.Country == "" {
		v.fault(at.join("country"), "required")
	}
	v.country(at.join("country"), a.Country)
}

func (v *validator) nationalID(at *path, n *NationalIdentification, legal bool) {
	v.extra(at, reflect.ValueOf(n).Elem(), false)
	v.required(at, "nationalIdentifier", n.NationalIdentifier)
	typePath := at.join("nationalIdentifierType")
	v.code(typePath, string(n.NationalIdentifierType), n.NationalIdentifierType.Valid(),
		"ARNU, CCPT, RAID, DRLC, FIIN, TXID, SOCS, IDCD, LEIX, MISC")
	v.country(at.join("countryOfIssue"), n.CountryOfIssue)
	ra := at.join("registrationAuthority")
	if n.RegistrationAuthority != "" && !validRegistrationAuthority(n.RegistrationAuthority) {
		v.fault(ra, "must be a GLEIF registration authority code, RA and six digits (IVMS101 C10)")
	}
	if n.NationalIdentifierType == IDLEI && n.NationalIdentifier != "" && !validLEI(n.NationalIdentifier) {
		v.fault(at.join("nationalIdentifier"), "must be an LEI: 20 letters and digits with valid check digits (IVMS101 C11, ISO 17442)")
	}
	if !legal {
		return
	}
	switch n.NationalIdentifierType {
	case IDRegistrationAuthority, IDMiscellaneous, IDLEI, IDTax, "":
	default:
		v.fault(typePath, "a legal person's must be RAID, MISC, LEIX or TXID (IVMS101 C7)")
	}
	if n.CountryOfIssue != "" {
		v.fault(at.join("countryOfIssue"), "a legal person's must not be set (IVMS101 C9)")
	}
	switch {
	case n.NationalIdentifierType == IDLEI && n.RegistrationAuthority != "":
		v.fault(ra, "must not be set with type LEIX (IVMS101 C9)")
	case n.NationalIdentifierType != IDLEI && n.RegistrationAuthority == "":
		v.fault(ra, "a legal person's is required unless the type is LEIX (IVMS101 C9)")
	}
}

func (v *validator) birth(at *path, d *DateAndPlaceOfBirth) {
	v.extra(at, reflect.ValueOf(d).Elem(), false)
	date := at.join("dateOfBirth")
	switch t, ok := parseDate(d.DateOfBirth); {
	case d.DateOfBirth == "":
		v.fault(date, "required")
	case !ok:
		v.fault(date, "must be a date written YYYY-MM-DD")
	case !t.Before(v.today):
		v.fault(date, "must be before today (IVMS101 C2)")
	}
	v.required(at, "placeOfBirth", d.PlaceOfBirth)
}

// parseDate parses IVMS101's Date, YYYY-MM-DD, a real date.
func parseDate(s string) (time.Time, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	for i := 0; i < len(s); i++ {
		if i != 4 && i != 7 && (s[i] < '0' || s[i] > '9') {
			return time.Time{}, false
		}
	}
	t, err := time.Parse(time.DateOnly, s)
	return t, err == nil
}

func (v *validator) transferPath(at *path, t *TransferPath) {
	v.extra(at, reflect.ValueOf(t).Elem(), false)
	at = at.join("transferPath")
	seen := make([]bool, len(t.Path))
	for i := range t.Path {
		iv := &t.Path[i]
		p := at.at(i)
		v.extra(p, reflect.ValueOf(iv).Elem(), false)
		if iv.Person == nil {
			v.fault(p.join("intermediaryVASP"), "required")
		} else {
			v.person(p.join("intermediaryVASP"), iv.Person, false)
		}
		if s := iv.Sequence; s < 0 || s >= len(t.Path) || seen[s] {
			v.fault(p.join("sequence"), "the intermediaries must be numbered 0, 1, 2 and on, each once (IVMS101 C12)")
		} else {
			seen[s] = true
		}
	}
}

func (v *validator) metadata(at *path, m *PayloadMetadata) {
	version := at.join("payloadVersion")
	if m == nil {
		if v.ed == Version2023 {
			v.fault(version, "required in the 2023 edition")
		}
		return
	}
	v.extra(at, reflect.ValueOf(m).Elem(), false)
	for i, t := range m.TransliterationMethods {
		if !ValidTransliterationMethod(t) {
			v.fault(at.join("transliterationMethod").at(i),
				"must be one of arab, aran, armn, cyrl, deva, geor, grek, hani, hebr, kana, kore, thai, othr")
		}
	}
	switch pv := Version(m.PayloadVersion); {
	case pv == "" && v.ed == Version2023:
		v.fault(version, "required in the 2023 edition")
	case pv == "":
	case !pv.Valid():
		v.fault(version, "must be 101 or 101.2023")
	case pv != v.ed:
		v.fault(version, "does not match the edition of the payload's names")
	}
}

// extra reports the members of v's Extra that the model names: a value of
// the wrong type (null and empty values are taken as missing), or a
// member given more than once. Each member is reported once, by the name
// MarshalJSON writes.
func (v *validator) extra(at *path, val reflect.Value, local bool) {
	s := specOf(val.Type())
	extra := val.Field(s.extra).Interface().(map[string]json.RawMessage)
	if len(extra) == 0 {
		return
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var done uint32
	for _, k := range keys {
		i, _, _ := match(s, k)
		if i < 0 || done&(1<<i) != 0 || isEmptyJSON(extra[k]) {
			continue
		}
		done |= 1 << i
		m := &s.members[i]
		p := at.join(m.nameFor(v.ed, local))
		if writes(val, m, s) {
			v.fault(p, "is given more than once (in another case, or in both editions' names)")
		} else {
			v.fault(p, "must be "+kindOf(val.Field(m.index).Type()))
		}
	}
}

// isEmptyJSON reports whether raw is null, "" or [].
func isEmptyJSON(raw json.RawMessage) bool {
	switch string(raw) {
	case "null", `""`, "[]":
		return true
	}
	return false
}

// kindOf describes the JSON type of a Go field's type.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "an integer"
	case reflect.Pointer:
		return "an object"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array of objects"
	}
	return "of another type"
}
