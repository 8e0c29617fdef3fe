package travelrule_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// The live service's envelopes through the client, against the test
// server written from its docs.

// TestRefusalsCarryTheirCodes: an error envelope, under any status, is an
// *APIError with every code; a 2xx with status false is a refusal, never
// success and never ErrOutcomeUnknown.
func TestRefusalsCarryTheirCodes(t *testing.T) {
	twoErrors := `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"Asset is required"},{"code":"INVALID_TRAVEL_ADDRESS","message":"malformed"}]}`
	for _, tt := range []struct {
		name      string
		status    int
		body      string
		codes     []string
		sentinels []error
		text      string
	}{
		{"400 with the documented example", 400, `{"status":false,"errors":[{"code":"INVALID_REQUEST","message":"Asset is required"}]}`,
			[]string{"INVALID_REQUEST"}, []error{travelrule.ErrBadRequest, travelrule.CodeInvalidRequest}, "400 Bad Request: INVALID_REQUEST"},
		{"400 with two codes", 400, twoErrors, []string{"VALIDATION_ERROR", "INVALID_TRAVEL_ADDRESS"},
			[]error{travelrule.ErrBadRequest, travelrule.CodeValidationError, travelrule.CodeInvalidTravelAddress, travelrule.ErrInvalidTravelAddress},
			"400 Bad Request: VALIDATION_ERROR, INVALID_TRAVEL_ADDRESS"},
		{"200 with status false", 200, twoErrors, []string{"VALIDATION_ERROR", "INVALID_TRAVEL_ADDRESS"},
			[]error{travelrule.ErrBadRequest, travelrule.CodeValidationError, travelrule.ErrInvalidTravelAddress},
			"200 OK, status false, not applied: VALIDATION_ERROR, INVALID_TRAVEL_ADDRESS"},
		{"404 unknown travel address", 404, `{"status":false,"errors":[{"code":"INVALID_TRAVEL_ADDRESS","message":"unknown"}]}`,
			[]string{"INVALID_TRAVEL_ADDRESS"}, []error{travelrule.ErrNotFound, travelrule.ErrInvalidTravelAddress}, "404 Not Found: INVALID_TRAVEL_ADDRESS"},
		{"an undocumented code, open list", 422, `{"status":false,"errors":[{"code":"AMOUNT_TOO_LARGE","message":"x"}]}`,
			[]string{"AMOUNT_TOO_LARGE"}, []error{travelrule.ErrorCode("AMOUNT_TOO_LARGE"), travelrule.ErrorCode("amount_too_large")}, "422 Unprocessable Entity: AMOUNT_TOO_LARGE"},
		{"500 internal", 500, `{"status":false,"errors":[{"code":"INTERNAL_ERROR","message":"boom"}]}`,
			[]string{"INTERNAL_ERROR"}, []error{travelrule.ErrServer, travelrule.CodeInternalError}, "INTERNAL_ERROR"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newLiveService(t)
			live.handle("/transfers/initiate", answer(tt.status, tt.body))
			c := live.client(t, liveKey, travelrule.WithRetryMax(0))
			res, err := c.InitiateTransfer(context.Background(), minimalRequest())
			require.Nil(t, res)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.codes, apiErr.Codes)
			assert.Equal(t, tt.codes[0], apiErr.Code)
			for _, s := range tt.sentinels {
				assert.ErrorIs(t, err, s)
			}
			assert.NotErrorIs(t, err, travelrule.CodeTransferNotFound)
			assert.NotErrorIs(t, err, travelrule.ErrUnexpectedResponse)
			if tt.status < 500 {
				assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the service refused: nothing was made")
			}
			assert.Contains(t, err.Error(), tt.text)
		})
	}
}

