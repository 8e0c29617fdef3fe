package travelrule

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each attempt is bounded as a whole, answer body included, by the attempt
// time-out of send.go (a response-header time-out alone left the body
// unbounded): a client given to WithHTTPClient keeps its own limit, or gets
// the default if it has none. The http.Client under the retry loop has no
// Timeout of its own, which would cost every request net/http's timer and
// make it call the deprecated CancelRequest of a transport.
func TestAttemptTimeoutCoversTheWholeAttempt(t *testing.T) {
	for _, tt := range []struct {
		opts []Option
		want time.Duration
	}{
		{nil, defaultAttemptTimeout},
		{[]Option{WithHTTPClient(&http.Client{})}, defaultAttemptTimeout},
		{[]Option{WithHTTPClient(&http.Client{Timeout: time.Second})}, time.Second},
	} {
		c, err := NewClient("https://travelrule.example", append(tt.opts, WithTokenSource(StaticToken("t")))...)
		require.NoError(t, err)
		assert.Equal(t, tt.want, c.attemptTimeout)
		assert.Zero(t, c.hc.Timeout)
	}
}
