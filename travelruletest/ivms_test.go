package travelruletest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/ivms101"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestEveryINQUIRYIsValidIVMS101: every INQUIRY the sandbox sends passes
// the SDK's own IVMS101 validation, as a beneficiary that validates runs
// it on the callback it receives: its sample parties (a control-plane
// inquiry with a callback only), and, for transfers that pass the client's
// ValidateStrict, natural and legal persons with and without their
// optional fields, the inquiries it starts (Server.StartInquiry and POST
// /sandbox/inquiries) and the one it sends to the integrator's inquiry URL
// for a transfer to a travel address it generated. No date of birth is
// sent: IVMS101 takes one only with a place of birth, which a party has
// not, and the sandbox makes none up.
func TestEveryINQUIRYIsValidIVMS101(t *testing.T) {
	const cardano = "addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgse35a3x"
	natural := func(first, last, dob string) travelrule.Party {
		return travelrule.Party{PersonType: "natural", FirstName: first, LastName: last, DateOfBirth: dob}
	}
	full := validRequest("https://originator.example/cb")
	full.Originator.NationalID, full.Originator.NationalIDType = "AB123456C", "SOCS"
	full.Originator.AccountNumber, full.Originator.WalletAddress = "c-1815", "0x742d35cc6634c0532925a3b844bc454e4438f44e"
	full.Originator.Email = "ada@example.com"
	full.Beneficiary.AccountNumber, full.Beneficiary.Email = "c-1912", "alan@example.org"
	full.Beneficiary.AddressType, full.Beneficiary.StreetName, full.Beneficiary.BuildingNumber = "HOME", "Adlington Road", "43"
	full.Beneficiary.PostCode, full.Beneficiary.TownName = "SK9 4LZ", "Wilmslow"

	request := func(o, b travelrule.Party) *travelrule.TransferRequest {
		r := validRequest("https://originator.example/cb")
		r.Originator, r.Beneficiary = o, b
		return r
	}
	withAccount := natural("Ada", "Lovelace", "1815-12-10")
	withAccount.AccountNumber = "c-1815"
	withNationalID := natural("Ada", "Lovelace", "1815-12-10")
	withNationalID.NationalID, withNationalID.NationalIDType = "AB123456C", "SOCS"
	lei := travelrule.Party{PersonType: "legal", LegalName: "Analytical Engine Works Ltd", NationalID: "5493001KJTIIGC8Y1R12", NationalIDType: "LEIX"}
	geog := travelrule.Party{PersonType: "legal", LegalName: "Difference Engine Ltd", AddressType: "GEOG", StreetName: "Dorset Street",
		BuildingNumber: "1", PostCode: "W1U 4EG", TownName: "London", Country: "GB", AccountNumber: "c-7", WalletAddress: "0xc0ffee"}
	legalName := travelrule.Party{PersonType: "legal", LegalName: "Engine Works"}
	longWallet := natural("Katherine", "Johnson", "1918-08-26")
	longWallet.WalletAddress = cardano

	requests := []struct {
		name string
		req  *travelrule.TransferRequest
	}{
		{"natural persons, every field", full},
		{"natural persons, the fields required and an account number", request(withAccount, natural("Alan", "Turing", "1912-06-23"))},
		{"natural persons, a national id", request(withNationalID, natural("Alan", "Turing", "1912-06-23"))},
		{"a legal originator with an LEI, a natural beneficiary", request(lei, natural("Alan", "Turing", "1912-06-23"))},
		{"a legal originator with a GEOG address, a legal beneficiary with its name only", request(geog, legalName)},
		{"a natural originator, a legal beneficiary with every field", request(withAccount, geog)},
		{"a wallet longer than the 2020 edition takes", request(withAccount, longWallet)},
	}

	// check asserts that got, an INQUIRY as the SDK's handler received it,
	// carries valid IVMS101 in the edition req's wallets call for, and no
	// date of birth.
	check := func(t *testing.T, got received, req *travelrule.TransferRequest) {
		t.Helper()
		require.Equal(t, travelrule.KindInquiry, got.cb.Kind)
		require.NotNil(t, got.cb.IVMS101)
		require.NoError(t, got.cb.IVMS101.Validate(), "the INQUIRY's IVMS101 is valid")
		edition := ivms101.Version2020
		if len(req.Originator.WalletAddress) > 100 || len(req.Beneficiary.WalletAddress) > 100 {
			edition = ivms101.Version2023
		}
		assert.Equal(t, edition, got.cb.IVMS101.Version)
		raw, err := got.cb.IVMS101.MarshalJSON()
		require.NoError(t, err)
		again, err := ivms101.Parse(raw)
		require.NoError(t, err)
		require.NoError(t, again.Validate())
		assert.NotContains(t, string(raw), "dateAndPlaceOfBirth")
		assert.Empty(t, got.cb.Inquiry.Originator.DateOfBirth)
		assert.Empty(t, got.cb.Inquiry.Beneficiary.DateOfBirth)
	}

	t.Run("the sample parties", func(t *testing.T) {
		v := newVASP(t, "/vasp/")
		srv := newServer(t)
		startInquiry(t, srv, map[string]any{"callback": v.URL + "/vasp/in"})
		check(t, v.next(t), &travelrule.TransferRequest{})
	})
	for _, tt := range requests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.req.ValidateStrict(), "a strictly valid request")
			ctx := context.Background()
			v := newVASP(t, "/vasp/")
			srv := newServer(t, travelruletest.WithInquiryURL(v.URL+"/vasp/"))

			_, err := srv.StartInquiry(ctx, v.URL+"/vasp/in", tt.req)
			require.NoError(t, err)
			check(t, v.next(t), tt.req)

			body := wire(t, tt.req)
			body["callback"] = v.URL + "/vasp/in"
			startInquiry(t, srv, body)
			check(t, v.next(t), tt.req)

			c := newClient(t, srv, travelrule.WithStrictValidation())
			ta, err := c.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "Alan", LastName: "Turing"})
			require.NoError(t, err)
			req := *tt.req
			req.TravelAddress, req.Callback = ta.TravelAddress, "https://originator.example/cb"
			_, err = c.InitiateTransfer(ctx, &req)
			require.NoError(t, err)
			got := v.next(t)
			assert.True(t, strings.HasPrefix(got.path, "/vasp/transfers/inquiry/"), "to the integrator's inquiry URL")
			check(t, got, tt.req)
		})
	}
}
