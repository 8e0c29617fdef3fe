package travelruletest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/vaspkit/travelrule"
)

// maxBody is the largest request body the server reads; a larger one is
// answered 413.
const maxBody = 1 << 20

// maxIdempotencyKey is the longest Idempotency-Key accepted.
const maxIdempotencyKey = 255

// Server is the Travel Rule Transfer Exchange Service running on a loopback
// port, for tests: it serves both operations of the interface description
// 3.2.1 as the package documentation describes, an OAuth2 token endpoint,
// sends status callbacks, and records what it saw. Make it with
// [NewServer] (HTTP/1.1) or [NewTLSServer] (HTTPS, HTTP/2 or HTTP/1.1) and
// stop it with [Server.Close]. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of the service, such as
	// "http://127.0.0.1:39215/api/v3", with the path prefix (see
	// [WithPathPrefix]) and no trailing slash: give it to
	// travelrule.NewClient. It starts with "https://" for a server made
	// by NewTLSServer.
	URL string

	cfg      config
	cert     *x509.Certificate // nil unless TLS
	client   *http.Client
	origin   string
	prefix   string
	key      []byte
	parser   *jwt.Parser
	tmu      sync.Mutex
	verified map[string]time.Time // verified tokens and their expiry
	hs       *http.Server
	served   chan struct{}
	conns    sync.WaitGroup // the connections hs is serving; Close waits for them
	open     atomic.Int64   // how many connections conns counts
	ctx      context.Context
	cancel   context.CancelFunc
	reqSeq   atomic.Uint64
	logger   *slog.Logger
	cbClient *http.Client

	closeOnce sync.Once
	cmu       sync.Mutex // guards closing and the start of inflight work
	closing   bool
	inflight  sync.WaitGroup
	serving   atomic.Int64 // requests being served

	mu         sync.Mutex // guards the records below
	transfers  map[string]*transferRec
	order      []*transferRec          // the newest transfers, oldest first, at most the record limit
	held       map[string]*transferRec // older ones kept while pending
	seq        uint64                  // transfers stored so far
	idem       map[string]*idemEntry
	idemOrder  []*idemEntry  // oldest first
	requests   []Request     // the newest, oldest first
	deliveries []Delivery    // the newest, oldest first
	delivered  chan struct{} // closed and replaced when a callback finishes
	stats      Stats

	fmu      sync.Mutex // guards the faults
	faults   []faultSlot
	faultGen uint64
	rng      *mrand.Rand

	dmu     sync.Mutex // guards the callback queue
	dcond   *sync.Cond
	dclosed bool
	lanes   map[string]*lane
	ready   []*lane
	workers sync.WaitGroup
}

// idemEntry is the stored answer to an Idempotency-Key.
type idemEntry struct {
	key         string // in s.idem
	created     time.Time
	fingerprint [32]byte
	done        bool
	ans         *answer
}

