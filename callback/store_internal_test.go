package callback

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryStoreProtocol(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(3)
	claim := func(key string) ClaimResult {
		t.Helper()
		r, err := s.Claim(ctx, key)
		require.NoError(t, err)
		return r
	}
	assert.Equal(t, ClaimNew, claim("a"))
	assert.Equal(t, ClaimBusy, claim("a"))
	require.NoError(t, s.Release(ctx, "a"))
	assert.Equal(t, ClaimNew, claim("a"), "a released delivery can be claimed again")
	require.NoError(t, s.Complete(ctx, "a"))
	assert.Equal(t, ClaimDone, claim("a"))
	require.NoError(t, s.Complete(ctx, "a"))
	assert.Equal(t, 1, s.Len())
}

func TestMemoryStoreEvictsOldest(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(3)
	for i := 0; i < 10; i++ {
		key := fmt.Sprint(i)
		r, err := s.Claim(ctx, key)
		require.NoError(t, err)
		require.Equal(t, ClaimNew, r)
		require.NoError(t, s.Complete(ctx, key))
		assert.LessOrEqual(t, s.Len(), 3)
	}
	for i := 0; i < 10; i++ {
		r, err := s.Claim(ctx, fmt.Sprint(i))
		require.NoError(t, err)
		if i >= 7 {
			assert.Equal(t, ClaimDone, r, i)
		} else {
			assert.Equal(t, ClaimNew, r, i)
		}
	}
}

func TestMemoryStoreLease(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_750_000_000, 0)
	s := NewMemoryStore(0)
	assert.Equal(t, DefaultStoreSize, s.size)
	s.now = func() time.Time { return now }
	r, _ := s.Claim(ctx, "k")
	require.Equal(t, ClaimNew, r)
	now = now.Add(DefaultLease - time.Second)
	r, _ = s.Claim(ctx, "k")
	assert.Equal(t, ClaimBusy, r)
	now = now.Add(2 * time.Second)
	r, _ = s.Claim(ctx, "k")
	assert.Equal(t, ClaimNew, r, "a claim whose holder never finished lapses")
}

func TestDedupKey(t *testing.T) {
	a := dedupKey("", "ref", []byte("{}"))
	assert.Len(t, a, 69)
	assert.NotEqual(t, a, dedupKey("", "ref2", []byte("{}")))
	assert.NotEqual(t, a, dedupKey("", "", []byte("ref{}")))
	assert.Equal(t, dedupKey("id", "r", []byte("x")), dedupKey("id", "r", []byte("y")))
	assert.Len(t, dedupKey("id", "r", nil), 69)
	assert.NotEqual(t, dedupKey("id", "", nil), dedupKey("", "", []byte("id")))
}
