package travelrule_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Server is an HTTP/2 server over TLS on loopback, written with
// x/net/http2's Framer so that it can do what net/http's server cannot and
// proxies do: read a request whole and then reset its stream with a chosen
// code, send GOAWAY with a chosen last stream id, or go away gracefully
// after a number of requests (nginx's keepalive_requests).
type h2Server struct {
	url    string
	client *http.Client // trusts the server and speaks HTTP/2

	act      func(n int) h2Action // what to do with the n-th request read whole
	requests atomic.Int32         // requests read whole (headers and body)

	// keepalive, when set, is how many requests a connection answers
	// before it goes away gracefully, as nginx does at keepalive_requests:
	// GOAWAY NO_ERROR naming the last request answered, and the streams
	// the client opened meanwhile, above it, ignored (never processed).
	keepalive int
	// maxStreams, when set, is the SETTINGS_MAX_CONCURRENT_STREAMS each
	// connection announces.
	maxStreams uint32
	bodies     map[[32]byte]int // the bodies of the requests read whole, by digest

	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// h2Action is what the server does with a request it has read whole, after
// as many 103 answers as hints: reset its stream with reset, send GOAWAY,
// or answer status with body (after a GOAWAY NO_ERROR naming this stream
// as the last, with goAwayFirst).
type h2Action struct {
	hints       int // 103 Early Hints answers sent first
	reset       http2.ErrCode
	goAway      bool
	goAwayFirst bool
	last        uint32        // the GOAWAY's last-stream-id
	code        http2.ErrCode // the GOAWAY's code
	debug       string        // the GOAWAY's debug data
	status      int
	body        string
}

func h2Reset(code http2.ErrCode) h2Action { return h2Action{reset: code} }
func h2Answer(status int, body string) h2Action {
	return h2Action{status: status, body: body}
}

// newH2Server starts the server over TLS; act is called with 1 for the
// first request read whole, 2 for the second, and so on.
func newH2Server(t *testing.T, act func(n int) h2Action) *h2Server {
	t.Helper()
	// Borrow httptest's certificate and a client that trusts it.
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	cert := ts.TLS.Certificates[0]
	tr := ts.Client().Transport.(*http.Transport).Clone()
	ts.Close()

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2"},
	})
	require.NoError(t, err)
	return startH2Server(t, ln, "https://"+ln.Addr().String(), &http.Client{Transport: tr}, act)
}

// newH2CServer starts the server over cleartext TCP (h2c, with prior
// knowledge), as a proxy's upstream.
func newH2CServer(t *testing.T, act func(n int) h2Action) *h2Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return startH2Server(t, ln, "http://"+ln.Addr().String(), h2cClient(), act)
}

// h2cClient is an HTTP client that speaks HTTP/2 over cleartext TCP.
func h2cClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

func startH2Server(t *testing.T, ln net.Listener, url string, client *http.Client, act func(n int) h2Action) *h2Server {
	s := &h2Server{
		url:    url,
		client: client,
		act:    act,
		ln:     ln,
		conns:  map[net.Conn]bool{},
		bodies: map[[32]byte]int{},
	}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *h2Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

func (s *h2Server) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.client.CloseIdleConnections()
	s.wg.Wait()
}

// serve speaks HTTP/2 on one connection until the client closes it.
func (s *h2Server) serve(c net.Conn) {
	defer c.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var settings []http2.Setting
	if s.maxStreams > 0 {
		settings = append(settings, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: s.maxStreams})
	}
	if fr.WriteSettings(settings...) != nil {
		return
	}
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	body := map[uint32]*bytes.Buffer{} // the bodies of the streams being read
	answered := 0                      // requests this connection answered
	var last uint32                    // the last stream id of a GOAWAY sent
	goingAway := false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		var ended bool
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				err = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				err = fr.WritePing(true, f.Data)
			}
		case *http2.MetaHeadersFrame:
			if goingAway && f.StreamID > last {
				continue // above the GOAWAY's last stream id: never processed
			}
			body[f.StreamID] = &bytes.Buffer{}
			ended = f.StreamEnded()
		case *http2.DataFrame:
			if n := uint32(len(f.Data())); n > 0 {
				err = errors.Join(fr.WriteWindowUpdate(0, n), fr.WriteWindowUpdate(f.StreamID, n))
			}
			if b := body[f.StreamID]; b != nil {
				b.Write(f.Data())
			}
			ended = f.StreamEnded()
		}
		id := f.Header().StreamID
		if err == nil && ended && body[id] != nil {
			s.mu.Lock()
			s.bodies[sha256.Sum256(body[id].Bytes())]++
			s.mu.Unlock()
			delete(body, id)
			var wentAway bool
			wentAway, err = s.respond(fr, enc, &hbuf, id)
			if wentAway {
				goingAway, last = true, id
			}
			answered++
			if err == nil && s.keepalive > 0 && answered == s.keepalive {
				goingAway, last = true, id
				err = fr.WriteGoAway(last, http2.ErrCodeNo, nil)
			}
		}
		if err != nil {
			return
		}
	}
}

// counts returns how many requests the server read whole, how many
// distinct bodies among them, and how many repeated a body read before.
func (s *h2Server) counts() (requests, distinct, repeated int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.bodies {
		requests += n
		distinct++
		repeated += n - 1
	}
	return requests, distinct, repeated
}

// respond acts on request id as s.act says; wentAway reports a graceful
// GOAWAY naming id as the last stream, after which the connection goes on.
func (s *h2Server) respond(fr *http2.Framer, enc *hpack.Encoder, hbuf *bytes.Buffer, id uint32) (wentAway bool, err error) {
	a := s.act(int(s.requests.Add(1)))
	for range a.hints {
		hbuf.Reset()
		if err := enc.WriteField(hpack.HeaderField{Name: ":status", Value: "103"}); err != nil {
			return false, err
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true}); err != nil {
			return false, err
		}
	}
	switch {
	case a.goAway:
		if err := fr.WriteGoAway(a.last, a.code, []byte(a.debug)); err != nil || a.last == 0 {
			return false, err
		}
		return false, errors.New("GOAWAY for a stream being processed: close the connection")
	case a.reset != 0:
		return false, fr.WriteRSTStream(id, a.reset)
	case a.goAwayFirst:
		if err := fr.WriteGoAway(id, http2.ErrCodeNo, nil); err != nil {
			return false, err
		}
		wentAway = true
	}
	hbuf.Reset()
	for _, f := range []hpack.HeaderField{
		{Name: ":status", Value: strconv.Itoa(a.status)},
		{Name: "content-type", Value: "application/json"},
		{Name: "content-length", Value: strconv.Itoa(len(a.body))},
	} {
		if err := enc.WriteField(f); err != nil {
			return wentAway, err
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true}); err != nil {
		return wentAway, err
	}
	return wentAway, fr.WriteData(id, true, []byte(a.body))
}
