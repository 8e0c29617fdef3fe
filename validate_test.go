package travelrule_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// validations are the two checks of a request, by name.
var validations = []struct {
	name     string
	validate func(*travelrule.TransferRequest) error
}{
	{"Validate", (*travelrule.TransferRequest).Validate},
	{"ValidateStrict", (*travelrule.TransferRequest).ValidateStrict},
}

// amounts are the amounts the tests try, and whether each is valid under
// Validate and under ValidateStrict.
var amounts = func() []struct {
	amount          string
	lenient, strict bool
} {
	fifty := "1" + strings.Repeat("0", 49)
	return []struct {
		amount          string
		lenient, strict bool
	}{
		{"1.5", true, true},
		{"0.05", true, true},
		{"1", true, true},
		{"007", true, true}, // leading zeros: the value is plain
		{fifty, true, true},
		{"0." + strings.Repeat("0", 47) + "1", true, true}, // 50 characters, positive
		{fifty + "0", false, false},                        // 51
		{"one BTC", true, false},
		{"-0.5", true, false},
		{"1e9", true, false},
		{"0", true, false},
		{"0.0", true, false},
		{"0.000", true, false},
		{"+1", true, false},
		{" 1", true, false},
		{"1 ", true, false},
		{"1,5", true, false},
		{"1.000,5", true, false},
		{"1.2.3", true, false},
		{"0x10", true, false},
		{"١٢", true, false}, // Arabic-Indic digits
		{"１", true, false},  // a full-width digit
		{"1.", true, false},
		{".5", true, false},
		{"NaN", true, false},
		{"Infinity", true, false},
		{"", false, false},
	}
}()

// The amount: Validate bounds its length only (the description, and all the
// live backend checks); ValidateStrict wants a positive decimal as the live
// docs write one.
func TestValidateAmount(t *testing.T) {
	for _, tt := range amounts {
		for _, v := range validations {
			t.Run(v.name+"/"+strconv.Quote(tt.amount), func(t *testing.T) {
				r := fullRequest()
				r.Amount = tt.amount
				valid := tt.lenient
				if v.name == "ValidateStrict" {
					valid = tt.strict
				}
				err := v.validate(r)
				if valid {
					require.NoError(t, err)
					return
				}
				assertFaults(t, err, []string{"amount"}) // once, even when both rules fail
				// A fixed reason: it cannot repeat the value.
				var ve *travelrule.ValidationError
				require.ErrorAs(t, err, &ve)
				assert.Contains(t, []string{
					"required",
					"longer than 50 characters",
					"must be a positive decimal number in ASCII digits with at most one point, such as 0.05",
				}, ve.Fields[0].Reason)
			})
		}
	}
}

// A party's text fields are bounded by Validate against absurd sizes
// (255 characters), and by ValidateStrict to the IVMS101 member each maps
// to. Each is checked at its bound and one over, with a two-byte letter,
// so a count in bytes would fail at the bound.
func TestValidatePartyLengths(t *testing.T) {
	type field struct {
		name  string
		set   func(p *travelrule.Party, v string)
		ivms  int  // IVMS101's limit; 0: none
		other bool // a code, date or email: ValidateStrict refuses a long one for its form too
	}
	fields := []field{
		{"personType", func(p *travelrule.Party, v string) { p.PersonType = v }, 0, true},
		{"firstName", func(p *travelrule.Party, v string) { p.FirstName = v }, 100, false},
		{"lastName", func(p *travelrule.Party, v string) { p.LastName = v }, 100, false},
		{"legalName", func(p *travelrule.Party, v string) { p.LegalName = v }, 100, false},
		{"dateOfBirth", func(p *travelrule.Party, v string) { p.DateOfBirth = v }, 0, true},
		{"email", func(p *travelrule.Party, v string) { p.Email = v }, 0, true},
		{"addressType", func(p *travelrule.Party, v string) { p.AddressType = v }, 0, true},
		{"streetName", func(p *travelrule.Party, v string) { p.StreetName = v }, 70, false},
		{"buildingNumber", func(p *travelrule.Party, v string) { p.BuildingNumber = v }, 16, false},
		{"postCode", func(p *travelrule.Party, v string) { p.PostCode = v }, 16, false},
		{"townName", func(p *travelrule.Party, v string) { p.TownName = v }, 35, false},
		{"nationalId", func(p *travelrule.Party, v string) { p.NationalID = v }, 35, false},
		{"nationalIdType", func(p *travelrule.Party, v string) { p.NationalIDType = v }, 0, true},
		{"accountNumber", func(p *travelrule.Party, v string) { p.AccountNumber = v }, 50, false},
		// Real addresses exceed IVMS101 2020's 100 (see party.go): the 255 bound only.
		{"walletAddress", func(p *travelrule.Party, v string) { p.WalletAddress = v }, 255, false},
	}
	check := func(t *testing.T, validate func(*travelrule.TransferRequest) error, f field, n int, want []string) {
		t.Helper()
		r := fullRequest()
		f.set(&r.Originator, strings.Repeat("é", n))
		err := validate(r)
		assertFaults(t, err, want)
		if err != nil {
			assert.NotContains(t, err.Error(), "éé", "the reason repeats the value")
		}
	}
	for _, f := range fields {
		at := "originator." + f.name
		t.Run("Validate/"+f.name, func(t *testing.T) {
			check(t, (*travelrule.TransferRequest).Validate, f, 255, nil)
			check(t, (*travelrule.TransferRequest).Validate, f, 256, []string{at})
		})
		t.Run("ValidateStrict/"+f.name, func(t *testing.T) {
			if f.other {
				// Its form fails it as well as its length.
				check(t, (*travelrule.TransferRequest).ValidateStrict, f, 256, []string{at, at})
				return
			}
			check(t, (*travelrule.TransferRequest).ValidateStrict, f, f.ivms, nil)
			check(t, (*travelrule.TransferRequest).ValidateStrict, f, f.ivms+1, []string{at})
			check(t, (*travelrule.TransferRequest).ValidateStrict, f, 256, []string{at}) // reported once, not twice
		})
	}
}

// Real wallet addresses longer than IVMS101 2020's accountNumber (100) pass
// ValidateStrict: a Cardano base address (CIP-19's test vector, 103
// characters) and a Monero integrated address (106).
func TestValidateStrictTakesLongWalletAddresses(t *testing.T) {
	for _, addr := range []string{
		"addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgse35a3x",
		"4LL9oSLmtpccfufTMvppY6JwXNouMBzSkbLYfpAV5Usx3skxNgYeYTRj5UzqtReoS44qo9mtmXCqY45DJ852K5Jv2bYXZKKQePHES9khPK",
	} {
		r := fullRequest()
		r.Beneficiary.WalletAddress = addr
		require.NoError(t, r.ValidateStrict(), "%d characters", len(addr))
	}
}

// A first name of 100,000 characters fails both checks, and the reason
// holds no part of it.
func TestValidateAbsurdFirstName(t *testing.T) {
	for _, v := range validations {
		t.Run(v.name, func(t *testing.T) {
			r := fullRequest()
			r.Originator.FirstName = strings.Repeat("Zoë", 100_000/3+1)
			err := v.validate(r)
			assertFaults(t, err, []string{"originator.firstName"})
			assert.NotContains(t, err.Error(), "Zoë")
			assert.Less(t, len(err.Error()), 200)
		})
	}
}
