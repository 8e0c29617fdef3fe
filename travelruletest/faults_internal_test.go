package travelruletest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRequestID is the table of the client X-Request-Id values the sandbox
// puts in its log: short identifiers only.
func TestRequestID(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"a-1", "a-1"},
		{"req_42.7", "req_42.7"},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{strings.Repeat("x", 65), ""},
		{"Ada Lovelace", ""},
		{"id\nforged=1", ""},
		{"ünicode", ""},
	} {
		assert.Equal(t, tt.want, requestID(tt.in), "%q", tt.in)
	}
}

// TestLatencyIsBounded: a latency above MaxFaultLatency is refused, and
// latency faults that add up stop at it instead of overflowing to no delay.
func TestLatencyIsBounded(t *testing.T) {
	assert.Error(t, Fault{Kind: FaultLatency, Rate: 1, Latency: MaxFaultLatency + 1}.check())
	assert.Error(t, Fault{Kind: FaultRateLimit, Rate: 1, RetryAfter: 2562047 * time.Hour}.check())
	assert.NoError(t, Fault{Kind: FaultLatency, Rate: 1, Latency: MaxFaultLatency}.check())

	fs := newFaultSchedule(1)
	for range 3 {
		fs.slots = append(fs.slots, faultSlot{Fault: Fault{Kind: FaultLatency, Rate: 1, Latency: MaxFaultLatency}})
	}
	assert.Equal(t, MaxFaultLatency, fs.draw(OpInitiate).latency)
}

// TestUnsetRateDrawsAsRateOne: a Fault with Rate unset draws exactly as
// one with Rate 1, so that the same seed gives the same faults whichever
// way a caller wrote "every request".
func TestUnsetRateDrawsAsRateOne(t *testing.T) {
	fired := func(rate float64) [][]FaultKind {
		fs := newFaultSchedule(7)
		for _, f := range []Fault{{Kind: FaultInternal, Rate: 0.5}, {Kind: FaultRateLimit, Rate: rate, Times: 3}, {Kind: FaultLatency, Rate: 0.3}} {
			fs.slots = append(fs.slots, faultSlot{Fault: f})
		}
		var out [][]FaultKind
		for range 50 {
			out = append(out, fs.draw(OpInitiate).fired)
		}
		return out
	}
	unset := fired(0)
	assert.Equal(t, fired(1), unset)
	var limited int
	for _, ks := range unset {
		for _, k := range ks {
			if k == FaultRateLimit {
				limited++
			}
		}
	}
	assert.Equal(t, 3, limited, "hit the first three requests, then used up")
}
