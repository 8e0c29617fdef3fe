package oteltravelrule

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/vaspkit/travelrule"
)

// attemptState is what the observer keeps of an attempt between
// StartAttempt and EndAttempt, in the attempt's context.
type attemptState struct {
	start time.Time
	span  trace.Span
}

// attemptKey holds an observer's attemptState in the attempt's context.
type attemptKey struct{ o *Observer }

// StartAttempt implements [travelrule.AttemptObserver]: it starts the
// attempt's span, a CLIENT span named "{method} {url.template}" under the
// call's, and, with [WithPropagator], injects its trace context into the
// attempt's request headers.
func (o *Observer) StartAttempt(ctx context.Context, _ *travelrule.CallInfo, a *travelrule.AttemptInfo) context.Context {
	st := &attemptState{start: time.Now()}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(a.Method), semconv.ServerAddress(a.ServerAddress),
		semconv.ServerPort(a.ServerPort), semconv.URLTemplate(a.URLTemplate))
	if a.N > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(a.N-1))
	}
	if cs, _ := ctx.Value(callKey{o}).(*callState); cs != nil {
		// Under this observer's own call span, not under the span of
		// another observer that started after it.
		ctx = trace.ContextWithSpan(ctx, cs.span)
	}
	ctx, st.span = o.tracer.Start(ctx, a.Method+" "+a.URLTemplate, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(st.start), trace.WithAttributes(attrs...))
	if o.propagator != nil && a.Header != nil {
		o.propagator.Inject(ctx, propagation.HeaderCarrier(a.Header))
	}
	return context.WithValue(ctx, attemptKey{o}, st)
}

// EndAttempt implements [travelrule.AttemptObserver]: it ends the
// attempt's span with its answer and the client's retry decision, and
// records the attempt's metrics.
func (o *Observer) EndAttempt(ctx context.Context, call *travelrule.CallInfo, a *travelrule.AttemptInfo, end *travelrule.AttemptEnd) {
	st, _ := ctx.Value(attemptKey{o}).(*attemptState)
	if st == nil {
		return
	}
	now := time.Now()
	errType := attemptErrorType(end.Status, end.ErrorType)
	attrs := make([]attribute.KeyValue, 0, 5)
	if end.Status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(end.Status))
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	if end.Resent > 0 {
		// Sent again by a transport within the attempt: the conventions
		// count resends for any reason.
		attrs = append(attrs, semconv.HTTPRequestResendCount(a.N-1+end.Resent))
	}
	attrs = append(attrs, attemptWrittenKey.Bool(end.Written), retryKey.Bool(end.Retry))
	if end.Reason != "" {
		attrs = append(attrs, retryReasonKey.String(end.Reason))
	}
	st.span.SetAttributes(attrs...)
	switch {
	case end.Status >= 400:
		st.span.SetStatus(codes.Error, "error status")
	case errType != "":
		st.span.SetStatus(codes.Error, "no answer")
	}
	st.span.End(trace.WithTimestamp(now))

	// The metrics: an attempt by its answer's status, or its failure when
	// none came.
	counted := make([]attribute.KeyValue, 0, 3)
	counted = append(counted, operationKey.String(call.Op), retryKey.Bool(end.Retry))
	if end.Status > 0 {
		counted = append(counted, semconv.HTTPResponseStatusCode(end.Status))
	} else {
		counted = append(counted, semconv.ErrorTypeKey.String(errType))
	}
	// A request a transport sent again by itself within the attempt (an
	// HTTP/2 retry of a refused stream) left the client too.
	o.m.attempts.Add(ctx, int64(1+end.Resent), metric.WithAttributeSet(attribute.NewSet(counted...)))

	rd := o.m.requestDuration
	extra := make([]attribute.KeyValue, 0, 3)
	extra = append(extra, rd.AttrURLTemplate(a.URLTemplate))
	if end.Status > 0 {
		extra = append(extra, rd.AttrResponseStatusCode(end.Status))
	}
	if errType != "" {
		extra = append(extra, rd.AttrErrorType(httpconv.ErrorTypeAttr(errType)))
	}
	rd.Record(ctx, now.Sub(st.start).Seconds(), httpconv.RequestMethodAttr(a.Method), a.ServerAddress, a.ServerPort, extra...)
}
