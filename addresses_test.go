package travelrule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

func TestGenerateTravelAddress(t *testing.T) {
	for _, tt := range []struct {
		name   string
		req    travelrule.TravelAddressRequest
		wire   map[string]any
		answer string
	}{
		{"natural, custodial, wrapped answer",
			travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "Alan", LastName: "Turing", WalletAddress: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", ExternalID: "cust-42"},
			map[string]any{"personType": "natural", "firstName": "Alan", "lastName": "Turing", "walletAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "externalId": "cust-42", "isSelfHosted": false},
			`{"status":true,"data":{"travelAddress":"` + liveUncheckedAddress + `"}}`},
		{"legal, self-hosted, unwrapped answer",
			travelrule.TravelAddressRequest{PersonType: "legal", LegalName: "Acme Custody GmbH", WalletAddress: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", IsSelfHosted: true},
			map[string]any{"personType": "legal", "legalName": "Acme Custody GmbH", "walletAddress": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "isSelfHosted": true},
			`{"travelAddress":"` + liveUncheckedAddress + `"}`},
		{"the docs' curl example: no wallet, the placeholder answer",
			travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "Jane", LastName: "Doe"},
			map[string]any{"personType": "natural", "firstName": "Jane", "lastName": "Doe", "isSelfHosted": false},
			`{"status":true,"data":{"travelAddress":"` + livePlaceholder + `"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			if tt.answer != "" {
				live.handle("/travel-address/generate", answer(200, tt.answer))
			}
			c := live.client(t, liveKey)
			res, err := c.GenerateTravelAddress(context.Background(), &tt.req)
			require.NoError(t, err)
			var sent map[string]any
			reqs := live.requests("/travel-address/generate")
			require.Len(t, reqs, 1)
			assert.Equal(t, http.MethodPost, reqs[0].Method)
			require.NoError(t, json.Unmarshal(reqs[0].Body, &sent))
			assert.Equal(t, tt.wire, sent)
			form, _ := travelrule.InspectTravelAddress(res.TravelAddress)
			assert.Equal(t, form, res.Form)
			assert.NotEmpty(t, res.TravelAddress)
			assert.Equal(t, 1, res.Attempts)
			shown := fmt.Sprintf("%v %+v %#v %v", res, res, tt.req, &tt.req)
			var logs bytes.Buffer
			slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "req", tt.req, "res", res)
			for _, v := range []string{res.TravelAddress, "Alan", "Acme", "Jane", "0x742d", "bc1q", "cust-42"} {
				assert.NotContains(t, shown, v)
				assert.NotContains(t, logs.String(), v)
			}
		})
	}
}

// TestGenerateTravelAddressIsRetried: the same beneficiary gets the same
// address, so a failure after sending is retried.
func TestGenerateTravelAddressIsRetried(t *testing.T) {
	live := newLiveService(t)
	var n atomic.Int64
	live.handle("/travel-address/generate", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		answer(200, `{"status":true,"data":{"travelAddress":"`+liveUncheckedAddress+`"}}`)(w, r)
	})
	c := live.client(t, liveKey)
	res, err := c.GenerateTravelAddress(context.Background(), &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "A", LastName: "B"})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	assert.Equal(t, travelrule.TravelAddressUnchecked, res.Form)
}

func TestGenerateTravelAddressValidates(t *testing.T) {
	for _, tt := range []struct {
		name   string
		req    *travelrule.TravelAddressRequest
		fields []string
	}{
		{"nil", nil, []string{""}},
		{"empty", &travelrule.TravelAddressRequest{}, []string{"personType", "firstName", "lastName"}},
		{"legal without legalName", &travelrule.TravelAddressRequest{PersonType: "legal", FirstName: "A"}, []string{"legalName"}},
		{"a wallet without a hex digit", &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "A", LastName: "B", WalletAddress: "xyz"}, []string{"walletAddress"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			c := live.client(t, liveKey)
			_, err := c.GenerateTravelAddress(context.Background(), tt.req)
			var ve *travelrule.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.fields, fieldPaths(ve))
			assert.Empty(t, live.requests(""), "nothing was sent, not even a login")
		})
	}
}

func TestGenerateTravelAddressAnswers(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		err        error
	}{
		{"no address", `{"status":true,"data":{}}`, travelrule.ErrUnexpectedResponse},
		{"refused", `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"walletAddress must contain a hex character"}]}`, travelrule.CodeValidationError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			live.handle("/travel-address/generate", answer(200, tt.body))
			c := live.client(t, liveKey, travelrule.WithRetryMax(0))
			_, err := c.GenerateTravelAddress(context.Background(), &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "A", LastName: "B"})
			require.ErrorIs(t, err, tt.err)
		})
	}
}

func TestLookupTravelAddress(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	info, err := c.LookupTravelAddress(context.Background(), liveUncheckedAddress)
	require.NoError(t, err)
	assert.Equal(t, "Alan", info.FirstName)
	assert.Equal(t, "Turing", info.LastName)
	assert.Equal(t, "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", info.WalletAddress)
	assert.Equal(t, "cust-42", info.ExternalID)
	var sent map[string]any
	require.NoError(t, json.Unmarshal(live.requests("/travel-address/decode")[0].Body, &sent))
	assert.Equal(t, map[string]any{"travelAddress": liveUncheckedAddress}, sent)
	shown := fmt.Sprintf("%v %+v %#v", info, info, *info)
	for _, v := range []string{"Alan", "Turing", "0x742d", "cust-42"} {
		assert.NotContains(t, shown, v)
	}

	_, err = c.LookupTravelAddress(context.Background(), liveOpaqueAddress)
	require.ErrorIs(t, err, travelrule.ErrInvalidTravelAddress, "the service's INVALID_TRAVEL_ADDRESS")
	require.ErrorIs(t, err, travelrule.ErrNotFound)
	assert.NotContains(t, err.Error(), liveOpaqueAddress)

	_, err = c.LookupTravelAddress(context.Background(), "")
	require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
}
