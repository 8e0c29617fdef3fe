package travelruletest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMarkLost: an answer lost turns its record's status to 0 and moves
// its count in ByStatus; one truncated is marked so and counted; each
// once, and the counts move even after the record was forgotten.
func TestMarkLost(t *testing.T) {
	s := NewServer(WithoutCallbacks(), WithRecordLimit(3))
	defer s.Close()
	seqs := make([]uint64, 5)
	for i := range seqs {
		seqs[i] = s.records.record(Request{Status: 200})
	}
	s.records.markLost(seqs[4], 200, false)
	s.records.markLost(seqs[4], 200, false) // twice is once
	s.records.markLost(seqs[3], 200, true)
	s.records.markLost(seqs[3], 200, true)
	s.records.markLost(seqs[0], 200, false) // forgotten
	rs := s.Requests()
	require.Len(t, rs, 3)
	assert.Equal(t, []int{200, 200, 0}, []int{rs[0].Status, rs[1].Status, rs[2].Status})
	assert.Equal(t, []bool{false, true, false}, []bool{rs[0].Truncated, rs[1].Truncated, rs[2].Truncated})
	st := s.Stats()
	assert.Equal(t, map[int]int{200: 3, 0: 2}, st.ByStatus)
	assert.Equal(t, 1, st.Truncated)
}
