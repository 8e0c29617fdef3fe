package oteltravelrule

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/vaspkit/travelrule"
)

// The values of travelrule.token.result.
const (
	tokenOK    = "ok"
	tokenError = "error"
)

// TokenFetched implements [travelrule.TokenObserver]: it counts the fetch
// by its result and, when it failed, its error.type.
func (o *Observer) TokenFetched(ctx context.Context, f *travelrule.TokenFetch) {
	set := attribute.NewSet(tokenResultKey.String(tokenOK))
	if f.Err != nil {
		t := f.ErrorType
		if t == "" {
			t = otherErrorType
		}
		set = attribute.NewSet(tokenResultKey.String(tokenError), semconv.ErrorTypeKey.String(t))
	}
	o.m.tokenFetches.Add(ctx, 1, metric.WithAttributeSet(set))
}
