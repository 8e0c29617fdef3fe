package travelrule

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFalseStatus: what an APIError's text says of a status false.
func TestFalseStatus(t *testing.T) {
	for _, tt := range []struct {
		name string
		e    APIError
		want string
	}{
		{"a 400", APIError{Op: "InitiateTransfer", StatusCode: 400}, ""},
		{"refused", APIError{Op: "InitiateTransfer", StatusCode: 200, refused: true}, ", status false, not applied"},
		{"a bare false to a resolution", APIError{Op: "ResolveInquiry", StatusCode: 200, refused: true},
			", status false, not applied (likely already resolved: the other way, or this way by an earlier attempt)"},
		{"a false with a code to a resolution", APIError{Op: "ResolveInquiry", StatusCode: 200, refused: true, Code: "VALIDATION_ERROR"},
			", status false, not applied"},
		{"after an attempt that may have acted", APIError{Op: "InitiateTransfer", StatusCode: 200, earlierMayHaveActed: true},
			", status false (an earlier attempt may have been applied)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.e.falseStatus())
		})
	}
}

// TestShownFields: the fields an APIError's text names are the request's
// paths among those the server named, each once, in order.
func TestShownFields(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fields []string
		want   []string
	}{
		{"none", nil, nil},
		{"paths", []string{"asset", "originator.firstName"}, []string{"asset", "originator.firstName"}},
		{"a path twice", []string{"asset", "amount", "asset"}, []string{"asset", "amount"}},
		{"not a path", []string{"Ada Lovelace", "asset"}, []string{"asset"}},
		{"no path at all", []string{"Ada Lovelace"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := APIError{StatusCode: 400}
			for _, f := range tt.fields {
				e.Fields = append(e.Fields, FieldError{Field: f, Reason: "bad"})
			}
			assert.Equal(t, tt.want, e.shownFields())
		})
	}
}
