package callback

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
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
	assert.Equal(t, 1, doneLen(s))
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
		assert.LessOrEqual(t, doneLen(s), 3)
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
	assert.Equal(t, defaultStoreSize, s.st.size)
	s.st.now = func() time.Time { return now }
	r, _ := s.Claim(ctx, "k")
	require.Equal(t, ClaimNew, r)
	now = now.Add(DefaultLease - time.Second)
	r, _ = s.Claim(ctx, "k")
	assert.Equal(t, ClaimBusy, r)
	now = now.Add(2 * time.Second)
	r, _ = s.Claim(ctx, "k")
	assert.Equal(t, ClaimNew, r, "a claim whose holder never finished lapses")
}

// doneLen is how many processed deliveries s remembers.
func doneLen(s *MemoryStore) int {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return len(s.st.done)
}

func TestMemoryStoreFormatShowsNoKeys(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(3)
	_, _ = s.Claim(ctx, "done-key")
	require.NoError(t, s.Complete(ctx, "done-key"))
	_, _ = s.Claim(ctx, "busy-key")
	var hashes []string
	for _, key := range []string{"done-key", "busy-key"} {
		h := sha256.Sum256([]byte(key))
		hashes = append(hashes, hex.EncodeToString(h[:]), fmt.Sprint(h[:4]), fmt.Sprint(h[0]))
	}
	tests := []struct {
		format string
		value  any
		want   string
	}{
		{"%v", s, "{Size:3 Done:1 Busy:1}"},
		{"%+v", s, "{Size:3 Done:1 Busy:1}"},
		{"%s", s, "{Size:3 Done:1 Busy:1}"},
		{"%#v", s, "callback.MemoryStore{Size:3 Done:1 Busy:1}"},
		{"%v", struct{ S *MemoryStore }{s}, "{{Size:3 Done:1 Busy:1}}"},
		{"%v", MemoryStore{}, "{}"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			got := fmt.Sprintf(tt.format, tt.value)
			assert.Equal(t, tt.want, got)
			for _, h := range hashes {
				assert.NotContains(t, got, h)
			}
		})
	}
}

// TestMemoryStoreFormatLocks prints a store while other goroutines use it:
// the race detector (and the runtime's own check of concurrent map access)
// fails it if printing reads the maps without the lock.
func TestMemoryStoreFormatLocks(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(64)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				key := strconv.Itoa(g) + "/" + strconv.Itoa(i)
				_, _ = s.Claim(ctx, key)
				_ = s.Complete(ctx, key)
			}
		}()
	}
	for i := 0; i < 200; i++ {
		assert.Contains(t, fmt.Sprintf("%+v", s), "Size:64")
	}
	wg.Wait()
	assert.Equal(t, "{Size:64 Done:64 Busy:0}", fmt.Sprint(s))
}

// TestMemoryStoreFencing lets a claim lapse and be claimed again: the first
// holder can neither complete nor release the second holder's claim, and
// the second holder's token ends it.
func TestMemoryStoreFencing(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_750_000_000, 0)
	s := NewMemoryStore(0)
	s.st.now = func() time.Time { return now }
	r, first, err := s.ClaimFenced(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, ClaimNew, r)
	now = now.Add(DefaultLease)
	r, second, err := s.ClaimFenced(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, ClaimNew, r, "the first claim lapsed")
	require.NotEqual(t, first, second)

	for _, end := range []func(context.Context, string, string) error{s.CompleteFenced, s.ReleaseFenced} {
		require.ErrorIs(t, end(ctx, "k", first), ErrClaimLost)
		r, _, err = s.ClaimFenced(ctx, "k")
		require.NoError(t, err)
		assert.Equal(t, ClaimBusy, r, "the lapsed holder ended the new holder's claim")
	}
	for _, token := range []string{"", "0", "x", "99", "-2"} {
		require.ErrorIs(t, s.CompleteFenced(ctx, "unclaimed", token), ErrClaimLost, "a token the store never gave holds no claim: %q", token)
		require.ErrorIs(t, s.ReleaseFenced(ctx, "k", token), ErrClaimLost, "a token the store never gave holds no claim: %q", token)
	}
	_, other, err := s.ClaimFenced(ctx, "other")
	require.NoError(t, err)
	require.ErrorIs(t, s.CompleteFenced(ctx, "other", second), ErrClaimLost, "a token is one key's")

	require.NoError(t, s.ReleaseFenced(ctx, "k", second))
	r, third, err := s.ClaimFenced(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, ClaimNew, r)
	require.ErrorIs(t, s.CompleteFenced(ctx, "k", second), ErrClaimLost, "a released token completed the next claim")
	require.NoError(t, s.CompleteFenced(ctx, "k", third))
	r, _, err = s.ClaimFenced(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, ClaimDone, r)
	require.NoError(t, s.CompleteFenced(ctx, "other", other))
}

