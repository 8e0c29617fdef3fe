package travelruletest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
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
// [NewServer] and stop it with [Server.Close]. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL of the service, such as
	// "http://127.0.0.1:39215/api/v3", with the path prefix (see
	// [WithPathPrefix]) and no trailing slash: give it to
	// travelrule.NewClient.
	URL string

	cfg      config
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
	transfers  map[string]*Transfer
	order      []*Transfer
	idem       map[string]*idemEntry
	requests   []Request
	deliveries []Delivery
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
	fingerprint [32]byte
	done        bool
	ans         *answer
}

// answer is an HTTP answer, decided before it is written.
type answer struct {
	status     int
	body       []byte
	header     []string // pairs of name and value
	drop       bool     // close the connection without answering
	abandon    bool     // the client went away: write nothing
	transferID string
	replayed   bool
}

// NewServer starts a server on a loopback port (see [WithAddr]) and
// returns it. It panics if an option is invalid or the server cannot
// listen. Call Close when done.
func NewServer(opts ...Option) *Server {
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
	s := &Server{
		cfg:       cfg,
		origin:    "http://" + dialAddr(ln.Addr()),
		prefix:    cfg.prefix,
		key:       make([]byte, 32),
		parser:    newParser(cfg.clock()),
		verified:  make(map[string]time.Time),
		served:    make(chan struct{}),
		logger:    cfg.logger,
		transfers: make(map[string]*Transfer),
		idem:      make(map[string]*idemEntry),
		delivered: make(chan struct{}),
		stats:     Stats{ByStatus: make(map[int]int)},
		rng:       mrand.New(mrand.NewPCG(cfg.seed, cfg.seed^0x9e3779b97f4a7c15)),
		lanes:     make(map[string]*lane),
	}
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
// workers to end. It may be called more than once.
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
		a = s.serveOp(r, OpInitiate, &rec)
	case s.prefix + "/transfers/inquiryResolution":
		rec.Op = OpResolve
		a = s.serveOp(r, OpResolve, &rec)
	case tokenPath:
		a = s.serveToken(r)
	default:
		a = errorAnswer(http.StatusNotFound, "not_found", "no such endpoint", nil)
	}
	rec.TransferID, rec.Replayed = a.transferID, a.replayed
	if !a.abandon && !a.drop {
		rec.Status = a.status
	}
	// Recorded before the client can see the answer, so that a test that
	// got it finds the record.
	s.record(rec)

	switch {
	case a.abandon, a.drop:
		// An abandoned request (its client left, or the server is
		// closing) gets no answer either: left to itself, net/http would
		// finish it as an empty 200.
		drop(w)
	default:
		w.Header().Set("X-Request-Id", "req_"+strconv.FormatUint(s.reqSeq.Add(1), 10))
		writeAnswer(w, a)
	}
	s.log(r.Context(), "travelruletest: request",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.Status))
}

// drop closes the connection without answering.
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
func (s *Server) serveOp(r *http.Request, op Operation, rec *Request) *answer {
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

	a := s.idempotent(r, op, body)
	if a.status/100 != 2 || a.abandon {
		s.refund(&plan)
		rec.Faults = plan.fired
		return a
	}
	if f := plan.post; f != nil {
		if f.Kind == FaultDrop {
			return &answer{drop: true, transferID: a.transferID, replayed: a.replayed}
		}
		e := errorAnswer(http.StatusInternalServerError, "internal", "internal error", nil)
		e.transferID, e.replayed = a.transferID, a.replayed
		return e
	}
	return a
}

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
		e = &idemEntry{fingerprint: fp}
		s.idem[mapKey] = e
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
	t := &Transfer{ID: id, Request: req, State: StateReceived, IdempotencyKey: key, Created: now, Updated: now}
	s.mu.Lock()
	s.transfers[id] = t
	s.order = append(s.order, t)
	s.stats.Initiated++
	s.mu.Unlock()

	ev := func(st State) *event {
		return &event{id: newEventID(), transferID: id, status: st, url: req.Callback, txID: req.TxID, advance: true}
	}
	if approved {
		s.enqueue(id, ev(StateReceived), ev(StateApproved), ev(StateCompleted))
	} else {
		s.enqueue(id, ev(StateReceived), ev(StateRejected))
	}

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
