package travelrule

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each attempt is bounded as a whole, answer body included, by the attempt
// time-out of timeout.go (a response-header time-out alone left the body
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

// Which transports are believed, before they sent anything, to report each
// request they write: net/http's own, with its HTTP/2 at most. A protocol
// of the user's behind TLSNextProto sent an initiation twice: net/http
// reports the start of its round trip, the protocol's writes go unreported.
func TestReportsWrites(t *testing.T) {
	upgrade := func(string, *tls.Conn) http.RoundTripper { return http.DefaultTransport }
	var h1only http.Protocols
	h1only.SetHTTP1(true)
	for _, tt := range []struct {
		name string
		rt   http.RoundTripper
		want bool
	}{
		{"default transport", http.DefaultTransport, true},
		{"default transport used", func() http.RoundTripper {
			http.DefaultTransport.(*http.Transport).Clone()
			return http.DefaultTransport
		}(), true},
		{"the client's own", defaultTransport(), true},
		{"zero transport", &http.Transport{}, true},
		{"HTTP/2 off", &http.Transport{TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}, true},
		{"x/net's HTTP/2", &http.Transport{TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{"h2": upgrade}}, true},
		{"HTTP/1 only", &http.Transport{Protocols: &h1only}, true},
		{"a protocol of the user's", &http.Transport{TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{"h2": upgrade, "x-own": upgrade}}, false},
		{"a wrapper", roundTripperFunc(http.DefaultTransport.RoundTrip), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, reportsWrites(tt.rt))
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