// TestMemoryStoreCompletion checks the completion contract of FencedStore
// on a MemoryStore whose clock the test moves: a completion of one's own
// claim is recorded whether its lease lapsed or not, and when nobody holds
// the delivery, and repeating it is a success; a completion against
// another holder's claim, or of a delivery processed under another token,
// changes nothing.
func TestMemoryStoreCompletion(t *testing.T) {
	type step struct {
		op    string // "claim", "lapse", "complete", "release", "unfenced-complete"
		who   int    // which holder's token; 0 for claim's result
		want  error
		claim ClaimResult // for "claim": the answer expected
	}
	tests := []struct {
		name  string
		steps []step
		final ClaimResult // the answer to a claim after the steps
	}{
		{"completed within the lease", []step{{op: "claim", who: 1, claim: ClaimNew}, {op: "complete", who: 1}}, ClaimDone},
		{"completed after the lease lapsed, nobody else claimed", []step{{op: "claim", who: 1, claim: ClaimNew}, {op: "lapse"}, {op: "complete", who: 1}}, ClaimDone},
		{"completed after a lapse, another claim released since", []step{
			{op: "claim", who: 1, claim: ClaimNew}, {op: "lapse"}, {op: "claim", who: 2, claim: ClaimNew}, {op: "release", who: 2}, {op: "complete", who: 1},
		}, ClaimDone},
		{"completion repeated", []step{{op: "claim", who: 1, claim: ClaimNew}, {op: "complete", who: 1}, {op: "complete", who: 1}, {op: "lapse"}, {op: "complete", who: 1}}, ClaimDone},
		{"completion against another holder's claim", []step{
			{op: "claim", who: 1, claim: ClaimNew}, {op: "lapse"}, {op: "claim", who: 2, claim: ClaimNew}, {op: "complete", who: 1, want: ErrClaimLost},
		}, ClaimBusy},
		{"completion against another holder's lapsed claim", []step{
			{op: "claim", who: 1, claim: ClaimNew}, {op: "lapse"}, {op: "claim", who: 2, claim: ClaimNew}, {op: "lapse"}, {op: "complete", who: 1, want: ErrClaimLost},
			{op: "claim", who: 3, claim: ClaimNew}, {op: "release", who: 3},
		}, ClaimNew},
		{"completion of a delivery processed under another token", []step{
			{op: "claim", who: 1, claim: ClaimNew}, {op: "lapse"}, {op: "claim", who: 2, claim: ClaimNew}, {op: "complete", who: 2}, {op: "complete", who: 1, want: ErrClaimLost},
		}, ClaimDone},
		{"Complete records the claim's token", []step{
			{op: "claim", who: 1, claim: ClaimNew}, {op: "unfenced-complete"}, {op: "complete", who: 1},
		}, ClaimDone},
		{"Complete without a claim records no token", []step{
			{op: "claim", who: 1, claim: ClaimNew}, {op: "lapse"}, {op: "claim", who: 2, claim: ClaimNew}, {op: "release", who: 2},
			{op: "unfenced-complete"}, {op: "complete", who: 1, want: ErrClaimLost},
		}, ClaimDone},
		{"release after completion", []step{{op: "claim", who: 1, claim: ClaimNew}, {op: "complete", who: 1}, {op: "release", who: 1, want: ErrClaimLost}}, ClaimDone},
		{"release of a lapsed claim still held", []step{{op: "claim", who: 1, claim: ClaimNew}, {op: "lapse"}, {op: "release", who: 1}, {op: "release", who: 1, want: ErrClaimLost}}, ClaimNew},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Unix(1_750_000_000, 0)
			s := NewMemoryStore(0)
			s.st.now = func() time.Time { return now }
			tokens := map[int]string{}
			for i, st := range tt.steps {
				switch st.op {
				case "claim":
					r, token, err := s.ClaimFenced(ctx, "k")
					require.NoError(t, err)
					require.Equal(t, st.claim, r, "step %d", i)
					tokens[st.who] = token
				case "lapse":
					now = now.Add(DefaultLease)
				case "complete":
					require.ErrorIs(t, s.CompleteFenced(ctx, "k", tokens[st.who]), st.want, "step %d", i)
				case "release":
					require.ErrorIs(t, s.ReleaseFenced(ctx, "k", tokens[st.who]), st.want, "step %d", i)
				case "unfenced-complete":
					require.NoError(t, s.Complete(ctx, "k"))
				}
			}
			r, _, err := s.ClaimFenced(ctx, "k")
			require.NoError(t, err)
			assert.Equal(t, tt.final, r)
			assert.LessOrEqual(t, doneLen(s), 1)
		})
	}
}
