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
