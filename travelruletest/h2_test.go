package travelruletest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// HTTP/2 frame types, flags and error codes (RFC 9113) the tests read.
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2RSTStream    = 0x3
	h2Settings     = 0x4
	h2GoAway       = 0x7
	h2Continuation = 0x9

	h2EndStream  = 0x1
	h2Ack        = 0x1
	h2EndHeaders = 0x4

	h2NoError       = 0x0
	h2ProtocolError = 0x1
	h2InternalError = 0x2
	h2RefusedStream = 0x7
)

// rawH2 is a bare HTTP/2 client over TLS that writes and reads the frames
// itself, so that a test sees exactly what the sandbox puts on the wire.
type rawH2 struct {
	t      *testing.T
	conn   *tls.Conn
	br     *bufio.Reader
	host   string
	others map[uint32][]h2Frame // frames read while waiting for another stream
}

// h2Frame is one frame read from the server.
type h2Frame struct {
	typ, flags byte
	stream     uint32
	payload    []byte
}

// dialH2 opens an HTTP/2 connection to srv, negotiated by ALPN, and sends
// the preface and the given SETTINGS (pairs of identifier and value). The
// 30-second deadline only ends a test whose frames never come.
func dialH2(t *testing.T, srv *travelruletest.Server, settings ...uint32) *rawH2 {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	require.Equal(t, "h2", conn.ConnectionState().NegotiatedProtocol, "HTTP/2 by ALPN")
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	h := &rawH2{t: t, conn: conn, br: bufio.NewReader(conn), host: u.Host}
	_, err = io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	require.NoError(t, err)
	var p []byte
	for i := 0; i+1 < len(settings); i += 2 {
		p = binary.BigEndian.AppendUint16(p, uint16(settings[i]))
		p = binary.BigEndian.AppendUint32(p, settings[i+1])
	}
	h.write(h2Settings, 0, 0, p)
	return h
}

func (h *rawH2) write(typ, flags byte, stream uint32, payload []byte) {
	h.t.Helper()
	f := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), typ, flags}
	f = binary.BigEndian.AppendUint32(f, stream)
	_, err := h.conn.Write(append(f, payload...))
	require.NoError(h.t, err)
}

// post sends a POST of body to path on stream, with a bearer token; split
// sends its header block as a HEADERS and a CONTINUATION frame.
func (h *rawH2) post(stream uint32, path, tok string, body []byte, split bool) {
	h.t.Helper()
	var block []byte
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "https"}, {":authority", h.host}, {":path", path},
		{"content-type", "application/json"}, {"authorization", "Bearer " + tok},
		{"content-length", strconv.Itoa(len(body))},
	} {
		block = hpackLiteral(block, f[0], f[1])
	}
	if split {
		h.write(h2Headers, 0, stream, block[:len(block)/2])
		h.write(h2Continuation, h2EndHeaders, stream, block[len(block)/2:])
	} else {
		h.write(h2Headers, h2EndHeaders, stream, block)
	}
	h.write(h2Data, h2EndStream, stream, body)
}

// hpackLiteral appends a header field as an HPACK literal without indexing,
// new name, no Huffman coding (RFC 7541, section 6.2.2).
func hpackLiteral(b []byte, name, value string) []byte {
	b = append(b, 0x00)
	for _, s := range []string{name, value} {
		n := len(s)
		if n < 127 {
			b = append(b, byte(n))
		} else {
			b = append(b, 127)
			for n -= 127; n >= 128; n /= 128 {
				b = append(b, byte(n%128|128))
			}
			b = append(b, byte(n))
		}
		b = append(b, s...)
	}
	return b
}

func (h *rawH2) read() (h2Frame, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(h.br, hdr[:]); err != nil {
		return h2Frame{}, err
	}
	f := h2Frame{typ: hdr[3], flags: hdr[4], stream: binary.BigEndian.Uint32(hdr[5:]) & (1<<31 - 1)}
	f.payload = make([]byte, int(hdr[0])<<16|int(hdr[1])<<8|int(hdr[2]))
	_, err := io.ReadFull(h.br, f.payload)
	return f, err
}

