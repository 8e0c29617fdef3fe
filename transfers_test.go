package travelrule_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *travelrule.TransferRequest)
		fields []string // nil: valid
	}{
		{"full request", func(r *travelrule.TransferRequest) {}, nil},
		{"missing asset", func(r *travelrule.TransferRequest) { r.Asset = "" }, []string{"asset"}},
		{"missing amount", func(r *travelrule.TransferRequest) { r.Amount = "" }, []string{"amount"}},
		{"missing callback", func(r *travelrule.TransferRequest) { r.Callback = "" }, []string{"callback"}},
		{"missing party fields", func(r *travelrule.TransferRequest) {
			r.Originator.PersonType, r.Originator.FirstName = "", ""
			r.Beneficiary.LastName, r.Beneficiary.DateOfBirth = "", ""
		}, []string{"originator.personType", "originator.firstName", "beneficiary.lastName", "beneficiary.dateOfBirth"}},
		{"asset 20 code points", func(r *travelrule.TransferRequest) { r.Asset = strings.Repeat("Ä", 20) }, nil},
		{"asset 21", func(r *travelrule.TransferRequest) { r.Asset = strings.Repeat("A", 21) }, []string{"asset"}},
		{"amount 50", func(r *travelrule.TransferRequest) { r.Amount = strings.Repeat("9", 50) }, nil},
		{"amount 51", func(r *travelrule.TransferRequest) { r.Amount = strings.Repeat("9", 51) }, []string{"amount"}},
		{"email 255 multibyte", func(r *travelrule.TransferRequest) { r.Email = strings.Repeat("é", 255) }, nil},
		{"email 256", func(r *travelrule.TransferRequest) { r.Email = strings.Repeat("e", 256) }, []string{"email"}},
		{"email empty is accepted", func(r *travelrule.TransferRequest) { r.Email = "" }, nil},
		{"txId 256", func(r *travelrule.TransferRequest) { r.TxID = strings.Repeat("f", 256) }, []string{"txId"}},
		{"travelAddress 255 CJK", func(r *travelrule.TransferRequest) { r.TravelAddress = strings.Repeat("漢", 255) }, nil},
		{"travelAddress 256", func(r *travelrule.TransferRequest) { r.TravelAddress = strings.Repeat("t", 256) }, []string{"travelAddress"}},
		{"callback 255", func(r *travelrule.TransferRequest) { r.Callback = "https://a.example/" + strings.Repeat("p", 255-18) }, nil},
		{"callback 256", func(r *travelrule.TransferRequest) { r.Callback = "https://a.example/" + strings.Repeat("p", 256-18) }, []string{"callback"}},
		{"callback relative", func(r *travelrule.TransferRequest) { r.Callback = "/cb" }, []string{"callback"}},
		{"callback ftp", func(r *travelrule.TransferRequest) { r.Callback = "ftp://a.example/cb" }, []string{"callback"}},
		{"callback no host", func(r *travelrule.TransferRequest) { r.Callback = "https:///cb" }, []string{"callback"}},
		{"callback with space", func(r *travelrule.TransferRequest) { r.Callback = "https://a.example/c b" }, []string{"callback"}},
		{"callback upper-case scheme", func(r *travelrule.TransferRequest) { r.Callback = "HTTPS://a.example/cb" }, nil},
		{"callback http", func(r *travelrule.TransferRequest) { r.Callback = "http://127.0.0.1:8080/cb" }, nil},
		{"country 3 letters", func(r *travelrule.TransferRequest) { r.Originator.Country = "DEU" }, []string{"originator.country"}},
		{"country 1 letter", func(r *travelrule.TransferRequest) { r.Beneficiary.Country = "D" }, []string{"beneficiary.country"}},
		{"country digits", func(r *travelrule.TransferRequest) { r.Beneficiary.Country = "12" }, []string{"beneficiary.country"}},
		{"country two non-ASCII letters", func(r *travelrule.TransferRequest) { r.Beneficiary.Country = "ÄÖ" }, []string{"beneficiary.country"}},
		{"country lower case passes the description's rule", func(r *travelrule.TransferRequest) { r.Originator.Country = "de" }, nil},
		{"unknown personType passes the description's rule", func(r *travelrule.TransferRequest) { r.Originator.PersonType = "robot" }, nil},
		{"every fault at once", func(r *travelrule.TransferRequest) {
			*r = travelrule.TransferRequest{}
		}, []string{"asset", "amount", "callback",
			"originator.personType", "originator.firstName", "originator.lastName", "originator.dateOfBirth",
			"beneficiary.personType", "beneficiary.firstName", "beneficiary.lastName", "beneficiary.dateOfBirth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fullRequest()
			tt.mutate(r)
			err := r.Validate()
			if tt.fields == nil {
				require.NoError(t, err)
				return
			}
			var ve *travelrule.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.ElementsMatch(t, tt.fields, fieldPaths(ve))
			assert.True(t, errors.Is(err, travelrule.ErrInvalidRequest))
			for _, f := range tt.fields {
				assert.True(t, ve.Has(f))
			}
		})
	}
}

func TestValidationErrorNamesPathsNotValues(t *testing.T) {
	r := fullRequest()
	r.Originator.Country = "Zoë"
	r.Asset = "SECRETASSET-TOO-LONG-FOR-THE-BOUND"
	err := r.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "originator.country")
	assert.Contains(t, err.Error(), "asset")
	assert.NotContains(t, err.Error(), "Zoë")
	assert.NotContains(t, err.Error(), "SECRETASSET")
}

func TestValidateStrict(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *travelrule.TransferRequest)
		fields []string
	}{
		{"full request", func(r *travelrule.TransferRequest) {}, nil},
		{"legal person", func(r *travelrule.TransferRequest) { r.Beneficiary.PersonType = "legal" }, nil},
		{"unknown personType", func(r *travelrule.TransferRequest) { r.Originator.PersonType = "robot" }, []string{"originator.personType"}},
		{"date format", func(r *travelrule.TransferRequest) { r.Originator.DateOfBirth = "29.02.1984" }, []string{"originator.dateOfBirth"}},
		{"date month 13", func(r *travelrule.TransferRequest) { r.Originator.DateOfBirth = "1984-13-01" }, []string{"originator.dateOfBirth"}},
		{"address type", func(r *travelrule.TransferRequest) { r.Beneficiary.AddressType = "CASTLE" }, []string{"beneficiary.addressType"}},
		{"unassigned country", func(r *travelrule.TransferRequest) { r.Originator.Country = "XQ" }, []string{"originator.country"}},
		{"lower-case country", func(r *travelrule.TransferRequest) { r.Originator.Country = "de" }, []string{"originator.country"}},
		{"national id type", func(r *travelrule.TransferRequest) { r.Originator.NationalIDType = "PASSPORT" }, []string{"originator.nationalIdType"}},
		{"id type without id", func(r *travelrule.TransferRequest) { r.Originator.NationalID = "" }, []string{"originator.nationalId"}},
		{"strict keeps the description's checks", func(r *travelrule.TransferRequest) { r.Asset = "" }, []string{"asset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fullRequest()
			tt.mutate(r)
			err := r.ValidateStrict()
			if tt.fields == nil {
				require.NoError(t, err)
				return
			}
			var ve *travelrule.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.ElementsMatch(t, tt.fields, fieldPaths(ve))
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	r := fullRequest()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := r.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestValidateAllocatesNothing(t *testing.T) {
	r := fullRequest()
	allocs := testing.AllocsPerRun(100, func() {
		if r.Validate() != nil {
			t.Fatal("invalid")
		}
	})
	assert.Zero(t, allocs)
}