// answer is an HTTP answer, decided before it is written.
type answer struct {
	status     int
	body       []byte
	header     []string  // pairs of name and value
	drop       bool      // close the connection without answering
	reset      FaultKind // end the HTTP/2 stream or connection as this fault does, without answering
	abandon    bool      // the client went away: write nothing
	transferID string
	replayed   bool
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
// act as their names say; over HTTP/1.1 they close the connection, as
// [FaultDrop] does.
func NewTLSServer(opts ...Option) *Server { return start(true, opts) }

func start(useTLS bool, opts []Option) *Server {
	cfg := defaultConfig()
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	if cfg.err != nil {
		panic(cfg.err)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil && cfg.addr == "127.0.0.1:0" {
		ln, err = net.Listen("tcp6", "[::1]:0")
	}
	if err != nil {
		panic("travelruletest: NewServer: listening: " + err.Error())
	}
	scheme := "http://"
	s := &Server{
		cfg:       cfg,
		prefix:    cfg.prefix,
		key:       make([]byte, 32),
		parser:    newParser(cfg.clock()),
		verified:  make(map[string]time.Time),
		served:    make(chan struct{}),
		logger:    cfg.logger,
		transfers: make(map[string]*transferRec),
		held:      make(map[string]*transferRec),
		idem:      make(map[string]*idemEntry),
		delivered: make(chan struct{}),
		stats:     Stats{ByStatus: make(map[int]int), ByFault: make(map[FaultKind]int)},
		rng:       mrand.New(mrand.NewPCG(cfg.seed, cfg.seed^0x9e3779b97f4a7c15)),
		lanes:     make(map[string]*lane),
	}
	s.client = &http.Client{Transport: &http.Transport{}}
	if useTLS {
		cert, err := newCertificate(ln.Addr())
		if err != nil {
			_ = ln.Close()
			panic("travelruletest: NewTLSServer: making the certificate: " + err.Error())
		}
		s.cert = cert.Leaf
		ln = tlsListener{Listener: ln, config: &tls.Config{
			Certificates: []tls.Certificate{cert},
			NextProtos:   []string{"h2", "http/1.1"},
			MinVersion:   tls.VersionTLS12,
		}}
		pool := x509.NewCertPool()
		pool.AddCert(s.cert)
		s.client.Transport = &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2: true,
		}
		scheme = "https://"
	}
	s.origin = scheme + dialAddr(ln.Addr())
	_, _ = rand.Read(s.key)
	s.URL = s.origin + s.prefix
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.cbClient, _ = newCallbackClient(cfg.cbClient)
	s.dcond = sync.NewCond(&s.dmu)
	s.SetFaults(cfg.faults...)

	errorLog := log.New(io.Discard, "", 0)
	if s.logger != nil {
		errorLog = slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)
	}
	s.hs = &http.Server{
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
		s.hs.Protocols = new(http.Protocols)
		s.hs.Protocols.SetHTTP1(true)
		s.hs.Protocols.SetUnencryptedHTTP2(true)
	}
	go func() {
		defer close(s.served)
		_ = s.hs.Serve(ln)
	}()
	for range callbackWorkers {
		s.workers.Add(1)
		go s.worker()
	}
	return s
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

// Close stops the server: it stops sending callbacks (those not yet
// delivered are dropped), closes the listener and every connection (a
// request held by a latency fault loses its connection, unanswered), and
// waits for the requests being served, the connections and the callback
// workers to end. It also closes the idle connections of [Server.Client].
// It may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.cmu.Lock()
		s.closing = true
		s.cmu.Unlock()
		s.cancel()
		s.dmu.Lock()
		s.dclosed = true
		s.dcond.Broadcast()
		s.dmu.Unlock()
		_ = s.hs.Close()
		<-s.served // no connection is accepted after this
		s.inflight.Wait()
		s.conns.Wait()
		s.workers.Wait()
		s.cbClient.CloseIdleConnections()
		s.client.CloseIdleConnections()
	})
}

// enter registers a request being served, unless the server is closing.
func (s *Server) enter() bool {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if s.closing {
		return false
	}
	s.inflight.Add(1)
	s.serving.Add(1)
	return true
}

// leave ends what enter began.
func (s *Server) leave() {
	s.serving.Add(-1)
	s.inflight.Done()
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	st := streamOf(r)
	if !s.enter() {
		w.Header().Set("Connection", "close")
		writeAnswer(w, errorAnswer(http.StatusServiceUnavailable, "unavailable", "server closing", nil))
		return
	}
	defer s.leave()

	rec := Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Time:   time.Now(),
	}
	rec.Header.Del("Authorization")
	var a *answer
	switch r.URL.Path {
	case s.prefix + "/transfers/initiate":
		rec.Op = OpInitiate
		a = s.serveOp(r, st, OpInitiate, &rec)
	case s.prefix + "/transfers/inquiryResolution":
		rec.Op = OpResolve
		a = s.serveOp(r, st, OpResolve, &rec)
	case tokenPath:
		a = s.serveToken(r)
	default:
		a = errorAnswer(http.StatusNotFound, "not_found", "no such endpoint", nil)
	}
	rec.TransferID, rec.Replayed = a.transferID, a.replayed
	if !a.abandon && !a.drop && a.reset == 0 {
		rec.Status = a.status
	}
	// Recorded before the client can see the answer, so that a test that
	// got it finds the record.
	seq := s.record(rec)
	if st.conn != nil && rec.Status != 0 {
		// A GOAWAY on the connection may overtake the answer.
		status := rec.Status
		st.conn.watch(st.id, func(truncated bool) { s.markLost(seq, status, truncated) })
	}
	s.log(r.Context(), "travelruletest: request",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.Status))

	switch {
	case a.abandon, a.drop:
		// An abandoned request (its client left, or the server is
		// closing) gets no answer either: left to itself, net/http would
		// finish it as an empty 200.
		drop(w)
	case a.reset != 0:
		st.reset(w, a.reset)
	default:
		w.Header().Set("X-Request-Id", "req_"+strconv.FormatUint(s.reqSeq.Add(1), 10))
		writeAnswer(w, a)
	}
}

