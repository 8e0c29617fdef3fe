package travelruletest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// generated is a generate answer's travel address and the beneficiary id
// it encodes.
type generated struct {
	TravelAddress string
	BeneficiaryID string
}

// generate posts body to the sandbox's generate and returns its travel
// address, checking that the answer is the live docs' shape and no more,
// {"status":true,"data":{"travelAddress":"ta…"}}, and the beneficiary id
// the address's URI ends with.
func generate(t *testing.T, srv *travelruletest.Server, tok string, body any) generated {
	t.Helper()
	a := post(t, srv.URL+"/travel-address/generate", tok, body)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	var ans struct {
		Status bool              `json:"status"`
		Data   map[string]string `json:"data"`
	}
	require.NoError(t, json.Unmarshal(a.Body, &ans))
	require.True(t, ans.Status)
	ta := ans.Data["travelAddress"]
	assert.Equal(t, map[string]string{"travelAddress": ta}, ans.Data, "the live docs show travelAddress alone")
	_, uri := travelrule.InspectTravelAddress(ta)
	path, _, _ := strings.Cut(uri, "?")
	_, id, _ := strings.Cut(path, "/transfers/inquiry/")
	return generated{TravelAddress: ta, BeneficiaryID: id}
}

func TestGenerateTravelAddress(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/api/v3"))
	tok := token(t, srv)
	got := generate(t, srv, tok, map[string]any{"personType": "natural", "firstName": "Alan", "lastName": "Turing", "walletAddress": "0xfeedbeef"})
	assert.Regexp(t, uuidV4, got.BeneficiaryID)

	form, uri := travelrule.InspectTravelAddress(got.TravelAddress)
	assert.Equal(t, travelrule.TravelAddressUnchecked, form, "the live service's form: no checksum")
	host := strings.TrimPrefix(srv.URL, "http://")
	assert.Equal(t, host+"/transfers/inquiry/"+got.BeneficiaryID+"?t=i", uri)
	decoded, err := travelrule.DecodeTravelAddress(got.TravelAddress)
	require.NoError(t, err)
	assert.Equal(t, uri, decoded)
	assert.NotContains(t, got.TravelAddress, "Turing")

	// A transfer to it reaches that beneficiary.
	m := wire(t, validRequest("http://127.0.0.1:1/cb"))
	m["travelAddress"] = got.TravelAddress
	a := post(t, srv.URL+"/transfers/initiate", tok, m)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	ts := srv.Transfers()
	require.Len(t, ts, 1)
	assert.Equal(t, got.BeneficiaryID, ts[0].BeneficiaryID)
	assert.Equal(t, travelruletest.FlowOpenVASP, ts[0].Flow)

	// Other addresses name no beneficiary of the sandbox's.
	m["travelAddress"] = travelruletest.KnownTravelAddress
	require.Equal(t, http.StatusOK, post(t, srv.URL+"/transfers/initiate", tok, m).Status)
	assert.Empty(t, srv.Transfers()[1].BeneficiaryID)
}

