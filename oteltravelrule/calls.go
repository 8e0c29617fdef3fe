package oteltravelrule

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vaspkit/travelrule"
)

// callState is what the observer keeps of a call between StartCall and
// EndCall, in the call's context.
type callState struct {
	start time.Time
	span  trace.Span
}

// callKey holds an observer's callState in the call's context: each
// observer finds its own, when several watch the same call.
type callKey struct{ o *Observer }

// StartCall implements [travelrule.Observer]: it starts the call's span,
// named "travelrule.<Op>", and returns a context that carries it.
func (o *Observer) StartCall(ctx context.Context, info *travelrule.CallInfo) (context.Context, error) {
	st := &callState{start: time.Now()}
	ctx, st.span = o.tracer.Start(ctx, callSpanPrefix+info.Op, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(st.start), trace.WithAttributes(operationKey.String(info.Op)))
	return context.WithValue(ctx, callKey{o}, st), nil
}

// EndCall implements [travelrule.Observer]: it ends the call's span with
// the call's outcome and records the call's metrics.
func (o *Observer) EndCall(ctx context.Context, info *travelrule.CallInfo, end *travelrule.CallEnd) {
	st, _ := ctx.Value(callKey{o}).(*callState)
	if st == nil {
		return
	}
	now := time.Now()
	out := outcome(end.Err)
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, outcomeKey.String(out), attemptsKey.Int(end.Attempts))
	if end.Status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(end.Status))
	}
	if len(end.Codes) > 0 {
		attrs = append(attrs, errorCodesKey.StringSlice(end.Codes))
	}
	if end.RequestID != "" {
		attrs = append(attrs, requestIDKey.String(end.RequestID))
	}
	if info.Decision != "" {
		attrs = append(attrs, decisionKey.String(string(info.Decision)))
	}
	if o.transferIDs && end.TransferID != "" {
		attrs = append(attrs, transferIDKey.String(end.TransferID))
	}
	endCallSpan(st.span, out, callErrorType(out, end.Status, end.ErrorType), attrs, now)
	o.recordCall(ctx, info.Op, out, now.Sub(st.start))
}

// InvalidCall implements [travelrule.ValidationObserver]: a call that
// failed the client's own checks gets a call span of its own, outcome
// validation, and counts in the call duration metric with a duration of
// zero (nothing was sent).
func (o *Observer) InvalidCall(ctx context.Context, op string, _ *travelrule.ValidationError) {
	now := time.Now()
	_, span := o.tracer.Start(ctx, callSpanPrefix+op, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(now), trace.WithAttributes(operationKey.String(op)))
	endCallSpan(span, outcomeValidation, outcomeValidation, []attribute.KeyValue{
		outcomeKey.String(outcomeValidation), attemptsKey.Int(0),
	}, now)
	o.recordCall(ctx, op, outcomeValidation, 0)
}

// endCallSpan sets a call span's attributes and status and ends it: a
// call that failed has status Error, described in fixed words (never the
// error's text, which may quote the server), and error.type; one whose
// outcome is unknown also has travelrule.outcome_unknown=true.
func endCallSpan(span trace.Span, out, errType string, attrs []attribute.KeyValue, at time.Time) {
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	if out == outcomeUnknown {
		attrs = append(attrs, outcomeUnknownKey.Bool(true))
	}
	span.SetAttributes(attrs...)
	if d := callStatus(out); d != "" {
		span.SetStatus(codes.Error, d)
	}
	span.End(trace.WithTimestamp(at))
}

// callStatus is the description of a call span's Error status for the
// outcome out, "" for a success.
func callStatus(out string) string {
	switch out {
	case outcomeSuccess:
		return ""
	case outcomeRefused:
		return "refused by the service"
	case outcomeValidation:
		return "invalid request, nothing sent"
	case outcomeUnknown:
		return "outcome unknown: the service may have acted"
	}
	return "failed"
}

// recordCall records a call's duration, and counts it if its outcome is
// unknown.
func (o *Observer) recordCall(ctx context.Context, op, out string, d time.Duration) {
	o.m.callDuration.Record(ctx, d.Seconds(), metric.WithAttributeSet(
		attribute.NewSet(operationKey.String(op), outcomeKey.String(out))))
	if out == outcomeUnknown {
		o.m.outcomeUnknown.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(operationKey.String(op))))
	}
}