// end reads frames until stream ends (its END_STREAM or RST_STREAM) or a
// GOAWAY comes, acknowledging the server's SETTINGS, and returns the frames
// of stream and the GOAWAY, in order. Frames of other streams are kept for
// their own call.
func (h *rawH2) end(stream uint32) []h2Frame {
	h.t.Helper()
	out := h.others[stream]
	delete(h.others, stream)
	ended := func(f h2Frame) bool {
		return f.typ == h2RSTStream || (f.typ == h2Data || f.typ == h2Headers) && f.flags&h2EndStream != 0
	}
	if n := len(out); n > 0 && ended(out[n-1]) {
		return out
	}
	for {
		f, err := h.read()
		require.NoError(h.t, err)
		switch {
		case f.typ == h2Settings && f.flags&h2Ack == 0:
			h.write(h2Settings, h2Ack, 0, nil)
		case f.typ == h2GoAway:
			return append(out, f)
		case f.stream == stream:
			out = append(out, f)
			if ended(f) {
				return out
			}
		case f.stream != 0:
			if h.others == nil {
				h.others = make(map[uint32][]h2Frame)
			}
			h.others[f.stream] = append(h.others[f.stream], f)
		}
	}
}

// TestHTTP2FaultsOnTheWire reads the frames that end a faulted request's
// stream: each HTTP/2 fault puts its own reset code, or a GOAWAY with
// last-stream-id 0 after which the connection ends, on the wire, after the
// transfer was stored; the header field that names the stream to the
// handler never reaches the records.
func TestHTTP2FaultsOnTheWire(t *testing.T) {
	for _, tt := range []struct {
		kind  travelruletest.FaultKind
		split bool // the header block in HEADERS and CONTINUATION
		typ   byte
		code  uint32
	}{
		{kind: travelruletest.FaultResetProtocolError, typ: h2RSTStream, code: h2ProtocolError},
		{kind: travelruletest.FaultResetRefusedStream, typ: h2RSTStream, code: h2RefusedStream},
		{kind: travelruletest.FaultGoAway, typ: h2GoAway, code: h2NoError},
		{kind: travelruletest.FaultDrop, typ: h2RSTStream, code: h2InternalError},
		{kind: travelruletest.FaultResetProtocolError, split: true, typ: h2RSTStream, code: h2ProtocolError},
		{kind: travelruletest.FaultGoAway, split: true, typ: h2GoAway, code: h2NoError},
	} {
		t.Run(tt.kind.String()+"/split="+strconv.FormatBool(tt.split), func(t *testing.T) {
			srv := newTLSServer(t, travelruletest.WithoutCallbacks(),
				travelruletest.WithFaults(travelruletest.Fault{Kind: tt.kind, Rate: 1, Times: 1}))
			body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			h := dialH2(t, srv)
			h.post(1, "/transfers/initiate", token(t, srv), body, tt.split)
			frames := h.end(1)
			last := frames[len(frames)-1]
			require.Equal(t, tt.typ, last.typ, "frames %v", frames)
			require.Len(t, frames, 1, "nothing of an answer before the fault")
			if tt.typ == h2GoAway {
				require.Len(t, last.payload, 8)
				assert.Zero(t, binary.BigEndian.Uint32(last.payload[:4]), "last-stream-id 0: no stream processed")
				assert.Equal(t, tt.code, binary.BigEndian.Uint32(last.payload[4:]))
				_, err := h.read()
				assert.ErrorIs(t, err, io.EOF, "nothing more is written")
			} else {
				require.Len(t, last.payload, 4)
				assert.Equal(t, uint32(1), last.stream)
				assert.Equal(t, tt.code, binary.BigEndian.Uint32(last.payload))
			}

			ts := srv.Transfers()
			require.Len(t, ts, 1, "the transfer was stored before the fault")
			rs := srv.Requests()
			require.Len(t, rs, 1)
			assert.Zero(t, rs[0].Status, "no answer")
			assert.Equal(t, []travelruletest.FaultKind{tt.kind}, rs[0].Faults)
			assert.Equal(t, ts[0].ID, rs[0].TransferID)
			assert.Empty(t, rs[0].Header.Values("X-Travelruletest-Stream"))
			assert.Equal(t, "application/json", rs[0].Header.Get("Content-Type"))
			st := srv.Stats()
			assert.Equal(t, 1, st.Initiated)
			assert.Equal(t, map[travelruletest.FaultKind]int{tt.kind: 1}, st.ByFault)
		})
	}

	t.Run("no fault", func(t *testing.T) {
		srv := newTLSServer(t, travelruletest.WithoutCallbacks())
		body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
		require.NoError(t, err)
		h := dialH2(t, srv)
		h.post(1, "/transfers/initiate", token(t, srv), body, true)
		h.post(3, "/transfers/initiate", token(t, srv), body, false)
		for _, stream := range []uint32{1, 3} {
			frames := h.end(stream)
			require.Len(t, frames, 2, "HEADERS and DATA of stream %d", stream)
			assert.Equal(t, byte(h2Headers), frames[0].typ)
			assert.Equal(t, byte(h2Data), frames[1].typ)
			assert.Contains(t, string(frames[1].payload), `"status":"succes"`)
		}
		assert.Len(t, srv.Transfers(), 2)
		for _, r := range srv.Requests() {
			assert.Equal(t, http.StatusOK, r.Status)
			assert.Empty(t, r.Header.Values("X-Travelruletest-Stream"))
		}
	})
}

