package travelruletest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the Travel Rule Transfer Exchange Service running on a loopback
// port, for tests: the live service's twin as far as its documentation
// goes, with the interface description 3.2.1's two operations, the live
// service's login with API keys (POST {URL}/auth/token), travel addresses
// (generate, decode), txId submission and VASP discovery, in the live
// service's envelopes, as the package documentation describes; plus an
// OAuth2 token endpoint for clients that use one. It sends the live
// service's callbacks (see [CallbackKind]), signed with x-data-integrity,
// and records what it saw. For integrators in other languages,
// who cannot call its methods, it also serves a control plane under URL:
// POST /sandbox/inquiries starts an inbound inquiry, as
// [Server.StartInquiry] does, and GET /sandbox/transfers/{id} shows a
// transfer's state and callbacks (see "Control plane" in the package
// documentation). Make it with [NewServer] (HTTP/1.1) or [NewTLSServer]
// (HTTPS, HTTP/2 or HTTP/1.1) and stop it with [Server.Close]. Its methods
// are safe for concurrent use.
type Server struct {
	// URL is the base URL of the service, such as
	// "http://127.0.0.1:39215/api/v3", with the path prefix (see
	// [WithPathPrefix]) and no trailing slash: give it to
	// travelrule.NewClient. It starts with "https://" for a server made
	// by NewTLSServer.
	URL string

	// Fixed at start.
	cfg      config
	cert     *x509.Certificate // nil unless TLS
	client   *http.Client      // what Client returns
	cbClient *http.Client      // sends the callbacks
	origin   string            // scheme and host of URL
	host     string            // host and port of URL, the host of the sandbox's travel addresses
	prefix   string            // path of URL
	vasps    []vasp            // the VASP directory of discovery
	logger   *slog.Logger      // nil: no log
	hs       *http.Server

	ctx       context.Context // ends when the server closes
	cancel    context.CancelFunc
	served    chan struct{}  // closed when hs has stopped accepting
	conns     sync.WaitGroup // the connections hs is serving; Close waits for them
	open      atomic.Int64   // how many connections conns counts
	reqSeq    atomic.Uint64  // the last X-Request-Id answered
	closeOnce sync.Once

	// The parts of the server's state, each with a lock of its own.
	gate    *gate          // the requests being served
	tokens  *tokens        // the key and the tokens verified
	records *records       // transfers, Idempotency-Key answers, request and callback records, Stats
	faults  *faultSchedule // the injected faults and their draws
	queue   *callbackQueue // the callbacks still to send

	beneficiaries *beneficiaries // the beneficiaries of generated travel addresses

	// decision is the decision SetDecision set; nil: WithApproval's.
	decision atomic.Pointer[Decision]

	// console serves the console's paths; nil without WithConsole.
	console *console

	// inquirySlots bounds the control plane's inquiries being delivered:
	// one value per delivery in flight.
	inquirySlots chan struct{}
}

// NewServer starts a server on a loopback port (see [WithAddr]) and
// returns it. It serves HTTP/1.1 in plaintext. It panics if an option is
// invalid or the server cannot listen. Call Close when done.
func NewServer(opts ...Option) *Server { return start(false, opts) }

// NewTLSServer starts a server as [NewServer] does, but over TLS with a
// certificate of its own, made for this server (see
// [Server.Certificate]), as httptest.NewTLSServer does: URL starts with
// "https://". A client that offers "h2" by ALPN is served HTTP/2, any
// other HTTP/1.1. [Server.Client] returns a client that trusts the
// certificate and prefers HTTP/2. Over HTTP/2 the faults
// [FaultResetProtocolError], [FaultResetRefusedStream] and [FaultGoAway]
// act as their names say; over HTTP/1.1 they close the connection without
// answering: FaultResetProtocolError after acting, as [FaultDrop] does,
// the other two before.
func NewTLSServer(opts ...Option) *Server { return start(true, opts) }

func start(useTLS bool, opts []Option) *Server {
	cfg := defaultConfig()
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	if cfg.console && (cfg.prefix == "/console" || strings.HasPrefix(cfg.prefix, consoleAssetsPrefix)) {
		cfg.fail(errors.New("travelruletest: WithConsole: the path prefix " + strconv.Quote(cfg.prefix) + " is the console's"))
	}
	if cfg.err != nil {
		panic(cfg.err)
	}
	ln := listen(cfg.addr)
	queue := newCallbackQueue()
	s := &Server{
		cfg:     cfg,
		prefix:  cfg.prefix,
		logger:  cfg.logger,
		client:  &http.Client{Transport: &http.Transport{}},
		served:  make(chan struct{}),
		gate:    &gate{},
		tokens:  newTokens(&cfg),
		records: newRecords(cfg.recordLimit, cfg.idemWindow, queue),
		faults:  newFaultSchedule(cfg.seed),
		queue:   queue,

		beneficiaries: newBeneficiaries(cfg.recordLimit),

		inquirySlots: make(chan struct{}, maxInquiriesInFlight),
	}
	scheme := "http://"
	if useTLS {
		ln = s.useTLS(ln)
		scheme = "https://"
	}
	s.host = dialAddr(ln.Addr())
	s.origin = scheme + s.host
	s.vasps = vaspDirectory(s.host)
	s.URL = s.origin + s.prefix
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.cbClient, _ = newCallbackClient(cfg.cbClient)
	s.SetFaults(cfg.faults...)
	if cfg.console {
		s.console = newConsole(s, cfg.consoleFrom)
	}
	s.hs = s.httpServer(useTLS)
	go func() {
		defer close(s.served)
		_ = s.hs.Serve(ln)
	}()
	for range callbackWorkers {
		s.queue.workers.Add(1)
		go s.worker()
	}
	return s
}

