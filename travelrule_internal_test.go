package travelrule

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransportHidesCancelRequest: http.Client calls a transport's
// CancelRequest when its Timeout fires, and oauth2.Transport's deprecated
// CancelRequest writes a line to the standard logger. The client's
// transport must not offer it.
func TestTransportHidesCancelRequest(t *testing.T) {
	for _, opts := range [][]Option{
		{WithTokenSource(StaticToken("t"))},
		{WithTokenSource(StaticToken("t")), WithHTTPClient(&http.Client{Timeout: time.Second})},
	} {
		c, err := NewClient("https://travelrule.example", opts...)
		require.NoError(t, err)
		_, ok := c.hc.Transport.(interface{ CancelRequest(*http.Request) })
		assert.False(t, ok)
	}
}

// Each attempt is bounded as a whole by http.Client.Timeout (the response
// header time-out alone left the body unbounded); a client given to
// WithHTTPClient keeps its own limit, or gets the default if it has none.
func TestAttemptTimeoutCoversTheWholeAttempt(t *testing.T) {
	for _, tt := range []struct {
		opts []Option
		want time.Duration
	}{
		{nil, DefaultAttemptTimeout},
		{[]Option{WithHTTPClient(&http.Client{})}, DefaultAttemptTimeout},
		{[]Option{WithHTTPClient(&http.Client{Timeout: time.Second})}, time.Second},
	} {
		c, err := NewClient("https://travelrule.example", append(tt.opts, WithTokenSource(StaticToken("t")))...)
		require.NoError(t, err)
		assert.Equal(t, tt.want, c.hc.Timeout)
	}
}
