package travelruletest

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
)

// The parts of HTTP/2 framing (RFC 9113, section 4.1 and 6) that the
// sandbox's connections read and rewrite.
const (
	frameHeaderLen = 9

	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameGoAway       = 0x7
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagEndHeaders = 0x4

	codeNoError       = 0x0
	codeProtocolError = 0x1
	codeInternalError = 0x2
	codeRefusedStream = 0x7
)

// clientPreface opens every HTTP/2 connection (RFC 9113, section 3.4).
const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// streamHeader is the request header field through which a frameConn tells
// the handler which HTTP/2 stream a request came on. The connection adds
// it to the header block of every new stream; serveHTTP takes it out
// before anything sees the request.
const streamHeader = "x-travelruletest-stream"

// The ways a stream's INTERNAL_ERROR reset can be rewritten; see
// frameConn.replace.
const (
	replaceNone uint8 = iota
	replaceProtocolError
	replaceRefusedStream
)

// tlsListener terminates TLS itself and hands out frameConns, so that the
// http.Server above it (which serves HTTP/1.1 and HTTP/2 with prior
// knowledge) sees the plaintext. A client that negotiated "h2" by ALPN
// opens with the HTTP/2 preface and is served HTTP/2; any other client is
// served HTTP/1.1.
type tlsListener struct {
	net.Listener
	config *tls.Config
}

// Accept implements net.Listener.
func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newFrameConn(tls.Server(c, l.config), c), nil
}

// frameConn is one connection of a TLS sandbox: TLS is terminated here (the
// handshake runs on the first read), and on an HTTP/2 connection the frames
// are rewritten both ways:
//
//   - the header block that opens each stream from the client gets one
//     more field, streamHeader, naming the stream, in a CONTINUATION frame
//     of its own (an HPACK literal without indexing, which leaves both
//     sides' tables as they were);
//   - the RST_STREAM INTERNAL_ERROR that net/http's HTTP/2 server sends for
//     a handler that panics with http.ErrAbortHandler becomes the reset
//     that the handler asked for with replace;
//   - a GOAWAY fault shuts the connection down gracefully (goAway).
//
// The graceful shutdown keeps RFC 9113's promise (section 6.8): the
// sandbox never declares unprocessed a stream it acted on. The sandbox
// acts on or answers a stream only once it took it (take), and the GOAWAY
// (NO_ERROR) carries as last-stream-id the highest stream taken when the
// fault struck. From then on a stream above that id is taken no more, and
// nothing of it is written (not even its reset); every stream the client
// opened at or below it is served, and once each has ended on the wire
// (answered in full, or reset by either side) the connection is
// half-closed and every later write discarded. Reading goes on, so that
// the server sees (and the sandbox records) every request the client
// sent. A GOAWAY of net/http's own that follows (the server closing)
// never raises the last-stream-id.
//
// net/http's server cannot send a reset code of its choice from a handler,
// nor a GOAWAY for one connection, which is why the frames are rewritten on
// the wire. An HTTP/1.1 connection passes through untouched.
type frameConn struct {
	net.Conn          // the TLS connection; it has no ConnectionState method, so net/http serves it as plaintext
	raw      net.Conn // the TCP connection under it, half-closed when a graceful shutdown is complete
	h2       atomic.Bool

	// The read side, used by the one goroutine reading at a time.
	br         *bufio.Reader
	detected   bool // h2 is known
	prefaceOut int  // bytes of the preface handed out
	rhdr       [frameHeaderLen]byte
	rhdrN      int
	rleft      uint32 // payload bytes of the current frame not yet handed out
	rout       []byte // bytes to hand out before reading more
	rinject    []byte // handed out when the current frame's payload ends
	newBlock   bool   // the header block being read opens a stream
	lastStream uint32 // the highest stream the client opened

	// The write side: the one goroutine writing at a time, and goAway and
	// the read side when they write a GOAWAY or close, hold wmu.
	wmu      sync.Mutex
	whdr     [frameHeaderLen + 4]byte // a frame header, and the first 4 bytes of a RST_STREAM's or GOAWAY's payload
	whdrN    int
	wleft    uint32 // payload bytes of the current frame still to pass through, or to discard
	wdiscard bool   // the current frame is not written
	wbuf     []byte
	closed   bool // the write side was closed: every write is discarded

	mu       sync.Mutex
	replaces map[uint32]uint8    // stream -> what its INTERNAL_ERROR reset becomes
	open     map[uint32]struct{} // the streams the client opened that have not ended
	taken    uint32              // the highest stream taken
	draining bool                // a GOAWAY fault struck: no stream above last is taken
	last     uint32              // the GOAWAY's last-stream-id
	sentGA   bool                // the GOAWAY went out
	started  bool                // the server's first frame, its SETTINGS, began: no frame may come before it
}

