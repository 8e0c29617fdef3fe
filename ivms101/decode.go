package ivms101

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// ErrMalformed is matched (with errors.Is) by the error of Parse and of
// UnmarshalJSON when the input is not JSON, or its top-level value is not
// an object. The error never quotes the input.
var ErrMalformed = errors.New("ivms101: malformed payload")

var (
	errNotJSON   = fmt.Errorf("%w: not valid JSON", ErrMalformed)
	errNotObject = fmt.Errorf("%w: not a JSON object", ErrMalformed)
)

// Parse reads an IVMS101 payload of either edition, leniently and
// losslessly (see the package documentation). It fails, with an error
// matching ErrMalformed, only when data is not JSON or not a JSON object.
// The payload is not validated: see [Payload.Validate].
func Parse(data []byte) (*Payload, error) {
	p := new(Payload)
	null, err := p.decode(data)
	switch {
	case err != nil:
		return nil, err
	case null:
		return nil, errNotObject
	}
	return p, nil
}

// UnmarshalJSON reads p from an IVMS101 payload of either edition and sets
// p.Version, as Parse does; it replaces p's contents. JSON null leaves p
// as it is.
func (p *Payload) UnmarshalJSON(data []byte) error {
	_, err := p.decode(data)
	return err
}

func (p *Payload) decode(data []byte) (null bool, err error) {
	var d decoder
	v := reflect.ValueOf(p).Elem()
	if null, err = d.top(data, v); err != nil || null {
		return null, err
	}
	p.Version = Version2020
	if d.saw2023 || p.PayloadMetadata != nil && p.PayloadMetadata.PayloadVersion == string(Version2023) {
		p.Version = Version2023
	}
	normalize(v, p.Version, false)
	return false, nil
}

// UnmarshalJSON reads o leniently and losslessly, in either edition's
// names; it replaces o's contents. JSON null leaves o as it is.
func (o *Originator) UnmarshalJSON(data []byte) error { return unmarshal(data, o) }

// UnmarshalJSON reads b leniently and losslessly, in either edition's
// names; it replaces b's contents. JSON null leaves b as it is.
func (b *Beneficiary) UnmarshalJSON(data []byte) error { return unmarshal(data, b) }

// UnmarshalJSON reads v leniently and losslessly; it replaces v's
// contents. JSON null leaves v as it is.
func (v *OriginatingVASP) UnmarshalJSON(data []byte) error { return unmarshal(data, v) }

// UnmarshalJSON reads v leniently and losslessly; it replaces v's
// contents. JSON null leaves v as it is.
func (v *BeneficiaryVASP) UnmarshalJSON(data []byte) error { return unmarshal(data, v) }

// UnmarshalJSON reads t leniently and losslessly; it replaces t's
// contents. JSON null leaves t as it is.
func (t *TransferPath) UnmarshalJSON(data []byte) error { return unmarshal(data, t) }

// UnmarshalJSON reads v leniently and losslessly; it replaces v's
// contents. JSON null leaves v as it is.
func (v *IntermediaryVASP) UnmarshalJSON(data []byte) error { return unmarshal(data, v) }

// UnmarshalJSON reads m leniently and losslessly; it replaces m's
// contents. JSON null leaves m as it is.
func (m *PayloadMetadata) UnmarshalJSON(data []byte) error { return unmarshal(data, m) }

// UnmarshalJSON reads p leniently and losslessly, in either edition's
// names; it replaces p's contents. JSON null leaves p as it is.
func (p *Person) UnmarshalJSON(data []byte) error { return unmarshal(data, p) }

// UnmarshalJSON reads p leniently and losslessly, in either edition's
// names; it replaces p's contents. JSON null leaves p as it is.
func (p *NaturalPerson) UnmarshalJSON(data []byte) error { return unmarshal(data, p) }

// UnmarshalJSON reads n leniently and losslessly, in either edition's
// names; it replaces n's contents. JSON null leaves n as it is.
func (n *NaturalPersonName) UnmarshalJSON(data []byte) error { return unmarshal(data, n) }

// UnmarshalJSON reads n leniently and losslessly, in either edition's
// names; it replaces n's contents. JSON null leaves n as it is.
func (n *NaturalPersonNameID) UnmarshalJSON(data []byte) error { return unmarshal(data, n) }

// UnmarshalJSON reads p leniently and losslessly, in either edition's
// names; it replaces p's contents. JSON null leaves p as it is.
func (p *LegalPerson) UnmarshalJSON(data []byte) error { return unmarshal(data, p) }

// UnmarshalJSON reads n leniently and losslessly; it replaces n's
// contents. JSON null leaves n as it is.
func (n *LegalPersonName) UnmarshalJSON(data []byte) error { return unmarshal(data, n) }

// UnmarshalJSON reads n leniently and losslessly; it replaces n's
// contents. JSON null leaves n as it is.
func (n *LegalPersonNameID) UnmarshalJSON(data []byte) error { return unmarshal(data, n) }

