package ivms101

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
)

// The fmt and log/slog forms. They show the set fields of the model by
// their Go names (fmt) or JSON names (slog), with a value only when it is
// a code of IVMS101's code lists or a country (see member.show), or a
// transfer path's sequence; every other set value is "[redacted]", and
// Extra only says how many members it holds. Empty fields are left out.

const redacted = "[redacted]"

// Format implements fmt.Formatter: every verb prints the redacted form,
// %#v after the type's name.
func (p Payload) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(p)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (p Payload) LogValue() slog.Value { return logValue(reflect.ValueOf(p)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (o Originator) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(o)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (o Originator) LogValue() slog.Value { return logValue(reflect.ValueOf(o)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (b Beneficiary) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(b)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (b Beneficiary) LogValue() slog.Value { return logValue(reflect.ValueOf(b)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (v OriginatingVASP) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(v)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (v OriginatingVASP) LogValue() slog.Value { return logValue(reflect.ValueOf(v)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (v BeneficiaryVASP) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(v)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (v BeneficiaryVASP) LogValue() slog.Value { return logValue(reflect.ValueOf(v)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (t TransferPath) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(t)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (t TransferPath) LogValue() slog.Value { return logValue(reflect.ValueOf(t)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (v IntermediaryVASP) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(v)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (v IntermediaryVASP) LogValue() slog.Value { return logValue(reflect.ValueOf(v)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (m PayloadMetadata) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(m)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (m PayloadMetadata) LogValue() slog.Value { return logValue(reflect.ValueOf(m)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (p Person) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(p)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (p Person) LogValue() slog.Value { return logValue(reflect.ValueOf(p)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (p NaturalPerson) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(p)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (p NaturalPerson) LogValue() slog.Value { return logValue(reflect.ValueOf(p)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (n NaturalPersonName) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(n)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (n NaturalPersonName) LogValue() slog.Value { return logValue(reflect.ValueOf(n)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (n NaturalPersonNameID) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(n)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (n NaturalPersonNameID) LogValue() slog.Value { return logValue(reflect.ValueOf(n)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (p LegalPerson) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(p)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (p LegalPerson) LogValue() slog.Value { return logValue(reflect.ValueOf(p)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (n LegalPersonName) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(n)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (n LegalPersonName) LogValue() slog.Value { return logValue(reflect.ValueOf(n)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (n LegalPersonNameID) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(n)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (n LegalPersonNameID) LogValue() slog.Value { return logValue(reflect.ValueOf(n)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (a Address) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(a)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (a Address) LogValue() slog.Value { return logValue(reflect.ValueOf(a)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (n NationalIdentification) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(n)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (n NationalIdentification) LogValue() slog.Value { return logValue(reflect.ValueOf(n)) }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (d DateAndPlaceOfBirth) Format(f fmt.State, verb rune) { format(f, verb, reflect.ValueOf(d)) }

// LogValue implements slog.LogValuer: the redacted form, as a group.
func (d DateAndPlaceOfBirth) LogValue() slog.Value { return logValue(reflect.ValueOf(d)) }

// The code types hold what a sender wrote, which need not be a code: a
// valid code prints as the string it is, anything else as "[redacted]".

// Format implements fmt.Formatter: a valid code as a string, else
// "[redacted]".
func (t NaturalPersonNameType) Format(f fmt.State, verb rune) {
	formatCode(f, verb, string(t), t.Valid())
}

// LogValue implements slog.LogValuer: a valid code, else "[redacted]".
func (t NaturalPersonNameType) LogValue() slog.Value {
	return slog.StringValue(shown(string(t), t.Valid()))
}

// Format implements fmt.Formatter: a valid code as a string, else
// "[redacted]".
func (t LegalPersonNameType) Format(f fmt.State, verb rune) {
	formatCode(f, verb, string(t), t.Valid())
}

// LogValue implements slog.LogValuer: a valid code, else "[redacted]".
func (t LegalPersonNameType) LogValue() slog.Value {
	return slog.StringValue(shown(string(t), t.Valid()))
}

// Format implements fmt.Formatter: a valid code as a string, else
// "[redacted]".
func (t AddressType) Format(f fmt.State, verb rune) { formatCode(f, verb, string(t), t.Valid()) }

// LogValue implements slog.LogValuer: a valid code, else "[redacted]".
func (t AddressType) LogValue() slog.Value { return slog.StringValue(shown(string(t), t.Valid())) }

// Format implements fmt.Formatter: a valid code as a string, else
// "[redacted]".
func (t NationalIdentifierType) Format(f fmt.State, verb rune) {
	formatCode(f, verb, string(t), t.Valid())
}

// LogValue implements slog.LogValuer: a valid code, else "[redacted]".
func (t NationalIdentifierType) LogValue() slog.Value {
	return slog.StringValue(shown(string(t), t.Valid()))
}

// Format implements fmt.Formatter: a valid edition as a string, else
// "[redacted]".
func (v Version) Format(f fmt.State, verb rune) { formatCode(f, verb, string(v), v.Valid()) }

// LogValue implements slog.LogValuer: a valid edition, else "[redacted]".
func (v Version) LogValue() slog.Value { return slog.StringValue(shown(string(v), v.Valid())) }

// shown returns s if ok or s is empty, else "[redacted]".
func shown(s string, ok bool) string {
	if s == "" || ok {
		return s
	}
	return redacted
}

func formatCode(f fmt.State, verb rune, s string, ok bool) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), shown(s, ok))
}

// format writes the redacted form of v, a struct of the model.
func format(f fmt.State, verb rune, v reflect.Value) {
	var b strings.Builder
	if verb == 'v' && f.Flag('#') {
		b.WriteString(specOf(v.Type()).goName)
	}
	writeStruct(&b, v)
	io.WriteString(f, b.String())
}

// writeStruct writes the set fields of v, a struct of the model, as
// {Name:value Name:value}.
func writeStruct(b *strings.Builder, v reflect.Value) {
	s := specOf(v.Type())
	b.WriteByte('{')
	first := true
	field := func(name string) {
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteString(name)
		b.WriteByte(':')
	}
	for i := range s.members {
		m := &s.members[i]
		f := v.Field(m.index)
		if !set(f) {
			continue
		}
		field(v.Type().Field(m.index).Name)
		switch f.Kind() {
		case reflect.String:
			b.WriteString(shown(f.String(), m.show != nil && m.show(f.String())))
		case reflect.Int:
			b.WriteString(strconv.FormatInt(f.Int(), 10))
		case reflect.Pointer:
			writeStruct(b, f.Elem())
		case reflect.Slice:
			b.WriteByte('[')
			for j := range f.Len() {
				if j > 0 {
					b.WriteByte(' ')
				}
				if el := f.Index(j); el.Kind() == reflect.String {
					b.WriteString(shownElem(el.String(), m))
				} else {
					writeStruct(b, el)
				}
			}
			b.WriteByte(']')
		}
	}
	if ver := version(v); ver != "" {
		field("Version")
		b.WriteString(shown(string(ver), ver.Valid()))
	}
	if n := v.Field(s.extra).Len(); n > 0 {
		field("Extra")
		b.WriteString("[" + members(n) + "]")
	}
	b.WriteByte('}')
}

// version returns the Version of v if it is a Payload.
func version(v reflect.Value) Version {
	if v.Type() != reflect.TypeFor[Payload]() {
		return ""
	}
	return Version(v.FieldByName("Version").String())
}

// shownElem returns an element of a []string field as it is shown: an
// empty one as "" would vanish, so it is redacted too unless the member
// shows its values.
func shownElem(s string, m *member) string {
	if m.show != nil && m.show(s) {
		return s
	}
	return redacted
}

func members(n int) string {
	if n == 1 {
		return "1 member"
	}
	return strconv.Itoa(n) + " members"
}

// set reports whether a field is set: a non-empty string or slice, a
// non-nil pointer, any int (the sequence).
func set(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.String, reflect.Slice:
		return f.Len() > 0
	case reflect.Pointer:
		return !f.IsNil()
	}
	return true
}

// logValue returns the redacted form of v, a struct of the model, as a
// group of its set fields by their JSON names (the 2020 edition's), lists
// as groups by index.
func logValue(v reflect.Value) slog.Value {
	s := specOf(v.Type())
	var attrs []slog.Attr
	for i := range s.members {
		m := &s.members[i]
		f := v.Field(m.index)
		if !set(f) {
			continue
		}
		var val slog.Value
		switch f.Kind() {
		case reflect.String:
			val = slog.StringValue(shown(f.String(), m.show != nil && m.show(f.String())))
		case reflect.Int:
			val = slog.Int64Value(f.Int())
		case reflect.Pointer:
			val = logValue(f.Elem())
		case reflect.Slice:
			elems := make([]slog.Attr, f.Len())
			for j := range elems {
				key := strconv.Itoa(j)
				if el := f.Index(j); el.Kind() == reflect.String {
					elems[j] = slog.String(key, shownElem(el.String(), m))
				} else {
					elems[j] = slog.Attr{Key: key, Value: logValue(el)}
				}
			}
			val = slog.GroupValue(elems...)
		}
		attrs = append(attrs, slog.Attr{Key: m.name, Value: val})
	}
	if ver := version(v); ver != "" {
		attrs = append(attrs, slog.String("version", shown(string(ver), ver.Valid())))
	}
	if n := v.Field(s.extra).Len(); n > 0 {
		attrs = append(attrs, slog.Int("extra", n))
	}
	return slog.GroupValue(attrs...)
}
