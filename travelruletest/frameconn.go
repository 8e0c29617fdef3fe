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

// The ways a stream's answer can be replaced; see frameConn.replace.
const (
	replaceNone uint8 = iota
	replaceProtocolError
	replaceRefusedStream
	replaceGoAway
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
//     a handler that panics with http.ErrAbortHandler becomes the reset that
//     the handler asked for with replace, or a GOAWAY with last-stream-id 0
//     after which nothing more is written: the connection is half-closed
//     and every later write of the server discarded. Reading goes on, so
//     that the server sees (and the sandbox records) every request the
//     client sent.
//
// net/http's server cannot send a reset code of its choice from a handler,
// which is why the codes are rewritten on the wire. An HTTP/1.1 connection
// passes through untouched.
type frameConn struct {
	net.Conn          // the TLS connection; it has no ConnectionState method, so net/http serves it as plaintext
	raw      net.Conn // the TCP connection under it, half-closed after a GOAWAY
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

	// The write side, used by the one goroutine writing at a time.
	wmu   sync.Mutex
	whdr  [frameHeaderLen + 4]byte // a frame header, and the code of a RST_STREAM
	whdrN int
	wleft uint32 // payload bytes of the current frame still to pass through
	wbuf  []byte

	mu       sync.Mutex
	replaces map[uint32]uint8        // stream -> what its INTERNAL_ERROR reset becomes
	watches  map[uint32]*answerWatch // stream -> its answer, not yet ended
	stopped  bool                    // a GOAWAY was written: nothing more is
}

// answerWatch follows an answer not yet ended on the wire.
type answerWatch struct {
	lost    func(truncated bool) // called if a GOAWAY overtakes the answer
	headers bool                 // its HEADERS went out
}

func newFrameConn(c, raw net.Conn) *frameConn {
	return &frameConn{Conn: c, raw: raw, br: bufio.NewReaderSize(c, 16<<10)}
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
		}
		fallthrough
	case frameContinuation:
		if flags&flagEndHeaders != 0 && c.newBlock {
			c.newBlock = false
			out[4] &^= flagEndHeaders
			c.rinject = streamField(id)
		}
	case frameRSTStream:
		// The client ended the stream: no answer will be written on it.
		c.mu.Lock()
		delete(c.replaces, id)
		delete(c.watches, id)
		c.mu.Unlock()
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
// asked; after a GOAWAY it discards them.
func (c *frameConn) Write(p []byte) (int, error) {
	if !c.h2.Load() {
		return c.Conn.Write(p)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.isStopped() {
		return len(p), nil
	}
	out := c.wbuf[:0]
	var lost []func()
	stop := false
	for rest := p; len(rest) > 0 && !stop; {
		if c.wleft > 0 {
			n := min(uint32(len(rest)), c.wleft)
			out = append(out, rest[:n]...)
			rest = rest[n:]
			c.wleft -= n
			continue
		}
		// A frame header, and the code of a RST_STREAM, which decides what
		// is written.
		need := frameHeaderLen
		if c.whdrN >= frameHeaderLen && c.pendingReset() {
			need += 4
		}
		n := copy(c.whdr[c.whdrN:need], rest)
		c.whdrN += n
		rest = rest[n:]
		if c.whdrN < need || need == frameHeaderLen && c.pendingReset() {
			continue
		}
		c.whdrN = 0
		out, lost, stop = c.serverFrame(out, c.whdr[:need])
	}
	c.wbuf = out[:0]
	for _, fn := range lost {
		fn() // before the client can see the GOAWAY
	}
	if len(out) > 0 {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
	}
	if stop {
		c.closeWrite()
	}
	return len(p), nil
}

// pendingReset reports whether the frame header in whdr is that of a
// RST_STREAM, whose code is still to come.
func (c *frameConn) pendingReset() bool {
	h := c.whdr[:frameHeaderLen]
	return h[3] == frameRSTStream && h[0] == 0 && h[1] == 0 && h[2] == 4
}

// serverFrame appends the frame whose header (and, for a RST_STREAM, code)
// is f to out, as it is to be written. It returns whether the connection
// stops here, with what to call for the answers this cuts.
func (c *frameConn) serverFrame(out, f []byte) (_ []byte, lost []func(), stop bool) {
	length := uint32(f[0])<<16 | uint32(f[1])<<8 | uint32(f[2])
	typ, flags := f[3], f[4]
	id := binary.BigEndian.Uint32(f[5:9]) & (1<<31 - 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case (typ == frameData || typ == frameHeaders) && flags&flagEndStream != 0:
		delete(c.watches, id) // answered
	case typ == frameHeaders:
		if w := c.watches[id]; w != nil {
			w.headers = true // the client sees the status; the body may be cut
		}
	case typ == frameRSTStream:
		delete(c.watches, id)
		if len(f) == frameHeaderLen+4 && binary.BigEndian.Uint32(f[9:]) == codeInternalError {
			r := c.replaces[id]
			delete(c.replaces, id)
			switch r {
			case replaceProtocolError, replaceRefusedStream:
				code := uint32(codeProtocolError)
				if r == replaceRefusedStream {
					code = codeRefusedStream
				}
				out = append(out, f[:9]...)
				return binary.BigEndian.AppendUint32(out, code), nil, false
			case replaceGoAway:
				out = append(out, frameHeader(8, frameGoAway, 0, 0)...)
				out = binary.BigEndian.AppendUint32(out, 0) // last-stream-id: none processed
				out = binary.BigEndian.AppendUint32(out, codeNoError)
				c.stopped = true
				for _, w := range c.watches {
					lost = append(lost, func() { w.lost(w.headers) })
				}
				c.watches, c.replaces = nil, nil
				return out, lost, true
			}
		}
	}
	c.wleft = length - uint32(len(f)-frameHeaderLen)
	return append(out, f...), nil, false
}

// closeWrite ends what the client reads: the TLS close_notify, then the
// TCP half-close.
func (c *frameConn) closeWrite() {
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
	if c.stopped {
		return
	}
	if c.replaces == nil {
		c.replaces = make(map[uint32]uint8)
	}
	c.replaces[id] = r
}

// watch calls lost if the answer of stream id, not yet written, does not
// reach the client in full: a GOAWAY was or will be written before it
// ends. truncated tells whether its HEADERS went out before.
func (c *frameConn) watch(id uint32, lost func(truncated bool)) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		lost(false)
		return
	}
	if c.watches == nil {
		c.watches = make(map[uint32]*answerWatch)
	}
	c.watches[id] = &answerWatch{lost: lost}
	c.mu.Unlock()
}

// isStopped reports whether a GOAWAY was written: the connection takes no
// more work.
func (c *frameConn) isStopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}
