package ivms101

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
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

// decoder reads the JSON of the model's types from the nodes scan.go finds
// in one pass over the text (after json.Valid's): a member is read from
// its nodes, and one the model does not read is kept as its bytes, which
// the scan skipped over.
type decoder struct {
	data    []byte
	nodes   []node
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
	switch bytes.TrimLeft(data, " \t\r\n")[0] {
	case 'n':
		return true, nil
	case '{':
	default:
		return false, errNotObject
	}
	v.SetZero()
	s := specOf(v.Type())
	nodes := scanned.Get().(*[]node)
	d.data, d.nodes = data, scan(data, s, (*nodes)[:0])
	d.object(0, v, s, false)
	if cap(d.nodes) <= maxPooledNodes {
		*nodes = d.nodes
		scanned.Put(nodes)
	}
	d.data, d.nodes = nil, nil
	return false, nil
}

// scanned holds the node slices of earlier reads, for the next ones.
var scanned = sync.Pool{New: func() any { return new([]node) }}

// maxPooledNodes is the most nodes a slice put back in scanned holds: a
// large payload's are let go.
const maxPooledNodes = 4096

// raw returns the JSON text of node n.
func (d *decoder) raw(n int) []byte { return d.data[d.nodes[n].start:d.nodes[n].end] }

// kind returns the first byte of node n's text: '{', '[', '"', a digit, '-',
// 't', 'f' or 'n'.
func (d *decoder) kind(n int) byte { return d.data[d.nodes[n].start] }

// text returns the decoded string of node n, if it is a string.
func (d *decoder) text(n int) (string, bool) {
	if d.kind(n) != '"' {
		return "", false
	}
	return unquote(d.raw(n)), true
}

// memberRef is a member of an object being read: the nodes of its name
// and of its value, and the member of the model its name matches.
type memberRef struct {
	key          int  // the node of the name; the value's is the next one
	i            int  // the index in typeSpec.members, or -1
	via23, exact bool // as match reports them
	last         bool // no later member of the object has the same name
}

// object reads node n, a JSON object, into v, a settable struct of spec
// s; local reports whether v is a local or phonetic name. It reports
// false, having read nothing, when n is not an object or when maxObjects
// objects have been read already.
func (d *decoder) object(n int, v reflect.Value, s *typeSpec, local bool) bool {
	if d.read >= maxObjects || d.kind(n) != '{' {
		return false
	}
	d.read++
	var buf [16]memberRef
	members := d.members(n, s, buf[:0])
	var extra map[string]json.RawMessage
	var read uint32 // bit i: member i was read
	// Members named exactly as the standard names them come first, then
	// the others, each in the order given; the first that can be read is
	// read, the others are kept in Extra. Of a member given twice under
	// one name, only the last counts, as encoding/json and JavaScript's
	// JSON.parse read it, so that screening sees the identity the
	// sender's own parser sees.
	for _, exactPass := range [2]bool{true, false} {
		for _, mem := range members {
			if mem.exact != exactPass {
				continue
			}
			if mem.i >= 0 && read&(1<<mem.i) == 0 && mem.last {
				m := &s.members[mem.i]
				if d.value(mem.key+1, v.Field(m.index), m) {
					read |= 1 << mem.i
					if mem.via23 && m.marks && !local {
						d.saw2023 = true
					}
					continue
				}
			}
			if extra == nil {
				extra = make(map[string]json.RawMessage)
			}
			extra[unquote(d.raw(mem.key))] = d.canonical(mem.key + 1)
		}
	}
	if extra != nil {
		v.Field(s.extra).Set(reflect.ValueOf(extra))
	}
	if s.wrapper && v.Field(s.members[0].index).IsNil() && extra != nil {
		d.flatPerson(n, v, s)
	}
	return true
}

// members appends to dst the members of node n, an object whose struct
// has spec s, in order.
func (d *decoder) members(n int, s *typeSpec, dst []memberRef) []memberRef {
	matched := 0
	for k := n + 1; k < d.nodes[n].next; k = d.nodes[k+1].next {
		mem := memberRef{key: k, last: true}
		mem.i, mem.via23, mem.exact = matchName(s, d.raw(k))
		if mem.i >= 0 {
			matched++
		}
		dst = append(dst, mem)
	}
	d.markLast(dst, matched)
	return dst
}

// markLast clears the last of each of members, of which matched match a
// member of the model, that a later one has the same name as. Only those
// that match count: the others are all kept in Extra, where a later one
// replaces an earlier one.
func (d *decoder) markLast(members []memberRef, matched int) {
	if matched > 16 { // a hostile payload's thousands: a map, not their square
		last := make(map[string]int, matched)
		for j, m := range members {
			if m.i >= 0 {
				last[unquote(d.raw(m.key))] = j
			}
		}
		for j := range members {
			members[j].last = members[j].i < 0 || last[unquote(d.raw(members[j].key))] == j
		}
		return
	}
	for j := range members {
		for k := j + 1; k < len(members) && members[j].i >= 0; k++ {
			// The same name matches the same member.
			if members[k].i == members[j].i && d.sameName(members[j].key, members[k].key) {
				members[j].last = false
				break
			}
		}
	}
}

// sameName reports whether nodes a and b, strings, decode to the same text.
func (d *decoder) sameName(a, b int) bool {
	ra, rb := d.raw(a), d.raw(b)
	if plain(ra) && plain(rb) {
		return bytes.Equal(ra, rb)
	}
	return unquote(ra) == unquote(rb)
}