func newFrameConn(c, raw net.Conn) *frameConn {
	return &frameConn{Conn: c, raw: raw, br: bufio.NewReaderSize(c, 16<<10),
		replaces: make(map[uint32]uint8), open: make(map[uint32]struct{})}
}

// Read hands the server the client's bytes, with the stream field added to
// every header block that opens a stream.
func (c *frameConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !c.detected {
		if err := c.detect(); err != nil {
			return 0, err
		}
	}
	if !c.h2.Load() {
		return c.br.Read(p)
	}
	for {
		switch {
		case len(c.rout) > 0:
			n := copy(p, c.rout)
			c.rout = c.rout[n:]
			return n, nil
		case c.prefaceOut < len(clientPreface):
			n, err := c.br.Read(p[:min(len(p), len(clientPreface)-c.prefaceOut)])
			c.prefaceOut += n
			return n, err
		case c.rleft > 0:
			n, err := c.br.Read(p[:min(uint32(len(p)), c.rleft)])
			c.rleft -= uint32(n)
			if c.rleft == 0 {
				c.rout, c.rinject = c.rinject, nil
			}
			return n, err
		}
		n, err := c.br.Read(c.rhdr[c.rhdrN:])
		c.rhdrN += n
		if c.rhdrN == frameHeaderLen {
			c.rhdrN = 0
			c.clientFrame()
		}
		if err != nil {
			if len(c.rout) > 0 {
				n := copy(p, c.rout)
				c.rout = c.rout[n:]
				return n, err
			}
			return 0, err
		}
	}
}

// detect reads until the client's first bytes show whether it speaks
// HTTP/2, as net/http itself decides: by the preface.
func (c *frameConn) detect() error {
	for {
		b, _ := c.br.Peek(c.br.Buffered())
		n := min(len(b), len(clientPreface))
		switch {
		case string(b[:n]) != clientPreface[:n]:
			c.detected = true
			return nil
		case n == len(clientPreface):
			c.detected = true
			c.h2.Store(true)
			return nil
		}
		if _, err := c.br.Peek(len(b) + 1); err != nil {
			if c.br.Buffered() > 0 {
				c.detected = true // too short for a preface: HTTP/1.1 reads it
				return nil
			}
			return err
		}
	}
}

// clientFrame looks at the frame header just read from the client and
// queues it, changed if the frame ends the header block of a new stream.
func (c *frameConn) clientFrame() {
	h := c.rhdr[:]
	length := uint32(h[0])<<16 | uint32(h[1])<<8 | uint32(h[2])
	typ, flags := h[3], h[4]
	id := binary.BigEndian.Uint32(h[5:]) & (1<<31 - 1)
	out := append(c.rout[:0], h...)
	switch typ {
	case frameHeaders:
		c.newBlock = id > c.lastStream
		if c.newBlock {
			c.lastStream = id
			c.mu.Lock()
			c.open[id] = struct{}{}
			c.mu.Unlock()
		}
		fallthrough
	case frameContinuation:
		if flags&flagEndHeaders != 0 && c.newBlock {
			c.newBlock = false
			out[4] &^= flagEndHeaders
			c.rinject = streamField(id)
		}
	case frameRSTStream:
		// The client ended the stream: nothing more will be written on it.
		c.mu.Lock()
		delete(c.replaces, id)
		delete(c.open, id)
		draining := c.draining
		c.mu.Unlock()
		if draining {
			c.closeIfDrained()
		}
	}
	c.rleft = length
	if length == 0 {
		out = append(out, c.rinject...)
		c.rinject = nil
	}
	c.rout = out
}

