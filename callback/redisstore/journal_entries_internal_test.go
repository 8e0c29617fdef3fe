package redisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestScoreRange checks the scores that a query's times select: every
// entry in [from, to), and at most the rest of a millisecond that from or
// to cuts.
func TestScoreRange(t *testing.T) {
	ms := func(n int64) time.Time { return time.UnixMilli(n) }
	tests := []struct {
		name     string
		from, to time.Time
		lo, hi   string
	}{
		{"no bounds", time.Time{}, time.Time{}, "", ""},
		{"whole milliseconds", ms(1000), ms(2000), "1000", "1999"},
		{"from inside a millisecond", ms(1000).Add(300 * time.Microsecond), time.Time{}, "1000", ""},
		{"to inside a millisecond", time.Time{}, ms(2000).Add(300 * time.Microsecond), "", "2000"},
		{"to a nanosecond after one", time.Time{}, ms(2000).Add(time.Nanosecond), "", "2000"},
		{"one millisecond", ms(1000), ms(1001), "1000", "1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := scoreRange(tt.from, tt.to)
			assert.Equal(t, tt.lo, lo)
			assert.Equal(t, tt.hi, hi)
		})
	}
}
