package callback

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDedupKey(t *testing.T) {
	a := dedupKey("", "ref", []byte("{}"))
	assert.Len(t, a, 69)
	assert.NotEqual(t, a, dedupKey("", "ref2", []byte("{}")))
	assert.NotEqual(t, a, dedupKey("", "", []byte("ref{}")))
	assert.Equal(t, dedupKey("id", "r", []byte("x")), dedupKey("id", "r", []byte("y")))
	assert.Len(t, dedupKey("id", "r", nil), 69)
	assert.NotEqual(t, dedupKey("id", "", nil), dedupKey("", "", []byte("id")))
}
