package travelruletest_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
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
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// HTTP/2 frame types, flags and error codes (RFC 9113) the tests read.
const (
	h2Data      = http2.FrameData
	h2Headers   = http2.FrameHeaders
	h2RSTStream = http2.FrameRSTStream
	h2Settings  = http2.FrameSettings
	h2GoAway    = http2.FrameGoAway

	h2EndStream = http2.FlagDataEndStream // the same bit in HEADERS
	h2Ack       = http2.FlagSettingsAck
)

// rawH2 is a bare HTTP/2 client over TLS that writes and reads the frames
// itself (with x/net/http2's Framer), so that a test sees exactly what the
// sandbox puts on the wire.
type rawH2 struct {
	t      *testing.T
	fr     *http2.Framer
	block  bytes.Buffer
	enc    *hpack.Encoder
	host   string
	others map[uint32][]h2Frame // frames read while waiting for another stream
}

// h2Frame is what a test reads of one frame from the server; the Framer's
// own frames live only until its next read.
type h2Frame struct {
	typ    http2.FrameType
	flags  http2.Flags
	stream uint32
	code   http2.ErrCode // of a RST_STREAM or GOAWAY
	last   uint32        // of a GOAWAY
	data   []byte        // of a DATA frame
}

// dialH2 opens an HTTP/2 connection to srv, negotiated by ALPN, and sends
// the preface and the given SETTINGS. The 30-second deadline only ends a
// test whose frames never come.
func dialH2(t *testing.T, srv *travelruletest.Server, settings ...http2.Setting) *rawH2 {
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
	_, err = io.WriteString(conn, http2.ClientPreface)
	require.NoError(t, err)
	h := &rawH2{t: t, fr: http2.NewFramer(conn, conn), host: u.Host}
	h.enc = hpack.NewEncoder(&h.block)
	require.NoError(t, h.fr.WriteSettings(settings...))
	return h
}

// ackSettings acknowledges the server's SETTINGS.
func (h *rawH2) ackSettings() { require.NoError(h.t, h.fr.WriteSettingsAck()) }

// post sends a POST of body to path on stream, with a bearer token; split
// sends its header block as a HEADERS and a CONTINUATION frame.
func (h *rawH2) post(stream uint32, path, tok string, body []byte, split bool) {
	h.t.Helper()
	h.block.Reset()
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "https"}, {":authority", h.host}, {":path", path},
		{"content-type", "application/json"}, {"authorization", "Bearer " + tok},
		{"content-length", strconv.Itoa(len(body))},
	} {
		require.NoError(h.t, h.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}))
	}
	block := h.block.Bytes()
	if split {
		require.NoError(h.t, h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block[:len(block)/2]}))
		require.NoError(h.t, h.fr.WriteContinuation(stream, true, block[len(block)/2:]))
	} else {
		require.NoError(h.t, h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block, EndHeaders: true}))
	}
	require.NoError(h.t, h.fr.WriteData(stream, true, body))
}

func (h *rawH2) read() (h2Frame, error) {
	f, err := h.fr.ReadFrame()
	if err != nil {
		return h2Frame{}, err
	}
	hdr := f.Header()
	out := h2Frame{typ: hdr.Type, flags: hdr.Flags, stream: hdr.StreamID}
	switch f := f.(type) {
	case *http2.RSTStreamFrame:
		out.code = f.ErrCode
	case *http2.GoAwayFrame:
		out.code, out.last = f.ErrCode, f.LastStreamID
	case *http2.DataFrame:
		out.data = bytes.Clone(f.Data())
	}
	return out, nil
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
		return f.typ == h2RSTStream || (f.typ == h2Data || f.typ == h2Headers) && f.flags.Has(h2EndStream)
	}
	if n := len(out); n > 0 && ended(out[n-1]) {
		return out
	}
	for {
		f, err := h.read()
		require.NoError(h.t, err)
		switch {
		case f.typ == h2Settings && !f.flags.Has(h2Ack):
			h.ackSettings()
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
		typ   http2.FrameType
		code  http2.ErrCode
	}{
		{kind: travelruletest.FaultResetProtocolError, typ: h2RSTStream, code: http2.ErrCodeProtocol},
		{kind: travelruletest.FaultResetRefusedStream, typ: h2RSTStream, code: http2.ErrCodeRefusedStream},
		{kind: travelruletest.FaultGoAway, typ: h2GoAway, code: http2.ErrCodeNo},
		{kind: travelruletest.FaultDrop, typ: h2RSTStream, code: http2.ErrCodeInternal},
		{kind: travelruletest.FaultResetProtocolError, split: true, typ: h2RSTStream, code: http2.ErrCodeProtocol},
		{kind: travelruletest.FaultGoAway, split: true, typ: h2GoAway, code: http2.ErrCodeNo},
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
				assert.Zero(t, last.last, "last-stream-id 0: no stream processed")
				assert.Equal(t, tt.code, last.code)
				_, err := h.read()
				assert.ErrorIs(t, err, io.EOF, "nothing more is written")
			} else {
				assert.Equal(t, uint32(1), last.stream)
				assert.Equal(t, tt.code, last.code)
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
			assert.Equal(t, h2Headers, frames[0].typ)
			assert.Equal(t, h2Data, frames[1].typ)
			assert.Contains(t, string(frames[1].data), `"status":true`)
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
				req.Header.Set("Content-Type", "application/json")
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
	h := dialH2(t, srv, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}) // no DATA may be sent to us

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
			if f.typ == h2Settings && !f.flags.Has(h2Ack) {
				h.ackSettings()
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
		assert.False(t, f.typ == h2Data || f.typ == h2Headers && f.flags.Has(h2EndStream), "no answer ended before the GOAWAY: %+v", f)
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

	// Nor is a request to the control plane.
	h.post(7, "/sandbox/inquiries", tok, []byte(`{"callback":"http://127.0.0.1:1/cb"}`), false)
	events.wait(t, served, 4)
	rs = srv.Requests()
	require.Len(t, rs, 4)
	assert.Zero(t, rs[3].Status)
	assert.Empty(t, rs[3].TransferID, "not acted on")
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
		req.Header.Set("Content-Type", "application/json")
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