// frameConnKey is the context key of the *frameConn a request came on.
type frameConnKey struct{}

// stream is the HTTP/2 stream a request came on over a connection of a TLS
// server; its conn is nil for any other request.
type stream struct {
	conn *frameConn
	id   uint32
}

// streamOf returns the stream r came on, and takes the field that named it
// out of r's header.
func streamOf(r *http.Request) stream {
	vs := r.Header.Values(streamHeader)
	if vs == nil {
		return stream{}
	}
	r.Header.Del(streamHeader)
	c, _ := r.Context().Value(frameConnKey{}).(*frameConn)
	if c == nil || r.ProtoMajor != 2 {
		return stream{}
	}
	// The connection's own field is the last of the block.
	id, err := strconv.ParseUint(vs[len(vs)-1], 10, 31)
	if err != nil || id == 0 {
		return stream{}
	}
	return stream{conn: c, id: uint32(id)}
}

// stopped reports whether the connection of an HTTP/2 request stopped
// taking work (a GOAWAY fault struck on it).
func (st stream) stopped() bool { return st.conn != nil && st.conn.isStopped() }

// reset ends the request without answer as the fault k does: a reset of
// its stream with the code k names, or a GOAWAY, over HTTP/2; a closed
// connection over HTTP/1.
func (st stream) reset(w http.ResponseWriter, k FaultKind) {
	if st.conn == nil {
		drop(w)
		return
	}
	switch k {
	case FaultResetProtocolError:
		st.conn.replace(st.id, replaceProtocolError)
	case FaultResetRefusedStream:
		st.conn.replace(st.id, replaceRefusedStream)
	case FaultGoAway:
		st.conn.replace(st.id, replaceGoAway)
	}
	// net/http resets the stream with INTERNAL_ERROR, which the
	// connection rewrites.
	panic(http.ErrAbortHandler)
}

