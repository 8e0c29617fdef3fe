package travelruletest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWithoutIndexes: a control-plane fault's path reads the same whether
// encoding/json gave the array index (Go 1.27) or not (Go 1.26).
func TestWithoutIndexes(t *testing.T) {
	for in, want := range map[string]string{
		"faults.0.times":   "faults.times",
		"faults.times":     "faults.times",
		"faults.12.ops.3":  "faults.ops",
		"decision":         "decision",
		"":                 "",
		"faults.x1.times":  "faults.x1.times",
		"faults.-1.times":  "faults.times",
		"a.0.b.10.c.007.d": "a.b.c.d",
	} {
		assert.Equal(t, want, withoutIndexes(in), in)
	}
}