// TestHTTP2FaultsNetHTTPClient sends requests through net/http's own
// HTTP/2 client. Without Request.GetBody the client cannot resend, and its
// error names what it got; with GetBody it resends the request by itself
// after these faults, which stores the transfer twice: the hazard the
// faults exist to expose. With an Idempotency-Key the resent request is
// replayed instead.
func TestHTTP2FaultsNetHTTPClient(t *testing.T) {
	for _, tt := range []struct {
		kind travelruletest.FaultKind
		err  string
	}{
		{travelruletest.FaultResetProtocolError, "PROTOCOL_ERROR"},
		{travelruletest.FaultResetRefusedStream, "REFUSED_STREAM"},
		{travelruletest.FaultGoAway, "GOAWAY"},
	} {
		t.Run(tt.kind.String(), func(t *testing.T) {
			srv := newTLSServer(t, travelruletest.WithoutCallbacks())
			body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			send := func(rewindable bool, header ...string) (*http.Response, error) {
				var rd io.Reader = bytes.NewReader(body)
				if !rewindable {
					rd = io.NopCloser(rd) // http.NewRequest sets no GetBody
				}
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/transfers/initiate", rd)
				require.NoError(t, err)
				require.Equal(t, rewindable, req.GetBody != nil)
				req.Header.Set("Authorization", "Bearer "+token(t, srv))
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				resp, err := srv.Client().Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
				return resp, err
			}
			fault := travelruletest.Fault{Kind: tt.kind, Rate: 1, Times: 1}

			srv.SetFaults(fault)
			_, err = send(false)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.Len(t, srv.Transfers(), 1, "stored before the fault")

			srv.SetFaults(fault)
			resp, err := send(true)
			if err != nil && tt.kind == travelruletest.FaultResetProtocolError {
				// Go 1.27's HTTP/2 client no longer resends after a
				// PROTOCOL_ERROR reset; Go 1.26's does.
				assert.Contains(t, err.Error(), tt.err)
				assert.Len(t, srv.Transfers(), 2, "stored once more, not resent")
				return
			}
			require.NoError(t, err, "net/http resent the request")
			assert.Equal(t, "HTTP/2.0", resp.Proto)
			assert.Len(t, srv.Transfers(), 3, "the resent request stored the transfer again")

			srv.SetFaults(fault)
			resp, err = send(true, "Idempotency-Key", "k-"+tt.kind.String())
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Len(t, srv.Transfers(), 4, "the resent request was replayed")
			assert.Equal(t, 1, srv.Stats().Replayed)
		})
	}
}