// UnmarshalJSON reads a leniently and losslessly; it replaces a's
// contents. JSON null leaves a as it is.
func (a *Address) UnmarshalJSON(data []byte) error { return unmarshal(data, a) }

// UnmarshalJSON reads n leniently and losslessly; it replaces n's
// contents. JSON null leaves n as it is.
func (n *NationalIdentification) UnmarshalJSON(data []byte) error { return unmarshal(data, n) }

// UnmarshalJSON reads d leniently and losslessly; it replaces d's
// contents. JSON null leaves d as it is.
func (d *DateAndPlaceOfBirth) UnmarshalJSON(data []byte) error { return unmarshal(data, d) }

// unmarshal reads a type other than Payload, which on its own does not
// know the payload's edition: what it keeps in Extra is decided for the
// 2020 names, the ones its MarshalJSON writes.
func unmarshal[T any](data []byte, v *T) error {
	var d decoder
	rv := reflect.ValueOf(v).Elem()
	null, err := d.top(data, rv)
	if err == nil && !null {
		normalize(rv, Version2020, false)
	}
	return err
}

// decoder reads the JSON of the model's types.
type decoder struct {
	saw2023 bool // a name only the 2023 edition writes was read
	read    int  // the objects read into the model so far
}

// maxObjects is how many JSON objects one Parse reads into the model: far
// more than any payload names (a person, its names, addresses and
// identifiers are a dozen), few enough that a hostile megabyte of empty
// name identifiers cannot cost hundreds of megabytes of structs. A member
// whose objects would go beyond it is kept, as its JSON text, in Extra,
// as a member of the wrong type is (Validate reports it).
const maxObjects = 4096

// top reads data, a whole JSON text, into v, the struct of a type of the
// model, replacing its contents; it reports whether data is JSON null,
// which leaves v as it is.
func (d *decoder) top(data []byte, v reflect.Value) (null bool, err error) {
	if !json.Valid(data) {
		return false, errNotJSON
	}
	data = bytes.TrimLeft(data, " \t\r\n")
	switch data[0] {
	case 'n':
		return true, nil
	case '{':
	default:
		return false, errNotObject
	}
	v.SetZero()
	d.object(data, v, false)
	return false, nil
}

// object reads raw, a JSON object, into v, a settable struct of the
// model; local reports whether v is a local or phonetic name. It reports
// false, having read nothing, when raw is not an object or when
// maxObjects objects have been read already.
func (d *decoder) object(raw []byte, v reflect.Value, local bool) bool {
	if d.read >= maxObjects {
		return false
	}
	members, ok := objectMembers(raw)
	if !ok {
		return false
	}
	d.read++
	s := specOf(v.Type())
	var extra map[string]json.RawMessage
	var read uint32 // bit i: member i was read
	// Members named exactly as the standard names them come first, then
	// the others, each in the order given; the first that can be read is
	// read, the others are kept in Extra. Of a member given twice under
	// one name, only the last counts, as encoding/json and JavaScript's
	// JSON.parse read it, so that screening sees the identity the
	// sender's own parser sees.
	last := make(map[string]int, len(members)) // the index of each key's last occurrence
	for k, mem := range members {
		last[mem.key] = k
	}
	for _, exactPass := range []bool{true, false} {
		for k, mem := range members {
			i, via23, exact := s.match(mem.key)
			if exact != exactPass {
				continue
			}
			if i >= 0 && read&(1<<i) == 0 && last[mem.key] == k {
				m := &s.members[i]
				if d.value(mem.value, v.Field(m.index), m) {
					read |= 1 << i
					if via23 && m.marks && !local {
						d.saw2023 = true
					}
					continue
				}
			}
			if extra == nil {
				extra = make(map[string]json.RawMessage)
			}
			extra[mem.key] = canonical(mem.value)
		}
	}
	if extra != nil {
		v.Field(s.extra).Set(reflect.ValueOf(extra))
	}
	if s.wrapper && v.Field(s.members[0].index).IsNil() && extra != nil {
		d.flatPerson(raw, v, s)
	}
	return true
}

// flatPerson reads an OriginatingVASP or BeneficiaryVASP that came as the
// person itself ({"legalPerson": ...}, as some networks send it), when it
// holds a natural or legal person.
func (d *decoder) flatPerson(raw []byte, v reflect.Value, s *typeSpec) {
	saw := d.saw2023
	p := new(Person)
	d.object(raw, reflect.ValueOf(p).Elem(), false)
	if p.NaturalPerson == nil && p.LegalPerson == nil {
		d.saw2023 = saw
		return
	}
	v.Field(s.members[0].index).Set(reflect.ValueOf(p))
	v.Field(s.extra).SetZero()
}

