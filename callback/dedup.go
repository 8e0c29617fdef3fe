package callback

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"

	"github.com/vaspkit/travelrule"
)

// callOnce calls the function for a delivery that the store lets through:
// it claims key, answers a delivery already processed (204) or in progress
// (503) without calling the function, and afterwards completes the claim
// if the function succeeded or releases it if not.
func (h *Handler) callOnce(ctx context.Context, key string, cb *travelrule.Callback, path, attr slog.Attr) int {
	store := h.dedup
	claim, token, err := store.ClaimFenced(ctx, key)
	switch {
	case err != nil:
		h.log(ctx, slog.LevelError, "callback: de-duplication store failed", path, attr, slog.String("error", err.Error()))
		return http.StatusInternalServerError
	case claim == ClaimDone:
		h.log(ctx, slog.LevelDebug, "callback: duplicate delivery acknowledged", path, attr)
		return http.StatusNoContent
	case claim == ClaimBusy:
		h.log(ctx, slog.LevelInfo, "callback: duplicate delivery still in progress", path, attr)
		return http.StatusServiceUnavailable
	case claim != ClaimNew:
		h.log(ctx, slog.LevelError, "callback: de-duplication store returned an invalid claim", path, attr, slog.Int("claim", int(claim)))
		return http.StatusInternalServerError
	}

	code := h.call(ctx, cb, path, attr)
	// Complete and Release run on a context that outlives the request's, so
	// that a sender hanging up does not leave a delivery claimed; the store
	// bounds their time (see Store).
	sctx := context.WithoutCancel(ctx)
	if code == http.StatusNoContent {
		// fn has done its work: whatever the store answers, answering 5xx
		// would only run it again.
		h.logEnd(ctx, "complete", store.CompleteFenced(sctx, key, token), path, attr)
	} else {
		h.logEnd(ctx, "release", store.ReleaseFenced(sctx, key, token), path, attr)
	}
	return code
}

// logEnd logs the error, if any, of the end of a claim (op is "complete"
// or "release").
func (h *Handler) logEnd(ctx context.Context, op string, err error, path, attr slog.Attr) {
	switch {
	case err == nil:
	case errors.Is(err, ErrClaimLost):
		h.log(ctx, slog.LevelError, "callback: the claim's lease lapsed before the function returned, so another delivery may have called it too; the store's lease should be longer than any call", path, attr, slog.String("op", op))
	default:
		h.log(ctx, slog.LevelError, "callback: de-duplication store failed to "+op+" a delivery", path, attr, slog.String("error", err.Error()))
	}
}

// deliveryID is the delivery's webhook-id, read as the verifier reads it:
// under the Standard Webhooks name or its svix alias; or "" when the
// handler's verifiers do not let it trust the id (see trustsDeliveryID).
func deliveryID(h http.Header, verifiers []Verifier) string {
	if !trustsDeliveryID(verifiers) {
		return ""
	}
	id, _, _ := webhookHeaders(h)
	return id
}

// trustsDeliveryID reports whether a handler with these verifiers keys
// de-duplication on the webhook-id header: only when a [WebhookVerifier]
// checks the request, since only its signature covers the header. Without
// one (the live service's x-data-integrity, a capability URL alone, a
// verifier of the integrator's, or one wrapped in another type), a
// replayed body with a made-up id must not pass as a new delivery, so the
// body keys it.
func trustsDeliveryID(verifiers []Verifier) bool {
	for _, v := range verifiers {
		if _, ok := v.(*WebhookVerifier); ok {
			return true
		}
	}
	return false
}

// dedupKey identifies a delivery: by its webhook-id when it has one, else by
// its verified reference and body. Both are hashed, so keys are 69 ASCII
// characters whatever the input.
func dedupKey(webhookID, ref string, body []byte) string {
	m := sha256.New()
	prefix := "body:"
	if webhookID != "" {
		prefix = "whid:"
		m.Write([]byte("webhook-id\x00"))
		m.Write([]byte(ref))
		m.Write([]byte{0})
		m.Write([]byte(webhookID))
	} else {
		m.Write([]byte("body\x00"))
		m.Write([]byte(ref))
		m.Write([]byte{0})
		m.Write(body)
	}
	var sum [sha256.Size]byte
	var key [5 + 2*sha256.Size]byte
	copy(key[:], prefix)
	hex.Encode(key[5:], m.Sum(sum[:0]))
	return string(key[:])
}
