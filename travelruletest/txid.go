package travelruletest

import (
	"net/http"
	"unicode/utf8"

	"github.com/vaspkit/travelrule"
)

// The txId operation of the live service (stage 5 of its guide): after the
// on-chain broadcast, POST {URL}/transfers/txId?q=<transferId> with
// {"txId":"…"} tells the service the transaction's hash, and the service
// sends a TRANSFER_CONFIRMATION to the beneficiary's VASP.

// wireTxID is the body of POST {URL}/transfers/txId.
type wireTxID struct {
	TxID jsonString `json:"txId"`
}

// decodeTxID decodes and checks a txId body and its transfer id: q and
// txId required, txId at most 255 characters (the bound of the
// initiation's txId).
func decodeTxID(q string, body []byte) (string, []travelrule.FieldError, error) {
	var w wireTxID
	if err := decodeObject(body, &w); err != nil {
		return "", nil, err
	}
	var t typeFaults
	if q == "" {
		t = append(t, travelrule.FieldError{Field: "q", Reason: "required"})
	}
	var txID string
	t.str(&txID, "txId", w.TxID)
	switch {
	case w.TxID.bad:
	case txID == "":
		t = append(t, travelrule.FieldError{Field: "txId", Reason: "required"})
	case utf8.RuneCountInString(txID) > 255:
		t = append(t, travelrule.FieldError{Field: "txId", Reason: "longer than 255 characters"})
	}
	return txID, t, nil
}

// submitTxID is POST {URL}/transfers/txId: it records the txId on the
// transfer the integrator initiated, and the TRANSFER_CONFIRMATION the
// service then sends (Transfer.Confirmed), queued when the beneficiary's
// VASP (the integrator) gave a callback URL for it. The same txId again answers the same; another
// txId for a transfer that has one, or for a transfer the beneficiary's VASP
// rejected, is 400 VALIDATION_ERROR [own]; a transfer not
// initiated (an unknown id, or an inquiry) is 404 TRANSFER_NOT_FOUND.
func (s *Server) submitTxID(q string, body []byte) *answer {
	txID, faults, err := decodeTxID(q, body)
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	var a *answer
	switch s.records.submitTxID(q, txID) {
	case txIDNoTransfer:
		return errorAnswer(http.StatusNotFound, codeTransferNotFound, "no transfer initiated with this id (never made, an inquiry, or no longer kept)")
	case txIDConflict:
		a = fieldAnswer(http.StatusBadRequest, codeValidationError, "txId",
			"the transfer already has another txId; a transfer has one transaction")
	case txIDRejected:
		a = fieldAnswer(http.StatusBadRequest, codeValidationError, "txId",
			"the beneficiary's VASP rejected the transfer: it is not to be broadcast")
	default:
		a = dataAnswer(struct {
			TransferID string `json:"transferId"`
			TxID       string `json:"txId"`
		}{q, txID})
	}
	a.transferID = q
	return a
}
