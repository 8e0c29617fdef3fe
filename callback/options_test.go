package callback_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// TestHandlerRequiresAuthentication checks that a handler given no
// authenticating option refuses every request, a forged approval first,
// says why through Err and its logger, and never calls the function.
func TestHandlerRequiresAuthentication(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &sync.Mutex{}}, nil))
	rc := &recorder{}
	srv, h := serve(t, rc.fn, callback.WithLogger(logger))
	require.ErrorIs(t, h.Err(), callback.ErrUnauthenticated)

	forged := `{"transferId":"tr-1","status":"approved","callback":"https://vasp.example/cb"}`
	assert.Equal(t, http.StatusInternalServerError, post(t, srv.URL+"/cb", forged).code)
	assert.Zero(t, rc.count(), "the function never sees an unauthenticated callback")
	assert.Contains(t, buf.String(), "no authentication")
}

// TestWithoutAuthenticationWarnsOnce checks the opt-out: deliveries reach
// the function, observers are told they were not authenticated, and the
// logger has one warning, from NewHandler, not one per request.
func TestWithoutAuthenticationWarnsOnce(t *testing.T) {
	var buf bytes.Buffer
	mu := &sync.Mutex{}
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: mu}, nil))
	rc, obs := &recorder{}, &deliveries{}
	srv, h := serve(t, rc.fn, callback.WithoutAuthentication(), callback.WithLogger(logger), callback.WithObserver(obs))
	require.NoError(t, h.Err())
	for range 3 {
		assert.Equal(t, http.StatusNoContent, post(t, srv.URL+"/cb", statusBody).code)
	}
	assert.Equal(t, 1, rc.count())
	require.Len(t, obs.seen, 3)
	assert.False(t, obs.seen[0].Authenticated)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, strings.Count(buf.String(), "level=WARN"), buf.String())
	assert.Contains(t, buf.String(), "unauthenticated")
	assert.Contains(t, fmt.Sprint(h), " WithoutAuthentication ", "its printed form says so")
}

// TestCapabilityKeyRotation checks that URLs made with the current key or a
// previous one verify, one made with any other key does not, and a body
// naming another transfer's URL made with a previous key is still caught.
func TestCapabilityKeyRotation(t *testing.T) {
	current, previous, other := []byte("current-key-0123456789abcdef"), []byte("previous-key-0123456789abcdef"), []byte("unlisted-key-0123456789abcdef")
	rc, obs := &recorder{}, &deliveries{}
	srv, h := serve(t, rc.fn, callback.WithCapabilityKey(current, previous), callback.WithObserver(obs))
	require.NoError(t, h.Err())
	url := func(ref string, key []byte) string {
		u, err := travelrule.NewCallbackURL(srv.URL+"/cb", ref, key)
		require.NoError(t, err)
		return u
	}
	assert.Equal(t, http.StatusNoContent, post(t, url("new-1", current), statusBody).code)
	assert.Equal(t, http.StatusNoContent, post(t, url("old-1", previous), statusBody).code)
	assert.Equal(t, http.StatusUnauthorized, post(t, url("x-1", other), statusBody).code)
	naming := `{"transferId":"tr-2","status":"approved","callback":"` + url("old-2", previous) + `"}`
	assert.Equal(t, http.StatusUnauthorized, post(t, url("new-2", current), naming).code)

	require.Len(t, obs.seen, 2)
	assert.Equal(t, "new-1", obs.seen[0].Callback.Ref)
	assert.Equal(t, "old-1", obs.seen[1].Callback.Ref)
	assert.True(t, obs.seen[1].Authenticated)
	assert.Equal(t, "{CapabilityKey:[redacted] PreviousKeys:1 Verifiers:[] MaxBodyBytes:1048576 Store:*callback.MemoryStore Err:<nil>}", fmt.Sprint(h))
}