// streamField is a CONTINUATION frame that ends a header block of stream id
// with the field streamHeader: id, an HPACK literal without indexing with a
// new name (RFC 7541, section 6.2.2), neither string Huffman-coded.
func streamField(id uint32) []byte {
	v := strconv.FormatUint(uint64(id), 10)
	payload := make([]byte, 0, 3+len(streamHeader)+len(v))
	payload = append(payload, 0x00, byte(len(streamHeader)))
	payload = append(payload, streamHeader...)
	payload = append(payload, byte(len(v)))
	payload = append(payload, v...)
	return append(frameHeader(len(payload), frameContinuation, flagEndHeaders, id), payload...)
}

func frameHeader(length int, typ, flags byte, id uint32) []byte {
	h := make([]byte, frameHeaderLen, frameHeaderLen+8)
	h[0], h[1], h[2] = byte(length>>16), byte(length>>8), byte(length)
	h[3], h[4] = typ, flags
	binary.BigEndian.PutUint32(h[5:], id)
	return h
}

// Write sends the server's bytes to the client, with the resets replaced as
// asked, the GOAWAY of a graceful shutdown put in at the first frame
// boundary after it struck (and after the server's SETTINGS), and the
// frames of the streams it declared unprocessed left out; once the
// shutdown is complete it closes the write side, and discards whatever
// comes after.
func (c *frameConn) Write(p []byte) (int, error) {
	if !c.h2.Load() {
		return c.Conn.Write(p)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return len(p), nil
	}
	out := c.wbuf[:0]
	done := false
	for rest := p; len(rest) > 0 && !done; {
		if c.wleft > 0 {
			n := min(uint32(len(rest)), c.wleft)
			if !c.wdiscard {
				out = append(out, rest[:n]...)
			}
			rest = rest[n:]
			c.wleft -= n
			if c.wleft == 0 {
				out = c.pendingGoAway(out)
			}
			done = c.wleft == 0 && c.drained()
			continue
		}
		// A frame header, and the first bytes of the payload of a
		// RST_STREAM or a GOAWAY, which decide what is written.
		need := frameHeaderLen
		if c.whdrN >= frameHeaderLen {
			need += c.peek()
		}
		n := copy(c.whdr[c.whdrN:need], rest)
		c.whdrN += n
		rest = rest[n:]
		if c.whdrN < need || need == frameHeaderLen && c.peek() > 0 {
			continue
		}
		c.whdrN = 0
		out = c.serverFrame(out, c.whdr[:need])
		if c.wleft == 0 {
			out = c.pendingGoAway(out)
		}
		done = c.wleft == 0 && c.drained()
	}
	c.wbuf = out[:0]
	if len(out) > 0 {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
	}
	if done {
		c.shut()
	}
	return len(p), nil
}

// peek is how many bytes of the payload of the frame whose header is in
// whdr are read with it: the code of a RST_STREAM, the last-stream-id of a
// GOAWAY.
func (c *frameConn) peek() int {
	h := c.whdr[:frameHeaderLen]
	length := uint32(h[0])<<16 | uint32(h[1])<<8 | uint32(h[2])
	if h[3] == frameRSTStream && length == 4 || h[3] == frameGoAway && length >= 8 {
		return 4
	}
	return 0
}

// serverFrame appends the frame whose header (and the payload's first bytes
// that peek asks for) is f to out, as it is to be written, after the
// GOAWAY of a graceful shutdown not yet written (unless f is the server's
// first frame), and sets what is to be
// done with the rest of its payload.
func (c *frameConn) serverFrame(out, f []byte) []byte {
	length := uint32(f[0])<<16 | uint32(f[1])<<8 | uint32(f[2])
	typ, flags := f[3], f[4]
	id := binary.BigEndian.Uint32(f[5:9]) & (1<<31 - 1)
	c.wleft = length - uint32(len(f)-frameHeaderLen)
	c.wdiscard = false
	c.mu.Lock()
	defer c.mu.Unlock()
	out = c.pendingGoAwayLocked(out)
	c.started = true
	if typ == frameRSTStream || (typ == frameData || typ == frameHeaders) && flags&flagEndStream != 0 {
		delete(c.open, id) // ended
	}
	switch {
	case c.draining && id > c.last:
		// A stream the GOAWAY declared unprocessed: nothing of it goes
		// out (a WINDOW_UPDATE for the body read, the reset of its
		// handler, which did not act).
		delete(c.replaces, id)
		c.wdiscard = true
		return out
	case typ == frameRSTStream && len(f) == frameHeaderLen+4:
		r := c.replaces[id]
		delete(c.replaces, id)
		if r != replaceNone && binary.BigEndian.Uint32(f[9:]) == codeInternalError {
			code := uint32(codeProtocolError)
			if r == replaceRefusedStream {
				code = codeRefusedStream
			}
			out = append(out, f[:9]...)
			return binary.BigEndian.AppendUint32(out, code)
		}
	case typ == frameGoAway && len(f) == frameHeaderLen+4 && c.sentGA:
		// net/http's own GOAWAY, after the sandbox's: the last-stream-id
		// may not grow (RFC 9113, section 6.8).
		if binary.BigEndian.Uint32(f[9:])&(1<<31-1) > c.last {
			out = append(out, f[:9]...)
			return binary.BigEndian.AppendUint32(out, c.last)
		}
	}
	return append(out, f...)
}