// listen listens on addr, on the IPv6 loopback if addr is the default and
// the host has no IPv4 loopback.
func listen(addr string) net.Listener {
	ln, err := net.Listen("tcp", addr)
	if err != nil && addr == "127.0.0.1:0" {
		ln, err = net.Listen("tcp6", "[::1]:0")
	}
	if err != nil {
		// An error value, so that a caller that recovers can match it
		// (errors.Is(v, syscall.EADDRINUSE)).
		panic(fmt.Errorf("travelruletest: NewServer: listening: %w", err))
	}
	return ln
}

// useTLS makes the server's certificate and a client that trusts it, and
// returns ln wrapped to terminate TLS.
func (s *Server) useTLS(ln net.Listener) net.Listener {
	cert, err := newCertificate(ln.Addr())
	if err != nil {
		_ = ln.Close()
		panic("travelruletest: NewTLSServer: making the certificate: " + err.Error())
	}
	s.cert = cert.Leaf
	pool := x509.NewCertPool()
	pool.AddCert(s.cert)
	s.client.Transport = &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
	}
	return tlsListener{Listener: ln, config: &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}}
}

// httpServer is the http.Server that serves the sandbox's handler and
// counts its connections.
func (s *Server) httpServer(useTLS bool) *http.Server {
	errorLog := log.New(io.Discard, "", 0)
	if s.logger != nil {
		errorLog = slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)
	}
	hs := &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          errorLog,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if fc, ok := c.(*frameConn); ok {
				return context.WithValue(ctx, frameConnKey{}, fc)
			}
			return ctx
		},
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				s.open.Add(1)
				s.conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				s.open.Add(-1)
				s.conns.Done()
			}
		},
	}
	if useTLS {
		// TLS is terminated in the listener: what the server reads is
		// HTTP/1.1, or HTTP/2 opened by its preface.
		hs.Protocols = new(http.Protocols)
		hs.Protocols.SetHTTP1(true)
		hs.Protocols.SetUnencryptedHTTP2(true)
	}
	return hs
}

// dialAddr is the address clients reach a listener at: a listener on every
// interface (which "tcp" makes dual-stack) is reached at 127.0.0.1.
func dialAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// ConsoleURL returns the URL of the server's console, its origin and "/"
// (such as "http://127.0.0.1:39215/"), or "" if it serves none (see
// [WithConsole]).
func (s *Server) ConsoleURL() string {
	if s.console == nil {
		return ""
	}
	return s.origin + "/"
}

// Close stops the server: it stops sending callbacks (those not yet
// delivered are dropped, and an inquiry still being delivered is given
// up), closes the listener and every connection (a
// request held by a latency fault loses its connection, unanswered), and
// waits for the requests being served, the connections and the callback
// workers to end. It also closes the idle connections of [Server.Client].
// It may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.gate.shut()
		s.cancel()
		s.queue.close()
		_ = s.hs.Close()
		<-s.served // no connection is accepted after this
		s.gate.inflight.Wait()
		s.conns.Wait()
		s.queue.workers.Wait()
		s.cbClient.CloseIdleConnections()
		s.client.CloseIdleConnections()
	})
}

// pause waits for d, or until ctx ends or the server closes; it reports
// whether the whole wait passed. A wait of d <= 0 passes at once unless
// ctx or the server already ended. It holds requests for latency faults
// and callbacks between their attempts.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil && s.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.ctx.Done():
		return false
	}
}

// gate admits requests until the server closes, and counts those being
// served.
type gate struct {
	mu       sync.Mutex     // guards closed, and orders each inflight.Add before Close's inflight.Wait
	closed   bool           // the server is closing: no request is admitted
	inflight sync.WaitGroup // the requests admitted and not yet done
	serving  atomic.Int64   // how many of inflight are the service's, for Stats.InFlight
}

// enter admits a request, unless the server is closing; service says it
// is the service's, to count in Stats.InFlight (the console's are not).
func (g *gate) enter(service bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.inflight.Add(1)
	if service {
		g.serving.Add(1)
	}
	return true
}

// leave ends what enter began.
func (g *gate) leave(service bool) {
	if service {
		g.serving.Add(-1)
	}
	g.inflight.Done()
}

// shut admits no more requests.
func (g *gate) shut() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
