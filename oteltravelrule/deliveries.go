package oteltravelrule

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vaspkit/travelrule/callback"
)

// Delivered implements [callback.Observer]; it does nothing and returns
// nil: the observer watches deliveries through StartDelivery and
// EndDelivery, and never makes a handler refuse one.
func (o *Observer) Delivered(context.Context, *callback.Delivery) error { return nil }

// StartDelivery implements [callback.DeliveryObserver]: it starts the
// request's span, named "travelrule.callback", which is the parent of the
// spans the handler's function starts. It is a SERVER span, unless the
// request's context already holds a span of this process (an otelhttp
// handler's SERVER span around the mux): then it is an INTERNAL span
// under it, so that one request is one SERVER span.
func (o *Observer) StartDelivery(ctx context.Context) context.Context {
	kind := trace.SpanKindServer
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && !sc.IsRemote() {
		kind = trace.SpanKindInternal
	}
	ctx, span := o.tracer.Start(ctx, deliverySpanName, trace.WithSpanKind(kind))
	return context.WithValue(ctx, deliveryKey{o}, span)
}

// deliveryKey holds the delivery's span in its context: the span
// EndDelivery ends is the observer's own, never one of the caller's.
type deliveryKey struct{ o *Observer }

// EndDelivery implements [callback.DeliveryObserver]: it ends the
// request's span with what the handler made of it (status Error when it
// answered 5xx, so that the sender delivers it again) and counts the
// delivery, and the duplicates suppressed.
func (o *Observer) EndDelivery(ctx context.Context, end *callback.DeliveryEnd) {
	span, _ := ctx.Value(deliveryKey{o}).(trace.Span)
	if span == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	if end.Kind != "" {
		attrs = append(attrs, callbackKindKey.String(string(end.Kind)))
	}
	attrs = append(attrs, callbackResultKey.String(string(end.Result)), callbackVerificationKey.String(string(end.Verification)))
	if end.Dedup != "" {
		attrs = append(attrs, callbackDedupKey.String(string(end.Dedup)))
	}
	if end.Status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(end.Status))
	}
	if end.Status >= 500 {
		attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(end.Status)))
		span.SetStatus(codes.Error, "not processed, to be delivered again")
	}
	if end.CompletionLost {
		attrs = append(attrs, callbackLostKey.Bool(true))
		span.SetStatus(codes.Error, "processed, but not recorded as processed: a redelivery may call the function again")
	}
	span.SetAttributes(attrs...)
	span.End()

	var kind []attribute.KeyValue
	if end.Kind != "" {
		kind = []attribute.KeyValue{callbackKindKey.String(string(end.Kind))}
	}
	o.m.deliveries.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		append([]attribute.KeyValue{callbackResultKey.String(string(end.Result))}, kind...)...)))
	if end.Dedup == callback.DedupDuplicate {
		o.m.duplicates.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(kind...)))
	}
	if end.CompletionLost {
		o.m.completionsLost.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(kind...)))
	}
}