// TestRefusalMessagesAreRedacted: the service's message may echo what was
// sent; no printed form shows it, ServerMessage returns it as it came.
func TestRefusalMessagesAreRedacted(t *testing.T) {
	live := newLiveService(t)
	live.handle("/transfers/initiate", answer(200, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"Lovelace, Ada born 1815-12-10 is sanctioned"}]}`))
	c := live.client(t, liveKey)
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	for _, shown := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), mustJSON(t, err), printedForms(t, err), printedForms(t, apiErr.Fields)} {
		for _, v := range []string{"Lovelace", "Ada", "1815-12-10"} {
			assert.NotContains(t, shown, v)
		}
	}
	assert.Equal(t, "Lovelace, Ada born 1815-12-10 is sanctioned", apiErr.ServerMessage())
}

// TestResolveInquiryEnvelopes: an unknown transfer is TRANSFER_NOT_FOUND,
// matched by ErrNotFound whatever the status.
func TestResolveInquiryEnvelopes(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey)
	res, err := c.ResolveInquiry(context.Background(), liveTransferID, &travelrule.InquiryResolution{Approved: "true"})
	require.NoError(t, err)
	assert.True(t, res.Status)

	_, err = c.ResolveInquiry(context.Background(), "no-such-transfer", &travelrule.InquiryResolution{Approved: "true"})
	require.ErrorIs(t, err, travelrule.CodeTransferNotFound)
	require.ErrorIs(t, err, travelrule.ErrNotFound)
	assert.NotContains(t, err.Error(), "no-such-transfer", "the query carries the transfer id")

	live.handle("/transfers/inquiryResolution", answer(200, `{"status":false,"errors":[{"code":"TRANSFER_NOT_FOUND","message":"no transfer"}]}`))
	_, err = c.ResolveInquiry(context.Background(), liveTransferID, &travelrule.InquiryResolution{Approved: "true"})
	require.ErrorIs(t, err, travelrule.ErrNotFound, "a 2xx refusal is matched by its code")
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
}

// TestRateLimitIsRetriedWithoutRetryAfter: the live service documents 429
// as its rate limit, without Retry-After: it refused before acting, so even
// an initiation is retried, and a lasting 429 is a definite error.
func TestRateLimitIsRetriedWithoutRetryAfter(t *testing.T) {
	live := newLiveService(t)
	var n atomic.Int64
	live.handle("/transfers/initiate", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			liveError(w, http.StatusTooManyRequests, "RATE_LIMITED", "slow down")
			return
		}
		answer(200, `{"status":true,"data":{"transferId":"t-9"}}`)(w, r)
	})
	c := live.client(t, liveKey)
	res, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	assert.Equal(t, "t-9", res.TransferID)

	live.handle("/transfers/initiate", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrRateLimited)
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "a rate limit is a refusal before acting")
	assert.Len(t, live.requests("/transfers/initiate"), 2+4, "the first attempt and the three retries")
}

// TestTheLiveTravelAddressesPassStrictValidation: every address of the
// live service's docs goes to the service, strict validation or not.
func TestTheLiveTravelAddressesPassStrictValidation(t *testing.T) {
	for _, ta := range []string{liveUncheckedAddress, liveOpaqueAddress, livePlaceholder} {
		live := newLiveService(t)
		c := live.client(t, liveKey, travelrule.WithStrictValidation())
		req := minimalRequest()
		req.TravelAddress = ta
		req.Originator.AccountNumber = "cust-0001" // IVMS101 C1: a date of birth alone does not locate the originator
		_, err := c.InitiateTransfer(context.Background(), req)
		require.NoError(t, err, ta)
		var sent map[string]any
		require.NoError(t, json.Unmarshal(live.requests("/transfers/initiate")[0].Body, &sent))
		assert.Equal(t, ta, sent["travelAddress"], "sent unchanged")
	}
}

// TestLegalPersonsAndTheEmailFlowOnTheWire: a legal entity is sent with
// legalName and without a natural person's fields; beneficiary.email and
// the top-level email go as the live service names them.
func TestLegalPersonsAndTheEmailFlowOnTheWire(t *testing.T) {
	live := newLiveService(t)
	c := live.client(t, liveKey, travelrule.WithStrictValidation())
	req := minimalRequest()
	req.Email = "ops@vasp-a.example"
	req.Originator = travelrule.Party{PersonType: "legal", LegalName: "Acme Custody GmbH", Country: "DE", AccountNumber: "cust-7", WalletAddress: "0xabc"}
	req.Beneficiary.Email = "alan@example.org"
	_, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	var sent struct {
		Email       string         `json:"email"`
		Originator  map[string]any `json:"originator"`
		Beneficiary map[string]any `json:"beneficiary"`
	}
	require.NoError(t, json.Unmarshal(live.requests("/transfers/initiate")[0].Body, &sent))
	assert.Equal(t, "ops@vasp-a.example", sent.Email)
	assert.Equal(t, map[string]any{"personType": "legal", "legalName": "Acme Custody GmbH", "country": "DE", "accountNumber": "cust-7", "walletAddress": "0xabc"}, sent.Originator)
	assert.Equal(t, "alan@example.org", sent.Beneficiary["email"])

	shown := fmt.Sprintf("%v %+v %#v", req, req, req)
	for _, v := range []string{"Acme", "alan@example.org", "ops@vasp-a.example"} {
		assert.NotContains(t, shown, v)
	}
}

// TestRefusalAfterAnAttemptThatMayHaveActed: a refusal that follows an
// attempt the service may have acted on (a 502) may be about what that
// attempt did: the outcome is unknown, the refusal its cause.
func TestRefusalAfterAnAttemptThatMayHaveActed(t *testing.T) {
	live := newLiveService(t)
	var n atomic.Int64
	first502 := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%2 == 1 {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			answer(200, body)(w, r)
		}
	}
	refusal := `{"status":false,"errors":[{"code":"DUPLICATE_REQUEST","message":"seen"}]}`
	live.handle("/transfers/initiate", first502(refusal))
	live.handle("/transfers/inquiryResolution", first502(refusal))
	c := live.client(t, liveKey, travelrule.WithIdempotency())
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	require.ErrorIs(t, err, travelrule.ErrorCode("DUPLICATE_REQUEST"))

	_, err = c.ResolveInquiry(context.Background(), liveTransferID, &travelrule.InquiryResolution{Approved: "true"})
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)

	// Without an earlier attempt, the same refusal is definite.
	live.handle("/transfers/initiate", answer(200, refusal))
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrorCode("DUPLICATE_REQUEST"))
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown)
}

// TestRefusalNamingATransferIsNotDefinite: a false status that names a
// transfer may be about a transfer that exists.
func TestRefusalNamingATransferIsNotDefinite(t *testing.T) {
	for _, body := range []string{
		`{"status":false,"data":{"transferId":"tr-created-1"},"errors":[{"code":"CALLBACK_NOT_FOUND"}]}`,
		`{"status":false,"transferId":"tr-created-1"}`,
	} {
		live := newLiveService(t)
		live.handle("/transfers/initiate", answer(200, body))
		c := live.client(t, liveKey)
		_, err := c.InitiateTransfer(context.Background(), minimalRequest())
		var unknown *travelrule.OutcomeUnknownError
		require.ErrorAs(t, err, &unknown, body)
		if strings.Contains(body, "tr-created-1") {
			assert.Equal(t, "tr-created-1", unknown.TransferID)
		}
	}
}

// TestHugeErrorArraysMakeALine: a thousand-entry errors array makes an
// error line of bounded length.
func TestHugeErrorArraysMakeALine(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"status":false,"errors":[`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"code":"CODE_%d","message":"m","field":"asset"}`, i)
	}
	b.WriteString(`]}`)
	live := newLiveService(t)
	live.handle("/transfers/initiate", answer(400, b.String()))
	c := live.client(t, liveKey)
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Len(t, apiErr.Codes, 100, "the entries kept")
	assert.Less(t, len(err.Error()), 300, err.Error())
	assert.Less(t, len(fmt.Sprintf("%+v", err)), 1000)
	assert.Contains(t, err.Error(), "CODE_0, CODE_1, CODE_2, CODE_3, CODE_4 (+95 more)")
	assert.Contains(t, err.Error(), "(fields: asset)")
}
