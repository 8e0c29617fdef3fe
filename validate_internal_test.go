package travelrule

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The strict amount rule alone: a fault only for an amount that is set,
// within 50 characters (Validate reports the others), and not a positive
// decimal.
func TestStrictAmount(t *testing.T) {
	fifty := "1" + strings.Repeat("0", 49)
	for _, tt := range []struct {
		amount string
		fault  bool
	}{
		{"1.5", false},
		{"0.05", false},
		{"1", false},
		{"007", false},
		{fifty, false},
		{"0." + strings.Repeat("0", 47) + "1", false},
		{fifty + "0", false}, // too long: Validate's fault
		{"", false},          // missing: Validate's fault
		{"one BTC", true},
		{"-0.5", true},
		{"1e9", true},
		{"0", true},
		{"0.0", true},
		{"0.000", true},
		{"+1", true},
		{" 1", true},
		{"1,5", true},
		{"0x10", true},
		{"١٢", true},
		{"1.", true},
		{".5", true},
		{"1.2.3", true},
	} {
		errs := strictAmount(nil, tt.amount)
		if !tt.fault {
			assert.Empty(t, errs, "%q", tt.amount)
			continue
		}
		if assert.Len(t, errs, 1, "%q", tt.amount) {
			assert.Equal(t, "amount", errs[0].Field)
		}
	}
}