// TestHTTP2FaultsOverHTTP1 sends each HTTP/2 fault to a client that
// negotiated HTTP/1.1 on the TLS server: it closes the connection, as
// FaultDrop does, after the transfer was stored.
func TestHTTP2FaultsOverHTTP1(t *testing.T) {
	for _, kind := range []travelruletest.FaultKind{travelruletest.FaultResetProtocolError,
		travelruletest.FaultResetRefusedStream, travelruletest.FaultGoAway} {
		t.Run(kind.String(), func(t *testing.T) {
			srv := newTLSServer(t, travelruletest.WithoutCallbacks(),
				travelruletest.WithFaults(travelruletest.Fault{Kind: kind, Rate: 1, Times: 1}))
			hc := http1Client(srv)
			c := newClient(t, srv, travelrule.WithHTTPClient(hc))
			_, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "the connection was closed after sending")
			var apiErr *travelrule.APIError
			assert.NotErrorAs(t, err, &apiErr, "no answer at all: %v", err)
			require.Len(t, srv.Transfers(), 1)
			rs := srv.Requests()
			require.Len(t, rs, 1)
			assert.Zero(t, rs[0].Status)
			assert.Equal(t, []travelruletest.FaultKind{kind}, rs[0].Faults)

			res, err := c.InitiateTransfer(context.Background(), validRequest("http://127.0.0.1:1/cb"))
			require.NoError(t, err)
			assert.Equal(t, 1, res.Attempts)
		})
	}
}

// TestGoAwayStopsTheConnection: after a GOAWAY fault the connection takes
// no more work. An answer that the GOAWAY cut after its HEADERS (its DATA
// held back by the client's flow-control window of zero) is recorded as
// truncated, and a request the client sends on the connection afterwards
// is recorded, not acted on.
func TestGoAwayStopsTheConnection(t *testing.T) {
	const served = "travelruletest: request"
	events := newLogEvents()
	srv := newTLSServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithLogger(slog.New(events)))
	body, err := json.Marshal(validRequest("http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	tok := token(t, srv)
	const initialWindowSize = 0x4
	h := dialH2(t, srv, initialWindowSize, 0) // no DATA may be sent to us

	h.post(1, "/transfers/initiate", tok, body, false)
	events.wait(t, served, 1) // recorded as answered 200; its DATA waits for a window
	assert.Equal(t, map[int]int{http.StatusOK: 1}, srv.Stats().ByStatus)
	var frames []h2Frame
	// readUntil reads frames, acknowledging the server's settings, until
	// one matches stop. The served line comes before the server's writer
	// has sent stream 1's HEADERS: the GOAWAY may only be provoked once
	// they are on the wire, or it would overtake them.
	readUntil := func(stop func(h2Frame) bool) {
		for {
			f, err := h.read()
			require.NoError(t, err)
			if f.typ == h2Settings && f.flags&h2Ack == 0 {
				h.write(h2Settings, h2Ack, 0, nil)
			}
			frames = append(frames, f)
			require.NotEqual(t, h2GoAway, f.typ, "a GOAWAY before the fault")
			if stop(f) {
				return
			}
		}
	}
	readUntil(func(f h2Frame) bool { return f.typ == h2Headers && f.stream == 1 })
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultGoAway, Rate: 1, Times: 1})
	h.post(3, "/transfers/initiate", tok, body, false)
	for {
		f, err := h.read()
		require.NoError(t, err)
		frames = append(frames, f)
		if f.typ == h2GoAway {
			break
		}
	}
	for _, f := range frames {
		assert.False(t, f.typ == h2Data || f.typ == h2Headers && f.flags&h2EndStream != 0, "no answer ended before the GOAWAY: %+v", f)
	}
	_, err = h.read()
	require.ErrorIs(t, err, io.EOF)

	rs := srv.Requests()
	require.Len(t, rs, 2)
	assert.Equal(t, http.StatusOK, rs[0].Status, "the client saw the status of stream 1")
	assert.True(t, rs[0].Truncated, "but not its body")
	assert.NotEmpty(t, rs[0].TransferID)
	assert.Equal(t, []travelruletest.FaultKind{travelruletest.FaultGoAway}, rs[1].Faults)
	assert.False(t, rs[1].Truncated)
	st := srv.Stats()
	assert.Equal(t, map[int]int{http.StatusOK: 1, 0: 1}, st.ByStatus)
	assert.Equal(t, 1, st.Truncated)

	// The client had not seen the GOAWAY when it sent stream 5.
	h.post(5, "/transfers/initiate", tok, body, false)
	events.wait(t, served, 3)
	rs = srv.Requests()
	require.Len(t, rs, 3)
	assert.Zero(t, rs[2].Status)
	assert.Empty(t, rs[2].Faults)
	assert.Empty(t, rs[2].TransferID, "not acted on")
	assert.Len(t, srv.Transfers(), 2)
	assert.Equal(t, 2, srv.Stats().Initiated)
}

