package travelruletest_test

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// protoRecorder is a transport that records the protocol and path of every
// answer it gets.
type protoRecorder struct {
	rt http.RoundTripper
	mu sync.Mutex
	rs []string // "HTTP/2.0 /oauth/token"
}

func (p *protoRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.rt.RoundTrip(r)
	if err == nil {
		p.mu.Lock()
		p.rs = append(p.rs, resp.Proto+" "+r.URL.Path)
		p.mu.Unlock()
	}
	return resp, err
}

func (p *protoRecorder) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.rs...)
}

// TestTLSServer initiates through the SDK, with the client-credentials
// grant at the token endpoint, over a TLS server, with the client that
// Server.Client returns (HTTP/2) and with one that offers only HTTP/1.1.
func TestTLSServer(t *testing.T) {
	for _, tt := range []struct {
		name   string
		client func(*travelruletest.Server) *http.Client
		proto  string
	}{
		{"h2", (*travelruletest.Server).Client, "HTTP/2.0"},
		{"http/1.1", http1Client, "HTTP/1.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTLSServer(t, travelruletest.WithPathPrefix("/api/v3"), travelruletest.WithoutCallbacks())
			require.Regexp(t, `^https://127\.0\.0\.1:\d+/api/v3$`, srv.URL)
			require.Regexp(t, `^https://127\.0\.0\.1:\d+/oauth/token$`, srv.TokenURL())
			cert := srv.Certificate()
			require.NotNil(t, cert)
			assert.True(t, cert.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)), "%v", cert.IPAddresses)

			rec := &protoRecorder{rt: tt.client(srv).Transport}
			c, err := travelrule.NewClient(srv.URL,
				travelrule.WithHTTPClient(&http.Client{Transport: rec}),
				travelrule.WithClientCredentials(&clientcredentials.Config{
					ClientID: travelruletest.DefaultClientID, ClientSecret: travelruletest.DefaultClientSecret, TokenURL: srv.TokenURL(),
				}))
			require.NoError(t, err)
			res, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			assert.Equal(t, "true", res.Status)
			assert.Equal(t, []string{tt.proto + " /oauth/token", tt.proto + " /api/v3/transfers/initiate"}, rec.seen())

			rs := srv.Requests()
			require.Len(t, rs, 2)
			assert.Equal(t, http.StatusOK, rs[1].Status)
			assert.Empty(t, rs[1].Header.Values("X-Travelruletest-Stream"), "the stream field is the sandbox's own")
			assert.Len(t, srv.Transfers(), 1)
		})
	}

	t.Run("plain server", func(t *testing.T) {
		srv := newServer(t)
		assert.Nil(t, srv.Certificate())
		resp, err := srv.Client().Post(srv.TokenURL(), "application/x-www-form-urlencoded", nil)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, "HTTP/1.1", resp.Proto)
	})

	t.Run("untrusted", func(t *testing.T) {
		srv := newTLSServer(t)
		_, err := http.Get(srv.TokenURL())
		require.Error(t, err, "the certificate is the server's own")
	})
}

// TestTLSCallbacks: a transfer initiated over HTTP/2 gets its status
// callbacks, and an inquiry is resolved over HTTP/2.
func TestTLSCallbacks(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := newTLSServer(t)
	c := newClient(t, srv, travelrule.WithHTTPClient(srv.Client()))
	res, err := c.InitiateTransfer(context.Background(), validRequest(rc.URL))
	require.NoError(t, err)
	ds := waitCallbacks(t, srv, 2)
	assert.Equal(t, resolutionKinds, kinds(byTransfer(ds)[res.TransferID]))

	id, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://x.example/cb"))
	require.NoError(t, err)
	r, err := c.ResolveInquiry(context.Background(), id, &travelrule.InquiryResolution{Approved: "true", Callback: rc.URL})
	require.NoError(t, err)
	assert.True(t, r.Status)
	waitCallbacks(t, srv, 4) // the inquiry and its TRANSFER_CONFIRMATION
	tr, ok := srv.Transfer(id)
	require.True(t, ok)
	assert.Equal(t, travelruletest.StateApproved, tr.State)
}

// TestTLSCloseWaits closes a TLS server while an HTTP/2 request and an
// HTTP/1.1 request are held by a latency fault: both lose their
// connections unanswered, and when Close returns no connection is open and
// no goroutine of the server is left.
func TestTLSCloseWaits(t *testing.T) {
	events := newLogEvents()
	srv := travelruletest.NewTLSServer(travelruletest.WithoutCallbacks(), travelruletest.WithLogger(slog.New(events)),
		travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultLatency, Rate: 1, Latency: time.Hour}))
	defer srv.Close()
	errs := make(chan error, 2)
	for _, hc := range []*http.Client{srv.Client(), http1Client(srv)} {
		c := newClient(t, srv, travelrule.WithHTTPClient(hc))
		go func() {
			_, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			errs <- err
		}()
	}
	events.wait(t, "travelruletest: holding request", 2)
	require.Equal(t, 2, travelruletest.OpenConns(srv))
	srv.Close()
	assert.Zero(t, travelruletest.OpenConns(srv), "Close waits for the connections to end")
	if leaked := serverGoroutines(); leaked != "" {
		t.Fatalf("goroutines of the server left after Close:\n%s", leaked)
	}
	for range 2 {
		err := <-errs
		assert.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "sent and never answered")
		var apiErr *travelrule.APIError
		assert.NotErrorAs(t, err, &apiErr, "no answer, not an empty 200")
	}
	rs := srv.Requests()
	require.Len(t, rs, 2)
	for _, r := range rs {
		assert.Zero(t, r.Status)
	}
}

// TestTLSHandshakeFailure: a client that does not trust the certificate
// fails its handshake, and the server goes on serving others.
func TestTLSHandshakeFailure(t *testing.T) {
	srv := newTLSServer(t)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	_, err = tls.Dial("tcp", u.Host, &tls.Config{NextProtos: []string{"h2"}})
	require.Error(t, err)
	_, err = newClient(t, srv, travelrule.WithHTTPClient(srv.Client())).InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
}
