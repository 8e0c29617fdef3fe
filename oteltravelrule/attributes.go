package oteltravelrule

import "go.opentelemetry.io/otel/attribute"

// The SDK's own attribute keys; the HTTP ones come from the semantic
// conventions package (semconv). docs/telemetry.md describes each.
const (
	operationKey      = attribute.Key("travelrule.operation")
	outcomeKey        = attribute.Key("travelrule.outcome")
	outcomeUnknownKey = attribute.Key("travelrule.outcome_unknown")
	attemptsKey       = attribute.Key("travelrule.attempts")
	errorCodesKey     = attribute.Key("travelrule.error_codes")
	requestIDKey      = attribute.Key("travelrule.request_id")
	decisionKey       = attribute.Key("travelrule.decision")
	transferIDKey     = attribute.Key("travelrule.transfer_id")

	attemptWrittenKey = attribute.Key("travelrule.attempt.written")
	retryKey          = attribute.Key("travelrule.retry")
	retryReasonKey    = attribute.Key("travelrule.retry_reason")

	tokenResultKey = attribute.Key("travelrule.token.result")

	callbackKindKey         = attribute.Key("travelrule.callback.kind")
	callbackResultKey       = attribute.Key("travelrule.callback.result")
	callbackVerificationKey = attribute.Key("travelrule.callback.verification")
	callbackDedupKey        = attribute.Key("travelrule.callback.dedup")
	callbackLostKey         = attribute.Key("travelrule.callback.completion_lost")
)

// The span and scope names.
const (
	// scopeName names the tracer and the meter.
	scopeName = "github.com/vaspkit/travelrule/oteltravelrule"
	// callSpanPrefix precedes the operation in a call span's name.
	callSpanPrefix = "travelrule."
	// deliverySpanName names a callback delivery's span.
	deliverySpanName = "travelrule.callback"
)
