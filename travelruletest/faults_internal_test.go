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
