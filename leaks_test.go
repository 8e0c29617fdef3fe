package travelrule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// Every form of err: Error, %v, %+v, %#v, %q, JSON and log/slog (text and
// JSON handlers).
func errorForms(t *testing.T, err error) map[string]string {
	t.Helper()
	js, jerr := json.Marshal(err)
	require.NoError(t, jerr)
	var text, jsonLog bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("m", "err", err)
	slog.New(slog.NewJSONHandler(&jsonLog, nil)).Info("m", "err", err)
	return map[string]string{
		"Error": err.Error(), "%v": fmt.Sprintf("%v", err), "%+v": fmt.Sprintf("%+v", err),
		"%#v": fmt.Sprintf("%#v", err), "%q": fmt.Sprintf("%q", err), "json": string(js),
		"slog text": text.String(), "slog json": jsonLog.String(),
	}
}

// A 2xx answer the client does not understand, or a refusal after an
// attempt the service may have acted on, that names as its transferId a
// personal value of the request (the beneficiary's wallet address): the
// *OutcomeUnknownError shows it in no form, as TransferResult does not.
func TestOutcomeUnknownHidesEchoedTransferID(t *testing.T) {
	req := fullRequest()
	wallet := req.Beneficiary.WalletAddress
	for name, body := range map[string]string{
		"status not understood": `{"status":"weird","transferId":"` + wallet + `"}`,
		"status false":          `{"status":false,"transferId":"` + wallet + `"}`,
		"inside data":           `{"status":"weird","data":{"transferId":"` + wallet + `"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := setup(t, answer(200, body))
			_, err := c.InitiateTransfer(context.Background(), req)
			var unknown *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, wallet, unknown.TransferID, "the field keeps the server's value")
			for form, s := range errorForms(t, err) {
				assert.NotContains(t, s, wallet, form)
			}
		})
	}
}

// A transfer id that is an identifier and no personal value is still shown.
func TestOutcomeUnknownShowsPlainTransferID(t *testing.T) {
	c, _ := setup(t, answer(200, `{"status":"weird","transferId":"tr-12345"}`))
	_, err := c.InitiateTransfer(context.Background(), fullRequest())
	var unknown *travelrule.OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)
	assert.Contains(t, fmt.Sprintf("%+v", err), "TransferID:tr-12345")
}