// The same beneficiary gets the same address: by externalId whatever its
// names, or by the person type, names and wallet without one.
func TestGenerateIsStablePerBeneficiary(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	gen := func(body map[string]any) generated { return generate(t, srv, tok, body) }
	alan := map[string]any{"personType": "natural", "firstName": "Alan", "lastName": "Turing", "walletAddress": "0xfeedbeef"}
	with := func(base map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	first := gen(alan)
	for _, tt := range []struct {
		name string
		body map[string]any
		same bool
	}{
		{"the same tuple", alan, true},
		{"the same tuple, custody changed", with(alan, "isSelfHosted", true), true},
		{"another wallet", with(alan, "walletAddress", "0xbeef"), false},
		{"another first name", with(alan, "firstName", "Alain"), false},
		{"no wallet", with(alan, "walletAddress", nil), false},
		{"the same tuple with an externalId", with(alan, "externalId", "cust-1"), false},
		{"a legal person", map[string]any{"personType": "legal", "legalName": "Acme Ltd"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := gen(tt.body)
			if tt.same {
				assert.Equal(t, first, got)
			} else {
				assert.NotEqual(t, first.TravelAddress, got.TravelAddress)
				assert.NotEqual(t, first.BeneficiaryID, got.BeneficiaryID)
			}
		})
	}

	// By externalId: the names and wallet may change (an upsert).
	byID := gen(map[string]any{"personType": "natural", "firstName": "Grace", "lastName": "Hopper", "externalId": "cust-2"})
	again := gen(map[string]any{"personType": "natural", "firstName": "Grace", "lastName": "Murray", "walletAddress": "0xabc", "externalId": "cust-2"})
	assert.Equal(t, byID, again)
	info := decodeAddress(t, srv, tok, byID.TravelAddress)
	assert.Equal(t, map[string]any{"personType": "natural", "firstName": "Grace", "lastName": "Murray", "walletAddress": "0xabc", "externalId": "cust-2"}, info,
		"the beneficiary as last generated, empty fields left out")
}

// decodeAddress posts ta to the sandbox's decode and returns its data.
func decodeAddress(t *testing.T, srv *travelruletest.Server, tok, ta string) map[string]any {
	t.Helper()
	a := post(t, srv.URL+"/travel-address/decode", tok, map[string]string{"travelAddress": ta})
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	var ans struct {
		Status bool           `json:"status"`
		Data   map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(a.Body, &ans))
	require.True(t, ans.Status)
	return ans.Data
}

func TestDecodeTravelAddress(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithTravelAddresses("taRegistered"),
		travelruletest.WithUnknownTravelAddresses(travelruletest.KnownTravelAddress))
	tok := token(t, srv)
	legal := generate(t, srv, tok, map[string]any{"personType": "legal", "legalName": "Acme Ltd", "isSelfHosted": true, "externalId": "acme"})
	// The live docs' four fields and the two that name a legal person; no
	// isSelfHosted, which the live docs' answer does not list.
	assert.Equal(t, map[string]any{"personType": "legal", "legalName": "Acme Ltd", "externalId": "acme"},
		decodeAddress(t, srv, tok, legal.TravelAddress))

	for _, tt := range []struct {
		name, ta string
		status   int
		code     string
	}{
		{"checksummed, not the sandbox's", travelruletest.UnknownTravelAddress, http.StatusNotFound, "INVALID_TRAVEL_ADDRESS"},
		{"registered as unknown", travelruletest.KnownTravelAddress, http.StatusNotFound, "INVALID_TRAVEL_ADDRESS"},
		{"registered: resolves, but no beneficiary", "taRegistered", http.StatusNotFound, "INVALID_TRAVEL_ADDRESS"},
		{"opaque", travelruletest.PlaceholderTravelAddress, http.StatusNotFound, "INVALID_TRAVEL_ADDRESS"},
		{"a generated one, changed", changedLast(legal.TravelAddress), http.StatusBadRequest, "INVALID_TRAVEL_ADDRESS"},
		{"a failed checksum", "taSandboxBeneficiaryVASP", http.StatusBadRequest, "INVALID_TRAVEL_ADDRESS"},
		{"not a ta value", "acct:alan@vasp.example", http.StatusBadRequest, "INVALID_TRAVEL_ADDRESS"},
		{"empty", "", http.StatusBadRequest, "VALIDATION_ERROR"},
		{"too long", "ta" + strings.Repeat("z", 254), http.StatusBadRequest, "VALIDATION_ERROR"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := post(t, srv.URL+"/travel-address/decode", tok, map[string]string{"travelAddress": tt.ta})
			require.Equal(t, tt.status, a.Status, "body %s", a.Body)
			code, _, fields := a.errorBody(t)
			assert.Equal(t, tt.code, code)
			require.Len(t, fields, 1)
			assert.Equal(t, "travelAddress", fields[0].Field)
			if len(tt.ta) > 2 {
				assert.NotContains(t, string(a.Body), tt.ta, "the answer quotes the address")
			}
		})
	}
	for name, body := range map[string]string{"absent": `{}`, "null": `{"travelAddress":null}`, "a number": `{"travelAddress":7}`} {
		t.Run(name, func(t *testing.T) {
			post(t, srv.URL+"/travel-address/decode", tok, body).badRequestFields(t, []string{"travelAddress"})
		})
	}
	a := post(t, srv.URL+"/travel-address/decode", tok, `["ta"]`)
	require.Equal(t, http.StatusBadRequest, a.Status)
	code, _, _ := a.errorBody(t)
	assert.Equal(t, "INVALID_REQUEST", code)
}

