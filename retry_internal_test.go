package travelrule

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"5", 5 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"9223372036", 9223372036 * time.Second, true}, // the largest whole-second Duration
		// Centuries: beyond a Duration, so the largest one, above any cap
		// (it was negative, or 290 ms, before overflow checks).
		{"9223372037", math.MaxInt64, true},
		{"18446744074", math.MaxInt64, true},
		{"99999999999999999999999", math.MaxInt64, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"Mon, 23 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Mon, 23 Nov 2026 11:00:00 GMT", 0, true}, // in the past
		{"Fri, 31 Dec 9999 23:59:59 GMT", math.MaxInt64, true},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			h := http.Header{}
			if tt.header != "" {
				h.Set("Retry-After", tt.header)
			}
			got, ok := retryAfter(h, now)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
			assert.GreaterOrEqual(t, got, time.Duration(0))
		})
	}
}
