package travelruletest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// initiationAllocBudget is the most allocations the sandbox may make for
// one initiation with a travel address, from the routed request to the
// written answer, its two callbacks recorded: what net/http makes before
// and after is not counted. Measured: 24; before the hot path was trimmed
// (#42), 78, 12 of them decoding the travel address (now remembered).
const initiationAllocBudget = 24

// TestInitiationAllocations fails when one initiation allocates more than
// initiationAllocBudget times. The race detector's sync.Pool drops items
// at random, so a race build is not measured.
func TestInitiationAllocations(t *testing.T) {
	if raceBuild() {
		t.Skip("allocations are not deterministic under the race detector")
	}
	// A small record limit, which the warm-up fills: records kept then
	// replace the oldest, as in a long run.
	s := NewServer(WithoutCallbacks(), WithRecordLimit(8))
	defer s.Close()
	tok, err := s.TokenSource().Token()
	require.NoError(t, err)
	const warm, runs = 20, 100
	reqs := make([]*http.Request, warm+runs+1) // AllocsPerRun runs once more
	for i := range reqs {
		r := httptest.NewRequest(http.MethodPost, "/transfers/initiate", bytes.NewReader([]byte(scanSDKBody)))
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		r.Header.Set("Content-Type", "application/json")
		reqs[i] = r
	}
	w := &nullWriter{header: make(http.Header)}
	served := 0
	initiate := func() {
		s.serveHTTP(w, reqs[served])
		served++
		for finished(s) < 2*served {
			runtime.Gosched() // the workers record the callbacks
		}
	}
	for range warm {
		initiate()
	}
	require.Equal(t, http.StatusOK, w.status)
	allocs := testing.AllocsPerRun(runs, initiate)
	require.Equal(t, http.StatusOK, w.status)
	if allocs > initiationAllocBudget {
		t.Errorf("an initiation allocates %v times, more than %d", allocs, initiationAllocBudget)
	}
	t.Logf("allocations per initiation: %v", allocs)
}

// finished counts the callbacks s finished, without the allocations of
// Stats.
func finished(s *Server) int {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	return s.records.stats.Callbacks
}

// nullWriter is an http.ResponseWriter that keeps the status alone.
type nullWriter struct {
	header http.Header
	status int
}

func (w *nullWriter) Header() http.Header         { return w.header }
func (w *nullWriter) WriteHeader(status int)      { w.status = status }
func (w *nullWriter) Write(b []byte) (int, error) { return len(b), nil }

// raceBuild reports whether the test binary was built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
