package travelruletest

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRing(t *testing.T) {
	for _, tt := range []struct {
		name   string
		limit  int
		pushed int
		want   []int
	}{
		{"empty", 3, 0, nil},
		{"below the limit", 3, 2, []int{1, 2}},
		{"at the limit", 3, 3, []int{1, 2, 3}},
		{"one beyond", 3, 4, []int{2, 3, 4}},
		{"wrapped twice", 3, 8, []int{6, 7, 8}},
		{"limit one", 1, 5, []int{5}},
		{"no limit", 0, 5, []int{1, 2, 3, 4, 5}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ring[int]{limit: tt.limit}
			for i := 1; i <= tt.pushed; i++ {
				r.push(i)
			}
			assert.Equal(t, tt.want, slices.Collect(r.all()))
			assert.Equal(t, len(tt.want), r.len())
		})
	}
}

// TestRingKeepsItsArray checks that a full ring takes new values in place:
// the record limit's window costs no copy and no allocation per record.
func TestRingKeepsItsArray(t *testing.T) {
	r := ring[int]{limit: 4}
	for i := range 4 {
		r.push(i)
	}
	allocs := testing.AllocsPerRun(100, func() { r.push(9) })
	assert.Zero(t, allocs)
}

// TestRingCapacity: the ring's array grows to its limit and no further.
func TestRingCapacity(t *testing.T) {
	for _, limit := range []int{1, 7, 100, 10_000} {
		r := ring[int]{limit: limit}
		for i := range 2 * limit {
			r.push(i)
		}
		assert.Equal(t, limit, cap(r.items), "limit %d", limit)
	}
}
