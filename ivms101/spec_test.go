package ivms101

import (
	"reflect"
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
