package travelrule

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// base58CheckOracle is an independent, slow base58check (math/big, the
// textbook definition) against which the SDK's encoding is compared.
func base58CheckOracle(payload []byte) string {
	h := sha256.Sum256(payload)
	h = sha256.Sum256(h[:])
	b := append(append([]byte(nil), payload...), h[:4]...)
	n := new(big.Int).SetBytes(b)
	var digits []byte
	for base, mod := big.NewInt(58), new(big.Int); n.Sign() > 0; {
		n.DivMod(n, base, mod)
		digits = append(digits, base58Alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		digits = append(digits, '1')
	}
	for i, j := 0, len(digits)-1; i < j; i, j = i+1, j-1 {
		digits[i], digits[j] = digits[j], digits[i]
	}
	return string(digits)
}

func TestBase58AgainstTheOracle(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {0, 0}, {0, 1}, {1}, {57}, {58}, {255}, {0, 0, 255, 0}, bytes.Repeat([]byte{255}, 40)} {
		h := sha256.Sum256(b)
		h = sha256.Sum256(h[:])
		raw := append(append([]byte(nil), b...), h[:4]...)
		enc := base58Encode(raw)
		if want := base58CheckOracle(b); enc != want {
			t.Fatalf("base58Encode(%x) = %q, the oracle says %q", raw, enc, want)
		}
		dec, ok := base58Decode(enc)
		if !ok || !bytes.Equal(dec, raw) {
			t.Fatalf("base58Decode(%q) = %x, %v; want %x", enc, dec, ok, raw)
		}
	}
}

// FuzzTravelAddress checks, for any string, that decoding and encoding are
// inverse where they succeed, that encoding agrees with the oracle, that
// every failure matches ErrInvalidTravelAddress without quoting its input,
// and that any byte string survives base58 both ways.
func FuzzTravelAddress(f *testing.F) {
	for _, s := range []string{
		"ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv", "beneficiary.com/x/12345?t=i",
		"taN2raFk3zy7RvbLqAmHJ2kDTbSFrDoMhwLdPPzysxhXnGRqgnsfbqktRpoTssSVBXa9XS7nMjGA2Xqb8AH7eGTZx9cyr85KxZr",
		"ta8S6B25wVTEQ74mZS9MqdVgv9CkHE62ht5CmHNFZdFNKX", "no-such-vasp.invalid/x/1?t=i",
		"[2001:db8::1]:8443/x?t=i", "ta111", "ta", "taSandboxBeneficiaryVASP", "https://a.example/?t=i",
		"ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN",
		"taCFLQmuE6GqfR2jRM6m8qF7b9V8PjhzGiED4KmteccXagHRPKVDbLSKe9MwF755NJuKL5Q1CJ1zmXDm2m7crZBUJ7pPfDCoKL1n",
		"ta1qexamplebeneficiaryvasp1ahjk23", "ta~x_y.z-0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkErr := func(op string, err error) {
			if !errors.Is(err, ErrInvalidTravelAddress) {
				t.Fatalf("%s: error %v does not match ErrInvalidTravelAddress", op, err)
			}
			if len(s) >= 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("%s: error %q quotes its input", op, err)
			}
		}
		form, _ := InspectTravelAddress(s)
		encode := EncodeTravelAddress
		if form == TravelAddressUnchecked {
			encode = EncodeUncheckedTravelAddress
		}
		if uri, err := DecodeTravelAddress(s); errors.Is(err, ErrOpaqueTravelAddress) {
			if form != TravelAddressOpaque {
				t.Fatalf("DecodeTravelAddress(%q): opaque, but its form is %v", s, form)
			}
		} else if err != nil {
			checkErr("decode", err)
			if form != TravelAddressInvalid {
				t.Fatalf("DecodeTravelAddress(%q) failed, but its form is %v", s, form)
			}
		} else if ta, err := encode(uri); err != nil || ta != s {
			t.Fatalf("DecodeTravelAddress(%q) = %q (%v), which encodes to %q, %v", s, uri, form, ta, err)
		}
		if ta, err := EncodeTravelAddress(s); err != nil {
			checkErr("encode", err)
		} else {
			if want := "ta" + base58CheckOracle([]byte(s)); ta != want {
				t.Fatalf("EncodeTravelAddress(%q) = %q, the oracle says %q", s, ta, want)
			}
			if uri, err := DecodeTravelAddress(ta); err != nil || uri != s {
				t.Fatalf("EncodeTravelAddress(%q) = %q, which decodes to %q, %v", s, ta, uri, err)
			}
		}
		if dec, ok := base58Decode(base58Encode([]byte(s))); !ok || string(dec) != s {
			t.Fatalf("base58 round trip of %x gave %x, %v", s, dec, ok)
		}
	})
}