// TestProxyUnavailable: FaultProxyUnavailable stores the transfer, then
// answers 503 without Retry-After with a proxy's plain-text body; with an
// Idempotency-Key, the retry is replayed the original success.
func TestProxyUnavailable(t *testing.T) {
	for _, newSrv := range []func(testing.TB, ...travelruletest.Option) *travelruletest.Server{newServer, newTLSServer} {
		srv := newSrv(t, travelruletest.WithoutCallbacks(),
			travelruletest.WithFaults(travelruletest.Fault{Kind: travelruletest.FaultProxyUnavailable, Rate: 1, Times: 1, RetryAfter: time.Second}))
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/transfers/initiate",
			strings.NewReader(`{"asset":"BTC","amount":"1","callback":"https://x.example/cb","originator":{"personType":"natural","firstName":"A","lastName":"B","dateOfBirth":"2000-01-01"},"beneficiary":{"personType":"natural","firstName":"C","lastName":"D","dateOfBirth":"2000-01-01"}}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token(t, srv))
		req.Header.Set("Idempotency-Key", "k1")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Empty(t, resp.Header.Values("Retry-After"))
		assert.Equal(t, "text/plain", resp.Header.Get("Content-Type"))
		assert.Contains(t, string(b), "upstream connect error or disconnect/reset before headers")
		ts := srv.Transfers()
		require.Len(t, ts, 1, "acted on before the 503")
		rs := srv.Requests()
		require.Len(t, rs, 1)
		assert.Equal(t, ts[0].ID, rs[0].TransferID)
		assert.Equal(t, []travelruletest.FaultKind{travelruletest.FaultProxyUnavailable}, rs[0].Faults)

		srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultProxyUnavailable, Rate: 1, Times: 1})
		res, err := newClient(t, srv, travelrule.WithIdempotency(), travelrule.WithHTTPClient(srv.Client())).InitiateTransfer(
			context.Background(), validRequest("http://127.0.0.1:1/cb"))
		require.NoError(t, err, "the keyed retry is replayed the stored success")
		assert.Equal(t, 2, res.Attempts)
		require.Len(t, srv.Transfers(), 2)
		assert.Equal(t, srv.Transfers()[1].ID, res.TransferID)
		assert.Equal(t, 1, srv.Stats().Replayed)
	}
}