func TestGenerateBadRequest(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	for _, tt := range []struct {
		name   string
		body   string
		fields []string
	}{
		{"empty object", `{}`, []string{"personType", "firstName", "lastName"}},
		{"natural without names", `{"personType":"natural"}`, []string{"firstName", "lastName"}},
		{"legal without legalName", `{"personType":"legal","firstName":"Acme"}`, []string{"legalName"}},
		{"a wallet without a hex digit", `{"personType":"natural","firstName":"A","lastName":"T","walletAddress":"zzz-yyy"}`, []string{"walletAddress"}},
		{"names not strings", `{"personType":"natural","firstName":1,"lastName":["T"]}`, []string{"firstName", "lastName"}},
		{"isSelfHosted a string", `{"personType":"natural","firstName":"A","lastName":"T","isSelfHosted":"yes"}`, []string{"isSelfHosted"}},
		{"externalId too long", `{"personType":"natural","firstName":"A","lastName":"T","externalId":"` + strings.Repeat("x", 256) + `"}`, []string{"externalId"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := post(t, srv.URL+"/travel-address/generate", tok, tt.body)
			a.badRequestFields(t, tt.fields)
			assert.NotContains(t, string(a.Body), "zzz-yyy", "messages never carry values")
		})
	}
	for _, body := range []string{``, `null`, `[]`, `{"personType":`} {
		a := post(t, srv.URL+"/travel-address/generate", tok, body)
		require.Equal(t, http.StatusBadRequest, a.Status, "body %q", body)
		code, _, fields := a.errorBody(t)
		assert.Equal(t, "INVALID_REQUEST", code)
		assert.Empty(t, fields)
	}
	a := post(t, srv.URL+"/travel-address/generate", "", `{"personType":"legal","legalName":"Acme"}`)
	assert.Equal(t, http.StatusUnauthorized, a.Status, "a bearer token is needed")
	a = post(t, srv.URL+"/travel-address/decode", srv.ExpiredToken(), `{"travelAddress":"ta1"}`)
	assert.Equal(t, http.StatusForbidden, a.Status)
}

// Beneficiaries are kept within the record limit: the oldest one is
// forgotten, its address no longer decodes, and generating it again makes
// a new one.
func TestBeneficiariesWithinTheRecordLimit(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithRecordLimit(2))
	tok := token(t, srv)
	body := func(id string) map[string]any {
		return map[string]any{"personType": "legal", "legalName": "Acme", "externalId": id}
	}
	first := generate(t, srv, tok, body("1"))
	generate(t, srv, tok, body("2"))
	assert.Equal(t, first, generate(t, srv, tok, body("1")), "an upsert makes nothing new")
	generate(t, srv, tok, body("3"))

	a := post(t, srv.URL+"/travel-address/decode", tok, map[string]string{"travelAddress": first.TravelAddress})
	assert.Equal(t, http.StatusNotFound, a.Status)
	again := generate(t, srv, tok, body("1"))
	assert.NotEqual(t, first.TravelAddress, again.TravelAddress)
	decodeAddress(t, srv, tok, again.TravelAddress)
}

// The SDK's calls read the sandbox's answers.
func TestTravelAddressesThroughTheClient(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/trp"))
	c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := c.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{
		PersonType: "natural", FirstName: "Alan", LastName: "Turing", WalletAddress: "0xfeedbeef", ExternalID: "cust-7",
	})
	require.NoError(t, err)
	assert.Equal(t, travelrule.TravelAddressUnchecked, res.Form)
	_, uri := travelrule.InspectTravelAddress(res.TravelAddress)
	u, err := url.Parse("//" + uri)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(u.Path, "/trp/transfers/inquiry/"), "under the path prefix: %s", u.Path)

	info, err := c.LookupTravelAddress(ctx, res.TravelAddress)
	require.NoError(t, err)
	assert.Equal(t, "natural", info.PersonType)
	assert.Equal(t, "Turing", info.LastName)
	assert.Equal(t, "cust-7", info.ExternalID)

	_, err = c.LookupTravelAddress(ctx, travelruletest.KnownTravelAddress)
	require.ErrorIs(t, err, travelrule.ErrNotFound)
	require.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress)
}

// A path prefix that makes the address longer than a travelAddress may be
// is answered 500, and nothing is stored.
func TestGenerateUnderAnOverlongPrefix(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/"+strings.Repeat("p", 150)))
	a := post(t, srv.URL+"/travel-address/generate", token(t, srv), `{"personType":"legal","legalName":"Acme"}`)
	require.Equal(t, http.StatusInternalServerError, a.Status, "body %s", a.Body)
	code, msg, _ := a.errorBody(t)
	assert.Equal(t, "INTERNAL_ERROR", code)
	assert.Contains(t, msg, "255")
}

// changedLast returns ta with its last character replaced by another
// base58 digit (never the same one, which the random beneficiary id may
// have made it).
func changedLast(ta string) string {
	last := ta[len(ta)-1]
	repl := byte('z')
	if last == repl {
		repl = 'y'
	}
	return ta[:len(ta)-1] + string(repl)
}