// drop closes the connection without answering; over HTTP/2 it resets the
// request's stream with INTERNAL_ERROR.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func writeAnswer(w http.ResponseWriter, a *answer) {
	h := w.Header()
	if len(a.body) > 0 {
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(a.body)))
	}
	for i := 0; i+1 < len(a.header); i += 2 {
		h.Set(a.header[i], a.header[i+1])
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// errorBody is the shape of every error answer of the operations.
type errorBody struct {
	Error   string                  `json:"error"`
	Message string                  `json:"message"`
	Fields  []travelrule.FieldError `json:"fields,omitempty"`
}

func errorAnswer(status int, code, msg string, fields []travelrule.FieldError) *answer {
	body, _ := json.Marshal(errorBody{Error: code, Message: msg, Fields: fields})
	return &answer{status: status, body: body}
}

// serveOp serves one of the two operations: method, authentication, body,
// faults, idempotency, then the operation itself.
func (s *Server) serveOp(r *http.Request, st stream, op Operation, rec *Request) *answer {
	if r.Method != http.MethodPost {
		a := errorAnswer(http.StatusMethodNotAllowed, "method_not_allowed", "use POST", nil)
		a.header = []string{"Allow", http.MethodPost}
		return a
	}
	if a := s.authenticate(r); a != nil {
		return a
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		// A malformed body (a bad chunk) or a client that left mid-body;
		// the answer reaches only the first.
		return errorAnswer(http.StatusBadRequest, "bad_request", "request body could not be read", nil)
	}
	if len(body) > maxBody {
		return errorAnswer(http.StatusRequestEntityTooLarge, "too_large", "body larger than 1 MiB", nil)
	}

	plan := s.drawFaults(op)
	rec.Faults = plan.fired
	if plan.latency > 0 {
		attrs := []slog.Attr{slog.String("path", r.URL.Path), slog.Duration("latency", plan.latency)}
		if id := requestID(r.Header.Get("X-Request-Id")); id != "" {
			attrs = append(attrs, slog.String("request_id", id))
		}
		s.log(r.Context(), "travelruletest: holding request", attrs...)
	}
	if plan.latency > 0 && !s.sleep(r.Context(), plan.latency) {
		s.refund(&plan)
		rec.Faults = plan.fired
		return &answer{abandon: true}
	}
	if f := plan.pre; f != nil {
		status, code, msg := http.StatusTooManyRequests, "rate_limited", "too many requests"
		if f.Kind == FaultUnavailable {
			status, code, msg = http.StatusServiceUnavailable, "unavailable", "service unavailable"
		}
		a := errorAnswer(status, code, msg, nil)
		a.header = []string{"Retry-After", retryAfterSeconds(f.RetryAfter)}
		return a
	}

	if st.stopped() {
		// A GOAWAY told the client that nothing on this connection was
		// processed, and the answer could not reach it: the request is
		// recorded, not acted on.
		s.refund(&plan)
		rec.Faults = plan.fired
		return &answer{abandon: true}
	}
	a := s.idempotent(r, op, body)
	if a.status/100 != 2 || a.abandon {
		s.refund(&plan)
		rec.Faults = plan.fired
		return a
	}
	if f := plan.post; f != nil {
		var e *answer
		switch f.Kind {
		case FaultDrop:
			e = &answer{drop: true}
		case FaultResetProtocolError, FaultResetRefusedStream, FaultGoAway:
			e = &answer{reset: f.Kind}
		case FaultProxyUnavailable:
			e = &answer{status: http.StatusServiceUnavailable, body: []byte(proxyResetBody),
				header: []string{"Content-Type", "text/plain"}}
		default:
			e = errorAnswer(http.StatusInternalServerError, "internal", "internal error", nil)
		}
		e.transferID, e.replayed = a.transferID, a.replayed
		return e
	}
	return a
}

// proxyResetBody is what a proxy (Envoy's words) answers when its upstream
// reset the connection before answering.
const proxyResetBody = "upstream connect error or disconnect/reset before headers. reset reason: connection termination"

// idempotent runs the operation, or replays the answer stored for the
// request's Idempotency-Key.
func (s *Server) idempotent(r *http.Request, op Operation, body []byte) *answer {
	key := r.Header.Get("Idempotency-Key")
	if key == "" || s.cfg.noIdempotency {
		return s.run(r, op, body, "")
	}
	if len(key) > maxIdempotencyKey {
		return errorAnswer(http.StatusBadRequest, "bad_request", "Idempotency-Key longer than 255 characters", nil)
	}
	h := sha256.New()
	h.Write([]byte(r.URL.RawQuery))
	h.Write([]byte{0})
	h.Write(body)
	var fp [32]byte
	h.Sum(fp[:0])
	mapKey := op.String() + "\x00" + key

	s.mu.Lock()
	e := s.idem[mapKey]
	switch {
	case e == nil:
		e = &idemEntry{key: mapKey, created: s.cfg.clock()(), fingerprint: fp}
		s.idem[mapKey] = e
		s.idemOrder = append(s.idemOrder, e)
		s.evictIdempotency(e.created)
	case e.fingerprint != fp:
		s.mu.Unlock()
		return errorAnswer(http.StatusUnprocessableEntity, "idempotency_key_reused",
			"Idempotency-Key was used with a different request", nil)
	case !e.done:
		s.mu.Unlock()
		a := errorAnswer(http.StatusConflict, "idempotency_key_in_use",
			"a request with this Idempotency-Key is being processed", nil)
		a.header = []string{"Retry-After", "1"}
		return a
	default:
		stored := *e.ans
		s.mu.Unlock()
		stored.replayed = true
		return &stored
	}
	s.mu.Unlock()

	a := s.run(r, op, body, key)
	s.mu.Lock()
	e.ans, e.done = a, true
	s.mu.Unlock()
	return a
}

func (s *Server) run(r *http.Request, op Operation, body []byte, key string) *answer {
	if op == OpInitiate {
		return s.initiate(body, key)
	}
	return s.resolve(r.URL.Query().Get("q"), body)
}

func badRequest(err error, fields []travelrule.FieldError) *answer {
	if err != nil {
		return errorAnswer(http.StatusBadRequest, "bad_request", err.Error(), nil)
	}
	msg := "1 field is invalid"
	if len(fields) != 1 {
		msg = strconv.Itoa(len(fields)) + " fields are invalid"
	}
	return errorAnswer(http.StatusBadRequest, "bad_request", msg, fields)
}

// initiate is the transfer initiation.
func (s *Server) initiate(body []byte, key string) *answer {
	req, faults, err := decodeTransfer(body)
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	if ta := req.TravelAddress; strings.HasPrefix(ta, "ta") && !s.cfg.travelAddresses[ta] {
		return errorAnswer(http.StatusNotFound, "not_found", "travel address resolves to no VASP", nil)
	}
	approved := true
	if s.cfg.approve != nil {
		approved = s.cfg.approve(req)
	}
	id := newTransferID()
	now := time.Now()
	ev := func(st State) *event {
		return &event{id: newEventID(), transferID: id, status: st, url: req.Callback, txID: req.TxID, advance: true}
	}
	evs := []*event{ev(StateReceived), ev(StateRejected)}
	if approved {
		evs = []*event{ev(StateReceived), ev(StateApproved), ev(StateCompleted)}
	}
	t := &transferRec{Transfer: Transfer{ID: id, Request: req, State: StateReceived, IdempotencyKey: key, Created: now, Updated: now},
		callbacks: len(evs)}
	s.mu.Lock()
	s.store(t)
	s.stats.Initiated++
	s.mu.Unlock()
	s.enqueue(id, evs...)

	var out string
	if s.cfg.transferIDInAnswer {
		out = `{"status":"succes","transferId":"` + id + `"}`
	} else {
		out = `{"status":"succes"}`
	}
	return &answer{status: http.StatusOK, body: []byte(out), transferID: id}
}

// resolve is the inquiry resolution.
func (s *Server) resolve(q string, body []byte) *answer {
	res, faults, err := decodeResolution(q, body)
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	decision := StateRejected
	if res.Approved == "true" {
		decision = StateApproved
	}
	s.mu.Lock()
	t := s.transfers[q]
	if t == nil || !t.Inquiry {
		s.mu.Unlock()
		return errorAnswer(http.StatusNotFound, "not_found", "no inquiry with this transfer id", nil)
	}
	ok, changed := true, false
	switch t.State {
	case StateInquiry:
		t.State, t.Updated = decision, time.Now()
		s.stats.Resolutions++
		changed = true
		if res.Callback != "" {
			t.callbacks++
		}
		s.release(t)
	case decision:
	default:
		ok = false
	}
	txID := t.Request.TxID
	s.mu.Unlock()

	if changed && res.Callback != "" {
		s.enqueue(q, &event{id: newEventID(), transferID: q, status: decision, url: res.Callback, txID: txID})
	}
	a := &answer{status: http.StatusOK, body: []byte(`{"status":` + strconv.FormatBool(ok) + `}`), transferID: q}
	return a
}

func (s *Server) log(ctx context.Context, msg string, attrs ...slog.Attr) {
	if s.logger == nil || !s.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
}

// newTransferID returns a version 4 UUID, made as the SDK makes its
// idempotency keys.
func newTransferID() string { return travelrule.NewIdempotencyKey() }

// newEventID returns a webhook-id: "msg_" and 32 hex digits.
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// requestID returns a client's X-Request-Id for the log when it is a short
// identifier (letters, digits, '.', '_', '-'), else "".
func requestID(id string) string {
	if len(id) > 64 {
		return ""
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return ""
		}
	}
	return id
}
