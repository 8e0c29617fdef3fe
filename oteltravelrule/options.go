package oteltravelrule

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Option configures an [Observer] made by [New].
type Option func(*config)

type config struct {
	tracerProvider trace.TracerProvider // nil: otel.GetTracerProvider()
	meterProvider  metric.MeterProvider // nil: otel.GetMeterProvider()
	propagator     propagation.TextMapPropagator
	transferIDs    bool
	err            error
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// WithTracerProvider sets the provider of the observer's tracer (default:
// the global one, otel.GetTracerProvider, as it is when [New] is called).
// A nil provider makes New fail.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp == nil {
			c.fail(errors.New("oteltravelrule: WithTracerProvider: nil provider"))
			return
		}
		c.tracerProvider = tp
	}
}

// WithMeterProvider sets the provider of the observer's meter (default:
// the global one, otel.GetMeterProvider, as it is when [New] is called).
// A nil provider makes New fail.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp == nil {
			c.fail(errors.New("oteltravelrule: WithMeterProvider: nil provider"))
			return
		}
		c.meterProvider = mp
	}
}

// WithPropagator makes the observer inject the trace context of each
// attempt's span into that attempt's request, in the propagator's headers
// (propagation.TraceContext{} sends traceparent and tracestate), so that
// the service's traces can join the caller's. Without it nothing is
// injected: trace context is sent only to a service you choose to tell.
// A nil propagator makes New fail.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) {
		if p == nil {
			c.fail(errors.New("oteltravelrule: WithPropagator: nil propagator"))
			return
		}
		c.propagator = p
	}
}

// WithTransferIDs records the transfer id of each call, when it has one,
// as the call span's attribute travelrule.transfer_id (never on metrics).
// It is off by default: ResolveInquiry and SubmitTxID carry the transfer
// id in the query string, which telemetry otherwise never holds, and a
// transfer id ties a trace to a payment.
func WithTransferIDs() Option {
	return func(c *config) { c.transferIDs = true }
}
