package travelrule_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
)

// The test doubles that tests of several files share: token sources,
// transports, a handler that drops the connection and a scanned log.

// countingSource issues "tok-1", "tok-2", ... and counts its calls.
type countingSource struct{ n atomic.Int64 }

func (s *countingSource) Token() (*oauth2.Token, error) {
	n := s.n.Add(1)
	return &oauth2.Token{AccessToken: fmt.Sprintf("tok-%d", n), TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

type failingSource struct{}

func (failingSource) Token() (*oauth2.Token, error) { return nil, errors.New("token endpoint down") }

// dropAfterRead answers nothing: it reads the request and closes the
// connection, as a service that stored the transfer and then crashed.
func dropAfterRead(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// scanned are the options of a log handler whose output a test scans for
// personal data. Timestamps and durations go: their random digits could
// spell a digit-only value (a postcode, a national id) by chance, and they
// are never personal data.
var scanned = &slog.HandlerOptions{
	Level: slog.LevelDebug,
	ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		switch {
		case len(groups) == 0 && a.Key == slog.TimeKey:
			return slog.Attr{}
		case a.Value.Kind() == slog.KindDuration:
			return slog.String(a.Key, "[duration]")
		}
		return a
	},
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// countingTransport counts the requests that go through it.
type countingTransport struct {
	n    atomic.Int64
	base http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// opaqueTransport hides the request's trace: it re-contexts every request,
// as some instrumentation and test transports do.
type opaqueTransport struct{ base http.RoundTripper }

func (o opaqueTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return o.base.RoundTrip(r.WithContext(context.WithoutCancel(context.Background())))
}

// blockedSource issues a token only once released; asked says it was
// asked, returned that it answered (the first time).
type blockedSource struct {
	asked, release, returned chan struct{}
	once                     sync.Once
}

func (s *blockedSource) Token() (*oauth2.Token, error) {
	first := false
	s.once.Do(func() { first = true; close(s.asked) })
	<-s.release
	if first {
		defer close(s.returned)
	}
	return &oauth2.Token{AccessToken: "slow", Expiry: time.Now().Add(time.Hour)}, nil
}

// noRequestTransport answers 401 without setting Response.Request, as
// some custom transports do.
type noRequestTransport struct{}

func (noRequestTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}, nil
}
