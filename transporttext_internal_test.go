package travelrule

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTransportTextNamesKnownCauses: the failures net/http reports in fixed
// words of its own are named in the client's words, wrapped as a transport
// wraps them, never as a bare "connection or protocol failure"; a text
// that may quote the server's bytes is never repeated.
func TestTransportTextNamesKnownCauses(t *testing.T) {
	wrap := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://trp.example/transfers/initiate", Err: err}
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{http.ErrSchemeMismatch, "the server answered plain HTTP to a TLS request: use http:// or the server's TLS port"},
		{errors.New("net/http: cannot rewind body after connection loss"), "the request body could not be sent again"},
		{errors.New("net/http: server response headers exceeded 1048576 bytes; aborted"), "1xx informational answers included, exceed the client's limit"},
		{errors.New("header list too large"), "1xx informational answers included"},
		{errors.New("http2: response header list larger than advertised limit"), "headers exceed the client's limit"},
		{fmt.Errorf("malformed HTTP response %q", "SECRET-BYTES"), "the server's answer is not HTTP"},
		{fmt.Errorf("malformed HTTP status code %q", "SECRET-BYTES"), "malformed status line"},
		{fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", errors.New("SECRET-BYTES")), "the connection broke before a whole answer came"},
		{fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", fmt.Errorf("malformed MIME header line: %s", "SECRET-BYTES")), "the server's answer headers are malformed"},
		{errors.New("http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR, debug=\"SECRET-BYTES\""), "GOAWAY"},
		{errors.New("stream error: stream ID 1; INTERNAL_ERROR; received from peer"), "reset the HTTP/2 stream"},
		{errors.New("something else SECRET-BYTES"), "connection or protocol failure"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			got := transportText(wrap(tt.err))
			assert.Contains(t, got, tt.want)
			assert.NotContains(t, got, "SECRET-BYTES")
		})
	}
}

// transportText never repeats a transport's own text, which can quote the
// server's bytes.
func TestTransportText(t *testing.T) {
	const planted = "Quarterfield"
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "https://svc.example/x", Err: err} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"canceled", wrap(context.Canceled), "context canceled"},
		{"deadline", wrap(fmt.Errorf("reading: %w", context.DeadlineExceeded)), "context deadline exceeded or attempt timed out"},
		{"refused", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), "connection failed: connection refused"},
		{"reset", wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), "connection failed: connection reset by peer"},
		{"dns", wrap(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: planted}}), "DNS lookup failed"},
		{"eof", wrap(io.EOF), "connection closed before the answer was complete"},
		{"unexpected eof", wrap(io.ErrUnexpectedEOF), "connection closed before the answer was complete"},
		{"certificate", wrap(x509.HostnameError{Certificate: &x509.Certificate{DNSNames: []string{planted}}, Host: "h"}), "the server's certificate is not trusted"},
		{"tls", wrap(errors.New("tls: server selected unsupported protocol version 301")), "TLS handshake failed"},
		{"tls with x509 text", wrap(errors.New("tls: failed to parse certificate from server: x509: cannot parse URI \"https://" + planted + "\"")), "TLS handshake failed"},
		{"malformed Location", wrap(fmt.Errorf("failed to parse Location header %q: %w", "http://["+planted, errors.New("missing ']' in host"))), "connection or protocol failure"},
		{"malformed status", wrap(fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", fmt.Errorf("malformed HTTP status code %q", planted))), "the server's answer has a malformed status line"},
		{"goaway debug", wrap(fmt.Errorf("http2: server sent GOAWAY and closed the connection; LastStreamID=0, ErrCode=PROTOCOL_ERROR, debug=%q", planted)), "the server closed the HTTP/2 connection (GOAWAY)"},
		{"not replayed", wrap(errNotReplayed), errNotReplayed.Error()},
		{"token source", wrap(&tokenError{errors.New("token source down: " + planted)}), "obtaining an access token: the token source failed"},
		{"token endpoint", wrap(&tokenError{&url.Error{Op: "Post", URL: "https://idp.example/token", Err: fmt.Errorf("malformed HTTP status code %q", planted)}}), "obtaining an access token: token endpoint unreachable: the server's answer has a malformed status line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := transportText(tt.err)
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, strings.ToLower(got), strings.ToLower(planted))
		})
	}
}

// TestFaultType names each failure below HTTP with a fixed word, in the
// same order of precedence as transportText.
func TestFaultType(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "https://svc.example/x?q=secret", Err: err} }
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errPanicked, "panic"},
		{wrap(&tokenError{errors.New("down")}), "token"},
		{wrap(context.Canceled), "canceled"},
		{wrap(fmt.Errorf("reading: %w", context.DeadlineExceeded)), "timeout"},
		{wrap(errAttemptTimedOut), "timeout"},
		{wrap(errNotReplayed), "resend_refused"},
		{wrap(errTooLarge), "response_too_large"},
		{wrap(errTooMany1xx), "too_many_1xx"},
		{wrap(http.ErrSchemeMismatch), "scheme_mismatch"},
		{wrap(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "h"}), "certificate"},
		{wrap(errors.New("tls: server selected unsupported protocol version 301")), "tls"},
		{wrap(errors.New("stream error: stream ID 1; INTERNAL_ERROR; received from peer")), "protocol"},
		{wrap(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x"}}), "dns"},
		{wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), "connection_refused"},
		{wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), "connection_reset"},
		{wrap(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route")}), "connection_failed"},
		{wrap(&net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}), "connection_failed"},
		{wrap(io.EOF), "connection_closed"},
		{wrap(io.ErrUnexpectedEOF), "connection_closed"},
		{wrap(timeoutErr{}), "timeout"},
		{wrap(errors.New("something else")), "_OTHER"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, faultType(tt.err))
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }
