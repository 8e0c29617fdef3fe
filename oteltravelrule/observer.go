package oteltravelrule

import (
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// Observer reports a [travelrule.Client]'s calls and a [callback.Handler]'s
// deliveries to OpenTelemetry. Give the same Observer to
// [travelrule.WithObserver] and [callback.WithObserver]; it is safe for
// concurrent use. Make it with [New].
type Observer struct {
	tracer      trace.Tracer
	propagator  propagation.TextMapPropagator // nil: nothing is injected
	transferIDs bool
	m           instruments
}

// The interfaces Observer implements.
var (
	_ travelrule.Observer           = (*Observer)(nil)
	_ travelrule.AttemptObserver    = (*Observer)(nil)
	_ travelrule.ValidationObserver = (*Observer)(nil)
	_ travelrule.TokenObserver      = (*Observer)(nil)
	_ callback.Observer             = (*Observer)(nil)
	_ callback.DeliveryObserver     = (*Observer)(nil)
)

// New makes an Observer. By default it uses the global tracer and meter
// providers as they are when New is called, and injects no trace context
// into requests (see [WithPropagator]). It fails on an invalid option or
// when the meter refuses one of the instruments.
func New(opts ...Option) (*Observer, error) {
	var c config
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("oteltravelrule: New: nil option")
		}
		opt(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	o := &Observer{
		tracer: c.tracerProvider.Tracer(scopeName,
			trace.WithInstrumentationVersion(travelrule.Version), trace.WithSchemaURL(semconv.SchemaURL)),
		propagator:  c.propagator,
		transferIDs: c.transferIDs,
	}
	meter := c.meterProvider.Meter(scopeName,
		metric.WithInstrumentationVersion(travelrule.Version), metric.WithSchemaURL(semconv.SchemaURL))
	m, err := newInstruments(meter)
	if err != nil {
		return nil, err
	}
	o.m = m
	return o, nil
}
