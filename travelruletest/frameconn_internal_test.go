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
// chunks of every size, with a graceful shutdown (goAway) struck in the
// middle of a frame: the INTERNAL_ERROR resets of marked streams are
// rewritten and others pass as they are; the GOAWAY goes out after the
// frame being written, with the highest stream taken as last-stream-id;
// after it nothing of a stream above that id is written, a stream at or
// below it is still taken and served, net/http's own GOAWAY cannot raise
// the id, and the connection is half-closed only once every stream at or
// below it has ended.
func TestFrameConnWrite(t *testing.T) {
	var in, want []byte
	add := expect(&in, &want)
	add(frame(0x4, 0, 0, 0, 3, 0, 0, 0, 100)) // SETTINGS
	add(frame(frameHeaders, flagEndHeaders, 1, 'h', 'd', 'r'))
	add(frame(frameData, flagEndStream, 1, []byte("answered before the GOAWAY")...))
	add(rst(3, codeInternalError), rst(3, codeProtocolError))
	add(rst(13, codeInternalError)) // not marked
	add(rst(15, 0x8))               // CANCEL: marks apply to INTERNAL_ERROR only
	add(frame(frameHeaders, flagEndHeaders, 7, 'h'))
	add(frame(frameData, 0, 7, make([]byte, 700)...)) // a payload longer than some chunks
	strike := len(in) - 300                           // goAway strikes here, within that payload
	want = append(want, goAwayFrame(7)...)            // which ends before the GOAWAY
	windowUpdate := func(id uint32) []byte { return frame(0x8, 0, id, 0, 0, 1, 0) }
	add(windowUpdate(9), nil)           // above last-stream-id: left out
	add(rst(9, codeInternalError), nil) // the reset of its handler, which did not act: left out
	add(windowUpdate(0))                // the connection's own
	add(frame(frameHeaders, flagEndHeaders, 5, 'h'))
	add(frame(frameData, flagEndStream, 5, 'b'))                // stream 5, at or below last-stream-id, served in full
	add(frame(frameGoAway, 0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 'd'), // net/http's own GOAWAY
		frame(frameGoAway, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 'd'))
	add(frame(frameData, flagEndStream, 7, 'x')) // the last stream at or below 7 ends: closed after it
	end := len(in)
	add(frame(frameData, flagEndStream, 11, 'x'), nil) // discarded
	add(rst(17, codeInternalError), nil)

	for _, size := range []int{1, 2, 3, 4, 5, 8, 9, 10, 12, 13, 14, 64, 1000, len(in)} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			pc := &pipeConn{}
			c := newFrameConn(pc, pc)
			c.h2.Store(true)
			for _, id := range []uint32{1, 3, 5, 7, 9, 11} {
				c.open[id] = struct{}{} // the client opened these
			}
			c.replace(3, replaceProtocolError)
			c.replace(9, replaceRefusedStream)
			c.replace(15, replaceProtocolError)
			for _, id := range []uint32{1, 3, 7} {
				require.True(t, c.take(id))
			}
			write := func(b []byte) {
				for len(b) > 0 {
					n := min(size, len(b))
					written, err := c.Write(b[:n])
					require.NoError(t, err)
					require.Equal(t, n, written)
					b = b[n:]
					if !pc.closed {
						assert.NotContains(t, pc.w.String(), string(frame(frameData, flagEndStream, 7, 'x')), "open until stream 7 ended")
					}
				}
			}
			write(in[:strike])
			c.goAway()
			assert.Equal(t, want[:strike], pc.w.Bytes(), "nothing written in the middle of a frame")
			assert.True(t, c.take(5), "a stream at or below last-stream-id is still taken")
			assert.True(t, c.take(7))
			assert.False(t, c.take(9), "nor above it")
			assert.False(t, c.take(11))
			c.goAway() // a second time does nothing
			write(in[strike:end])
			assert.True(t, pc.closed, "half-closed once the streams at or below last-stream-id ended")
			write(in[end:])
			assert.Equal(t, want, pc.w.Bytes())
		})
	}
}

// serverSettings is the first frame of a server: its SETTINGS.
var serverSettings = frame(0x4, 0, 0, 0, 3, 0, 0, 0, 100)

