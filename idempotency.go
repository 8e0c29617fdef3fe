package travelrule

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// Idempotency keys: the Idempotency-Key header a client made
// [WithIdempotency] sends with each call.

type idempotencyKeyCtx struct{}

// ContextWithIdempotencyKey returns a context that makes the next call made
// with it carry key as its Idempotency-Key, when the client was made
// [WithIdempotency]. Use it to send a call again, after an
// [*OutcomeUnknownError], with the key that error reported, or to derive the
// key from your own payment identifier.
func ContextWithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

// idempotencyKeyFrom returns the context's key or a new one.
func idempotencyKeyFrom(ctx context.Context) string {
	if k, ok := ctx.Value(idempotencyKeyCtx{}).(string); ok && k != "" {
		return k
	}
	return NewIdempotencyKey()
}

// NewIdempotencyKey returns a new random key in the form of a version 4
// UUID. Make one before a call and store it with your payment record, then
// call with [ContextWithIdempotencyKey], so that the same payment carries
// the same key even after a restart.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
