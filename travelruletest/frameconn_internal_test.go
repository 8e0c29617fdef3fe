package travelruletest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pipeConn is the connection under a frameConn in these tests: it reads
// from r and records what is written and whether the write side was
// closed.
type pipeConn struct {
	net.Conn // nil: only the methods below are used
	r        io.Reader
	w        bytes.Buffer
	closed   bool
}

func (c *pipeConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *pipeConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c *pipeConn) CloseWrite() error           { c.closed = true; return nil }

func frame(typ, flags byte, id uint32, payload ...byte) []byte {
	return append(frameHeader(len(payload), typ, flags, id), payload...)
}

func rst(id, code uint32) []byte {
	return frame(frameRSTStream, 0, id, binary.BigEndian.AppendUint32(nil, code)...)
}

// expect returns add, which appends a frame f to *in and, to *want, out
// in its place, or f itself when out is empty.
func expect(in, want *[]byte) func(f []byte, out ...[]byte) {
	return func(f []byte, out ...[]byte) {
		*in = append(*in, f...)
		if len(out) == 0 {
			*want = append(*want, f...)
		}
		for _, o := range out {
			*want = append(*want, o...)
		}
	}
}

// TestFrameConnWrite writes a server's frames through a frameConn in
// chunks of every size: the INTERNAL_ERROR resets of marked streams are
// rewritten, others pass as they are, and a GOAWAY ends the output, cuts
// the answers not yet ended (truncated if their HEADERS went out) and
// half-closes the connection.
func TestFrameConnWrite(t *testing.T) {
	var in, want []byte
	add := expect(&in, &want)
	add(frame(0x4, 0, 0, 0, 3, 0, 0, 0, 100)) // SETTINGS
	add(frame(frameHeaders, flagEndHeaders, 1, 'h', 'd', 'r'))
	add(frame(frameData, flagEndStream, 1, []byte("answered before the GOAWAY")...))
	add(rst(3, codeInternalError), rst(3, codeProtocolError))
	add(rst(5, codeInternalError), rst(5, codeRefusedStream))
	add(rst(7, codeInternalError)) // not marked
	add(rst(9, 0x8))               // CANCEL: marks apply to INTERNAL_ERROR only
	add(frame(frameHeaders, flagEndHeaders, 11, 'h'))
	add(frame(frameData, 0, 11, make([]byte, 700)...)) // a payload longer than some chunks
	add(rst(13, codeInternalError), frame(frameGoAway, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	add(frame(frameData, flagEndStream, 11, 'x'), nil) // discarded
	add(rst(15, codeInternalError), nil)

	for _, size := range []int{1, 2, 3, 4, 5, 8, 9, 10, 12, 13, 14, 64, 1000, len(in)} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			pc := &pipeConn{}
			c := newFrameConn(pc, pc)
			c.h2.Store(true)
			c.replace(3, replaceProtocolError)
			c.replace(5, replaceRefusedStream)
			c.replace(9, replaceProtocolError)
			c.replace(13, replaceGoAway)
			lost := map[uint32]string{}
			for _, id := range []uint32{1, 11, 17} {
				c.watch(id, func(truncated bool) { lost[id] = map[bool]string{true: "truncated", false: "lost"}[truncated] })
			}
			for rest := in; len(rest) > 0; {
				n := min(size, len(rest))
				written, err := c.Write(rest[:n])
				require.NoError(t, err)
				require.Equal(t, n, written)
				if !pc.closed {
					assert.Empty(t, lost, "nothing is lost before the GOAWAY")
				}
				rest = rest[n:]
			}
			assert.Equal(t, want, pc.w.Bytes())
			assert.True(t, pc.closed, "half-closed after the GOAWAY")
			assert.Equal(t, map[uint32]string{11: "truncated", 17: "lost"}, lost, "stream 1 was answered in full")
			assert.True(t, c.isStopped())
			c.watch(19, func(truncated bool) { lost[19] = map[bool]string{true: "truncated", false: "lost"}[truncated] })
			assert.Equal(t, "lost", lost[19], "a watch after the GOAWAY is lost at once")
		})
	}
}

// TestFrameConnRead reads a client's frames through a frameConn with
// buffers of every size: the header block of each new stream ends with the
// stream field, in a CONTINUATION frame that takes over END_HEADERS;
// trailers and other frames pass as they are.
func TestFrameConnRead(t *testing.T) {
	field := func(id uint32) []byte { return streamField(id) }
	var in, want []byte
	add := expect(&in, &want)
	add([]byte(clientPreface))
	add(frame(0x4, 0, 0))                                 // SETTINGS
	add(frame(frameHeaders, 0, 1, 'a', 'b'))              // no END_HEADERS
	add(frame(frameContinuation, flagEndHeaders, 1, 'c'), // ends the block of stream 1
		frame(frameContinuation, 0, 1, 'c'), field(1))
	add(frame(frameData, 0, 1, make([]byte, 300)...))
	add(frame(frameHeaders, flagEndHeaders|flagEndStream, 3, 'd'),
		frame(frameHeaders, flagEndStream, 3, 'd'), field(3))
	add(frame(frameHeaders, flagEndHeaders|flagEndStream, 1, 't')) // trailers of stream 1
	add(rst(3, 0x8))
	add(frame(frameHeaders, flagEndHeaders, 5), frame(frameHeaders, 0, 5), field(5)) // an empty fragment

	for _, size := range []int{1, 2, 5, 9, 10, 24, 100, 4096} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			pc := &pipeConn{r: bytes.NewReader(in)}
			c := newFrameConn(pc, pc)
			c.watch(3, func(bool) { t.Error("stream 3 was reset by the client: nothing of it can be lost") })
			var got []byte
			buf := make([]byte, size)
			for {
				n, err := c.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
			}
			assert.Equal(t, want, got)
			assert.True(t, c.h2.Load())
			c.mu.Lock()
			assert.Empty(t, c.watches)
			c.mu.Unlock()
		})
	}
}

// TestFrameConnHTTP1 reads HTTP/1.1, and a few bytes that end before they
// could be a preface, through a frameConn unchanged.
func TestFrameConnHTTP1(t *testing.T) {
	for _, in := range []string{"POST /transfers/initiate HTTP/1.1\r\nHost: x\r\n\r\n", "PRI", "G"} {
		pc := &pipeConn{r: bytes.NewReader([]byte(in))}
		c := newFrameConn(pc, pc)
		got, err := io.ReadAll(c)
		require.NoError(t, err)
		assert.Equal(t, in, string(got))
		assert.False(t, c.h2.Load())
		n, err := c.Write([]byte("HTTP/1.1 200 OK\r\n\r\n"))
		require.NoError(t, err)
		assert.Equal(t, 19, n)
		assert.Equal(t, "HTTP/1.1 200 OK\r\n\r\n", pc.w.String(), "passed through")
	}
}
