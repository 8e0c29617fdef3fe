package ivms101

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every field of every type of the model is read, written and redacted:
// a field added to model.go must be added to the table in spec.go.
func TestSpecCoversModel(t *testing.T) {
	assert.Len(t, specs, 18, "the struct types of model.go")
	for typ, s := range specs {
		covered := map[string]bool{"Extra": true}
		if typ == reflect.TypeFor[Payload]() {
			covered["Version"] = true
		}
		for _, m := range s.members {
			assert.False(t, covered[m.goName], "%s.%s twice", typ.Name(), m.goName)
			covered[m.goName] = true
		}
		for i := range typ.NumField() {
			assert.True(t, covered[typ.Field(i).Name], "%s.%s is not in spec.go", typ.Name(), typ.Field(i).Name)
		}
	}
}

// TestEqualFold: a name is matched without regard to case exactly as
// strings.EqualFold matches it, as bytes or as a string.
func TestEqualFold(t *testing.T) {
	for _, key := range []string{"postCode", "postcode", "POSTCODE", "postCodes", "postCod", "p@stcode", "post\x60ode",
		"po\u017ftcode", "\u212Aey", "key", "KEY", "ke", "k\u00e9y", "", "pos[code", "posTcode", "x{1]", "X[1]", "x\x101"} {
		for _, name := range []string{"postCode", "key", "x[1]", "x01"} {
			want := strings.EqualFold(key, name)
			assert.Equal(t, want, equalFold(key, name), "%q %q", key, name)
			assert.Equal(t, want, equalFold([]byte(key), name), "%q %q", key, name)
		}
	}
}
