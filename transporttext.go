package travelrule

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// transportText describes a failure below HTTP in the client's own words.
// The transports' own texts can quote what the server sent (a malformed
// status line or Location header, the debug data of an HTTP/2 GOAWAY, the
// names in a certificate), so they are never used; the error itself stays
// reachable with errors.Is and errors.As.
func transportText(err error) string {
	_, text := transportFault(err)
	return text
}

// faultType is a short, fixed name of a failure below HTTP, for
// telemetry's error.type (AttemptEnd.ErrorType): "" for no failure.
func faultType(err error) string {
	if err == nil {
		return ""
	}
	typ, _ := transportFault(err)
	return typ
}

// transportFault is where a failure below HTTP is named: its type, in
// lower case with underscores ("_OTHER", the OpenTelemetry conventions'
// word, for the rest), and its description in the client's words.
func transportFault(err error) (typ, text string) {
	var (
		te      *tokenError
		dnsErr  *net.DNSError
		opErr   *net.OpError
		alert   tls.AlertError
		recErr  tls.RecordHeaderError
		errno   syscall.Errno
		timeout interface{ Timeout() bool }
	)
	switch {
	case errors.Is(err, errPanicked):
		return "panic", errPanicked.Error()
	case errors.As(err, &te):
		return "token", te.Error()
	case errors.Is(err, context.Canceled):
		return "canceled", "context canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", "context deadline exceeded or attempt timed out"
	case errors.Is(err, errNotReplayed):
		return "resend_refused", errNotReplayed.Error()
	case errors.Is(err, errTooLarge):
		return "response_too_large", errTooLarge.Error()
	case errors.Is(err, errTooMany1xx):
		return "too_many_1xx", "the server sent 1xx informational answers beyond the client's limit"
	case errors.Is(err, http.ErrSchemeMismatch):
		return "scheme_mismatch", "the server answered plain HTTP to a TLS request: use http:// or the server's TLS port"
	case isCertError(err):
		return "certificate", "the server's certificate is not trusted"
	case errors.As(err, &recErr):
		return "tls", "TLS handshake failed: the server does not speak TLS"
	case errors.As(err, &alert):
		return "tls", "TLS handshake failed: " + alert.Error()
	case strings.HasPrefix(innermost(err).Error(), "tls: "):
		// Not its text: crypto/tls appends x509's parse errors, which quote
		// the certificate, and a proxy's refusal can spell anything.
		return "tls", "TLS handshake failed"
	case knownCause(err) != "":
		return "protocol", knownCause(err)
	case errors.As(err, &dnsErr):
		return "dns", "DNS lookup failed"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		if errors.As(err, &errno) {
			return errnoType(errno), "connection failed: " + errno.Error()
		}
		return "connection_failed", "connection failed"
	case errors.As(err, &errno):
		return errnoType(errno), "connection failed: " + errno.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection_closed", "connection closed before the answer was complete"
	case errors.As(err, &timeout) && timeout.Timeout():
		return "timeout", "timed out"
	}
	return "_OTHER", "connection or protocol failure"
}

// errnoType names a connection's failure by its errno.
func errnoType(errno syscall.Errno) string {
	switch errno {
	case syscall.ECONNREFUSED:
		return "connection_refused"
	case syscall.ECONNRESET:
		return "connection_reset"
	}
	return "connection_failed"
}

// innermost follows err's chain of single causes to its end.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// knownCauses names, in the client's words, the failures net/http reports
// with a fixed text of its own (no server bytes in it) that would
// otherwise read as a bare "connection or protocol failure". The key is a
// prefix of the innermost error's text.
var knownCauses = []struct{ prefix, text string }{
	{"net/http: cannot rewind body after connection loss", "the connection was lost and the request body could not be sent again (nothing was resent)"},
	{"net/http: server response headers exceeded", "the server's answer headers, 1xx informational answers included, exceed the client's limit"},
	{"header list too large", "the server's answer headers, 1xx informational answers included, exceed the client's limit"},
	{"http2: response header list larger than advertised limit", "the server's answer headers exceed the client's limit"},
	{"malformed HTTP response", "the server's answer is not HTTP"},
	{"malformed HTTP status code", "the server's answer has a malformed status line"},
	{"net/http: HTTP/1.x transport connection broken", "the connection broke before a whole answer came"},
	{"malformed MIME header", "the server's answer headers are malformed"},
	{"http2: server sent GOAWAY and closed the connection", "the server closed the HTTP/2 connection (GOAWAY)"},
	{"stream error:", "the server reset the HTTP/2 stream"},
	{"http2: client connection lost", "the HTTP/2 connection was lost"},
}

// knownCause is the client's words for the innermost error of err's chain
// of single causes whose text knownCauses names (the most precise: "the
// connection broke" wraps why it broke), or "".
func knownCause(err error) string {
	var chain []error
	for ; err != nil && len(chain) < 32; err = errors.Unwrap(err) {
		chain = append(chain, err)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		text := chain[i].Error()
		for _, c := range knownCauses {
			if strings.HasPrefix(text, c.prefix) {
				return c.text
			}
		}
	}
	return ""
}
