package travelrule

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHeaderRefusal is the one decision of which headers a call's options
// and its observers may not set.
func TestHeaderRefusal(t *testing.T) {
	for _, tt := range []struct {
		key     string
		refused bool
	}{
		{"X-Tenant", false},
		{"Traceparent", false},
		{"Tracestate", false},
		{"Baggage", false},
		{"X-Request-Id", false},
		{"Authorization", true},
		{"Content-Type", true},
		{"Accept", true},
		{"User-Agent", true},
		{"Idempotency-Key", true},
		{"Host", true},
		{"Content-Length", true},
		{"Transfer-Encoding", true},
		{"Connection", true},
		{"Keep-Alive", true},
		{"Proxy-Connection", true},
		{"Te", true},
		{"Trailer", true},
		{"Upgrade", true},
		{"Expect", true},
		{"Http2-Settings", true},
		{"Accept-Encoding", true},
		{"Content-Encoding", true},
		{"Range", true},
		{"If-Range", true},
		{"", true},
		{"Bad Name", true},
		{"Bad\r\nName", true},
		{":authority", true},
		{"Idempotency_Key", true},
		{"Content_Length", true},
		{"X_Tenant", false},
	} {
		t.Run(tt.key, func(t *testing.T) {
			assert.Equal(t, tt.refused, headerRefusal(tt.key) != "", headerRefusal(tt.key))
		})
	}
}

// TestSettleCallWithoutOptionsAllocatesNothing: a call without options
// costs what it cost before they existed.
func TestSettleCallWithoutOptionsAllocatesNothing(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		if o, err := settleCall(nil); o != nil || err != nil {
			t.Fatal("options from nothing")
		}
	})
	assert.Zero(t, allocs)
}
