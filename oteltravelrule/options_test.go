package oteltravelrule_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/oteltravelrule"
)

func TestNewRefusesNil(t *testing.T) {
	tests := []struct {
		name string
		opt  oteltravelrule.Option
		want string
	}{
		{"tracer provider", oteltravelrule.WithTracerProvider(nil), "WithTracerProvider: nil provider"},
		{"meter provider", oteltravelrule.WithMeterProvider(nil), "WithMeterProvider: nil provider"},
		{"propagator", oteltravelrule.WithPropagator(nil), "WithPropagator: nil propagator"},
		{"option", nil, "nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, err := oteltravelrule.New(tt.opt)
			require.Error(t, err)
			assert.Nil(t, obs)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestNewUsesTheGlobalProviders: without options the observer reports to
// the global tracer provider, as it is when New is called.
func TestNewUsesTheGlobalProviders(t *testing.T) {
	global := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(global) })
	sr := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)))

	obs, err := oteltravelrule.New()
	require.NoError(t, err)
	obs.InvalidCall(context.Background(), "InitiateTransfer", &travelrule.ValidationError{})
	require.Len(t, sr.Ended(), 1)
	s := sr.Ended()[0]
	assert.Equal(t, "travelrule.InitiateTransfer", s.Name())
	assert.Equal(t, "github.com/vaspkit/travelrule/oteltravelrule", s.InstrumentationScope().Name)
	assert.Equal(t, travelrule.Version, s.InstrumentationScope().Version)
	assert.Contains(t, s.InstrumentationScope().SchemaURL, "https://opentelemetry.io/schemas/1.43.0")
}