// value reads raw into f, the field of member m, and reports whether it
// did: whether raw has the field's type and is not empty.
func (d *decoder) value(raw []byte, f reflect.Value, m *member) bool {
	switch f.Kind() {
	case reflect.String:
		s, ok := stringValue(raw)
		if !ok || s == "" {
			return false
		}
		f.SetString(s)
		return true
	case reflect.Int:
		n, ok := intValue(raw)
		if ok {
			f.SetInt(int64(n))
		}
		return ok
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.String {
			return stringsValue(raw, f)
		}
		return d.objects(raw, f, m.local)
	case reflect.Pointer:
		elem := reflect.New(f.Type().Elem())
		if raw[0] == '[' && specOf(f.Type().Elem()).mergeable {
			if !d.merged(raw, elem.Elem()) {
				return false
			}
		} else if !d.object(raw, elem.Elem(), m.local) {
			return false
		}
		f.Set(elem)
		return true
	}
	return false
}

// objectArray returns the elements of raw when it is a non-empty array of
// objects that the bound of maxObjects leaves room for.
func (d *decoder) objectArray(raw []byte) ([][]byte, bool) {
	elems, ok := arrayElements(raw)
	if !ok || len(elems) == 0 || d.read+len(elems) > maxObjects {
		return nil, false
	}
	for _, e := range elems {
		if e[0] != '{' {
			return nil, false
		}
	}
	return elems, true
}

// objects reads raw, a non-empty array of objects, into f, a slice of
// structs of the model. It reads nothing into f when an element cannot
// be read (the objects of the elements before it used up maxObjects):
// the member is then kept whole in Extra, where Validate finds it.
func (d *decoder) objects(raw []byte, f reflect.Value, local bool) bool {
	elems, ok := d.objectArray(raw)
	if !ok {
		return false
	}
	saw := d.saw2023
	s := reflect.MakeSlice(f.Type(), len(elems), len(elems))
	for i, e := range elems {
		if !d.object(e, s.Index(i), local) {
			d.saw2023 = saw
			return false
		}
	}
	f.Set(s)
	return true
}

// merged reads raw, a non-empty array of name objects, into v as one
// name: their lists appended in order, the first of their other members
// kept. It reports false when a name object cannot be read (the objects
// before it used up maxObjects), as objects does; v is then to be
// dropped.
func (d *decoder) merged(raw []byte, v reflect.Value) bool {
	elems, ok := d.objectArray(raw)
	if !ok {
		return false
	}
	saw := d.saw2023
	s := specOf(v.Type())
	for i, e := range elems {
		one := v
		if i > 0 {
			one = reflect.New(v.Type()).Elem()
		}
		if !d.object(e, one, false) {
			d.saw2023 = saw
			return false
		}
		if i == 0 {
			continue
		}
		for _, m := range s.members {
			f := v.Field(m.index)
			f.Set(reflect.AppendSlice(f, one.Field(m.index)))
		}
		for k, x := range one.Field(s.extra).Interface().(map[string]json.RawMessage) {
			ex := v.Field(s.extra)
			if ex.IsNil() {
				ex.Set(reflect.ValueOf(map[string]json.RawMessage{}))
			}
			if m := ex.Interface().(map[string]json.RawMessage); m[k] == nil {
				m[k] = x
			}
		}
	}
	return true
}

// stringsValue reads raw, a non-empty array of strings or a non-empty
// string (taken as an array of one), into f, a []string.
func stringsValue(raw []byte, f reflect.Value) bool {
	if s, ok := stringValue(raw); ok {
		if s == "" {
			return false
		}
		f.Set(reflect.ValueOf([]string{s}))
		return true
	}
	elems, ok := arrayElements(raw)
	if !ok || len(elems) == 0 {
		return false
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], ok = stringValue(e); !ok {
			return false
		}
	}
	f.Set(reflect.ValueOf(out))
	return true
}

// intValue decodes raw if it is a JSON number that is an int.
func intValue(raw []byte) (int, bool) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	n, err := strconv.Atoi(string(raw))
	return n, err == nil
}

// stringValue decodes raw if it is a JSON string.
func stringValue(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// rawMember is a member of a JSON object: its name, decoded, and its
// value, as JSON text.
type rawMember struct {
	key   string
	value []byte
}

// objectMembers returns the members of raw, a JSON object, in order.
func objectMembers(raw []byte) ([]rawMember, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var members []rawMember
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		members = append(members, rawMember{key, v})
	}
	return members, true
}

// arrayElements returns the elements of raw, a JSON array, in order.
func arrayElements(raw []byte) ([][]byte, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var elems [][]byte
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		elems = append(elems, v)
	}
	return elems, true
}

// canonical returns raw, valid JSON, compacted and with <, >, &, U+2028
// and U+2029 in strings escaped, as encoding/json writes JSON, so that
// what Extra holds is written back, and read again, byte for byte.
func canonical(raw []byte) json.RawMessage {
	var c, h bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	json.HTMLEscape(&h, c.Bytes())
	return h.Bytes()
}