// TestFrameConnGoAwayAtOnce: a graceful shutdown that strikes between
// frames, after the server's SETTINGS, writes its GOAWAY at once; with no
// stream taken its last-stream-id is 0 and the connection is half-closed
// at once, after which the reset of the faulted stream is discarded.
// Otherwise the connection stays open until the streams at or below the
// id end, here by the client's RST_STREAM.
func TestFrameConnGoAwayAtOnce(t *testing.T) {
	t.Run("nothing taken", func(t *testing.T) {
		pc := &pipeConn{}
		c := newFrameConn(pc, pc)
		c.h2.Store(true)
		c.open[1] = struct{}{}
		_, err := c.Write(serverSettings)
		require.NoError(t, err)
		c.goAway()
		want := append(append([]byte(nil), serverSettings...), goAwayFrame(0)...)
		assert.Equal(t, want, pc.w.Bytes())
		assert.True(t, pc.closed)
		assert.False(t, c.take(1))
		n, err := c.Write(rst(1, codeInternalError))
		require.NoError(t, err)
		assert.Equal(t, frameHeaderLen+4, n)
		assert.Equal(t, want, pc.w.Bytes(), "nothing after the close")
	})
	t.Run("closed by the client's reset", func(t *testing.T) {
		var client []byte
		client = append(client, clientPreface...)
		client = append(client, frame(frameHeaders, flagEndHeaders, 1, 'a')...)
		client = append(client, frame(frameHeaders, flagEndHeaders, 3, 'b')...)
		pc := &pipeConn{r: bytes.NewReader(client)}
		c := newFrameConn(pc, pc)
		buf := make([]byte, 4096)
		for n := 0; n < len(client)+2*len(streamField(1)); {
			m, err := c.Read(buf)
			require.NoError(t, err)
			n += m
		}
		require.True(t, c.take(3))
		_, err := c.Write(serverSettings)
		require.NoError(t, err)
		c.goAway()
		assert.Equal(t, append(append([]byte(nil), serverSettings...), goAwayFrame(3)...), pc.w.Bytes())
		assert.False(t, pc.closed, "streams 1 and 3 are still to be answered")
		readAll := func(b []byte) {
			pc.r = bytes.NewReader(b)
			for {
				_, err := c.Read(buf)
				if err == io.EOF {
					return
				}
				require.NoError(t, err)
			}
		}
		readAll(rst(3, 0x8))
		assert.False(t, pc.closed, "stream 1 is still to be answered")
		readAll(rst(1, 0x8))
		assert.True(t, pc.closed, "closed when the client reset the last of them")
	})
}

// A graceful shutdown that strikes before the server's SETTINGS went out
// (a fault on a connection's first stream, with net/http's server writing
// its preface from another goroutine) waits for them: a client takes any
// other first frame for a connection error ("received GOAWAY before a
// SETTINGS frame", PROTOCOL_ERROR), in 4 of 600 runs of
// TestHTTP2FaultsNetHTTPClient. The GOAWAY follows the SETTINGS however
// they are written, and the shutdown then completes as usual.
func TestFrameConnGoAwayWaitsForSettings(t *testing.T) {
	for _, size := range []int{1, 5, 9, 10, len(serverSettings)} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			pc := &pipeConn{}
			c := newFrameConn(pc, pc)
			c.h2.Store(true)
			c.open[1] = struct{}{}
			c.goAway()
			assert.Empty(t, pc.w.Bytes(), "nothing before the server's SETTINGS")
			assert.False(t, pc.closed)
			assert.False(t, c.take(1))
			for b := serverSettings; len(b) > 0; {
				n := min(size, len(b))
				_, err := c.Write(b[:n])
				require.NoError(t, err)
				b = b[n:]
			}
			assert.Equal(t, append(append([]byte(nil), serverSettings...), goAwayFrame(0)...), pc.w.Bytes())
			assert.True(t, pc.closed, "nothing taken: complete at once")
		})
	}
}

// TestFrameConnRead reads a client's frames through a frameConn with
// buffers of every size: the header block of each new stream ends with the
// stream field, in a CONTINUATION frame that takes over END_HEADERS;
// trailers and other frames pass as they are. The streams the client
// opened and did not reset are kept as open.
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
			assert.Equal(t, map[uint32]struct{}{1: {}, 5: {}}, c.open, "the streams opened, but 3, which the client reset")
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
