package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"initiate", "initiate", 0},
		{"initate", "initiate", 1},   // a deletion
		{"initiatee", "initiate", 1}, // an insertion
		{"inidiate", "initiate", 1},  // a substitution
		{"inititae", "initiate", 1},  // two neighbours swapped
		{"lisnet", "listen", 2},
		{"ca", "abc", 3},          // no swap of a swapped pair (optimal string alignment)
		{"résolve", "resolve", 1}, // counted in characters, not bytes
		{"nope", "txid", 4},
	}
	for _, tt := range tests {
		t.Run(tt.a+"→"+tt.b, func(t *testing.T) {
			assert.Equal(t, tt.want, editDistance(tt.a, tt.b))
			assert.Equal(t, tt.want, editDistance(tt.b, tt.a), "symmetric")
		})
	}
}

func TestSuggest(t *testing.T) {
	names := commandNames()
	tests := []struct {
		typed, want string
	}{
		{"initate", "initiate"},
		{"intiiate", "initiate"},
		{"reslove", "resolve"},
		{"trasnfers", "transfers"},
		{"lisen", "listen"},
		{"txdi", "txid"},
		{"sandbx", "sandbox"},
		{"valdate", "validate"},
		{"init", "initiate"}, // the one command it begins
		{"tran", "transfers"},
		{"d", ""},    // too short to begin one
		{"nope", ""}, // near none
		{"tx", ""},   // too short to begin one
		{"xtid", "txid"},
		{"dixcover", "discover"},
		{"doc", "doctor"},
		{"ver", "version"},
		{"v", ""},
		{"lsten", "listen"},
		{"listenn", "listen"},
		{"transfer", "transfers"},
		{"addresses", "address"},
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			assert.Equal(t, tt.want, suggest(tt.typed, names))
		})
	}
	assert.Empty(t, suggest("abc", []string{"abcdef", "abcxyz"}), "a prefix of two names is none")
	assert.Equal(t, "abcdef", suggest("abc", []string{"abcdef", "xyz"}))
}