// flatPerson reads an OriginatingVASP or BeneficiaryVASP that came as the
// person itself ({"legalPerson": ...}, as some networks send it), when it
// holds a natural or legal person.
func (d *decoder) flatPerson(n int, v reflect.Value, s *typeSpec) {
	saw := d.saw2023
	p := new(Person)
	d.object(n, reflect.ValueOf(p).Elem(), s.members[0].elem, false)
	if p.NaturalPerson == nil && p.LegalPerson == nil {
		d.saw2023 = saw
		return
	}
	v.Field(s.members[0].index).Set(reflect.ValueOf(p))
	v.Field(s.extra).SetZero()
}

// value reads node n into f, the field of member m, and reports whether
// it did: whether n has the field's type and is not empty.
func (d *decoder) value(n int, f reflect.Value, m *member) bool {
	switch f.Kind() {
	case reflect.String:
		s, ok := d.text(n)
		if !ok || s == "" {
			return false
		}
		f.SetString(s)
		return true
	case reflect.Int:
		i, ok := intValue(d.raw(n))
		if ok {
			f.SetInt(int64(i))
		}
		return ok
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.String {
			return d.strings(n, f.Addr().Interface().(*[]string))
		}
		return d.objects(n, f, m.elem, m.local)
	case reflect.Pointer:
		merge := d.kind(n) == '[' && m.elem.mergeable
		if !merge && d.kind(n) != '{' {
			return false
		}
		elem := reflect.New(f.Type().Elem())
		if merge && !d.merged(n, elem.Elem(), m.elem) || !merge && !d.object(n, elem.Elem(), m.elem, m.local) {
			return false
		}
		f.Set(elem)
		return true
	}
	return false
}

// objectArray returns the number of elements of node n when it is a
// non-empty array of objects that the bound of maxObjects leaves room for.
func (d *decoder) objectArray(n int) (int, bool) {
	if d.kind(n) != '[' {
		return 0, false
	}
	count := 0
	for e := n + 1; e < d.nodes[n].next; e = d.nodes[e].next {
		if d.kind(e) != '{' {
			return 0, false
		}
		count++
	}
	return count, count > 0 && d.read+count <= maxObjects
}

// objects reads node n, a non-empty array of objects, into f, a nil slice
// of structs of spec s. It reads nothing into f when an element cannot
// be read (the objects of the elements before it used up maxObjects):
// the member is then kept whole in Extra, where Validate finds it.
func (d *decoder) objects(n int, f reflect.Value, s *typeSpec, local bool) bool {
	count, ok := d.objectArray(n)
	if !ok {
		return false
	}
	saw := d.saw2023
	f.Grow(count)
	f.SetLen(count)
	for i, e := 0, n+1; e < d.nodes[n].next; i, e = i+1, d.nodes[e].next {
		if !d.object(e, f.Index(i), s, local) {
			d.saw2023 = saw
			f.SetZero()
			return false
		}
	}
	return true
}

// merged reads node n, a non-empty array of name objects, into v, a name
// of spec s, as one name: their lists appended in order, the first of
// their other members kept. It reports false when a name object cannot be
// read (the objects before it used up maxObjects), as objects does; v is
// then to be dropped.
func (d *decoder) merged(n int, v reflect.Value, s *typeSpec) bool {
	if _, ok := d.objectArray(n); !ok {
		return false
	}
	saw := d.saw2023
	for e := n + 1; e < d.nodes[n].next; e = d.nodes[e].next {
		one := v
		if e > n+1 {
			one = reflect.New(v.Type()).Elem()
		}
		if !d.object(e, one, s, false) {
			d.saw2023 = saw
			return false
		}
		if e > n+1 {
			mergeName(v, one, s)
		}
	}
	return true
}

// mergeName appends the lists of one, a name of spec s, to those of v,
// and adds to v's Extra the members of one's that v's does not hold.
func mergeName(v, one reflect.Value, s *typeSpec) {
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

// strings reads node n, a non-empty array of strings or a non-empty
// string (taken as an array of one), into *f.
func (d *decoder) strings(n int, f *[]string) bool {
	if s, ok := d.text(n); ok {
		if s == "" {
			return false
		}
		*f = []string{s}
		return true
	}
	if d.kind(n) != '[' || n+1 == d.nodes[n].next {
		return false
	}
	count := 0
	for e := n + 1; e < d.nodes[n].next; e = d.nodes[e].next {
		if d.kind(e) != '"' {
			return false
		}
		count++
	}
	out := make([]string, 0, count)
	for e := n + 1; e < d.nodes[n].next; e = d.nodes[e].next {
		out = append(out, unquote(d.raw(e)))
	}
	*f = out
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

// canonical returns the text of node n compacted and with <, >, &, U+2028
// and U+2029 in strings escaped, as encoding/json writes JSON, so that
// what Extra holds is written back, and read again, byte for byte.
func (d *decoder) canonical(n int) json.RawMessage {
	raw := d.raw(n)
	var c bytes.Buffer
	c.Grow(len(raw))
	if k := raw[0]; k == '{' || k == '[' {
		_ = json.Compact(&c, raw) // raw is valid JSON
	} else {
		c.Write(raw)
	}
	if !bytes.ContainsAny(c.Bytes(), "<>&\u2028\u2029") {
		return c.Bytes()
	}
	var h bytes.Buffer
	json.HTMLEscape(&h, c.Bytes())
	return h.Bytes()
}
