package travelrule_test

import (
	"context"
	"errors"
	"fmt"
	"math"
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

// amounts are the amounts the tests try, whether each is valid under
// Validate and under ValidateStrict, and the form Validate names when it
// refuses one that is set and short enough ("sign", "exponent", "zero",
// "nan", "space", "blank").
var amounts = func() []struct {
	amount          string
	lenient, strict bool
	form            string
} {
	fifty := "1" + strings.Repeat("0", 49)
	return []struct {
		amount          string
		lenient, strict bool
		form            string
	}{
		{"1.5", true, true, ""},
		{"0.05", true, true, ""},
		{"1", true, true, ""},
		{"007", true, true, ""}, // leading zeros: the value is plain
		{fifty, true, true, ""},
		{"0." + strings.Repeat("0", 47) + "1", true, true, ""}, // 50 characters, positive
		{fifty + "0", false, false, ""},                        // 51
		{"one BTC", true, false, ""},                           // the service judges it (A17)
		// Never right: refused by default, whatever the service does.
		{fmt.Sprint(1e-7), false, false, "exponent"},   // "1e-07"
		{fmt.Sprint(-1.0), false, false, "sign"},       // "-1"
		{fmt.Sprint(math.Inf(1)), false, false, "nan"}, // "+Inf"
		{fmt.Sprint(math.Inf(-1)), false, false, "nan"},
		{fmt.Sprint(math.NaN()), false, false, "nan"}, // "NaN"
		{"Infinity", false, false, "nan"},
		{"inf", false, false, "nan"},
		{"-nan", false, false, "nan"},
		{"-0.5", false, false, "sign"},
		{"+1", false, false, "sign"},
		{"1e9", false, false, "exponent"},
		{"1.5E+3", false, false, "exponent"},
		{"2.5e-", true, false, ""}, // not a number at all
		{"0", false, false, "zero"},
		{"0.0", false, false, "zero"},
		{"0.000", false, false, "zero"},
		{"00", false, false, "zero"},
		// Behind white space, as at the start.
		{" -1", false, false, "sign"},
		{" +1", false, false, "sign"},
		{" 1e-07", false, false, "exponent"},
		{"1e-07 ", false, false, "exponent"},
		{" 0", false, false, "zero"},
		{"0 ", false, false, "zero"},
		{" NaN", false, false, "nan"},
		{" 1", false, false, "space"},
		{"1 ", false, false, "space"},
		{"1\u00a0", false, false, "space"}, // a no-break space
		{"  ", false, false, "blank"},
		{"1,5", true, false, ""},
		{"1.000,5", true, false, ""},
		{"1.2.3", true, false, ""},
		{"0x10", true, false, ""},
		{"١٢", true, false, ""}, // Arabic-Indic digits
		{"１", true, false, ""},  // a full-width digit
		{"1.", true, false, ""},
		{".5", true, false, ""},
		{"", false, false, ""},
	}
}()

// The amount: Validate bounds its length (the description) and refuses the
// forms that are never right, a sign, an exponent or zero (the live docs:
// "a decimal string (e.g. 0.05)"); ValidateStrict wants a positive decimal
// as the live docs write one.
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
				reasons := []string{
					"required",
					"longer than 50 characters",
					"must be a positive decimal number in ASCII digits with at most one point, such as 0.05",
				}
				if tt.form != "" {
					reasons = map[string][]string{
						"sign":     {"must not carry a sign: the live docs' amount is a decimal string such as 0.05"},
						"exponent": {"must not be written with an exponent: the live docs' amount is a decimal string such as 0.05 (format a float64 with strconv.FormatFloat(v, 'f', -1, 64))"},
						"zero":     {"must not be zero: the live docs' amount is a decimal string such as 0.05"},
						"nan":      {"must be a number, not NaN or an infinity: the live docs' amount is a decimal string such as 0.05"},
						"space":    {"must not have white space at either end: the live docs' amount is a decimal string such as 0.05"},
						"blank":    {"must not be white space: the live docs' amount is a decimal string such as 0.05"},
					}[tt.form]
				}
				assert.Contains(t, reasons, ve.Fields[0].Reason)
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
		other bool // a date, email or personType: ValidateStrict refuses a long one for its form too
	}
	// legalName maps only for a legal person, one without the natural
	// originator's national id (IVMS101 C7, C9).
	legal := func(p *travelrule.Party, v string) {
		p.PersonType, p.LegalName, p.NationalID, p.NationalIDType = "legal", v, "", ""
	}
	fields := []field{
		{"personType", func(p *travelrule.Party, v string) { p.PersonType = v }, 0, true},
		{"firstName", func(p *travelrule.Party, v string) { p.FirstName = v }, 100, false},
		{"lastName", func(p *travelrule.Party, v string) { p.LastName = v }, 100, false},
		{"legalName", legal, 100, false},
		{"dateOfBirth", func(p *travelrule.Party, v string) { p.DateOfBirth = v }, 0, true},
		{"email", func(p *travelrule.Party, v string) { p.Email = v }, 0, true},
		// Codes: a long one is not in its IVMS101 list, one fault with the length's.
		{"addressType", func(p *travelrule.Party, v string) { p.AddressType = v }, 0, false},
		{"streetName", func(p *travelrule.Party, v string) { p.StreetName = v }, 70, false},
		{"buildingNumber", func(p *travelrule.Party, v string) { p.BuildingNumber = v }, 16, false},
		{"postCode", func(p *travelrule.Party, v string) { p.PostCode = v }, 16, false},
		{"townName", func(p *travelrule.Party, v string) { p.TownName = v }, 35, false},
		{"nationalId", func(p *travelrule.Party, v string) { p.NationalID = v }, 35, false},
		{"nationalIdType", func(p *travelrule.Party, v string) { p.NationalIDType = v }, 0, false},
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
			if f.ivms > 0 {
				check(t, (*travelrule.TransferRequest).ValidateStrict, f, f.ivms, nil)
				check(t, (*travelrule.TransferRequest).ValidateStrict, f, f.ivms+1, []string{at})
			}
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

// partySetters sets each text field of a party by its JSON name.
var partySetters = map[string]func(p *travelrule.Party, v string){
	"personType":     func(p *travelrule.Party, v string) { p.PersonType = v },
	"firstName":      func(p *travelrule.Party, v string) { p.FirstName = v },
	"lastName":       func(p *travelrule.Party, v string) { p.LastName = v },
	"legalName":      func(p *travelrule.Party, v string) { p.LegalName = v },
	"dateOfBirth":    func(p *travelrule.Party, v string) { p.DateOfBirth = v },
	"email":          func(p *travelrule.Party, v string) { p.Email = v },
	"addressType":    func(p *travelrule.Party, v string) { p.AddressType = v },
	"streetName":     func(p *travelrule.Party, v string) { p.StreetName = v },
	"buildingNumber": func(p *travelrule.Party, v string) { p.BuildingNumber = v },
	"postCode":       func(p *travelrule.Party, v string) { p.PostCode = v },
	"townName":       func(p *travelrule.Party, v string) { p.TownName = v },
	"nationalId":     func(p *travelrule.Party, v string) { p.NationalID = v },
	"nationalIdType": func(p *travelrule.Party, v string) { p.NationalIDType = v },
	"accountNumber":  func(p *travelrule.Party, v string) { p.AccountNumber = v },
	"walletAddress":  func(p *travelrule.Party, v string) { p.WalletAddress = v },
}

// TestValidatePlainText: bytes that are not UTF-8 and the characters that
// are never part of a name, an address, an identifier or a URL (control
// characters, line and paragraph separators, bidirectional embeddings,
// overrides and isolates) are refused in every string field of every
// request the client sends, before anything is sent, by default and
// strictly; the fault names the field, the character's class, code point
// and byte offset, never the value. Other format characters pass.
func TestValidatePlainText(t *testing.T) {
	bad := []struct{ name, v, reason string }{
		{"Latin-1 ë", "\xeb", "is not valid UTF-8 at byte offset "},
		{"a lone continuation byte", "\x80", "is not valid UTF-8 at byte offset "},
		{"a truncated sequence", "\xe6\xbc", "is not valid UTF-8 at byte offset "},
		{"NUL", "\x00", "holds a NUL (U+0000) at byte offset "},
		{"tab", "\t", "holds a tab (U+0009) at byte offset "},
		{"newline", "\n", "holds a newline (U+000A) at byte offset "},
		{"carriage return", "\r", "holds a carriage return (U+000D) at byte offset "},
		{"escape", "\x1b", "holds a control character (U+001B) at byte offset "},
		{"DEL", "\x7f", "holds a control character (U+007F) at byte offset "},
		{"C1 next line", "\u0085", "holds a control character (U+0085) at byte offset "},
		{"line separator", "\u2028", "holds a line separator (U+2028) at byte offset "},
		{"paragraph separator", "\u2029", "holds a paragraph separator (U+2029) at byte offset "},
		{"right-to-left override", "\u202e", "holds a bidirectional formatting character (U+202E) at byte offset "},
		{"left-to-right isolate", "\u2066", "holds a bidirectional formatting character (U+2066) at byte offset "},
		{"pop directional isolate", "\u2069", "holds a bidirectional formatting character (U+2069) at byte offset "},
	}
	good := []struct{ name, v string }{
		{"accents", "ë"}, {"CJK", "美咲"}, {"zero-width non-joiner (Persian)", "\u200c"},
		{"zero-width joiner", "\u200d"}, {"right-to-left mark", "\u200f"}, {"U+FFFD itself", "\ufffd"},
	}

	// The fields of a transfer initiation, each set on a valid request.
	type field struct {
		name, base string // base: a valid value before the character
		set        func(r *travelrule.TransferRequest, v string)
	}
	fields := []field{
		{"travelAddress", "t", func(r *travelrule.TransferRequest, v string) { r.TravelAddress = v }},
		{"email", "e", func(r *travelrule.TransferRequest, v string) { r.Email = v }},
		{"txId", "0", func(r *travelrule.TransferRequest, v string) { r.TxID = v }},
		{"asset", "B", func(r *travelrule.TransferRequest, v string) { r.Asset = v }},
		{"amount", "1", func(r *travelrule.TransferRequest, v string) { r.Amount = v }},
		{"callback", "h", func(r *travelrule.TransferRequest, v string) { r.Callback = v }},
	}
	for _, side := range []string{"originator", "beneficiary"} {
		for name, set := range partySetters {
			fields = append(fields, field{side + "." + name, "A", func(r *travelrule.TransferRequest, v string) {
				if side == "originator" {
					set(&r.Originator, v)
				} else {
					set(&r.Beneficiary, v)
				}
			}})
		}
	}
	// hasReason asserts that err names field with a reason that starts
	// with reason and ends with the byte offset, and holds no part of v.
	hasReason := func(t *testing.T, err error, field, reason, v string, offset int) {
		t.Helper()
		var ve *travelrule.ValidationError
		require.ErrorAs(t, err, &ve)
		want := reason + strconv.Itoa(offset)
		var got []string
		for _, f := range ve.Fields {
			got = append(got, f.Field+": "+f.Reason)
		}
		assert.Contains(t, got, field+": "+want)
		assert.NotContains(t, err.Error(), v)
	}

	live := newLiveService(t)
	c := live.client(t, liveKey)
	ctx := context.Background()
	for _, f := range fields {
		for _, b := range bad {
			t.Run(f.name+"/"+b.name, func(t *testing.T) {
				r := fullRequest()
				v := "Ξ" + b.v + "Z" // Ξ: two bytes
				f.set(r, v)
				hasReason(t, r.Validate(), f.name, b.reason, v, len("Ξ"))
				hasReason(t, r.ValidateStrict(), f.name, b.reason, v, len("Ξ"))
				_, err := c.InitiateTransfer(ctx, r)
				hasReason(t, err, f.name, b.reason, v, len("Ξ"))
			})
		}
		for _, g := range good {
			t.Run(f.name+"/"+g.name, func(t *testing.T) {
				r := fullRequest()
				f.set(r, f.base+g.v)
				var ve *travelrule.ValidationError
				if errors.As(r.Validate(), &ve) {
					for _, fe := range ve.Fields {
						assert.NotContains(t, fe.Reason, "byte offset", fe.Field)
					}
				}
			})
		}
	}

	// The other requests: each field with each character refused.
	others := []struct {
		field string
		call  func(v string) error
	}{
		{"q", func(v string) error { _, err := c.ResolveInquiry(ctx, v, travelrule.Reject()); return err }},
		{"callback", func(v string) error {
			_, err := c.ResolveInquiry(ctx, "t-1", travelrule.Approve("https://vasp.example/c"+v))
			return err
		}},
		{"q", func(v string) error { _, err := c.SubmitTxID(ctx, v, "0xabc"); return err }},
		{"txId", func(v string) error { _, err := c.SubmitTxID(ctx, "t-1", v); return err }},
		{"travelAddress", func(v string) error { _, err := c.LookupTravelAddress(ctx, "ta"+v); return err }},
		{"domain", func(v string) error { _, err := c.SearchVASPs(ctx, &travelrule.VASPQuery{Domain: v}); return err }},
		{"country", func(v string) error {
			_, err := c.SearchVASPs(ctx, &travelrule.VASPQuery{Criteria: map[string]string{"country": v}})
			return err
		}},
	}
	generate := func(set func(r *travelrule.TravelAddressRequest, v string)) func(v string) error {
		return func(v string) error {
			r := &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "Alan", LastName: "Turing", WalletAddress: "0xfeed", ExternalID: "b-1"}
			set(r, v)
			_, err := c.GenerateTravelAddress(ctx, r)
			return err
		}
	}
	for name, set := range map[string]func(r *travelrule.TravelAddressRequest, v string){
		"personType":    func(r *travelrule.TravelAddressRequest, v string) { r.PersonType = v },
		"firstName":     func(r *travelrule.TravelAddressRequest, v string) { r.FirstName = v },
		"lastName":      func(r *travelrule.TravelAddressRequest, v string) { r.LastName = v },
		"legalName":     func(r *travelrule.TravelAddressRequest, v string) { r.LegalName = v },
		"walletAddress": func(r *travelrule.TravelAddressRequest, v string) { r.WalletAddress = "0xa" + v },
		"externalId":    func(r *travelrule.TravelAddressRequest, v string) { r.ExternalID = v },
	} {
		others = append(others, struct {
			field string
			call  func(v string) error
		}{name, generate(set)})
	}
	for _, o := range others {
		for _, b := range bad {
			t.Run(o.field+"/"+b.name, func(t *testing.T) {
				err := o.call(b.v)
				var ve *travelrule.ValidationError
				require.ErrorAs(t, err, &ve)
				var reasons []string
				for _, f := range ve.Fields {
					if f.Field == o.field && strings.HasPrefix(f.Reason, b.reason) {
						reasons = append(reasons, f.Reason)
					}
				}
				assert.Len(t, reasons, 1, "%v", ve.Fields)
				assert.NotContains(t, err.Error(), b.v)
			})
		}
	}
	assert.Empty(t, live.requests(""), "nothing was sent, not even a login")
}

