package oteltravelrule

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
)

// The metrics' names.
const (
	callDurationName   = "travelrule.client.call.duration"
	attemptsName       = "travelrule.client.attempts"
	outcomeUnknownName = "travelrule.client.outcome_unknown"
	tokenFetchesName   = "travelrule.client.token.fetches"
	deliveriesName     = "travelrule.callback.deliveries"
	duplicatesName     = "travelrule.callback.duplicates"
	lostName           = "travelrule.callback.completions_lost"
)

// instruments are the observer's metrics; docs/telemetry.md describes
// each.
type instruments struct {
	callDuration    metric.Float64Histogram
	attempts        metric.Int64Counter
	outcomeUnknown  metric.Int64Counter
	tokenFetches    metric.Int64Counter
	deliveries      metric.Int64Counter
	duplicates      metric.Int64Counter
	completionsLost metric.Int64Counter
	requestDuration httpconv.ClientRequestDuration
}

// durationBuckets are the HTTP conventions' buckets, in seconds, with
// longer ones for calls that retry.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120}

func newInstruments(m metric.Meter) (instruments, error) {
	var in instruments
	var errs [8]error
	in.callDuration, errs[0] = m.Float64Histogram(callDurationName, metric.WithUnit("s"),
		metric.WithDescription("Duration of the SDK's logical calls, all attempts and waits included."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.attempts, errs[1] = m.Int64Counter(attemptsName, metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts of the SDK's calls: requests handed to the transport."))
	in.outcomeUnknown, errs[2] = m.Int64Counter(outcomeUnknownName, metric.WithUnit("{call}"),
		metric.WithDescription("Calls that ended with the outcome unknown: the service may have acted; reconcile an initiation before sending it again."))
	in.tokenFetches, errs[3] = m.Int64Counter(tokenFetchesName, metric.WithUnit("{fetch}"),
		metric.WithDescription("Fetches of a bearer token from the client's token source."))
	in.deliveries, errs[4] = m.Int64Counter(deliveriesName, metric.WithUnit("{delivery}"),
		metric.WithDescription("Requests a callback handler served, by the callback's kind and the handler's result."))
	in.duplicates, errs[5] = m.Int64Counter(duplicatesName, metric.WithUnit("{delivery}"),
		metric.WithDescription("Deliveries of callbacks already processed, acknowledged without calling the handler's function."))
	in.completionsLost, errs[6] = m.Int64Counter(lostName, metric.WithUnit("{delivery}"),
		metric.WithDescription("Processed deliveries the handler could not record as processed: a redelivery may call its function again. Should stay zero."))
	in.requestDuration, errs[7] = httpconv.NewClientRequestDuration(m)
	if err := errors.Join(errs[:]...); err != nil {
		return instruments{}, fmt.Errorf("oteltravelrule: New: the meter refused an instrument: %w", err)
	}
	return in, nil
}
