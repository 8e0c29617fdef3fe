// Package oteltravelrule reports what the travelrule SDK does as
// OpenTelemetry traces and metrics: a span for each logical call of a
// [travelrule.Client] with a child span for each attempt (after the HTTP
// client semantic conventions), a span for each request a
// [callback.Handler] serves, and metrics of calls, attempts, outcome-unknown
// answers, token fetches and callback deliveries.
//
// One [Observer], made with [New], serves both packages:
//
//	obs, err := oteltravelrule.New() // the global tracer and meter providers
//	if err != nil { … }
//	client, err := travelrule.NewClient(baseURL, travelrule.WithAPIKey(key),
//		travelrule.WithObserver(obs))
//	handler := callback.NewHandler(fn, callback.WithVerifier(v),
//		callback.WithObserver(obs))
//
// It is a package of the SDK's module, not a module of its own: the SDK's
// root and callback packages know only their small observer interfaces
// and import no OpenTelemetry package, so only a program that imports
// this package links OpenTelemetry, and the two always come in matching
// versions.
//
// Nothing personal is recorded: no names, dates, identifiers of persons,
// wallet addresses, bearer tokens, API keys, capability tags or
// references, idempotency keys, query strings or bodies, in any span name,
// attribute, event, status or metric attribute; error texts are never
// recorded either (span statuses carry fixed words). Transfer ids are
// left out unless [WithTransferIDs] asks for them on call spans, and no
// trace context leaves the process unless [WithPropagator] asks for it.
// docs/telemetry.md names every span, attribute and metric.
package oteltravelrule
