package oteltravelrule_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/vaspkit/travelrule/oteltravelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestPropagation: with WithPropagator each attempt's request carries the
// attempt span's trace context, so the service sees a traceparent whose
// parent id is that attempt's span; without it no request carries one,
// even with a global propagator set.
func TestPropagation(t *testing.T) {
	global := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(global) })

	for _, inject := range []bool{false, true} {
		name := "without WithPropagator"
		var opts []oteltravelrule.Option
		if inject {
			name = "with WithPropagator"
			opts = append(opts, oteltravelrule.WithPropagator(propagation.TraceContext{}))
		}
		t.Run(name, func(t *testing.T) {
			tel := newTelemetry(t, opts...)
			srv, client := sandbox(t, tel)
			srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, Ops: travelruletest.OpInitiate})
			_, err := client.InitiateTransfer(context.Background(), transfer())
			require.NoError(t, err)

			attempts := tel.named("POST /transfers/initiate")
			require.Len(t, attempts, 2)
			var seen []string
			for _, r := range srv.Requests() {
				if r.Op == travelruletest.OpInitiate {
					seen = append(seen, r.Header.Get("traceparent"))
					assert.Empty(t, r.Header.Get("tracestate"))
				}
			}
			require.Len(t, seen, 2)
			for i, a := range attempts {
				if !inject {
					assert.Empty(t, seen[i], "attempt %d sends no trace context", i+1)
					continue
				}
				sc := a.SpanContext()
				assert.Equal(t, "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01", seen[i], "attempt %d: its own span", i+1)
			}
		})
	}
}
