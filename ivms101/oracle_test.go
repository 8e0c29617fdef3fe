package ivms101

// The decoder as it was before #42, kept as the oracle of
// FuzzParseSameAsBefore: one json.Decoder per nesting level, each subtree
// copied. Only the names differ from the code it was.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// oldParse is Parse as it was.
func oldParse(data []byte) (*Payload, error) {
	p := new(Payload)
	var d oldDecoder
	v := reflect.ValueOf(p).Elem()
	null, err := d.top(data, v)
	switch {
	case err != nil:
		return nil, err
	case null:
		return nil, errNotObject
	}
	p.Version = Version2020
	if d.saw2023 || p.PayloadMetadata != nil && p.PayloadMetadata.PayloadVersion == string(Version2023) {
		p.Version = Version2023
	}
	normalize(v, p.Version, false)
	return p, nil
}

// oldDecoder reads the JSON of the model's types.
type oldDecoder struct {
	saw2023 bool // a name only the 2023 edition writes was read
	read    int  // the objects read into the model so far
}

// top reads data, a whole JSON text, into v, the struct of a type of the
// model, replacing its contents; it reports whether data is JSON null,
// which leaves v as it is.
func (d *oldDecoder) top(data []byte, v reflect.Value) (null bool, err error) {
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
func (d *oldDecoder) object(raw []byte, v reflect.Value, local bool) bool {
	if d.read >= maxObjects {
		return false
	}
	members, ok := oldObjectMembers(raw)
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
			i, via23, exact := match(s, mem.key)
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
			extra[mem.key] = oldCanonical(mem.value)
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
func (d *oldDecoder) flatPerson(raw []byte, v reflect.Value, s *typeSpec) {
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
func (d *oldDecoder) value(raw []byte, f reflect.Value, m *member) bool {
	switch f.Kind() {
	case reflect.String:
		s, ok := oldStringValue(raw)
		if !ok || s == "" {
			return false
		}
		f.SetString(s)
		return true
	case reflect.Int:
		n, ok := oldIntValue(raw)
		if ok {
			f.SetInt(int64(n))
		}
		return ok
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.String {
			return oldStringsValue(raw, f)
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
func (d *oldDecoder) objectArray(raw []byte) ([][]byte, bool) {
	elems, ok := oldArrayElements(raw)
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
func (d *oldDecoder) objects(raw []byte, f reflect.Value, local bool) bool {
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
func (d *oldDecoder) merged(raw []byte, v reflect.Value) bool {
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

// oldStringsValue reads raw, a non-empty array of strings or a non-empty
// string (taken as an array of one), into f, a []string.
func oldStringsValue(raw []byte, f reflect.Value) bool {
	if s, ok := oldStringValue(raw); ok {
		if s == "" {
			return false
		}
		f.Set(reflect.ValueOf([]string{s}))
		return true
	}
	elems, ok := oldArrayElements(raw)
	if !ok || len(elems) == 0 {
		return false
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], ok = oldStringValue(e); !ok {
			return false
		}
	}
	f.Set(reflect.ValueOf(out))
	return true
}

// oldIntValue decodes raw if it is a JSON number that is an int.
func oldIntValue(raw []byte) (int, bool) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	n, err := strconv.Atoi(string(raw))
	return n, err == nil
}

// oldStringValue decodes raw if it is a JSON string.
func oldStringValue(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// oldRawMember is a member of a JSON object: its name, decoded, and its
// value, as JSON text.
type oldRawMember struct {
	key   string
	value []byte
}

// oldObjectMembers returns the members of raw, a JSON object, in order.
func oldObjectMembers(raw []byte) ([]oldRawMember, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var members []oldRawMember
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
		members = append(members, oldRawMember{key, v})
	}
	return members, true
}

// oldArrayElements returns the elements of raw, a JSON array, in order.
func oldArrayElements(raw []byte) ([][]byte, bool) {
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

// oldCanonical returns raw, valid JSON, compacted and with <, >, &, U+2028
// and U+2029 in strings escaped, as encoding/json writes JSON, so that
// what Extra holds is written back, and read again, byte for byte.
func oldCanonical(raw []byte) json.RawMessage {
	var c, h bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	json.HTMLEscape(&h, c.Bytes())
	return h.Bytes()
}

// oldUnmarshal is unmarshal as it was.
func oldUnmarshal[T any](data []byte, v *T) error {
	var d oldDecoder
	rv := reflect.ValueOf(v).Elem()
	null, err := d.top(data, rv)
	if err == nil && !null {
		normalize(rv, Version2020, false)
	}
	return err
}