// pendingGoAway appends to out the GOAWAY of a graceful shutdown that
// struck and has not gone out, if the server's SETTINGS went before it (the
// client takes any other frame first for a protocol error). It is called
// between frames.
func (c *frameConn) pendingGoAway(out []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pendingGoAwayLocked(out)
}

func (c *frameConn) pendingGoAwayLocked(out []byte) []byte {
	if c.draining && !c.sentGA && c.started {
		out = append(out, goAwayFrame(c.last)...)
		c.sentGA = true
	}
	return out
}

// goAwayFrame is a GOAWAY with error code NO_ERROR and last-stream-id
// last.
func goAwayFrame(last uint32) []byte {
	out := frameHeader(8, frameGoAway, 0, 0)
	out = binary.BigEndian.AppendUint32(out, last)
	return binary.BigEndian.AppendUint32(out, codeNoError)
}

// take reports whether the sandbox may act on the request of stream id and
// answer it, and if so counts the stream as taken: a GOAWAY written later
// declares it processed. Only a stream above the last-stream-id of a
// GOAWAY fault is refused. A stream may be taken more than once.
func (c *frameConn) take(id uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining && id > c.last {
		return false
	}
	c.taken = max(c.taken, id)
	return true
}

// goAway starts the graceful shutdown of the connection: from now on no
// stream above the highest one taken is taken, and a GOAWAY (NO_ERROR)
// that says so goes out now, or after the frame being written if there is
// one. A second call does nothing.
func (c *frameConn) goAway() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	if c.draining || c.closed {
		c.mu.Unlock()
		return
	}
	c.draining, c.last = true, c.taken
	now := c.wleft == 0 && c.started // the wire is between frames, after the server's SETTINGS
	c.sentGA = now
	c.mu.Unlock()
	if !now {
		return // Write puts it in after the frame being written
	}
	if _, err := c.Conn.Write(goAwayFrame(c.last)); err != nil {
		return // the connection is gone: nothing more reaches the client
	}
	if c.drained() {
		c.shut()
	}
}

// drained reports whether the graceful shutdown is complete: its GOAWAY
// went out, and every stream the client opened at or below its
// last-stream-id has ended.
func (c *frameConn) drained() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sentGA {
		return false
	}
	for id := range c.open {
		if id <= c.last {
			return false
		}
	}
	return true
}

// closeIfDrained closes the write side if the graceful shutdown is
// complete and the wire is between frames.
func (c *frameConn) closeIfDrained() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.closed && (c.wleft == 0 || c.wdiscard) && c.drained() {
		c.shut()
	}
}

// shut ends what the client reads: the TLS close_notify, then the TCP
// half-close; every later write is discarded. The caller holds wmu.
func (c *frameConn) shut() {
	c.closed = true
	type closeWriter interface{ CloseWrite() error }
	if cw, ok := c.Conn.(closeWriter); ok {
		_ = cw.CloseWrite()
	}
	if cw, ok := c.raw.(closeWriter); ok {
		_ = cw.CloseWrite()
	}
}

// replace asks that the reset net/http sends when the handler of stream id
// aborts be written as r instead.
func (c *frameConn) replace(id uint32, r uint8) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replaces[id] = r
}
