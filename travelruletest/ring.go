package travelruletest

import "iter"

// ring keeps the newest values pushed, at most limit of them (every one
// when limit is 0), without moving those it keeps: the record limit's
// window over the requests and the callbacks.
type ring[T any] struct {
	limit int // fixed at start
	items []T // grows to limit, then is written over in place
	head  int // the index of the oldest value once items is full
}

// push adds v as the newest value, and forgets the oldest beyond the limit.
func (r *ring[T]) push(v T) {
	if r.limit == 0 || len(r.items) < r.limit {
		if r.limit > 0 && len(r.items) == cap(r.items) {
			// Doubled, as append would, but never past the limit.
			grown := make([]T, len(r.items), min(2*len(r.items)+8, r.limit))
			copy(grown, r.items)
			r.items = grown
		}
		r.items = append(r.items, v)
		return
	}
	r.items[r.head] = v
	r.head = (r.head + 1) % len(r.items)
}

// len is how many values the ring keeps.
func (r *ring[T]) len() int { return len(r.items) }

// all yields the values kept, oldest first.
func (r *ring[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := range r.items {
			if !yield(r.items[(r.head+i)%len(r.items)]) {
				return
			}
		}
	}
}
