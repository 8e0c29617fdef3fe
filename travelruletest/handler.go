package travelruletest

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

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

// serveHTTP serves every request: it routes it, records it, and writes
// its answer, or drops or resets it as a fault says.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	st := streamOf(r)
	console := s.console != nil && isConsolePath(r.URL.Path)
	if !s.gate.enter(!console) {
		w.Header().Set("Connection", "close")
		writeAnswer(w, errorAnswer(http.StatusServiceUnavailable, codeServiceUnavailable, "server closing"))
		return
	}
	defer s.gate.leave(!console)
	if console {
		// The console is not the service: its requests are neither
		// recorded, counted in Stats, nor hit by faults.
		if !st.take() {
			drop(w)
			return
		}
		s.console.ServeHTTP(w, r)
		return
	}

	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Time: time.Now()}
	a := s.route(r, st, &rec)
	// The request's own header, not a copy: nothing reads it once the
	// request is routed (net/http reads what it needs before the handler).
	rec.Header = r.Header
	rec.Header.Del("Authorization")
	rec.Header.Del("X-Api-Key")
	if !a.abandon && !a.drop && a.reset == 0 && !st.take() {
		// Nothing is answered on a stream that a GOAWAY declared
		// unprocessed.
		a = &answer{abandon: true}
	}
	rec.TransferID, rec.Replayed = a.transferID, a.replayed
	if !a.abandon && !a.drop && a.reset == 0 {
		rec.Status = a.status
	}
	// Recorded before the client can see the answer, so that a test that
	// got it finds the record.
	s.records.record(rec)
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

// route serves r by its path: an operation, the login, discovery, the
// OAuth2 token endpoint, or the control plane. A request to anything but
// an operation is taken (see stream.take) before it is served; an
// operation takes it itself, after its faults are drawn.
func (s *Server) route(r *http.Request, st stream, rec *Request) *answer {
	p := r.URL.Path
	rest, ok := strings.CutPrefix(p, s.prefix)
	if op := operationAt(rest); ok && op != 0 {
		rec.Op = op
		return s.serveOp(r, st, op, rec)
	}
	if !st.take() {
		return &answer{abandon: true}
	}
	if p == tokenPath {
		return s.serveToken(r)
	}
	if !ok {
		return errorAnswer(http.StatusNotFound, codeNotFound, "no such endpoint")
	}
	switch rest {
	case loginPath:
		return s.serveLogin(r)
	case discoveryPath:
		return s.serveDiscovery(r)
	}
	if rest, ok := strings.CutPrefix(rest, controlPrefix); ok {
		return s.serveControl(r, rest)
	}
	return errorAnswer(http.StatusNotFound, codeNotFound, "no such endpoint")
}

// operationAt is the operation whose path, after the path prefix, is p, or
// zero.
func operationAt(p string) Operation {
	switch p {
	case "/transfers/initiate":
		return OpInitiate
	case "/transfers/inquiryResolution":
		return OpResolve
	case "/travel-address/generate":
		return OpGenerateTravelAddress
	case "/travel-address/decode":
		return OpDecodeTravelAddress
	case "/transfers/txId":
		return OpSubmitTxID
	}
	return 0
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

// take reports whether the sandbox may act on the request and answer it:
// always, but over an HTTP/2 connection that a GOAWAY fault is shutting
// down, for a stream above the GOAWAY's last-stream-id. See frameConn.take.
func (st stream) take() bool { return st.conn == nil || st.conn.take(st.id) }

// reset ends the request without answer as the fault k does: a reset of
// its stream with the code k names over HTTP/2, a closed connection over
// HTTP/1.
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

// writeAnswer writes a as the answer to the request.
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

// log writes a line at level Info, if the server has a logger.
func (s *Server) log(ctx context.Context, msg string, attrs ...slog.Attr) {
	if s.logger == nil || !s.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
}
