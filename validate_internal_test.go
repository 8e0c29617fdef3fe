package travelrule

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The two amount rules alone, each a fault only for an amount that is set
// and within 50 characters (Validate reports the others): amountForm
// (Validate) for a sign, an exponent or zero; strictAmount (ValidateStrict)
// for anything else that is not a positive decimal, never for what
// amountForm reports.
func TestAmountRules(t *testing.T) {
	fifty := "1" + strings.Repeat("0", 49)
	for _, tt := range []struct {
		amount string
		rule   string // "form", "strict" or "": which rule refuses it
	}{
		{"1.5", ""},
		{"0.05", ""},
		{"1", ""},
		{"007", ""},
		{fifty, ""},
		{"0." + strings.Repeat("0", 47) + "1", ""},
		{fifty + "0", ""}, // too long: Validate's fault
		{"", ""},          // missing: Validate's fault
		{"-0.5", "form"},
		{"+1", "form"},
		{"-", "form"},
		{"1e9", "form"},
		{"1e-07", "form"},
		{"1.5E+3", "form"},
		{"1.e5", "form"},
		{"0", "form"},
		{"0.0", "form"},
		{"0.000", "form"},
		{"0.", "form"},
		{".0", "form"},
		{"one BTC", "strict"},
		{"e5", "strict"},
		{"1e", "strict"},
		{"1ee5", "strict"},
		{".e5", "strict"},
		{"0..0", "strict"},
		{" 1", "form"},
		{" -1", "form"},
		{"0 ", "form"},
		{"NaN", "form"},
		{"1,5", "strict"},
		{"0x10", "strict"},
		{"١٢", "strict"},
		{"1.", "strict"},
		{".5", "strict"},
		{"1.2.3", "strict"},
	} {
		form, strict := amountForm(nil, tt.amount), strictAmount(nil, tt.amount)
		switch tt.rule {
		case "form":
			assert.Len(t, form, 1, "%q", tt.amount)
			assert.Empty(t, strict, "%q", tt.amount)
		case "strict":
			assert.Empty(t, form, "%q", tt.amount)
			assert.Len(t, strict, 1, "%q", tt.amount)
		default:
			assert.Empty(t, form, "%q", tt.amount)
			assert.Empty(t, strict, "%q", tt.amount)
		}
		for _, f := range append(form, strict...) {
			assert.Equal(t, "amount", f.Field)
		}
	}
}
