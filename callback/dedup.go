package callback

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/vaspkit/travelrule"
)

// callOnce calls the function for a delivery that the store lets through:
// it claims key, answers a delivery already processed (204) or in progress
// (503) without calling the function, and afterwards releases the claim if
// the function failed; if it succeeded, it returns the claim to complete
// once the answer is sent (see Handler.complete).
func (h *Handler) callOnce(ctx context.Context, key string, cb *travelrule.Callback, path, attr slog.Attr, p *progress) (int, completion) {
	store := h.dedup
	claim, token, err := store.ClaimFenced(ctx, key)
	switch {
	case err != nil:
		h.log(ctx, slog.LevelError, "callback: de-duplication store failed", path, attr, slog.String("error", err.Error()))
		p.out, p.dedup = outStoreFailed, DedupFailed
		return http.StatusInternalServerError, completion{}
	case claim == ClaimDone:
		h.log(ctx, slog.LevelDebug, "callback: duplicate delivery acknowledged", path, attr)
		p.out, p.dedup = outDuplicate, DedupDuplicate
		return http.StatusNoContent, completion{}
	case claim == ClaimBusy:
		h.log(ctx, slog.LevelInfo, "callback: duplicate delivery still in progress", path, attr)
		p.out, p.dedup = outBusy, DedupInProgress
		return http.StatusServiceUnavailable, completion{}
	case claim != ClaimNew:
		h.log(ctx, slog.LevelError, "callback: de-duplication store returned an invalid claim", path, attr, slog.Int("claim", int(claim)))
		p.out, p.dedup = outStoreFailed, DedupFailed
		return http.StatusInternalServerError, completion{}
	}
	p.dedup = DedupFirst

	code := h.call(ctx, cb, path, attr, p)
	if code == http.StatusNoContent {
		// fn has done its work: whatever the store answers, answering 5xx
		// would only run it again.
		return code, completion{key: key, token: token, path: path, attr: attr}
	}
	// Release runs on a context that outlives the request's, so that a
	// sender hanging up does not leave a delivery claimed, but ends one
	// lease after the function returned, when the claim lapses anyway: a
	// store that waits on its context (as database/sql does when its
	// server hangs) holds the request no longer. It is tried once: a claim
	// it fails to release lapses after its lease, and redeliveries
	// meanwhile are told to come back (503), never let through twice.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.lease)
	defer cancel()
	switch err := store.ReleaseFenced(rctx, key, token); {
	case err == nil:
	case errors.Is(err, ErrClaimLost):
		h.log(ctx, slog.LevelError, "callback: the claim's lease lapsed before the function returned, so another delivery may have called it too; the store's lease should be longer than any call", path, attr, slog.String("op", "release"))
	default:
		h.log(ctx, slog.LevelError, "callback: de-duplication store failed to release a delivery", path, attr, slog.String("error", err.Error()))
	}
	return code, completion{}
}

// completion is a claim whose function succeeded, to be recorded as
// processed; the zero completion is none.
type completion struct {
	key, token string
	path, attr slog.Attr // for the log
}

// The pauses between the attempts of a completion (see completionBackoff).
const (
	firstCompletionPause = 20 * time.Millisecond
	maxCompletionPause   = 5 * time.Second
)

// complete records c's delivery as processed and answers 204. It calls
// CompleteFenced until the store records the delivery, or answers
// ErrClaimLost (another holder has it), or one lease has passed since the
// function returned, pausing between attempts (see completionBackoff). It
// answers after the first attempt if that one ended it, as a handler does
// that returns; else at once, before the retries (see answerEarly). It
// counts the retries and the completions it gives up in h's Stats. The
// attempts, the first included, run on a context that outlives the
// request's and ends when the handler gives up, one lease after the
// function returned: a store that waits on its context (as database/sql
// does when its server hangs) holds the request no longer. It reports
// whether the completion was lost.
func (h *Handler) complete(w http.ResponseWriter, r *http.Request, c completion) (wasLost bool) {
	ctx := r.Context()
	deadline := time.Now().Add(h.lease)
	answered := false
	lost := func(msg string, attrs ...slog.Attr) {
		wasLost = true
		h.stats.lost.Add(1)
		h.log(ctx, slog.LevelError, msg, append([]slog.Attr{c.path, c.attr}, attrs...)...)
	}
	defer func() {
		if v := recover(); v != nil {
			lost("callback: de-duplication store panicked while completing a delivery; a redelivery may call the function again",
				slog.String("panic", fmt.Sprintf("%T", v)), slog.String("stack", string(debug.Stack())))
		}
		if !answered {
			w.WriteHeader(http.StatusNoContent)
		}
	}()
	sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	var timer *time.Timer
	for failed := 0; ; {
		err := h.dedup.CompleteFenced(sctx, c.key, c.token)
		switch {
		case err == nil:
			if failed > 0 {
				h.log(ctx, slog.LevelInfo, "callback: delivery recorded as processed after the store failed", c.path, c.attr, slog.Int("attempts", failed+1))
			}
			return
		case errors.Is(err, ErrClaimLost):
			lost("callback: another delivery holds or processed this delivery's claim, whose lease lapsed before the completion was recorded, so it may have called the function too; the store's lease should be longer than any call and any store outage",
				slog.Int("attempts", failed+1))
			return
		}
		failed++
		pause := completionBackoff(failed, h.lease, rand.Float64())
		if time.Now().Add(pause).After(deadline) {
			lost("callback: gave up recording a processed delivery after the store failed for a whole lease; a redelivery may call the function again",
				slog.Int("attempts", failed), slog.String("error", err.Error()))
			return
		}
		h.stats.retries.Add(1)
		if failed == 1 {
			h.log(ctx, slog.LevelWarn, "callback: de-duplication store failed to record a processed delivery; retrying", c.path, c.attr, slog.String("error", err.Error()))
			answered = true
			answerEarly(w, r)
			timer = time.NewTimer(pause)
			defer timer.Stop()
		} else {
			timer.Reset(pause)
		}
		<-timer.C
	}
}

// answerEarly answers 204 to a delivery whose completion the handler goes
// on retrying, and flushes the answer (through http.ResponseController), so
// that the sender has it at once. Over HTTP/1 it also closes the
// connection after the handler returns (Connection: close), so that the
// sender does not send its next request on a connection that the handler
// still holds; over HTTP/2 the other streams go on, and this one ends when
// the handler returns. A ResponseWriter that cannot flush (one that a
// middleware buffers) sends the answer when the handler returns.
func answerEarly(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(http.StatusNoContent)
	_ = http.NewResponseController(w).Flush()
}

// completionBackoff is the pause after the failed-th failed attempt of a
// completion (failed >= 1), for a store whose claims hold for lease, with
// jitter in [0, 1): 20 ms after the first failure, doubling after each,
// up to an eighth of the lease but at most 5 s (and at least 20 ms); of
// that, a random part in its upper half, so that handlers that failed
// together do not retry together.
func completionBackoff(failed int, lease time.Duration, jitter float64) time.Duration {
	ceiling := max(min(lease/8, maxCompletionPause), firstCompletionPause)
	d := ceiling
	if shift := failed - 1; shift < 30 {
		d = min(firstCompletionPause<<shift, ceiling)
	}
	return d/2 + time.Duration(jitter*float64(d/2))
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
