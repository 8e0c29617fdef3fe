package oteltravelrule_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vaspkit/travelrule/oteltravelrule"
)

// telemetry is an observer whose spans and metrics go to in-memory
// exporters of the OpenTelemetry SDK.
type telemetry struct {
	obs      *oteltravelrule.Observer
	spans    *tracetest.SpanRecorder
	reader   *sdkmetric.ManualReader
	provider *sdktrace.TracerProvider // the observer's, for a test's own spans
}

func newTelemetry(t *testing.T, opts ...oteltravelrule.Option) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	obs, err := oteltravelrule.New(append([]oteltravelrule.Option{
		oteltravelrule.WithTracerProvider(tp), oteltravelrule.WithMeterProvider(mp)}, opts...)...)
	require.NoError(t, err)
	tel.obs, tel.provider = obs, tp
	return tel
}

// ended returns the spans that have ended, in the order they ended.
func (tel *telemetry) ended() []sdktrace.ReadOnlySpan { return tel.spans.Ended() }

// named returns the ended spans named name.
func (tel *telemetry) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// childrenOf returns the ended spans whose parent is parent, in the order
// they ended.
func (tel *telemetry) childrenOf(parent sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.ended() {
		if s.Parent().SpanID() == parent.SpanContext().SpanID() && s.Parent().IsValid() {
			out = append(out, s)
		}
	}
	return out
}

// attrs returns a span's attributes as a map.
func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]any {
	m := map[attribute.Key]any{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value.AsInterface()
	}
	return m
}

// metrics collects the metrics recorded so far.
func (tel *telemetry) metrics(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	return rm
}

// points returns the data points of the metric named name, keyed by
// their attributes written as "k=v,k=v" in key order, each with its
// value: a counter's sum, a histogram's count.
func points(t *testing.T, rm metricdata.ResourceMetrics, name string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[setString(p.Attributes)] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[setString(p.Attributes)] += int64(p.Count)
				}
			default:
				t.Fatalf("metric %s: unexpected data %T", name, m.Data)
			}
		}
	}
	return out
}

func setString(s attribute.Set) string {
	var b []byte
	for i, kv := range s.ToSlice() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, kv.Key...)
		b = append(b, '=')
		b = append(b, kv.Value.String()...)
	}
	return string(b)
}
