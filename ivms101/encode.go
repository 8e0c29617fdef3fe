package ivms101

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
)

// MarshalJSON writes p in the names of p.Version (Version2023, or else
// the 2020 edition): the model's members in IVMS101's order, empty ones
// left out, then the members of Extra sorted by name, except those the
// model writes itself.
func (p Payload) MarshalJSON() ([]byte, error) { return marshal(reflect.ValueOf(p), p.Version) }

// MarshalJSON writes o in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (o Originator) MarshalJSON() ([]byte, error) { return marshal(reflect.ValueOf(o), Version2020) }

// MarshalJSON writes b in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (b Beneficiary) MarshalJSON() ([]byte, error) { return marshal(reflect.ValueOf(b), Version2020) }

// MarshalJSON writes v in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (v OriginatingVASP) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(v), Version2020)
}

// MarshalJSON writes v in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (v BeneficiaryVASP) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(v), Version2020)
}

// MarshalJSON writes t in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (t TransferPath) MarshalJSON() ([]byte, error) { return marshal(reflect.ValueOf(t), Version2020) }

// MarshalJSON writes v in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (v IntermediaryVASP) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(v), Version2020)
}

// MarshalJSON writes m; its names are the same in both editions.
func (m PayloadMetadata) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(m), Version2020)
}

// MarshalJSON writes p in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (p Person) MarshalJSON() ([]byte, error) { return marshal(reflect.ValueOf(p), Version2020) }

// MarshalJSON writes p in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (p NaturalPerson) MarshalJSON() ([]byte, error) { return marshal(reflect.ValueOf(p), Version2020) }

// MarshalJSON writes n in the 2020 edition's names; a Payload writes it
// in its own edition's.
func (n NaturalPersonName) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(n), Version2020)
}

// MarshalJSON writes n in the 2020 edition's names (nameIdentifierType);
// a Payload writes it in its own edition's.
func (n NaturalPersonNameID) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(n), Version2020)
}

// MarshalJSON writes p in the 2020 edition's names (customerNumber); a
// Payload writes it in its own edition's.
func (p LegalPerson) MarshalJSON() ([]byte, error) { return marshal(reflect.ValueOf(p), Version2020) }

// MarshalJSON writes n; its names are the same in both editions.
func (n LegalPersonName) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(n), Version2020)
}

// MarshalJSON writes n; its names are the same in both editions.
func (n LegalPersonNameID) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(n), Version2020)
}

// MarshalJSON writes a; its names are the same in both editions.
func (a Address) MarshalJSON() ([]byte, error) { return marshal(reflect.ValueOf(a), Version2020) }

// MarshalJSON writes n; its names are the same in both editions.
func (n NationalIdentification) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(n), Version2020)
}

// MarshalJSON writes d; its names are the same in both editions.
func (d DateAndPlaceOfBirth) MarshalJSON() ([]byte, error) {
	return marshal(reflect.ValueOf(d), Version2020)
}

func marshal(v reflect.Value, ed Version) ([]byte, error) {
	e := encoder{ed: ed}
	if err := e.object(v, false); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

// errExtra is the error of MarshalJSON when an Extra member is not JSON.
// It does not name the member: its name may be anything a sender wrote.
var errExtra = errors.New("ivms101: a member of Extra is not valid JSON")

// encoder writes the JSON of the model's types in edition ed.
type encoder struct {
	buf     bytes.Buffer
	scratch bytes.Buffer
	ed      Version
}

// object writes v, a struct of the model; local reports whether v is a
// local or phonetic name.
func (e *encoder) object(v reflect.Value, local bool) error {
	s := specOf(v.Type())
	e.buf.WriteByte('{')
	var names [16]string // the names written, at most one per member
	written := names[:0]
	for i := range s.members {
		m := &s.members[i]
		if !writes(v, m, s) {
			continue
		}
		name := m.nameFor(e.ed, local)
		e.key(name, len(written) > 0)
		written = append(written, name)
		if err := e.value(v.Field(m.index), m); err != nil {
			return err
		}
	}
	extra := v.Field(s.extra).Interface().(map[string]json.RawMessage)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !slices.Contains(written, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for i, k := range keys {
		e.key(k, i > 0 || len(written) > 0)
		e.scratch.Reset()
		if err := json.Compact(&e.scratch, extra[k]); err != nil {
			return errExtra
		}
		json.HTMLEscape(&e.buf, e.scratch.Bytes()) // as encoding/json writes strings
	}
	e.buf.WriteByte('}')
	return nil
}

// key writes a member's name, after a comma if comma.
func (e *encoder) key(name string, comma bool) {
	if comma {
		e.buf.WriteByte(',')
	}
	e.string(name)
	e.buf.WriteByte(':')
}

func (e *encoder) string(s string) {
	b, _ := json.Marshal(s) // a string always marshals
	e.buf.Write(b)
}

// value writes f, the field of member m.
func (e *encoder) value(f reflect.Value, m *member) error {
	switch f.Kind() {
	case reflect.String:
		e.string(f.String())
	case reflect.Int:
		e.buf.WriteString(strconv.FormatInt(f.Int(), 10))
	case reflect.Pointer:
		return e.object(f.Elem(), m.local)
	case reflect.Slice:
		e.buf.WriteByte('[')
		for i := range f.Len() {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			if el := f.Index(i); el.Kind() == reflect.String {
				e.string(el.String())
			} else if err := e.object(el, m.local); err != nil {
				return err
			}
		}
		e.buf.WriteByte(']')
	}
	return nil
}

// writes reports whether MarshalJSON writes member m of v, a struct of
// spec s: when it is set. IntermediaryVASP.Sequence is written even when
// it is 0, unless Extra holds a "sequence" member that is not an int (one
// of the wrong type, read), which is written instead.
func writes(v reflect.Value, m *member, s *typeSpec) bool {
	f := v.Field(m.index)
	switch f.Kind() {
	case reflect.String, reflect.Slice:
		return f.Len() > 0
	case reflect.Pointer:
		return !f.IsNil()
	case reflect.Int:
		if f.Int() != 0 {
			return true
		}
		raw, inExtra := v.Field(s.extra).Interface().(map[string]json.RawMessage)[m.name]
		_, isInt := intValue(raw)
		return !inExtra || isInt
	}
	return false
}

// normalize removes from the Extra of v, a struct of the model, and of
// everything under it, the members that MarshalJSON in edition ed would
// not write because the model writes the same name: what a payload read
// holds is then exactly what reading it again after writing gives.
func normalize(v reflect.Value, ed Version, local bool) {
	s := specOf(v.Type())
	ex := v.Field(s.extra)
	extra := ex.Interface().(map[string]json.RawMessage)
	for i := range s.members {
		m := &s.members[i]
		f := v.Field(m.index)
		if len(extra) > 0 && writes(v, m, s) {
			delete(extra, m.nameFor(ed, local))
		}
		switch {
		case f.Kind() == reflect.Pointer && !f.IsNil():
			normalize(f.Elem(), ed, m.local)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			for j := range f.Len() {
				normalize(f.Index(j), ed, m.local)
			}
		}
	}
	if extra != nil && len(extra) == 0 {
		ex.SetZero()
	}
}