// TestRequiredPartyFieldsSayWhy: a missing party field's reason says where
// the requirement comes from: the interface description's party profile
// (2.2) for both parties, the live docs for a legal person's legalName.
func TestRequiredPartyFieldsSayWhy(t *testing.T) {
	const description = "required for both parties by the interface description (2.2)"
	const live = `required for a legal person (personType "legal") by the live docs, in place of firstName, lastName and dateOfBirth`
	for _, tt := range []struct {
		name   string
		mutate func(r *travelrule.TransferRequest)
		field  string
		reason string
	}{
		{"the beneficiary's date of birth", func(r *travelrule.TransferRequest) { r.Beneficiary.DateOfBirth = "" }, "beneficiary.dateOfBirth", description},
		{"the originator's date of birth", func(r *travelrule.TransferRequest) { r.Originator.DateOfBirth = "" }, "originator.dateOfBirth", description},
		{"the beneficiary's first name", func(r *travelrule.TransferRequest) { r.Beneficiary.FirstName = "" }, "beneficiary.firstName", description},
		{"the originator's last name", func(r *travelrule.TransferRequest) { r.Originator.LastName = "" }, "originator.lastName", description},
		{"a person type", func(r *travelrule.TransferRequest) { r.Beneficiary.PersonType = "" }, "beneficiary.personType", description},
		{"a legal originator's legal name", func(r *travelrule.TransferRequest) {
			r.Originator = travelrule.Party{PersonType: "legal", AccountNumber: "c-1"}
		}, "originator.legalName", live},
		{"a legal beneficiary's legal name", func(r *travelrule.TransferRequest) {
			r.Beneficiary = travelrule.Party{PersonType: "legal", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"}
		}, "beneficiary.legalName", live},
	} {
		for _, v := range validations {
			t.Run(v.name+"/"+tt.name, func(t *testing.T) {
				r := fullRequest()
				tt.mutate(r)
				err := v.validate(r)
				assertFaults(t, err, []string{tt.field})
				assert.Equal(t, tt.reason, travelrule.FieldErrors(err)[0].Reason)
			})
		}
	}
}
