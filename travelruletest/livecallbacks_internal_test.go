package travelruletest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestLiveScheduleAndRetryWait: the live service's schedule, as waited:
// each delay as documented, a receiver's Retry-After lengthening a wait up
// to the schedule's next delay and no further.
func TestLiveScheduleAndRetryWait(t *testing.T) {
	m := time.Minute
	live := liveSchedule(m)
	assert.Equal(t, []time.Duration{1 * m, 5 * m, 15 * m, 30 * m, 60 * m, 180 * m, 360 * m, 720 * m, 1440 * m}, live)
	tests := []struct {
		name       string
		i          int
		retryAfter time.Duration
		want       time.Duration
	}{
		{"the first wait", 0, 0, 1 * m},
		{"the seventh wait", 6, 0, 360 * m},
		{"a shorter Retry-After changes nothing", 2, time.Minute, 15 * m},
		{"a longer one lengthens the wait", 0, 3 * m, 3 * m},
		{"up to the next delay", 0, time.Hour, 5 * m},
		{"the last wait is its own bound", 8, 48 * time.Hour, 1440 * m},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retryWait(live, tt.i, tt.retryAfter))
		})
	}
	assert.Equal(t, []time.Duration{time.Millisecond, 5 * time.Millisecond}, liveSchedule(time.Millisecond)[:2], "scaled")
}

// TestTxIDRefusedOnceRejected: the sandbox's decision, not the callbacks
// that announce it, makes a transfer rejected for a txId: one whose state
// has not moved yet is refused too.
func TestTxIDRefusedOnceRejected(t *testing.T) {
	rs := newRecords(10, time.Hour, newCallbackQueue())
	rs.add(&transferRec{Transfer: Transfer{ID: "rejected", State: StateReceived}, decision: StateRejected})
	rs.add(&transferRec{Transfer: Transfer{ID: "approved", State: StateReceived}, decision: StateApproved})
	assert.Equal(t, txIDRejected, rs.submitTxID("rejected", "0xabc"))
	assert.Equal(t, txIDRecorded, rs.submitTxID("approved", "0xabc"))
	tr := rs.transfers["rejected"]
	assert.False(t, tr.Confirmed)
	assert.Empty(t, tr.TxID)
}
