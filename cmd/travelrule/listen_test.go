package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

const warnNothingVerified = "warning: verifying nothing: anyone who can reach this address can post callbacks; set TRAVELRULE_SIGNING_SECRET (the live service's x-data-integrity), TRAVELRULE_WEBHOOK_SECRET or TRAVELRULE_CALLBACK_KEY (or their _FILE forms)"

// TestListenLogsRefusals: each refused delivery is logged on stderr with
// the handler's reason, and never with the body, the secret or the
// signature.
func TestListenLogsRefusals(t *testing.T) {
	const secret = "test-secret-0123456789"
	env := map[string]string{"TRAVELRULE_WEBHOOK_SECRET": "whsec_" + base64.StdEncoding.EncodeToString([]byte(secret))}
	body := `{"approved":{"address":"0xPLANTEDWALLET","callback":"https://b.example/cb"},"firstName":"Zebulon"}`
	now := time.Now()
	wrongSig := callback.Sign([]byte("some-other-secret-0123"), "msg_1", now, []byte(body))
	capKey := map[string]string{"TRAVELRULE_CALLBACK_KEY": "capability-key-0123456789"}
	tests := []struct {
		name   string
		env    map[string]string
		header map[string]string
		reason string
	}{
		{"unsigned", env, nil, "callback: request carries no signature"},
		{"wrong secret", env, map[string]string{
			callback.HeaderID: "msg_1", callback.HeaderTimestamp: strconv.FormatInt(now.Unix(), 10), callback.HeaderSignature: wrongSig,
		}, "callback: signature does not verify"},
		{"stale", env, map[string]string{
			callback.HeaderID: "msg_1", callback.HeaderTimestamp: "1000000000", callback.HeaderSignature: wrongSig,
		}, "callback: webhook timestamp is invalid or outside the tolerance"},
		{"no capability", capKey, nil, "travelrule: callback URL carries no capability tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, out, errOut := startListen(t, tt.env)
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			assert.Equal(t, http.StatusUnauthorized, post(t, url, body, h))
			line := errOut.waitFor(t, regexp.MustCompile(`(?m)^.*refused.*$`))[0]
			assert.Regexp(t, `level=WARN msg="callback: refused request .*path=/cb`, line)
			assert.Contains(t, line, `error="`+tt.reason+`"`)
			for _, never := range []string{"0xPLANTEDWALLET", "Zebulon", "b.example", secret, env["TRAVELRULE_WEBHOOK_SECRET"], wrongSig, capKey["TRAVELRULE_CALLBACK_KEY"]} {
				assert.NotContains(t, errOut.String(), never)
				assert.NotContains(t, out.String(), never)
			}
		})
	}
}

// TestListenWarnsWhenVerifyingNothing: without a secret or a capability
// key, listen warns that anyone can post callbacks; with them, it names
// what it verifies and where each secret came from, never the secret.
func TestListenWarnsWhenVerifyingNothing(t *testing.T) {
	const webhook, signing, capKey = "PLANTED-webhook-0123456789", "PLANTED-signing-0123456789", "PLANTED-capkey-0123456789"
	webhookFile, signingFile, capKeyFile := writeFile(t, "webhook", webhook+"\n"), writeFile(t, "signing", signing+"\n"), writeFile(t, "capkey", capKey)
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		verifying string // "": the warning
	}{
		{"nothing", nil, nil, ""},
		{"secret from the environment", map[string]string{"TRAVELRULE_WEBHOOK_SECRET": webhook}, nil,
			"verifying Standard Webhooks signatures (secret from TRAVELRULE_WEBHOOK_SECRET)"},
		{"secret from a file", map[string]string{"TRAVELRULE_WEBHOOK_SECRET_FILE": webhookFile}, nil,
			"verifying Standard Webhooks signatures (secret from TRAVELRULE_WEBHOOK_SECRET_FILE)"},
		{"signing secret from the environment", map[string]string{"TRAVELRULE_SIGNING_SECRET": signing}, nil,
			"verifying x-data-integrity signatures (secret from TRAVELRULE_SIGNING_SECRET)"},
		{"signing secret from a file", map[string]string{"TRAVELRULE_SIGNING_SECRET_FILE": signingFile}, nil,
			"verifying x-data-integrity signatures (secret from TRAVELRULE_SIGNING_SECRET_FILE)"},
		{"signing secret from the flag", nil, []string{"--signing-secret-file", signingFile},
			"verifying x-data-integrity signatures (secret from --signing-secret-file)"},
		{"capability key from the environment", map[string]string{"TRAVELRULE_CALLBACK_KEY": capKey}, nil,
			"verifying capability callback URLs (key from TRAVELRULE_CALLBACK_KEY)"},
		{"capability key from a file", map[string]string{"TRAVELRULE_CALLBACK_KEY_FILE": capKeyFile}, nil,
			"verifying capability callback URLs (key from TRAVELRULE_CALLBACK_KEY_FILE)"},
		{"a signature and a capability key", map[string]string{"TRAVELRULE_SIGNING_SECRET": signing, "TRAVELRULE_CALLBACK_KEY_FILE": capKeyFile}, nil,
			"verifying x-data-integrity signatures (secret from TRAVELRULE_SIGNING_SECRET) and capability callback URLs (key from TRAVELRULE_CALLBACK_KEY_FILE)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, out, errOut := startListen(t, tt.env, tt.args...)
			if tt.verifying == "" {
				errOut.waitFor(t, regexp.MustCompile(regexp.QuoteMeta(warnNothingVerified)))
			} else {
				assert.Contains(t, errOut.String(), tt.verifying+"\n")
				assert.NotContains(t, errOut.String(), "verifying nothing")
			}
			assert.NotContains(t, out.String()+errOut.String(), "PLANTED")
		})
	}
}

// TestListenSecretErrors: a secret set twice (X and X_FILE), or not one
// line, is a usage error that never quotes it.
func TestListenSecretErrors(t *testing.T) {
	const secret = "PLANTED-secret-0123456789"
	file := writeFile(t, "secret", secret)
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"webhook secret twice", map[string]string{"TRAVELRULE_WEBHOOK_SECRET": secret, "TRAVELRULE_WEBHOOK_SECRET_FILE": file},
			"both TRAVELRULE_WEBHOOK_SECRET and TRAVELRULE_WEBHOOK_SECRET_FILE are set: set one"},
		{"capability key twice", map[string]string{"TRAVELRULE_CALLBACK_KEY": secret, "TRAVELRULE_CALLBACK_KEY_FILE": file},
			"both TRAVELRULE_CALLBACK_KEY and TRAVELRULE_CALLBACK_KEY_FILE are set: set one"},
		{"signing secret twice", map[string]string{"TRAVELRULE_SIGNING_SECRET": secret, "TRAVELRULE_SIGNING_SECRET_FILE": file},
			"both TRAVELRULE_SIGNING_SECRET and TRAVELRULE_SIGNING_SECRET_FILE are set: set one"},
		{"a missing capability key file", map[string]string{"TRAVELRULE_CALLBACK_KEY_FILE": "/nonexistent/key"},
			"the capability key file of TRAVELRULE_CALLBACK_KEY_FILE: no such file"},
		{"a capability key of two lines", map[string]string{"TRAVELRULE_CALLBACK_KEY": secret + "\nmore"},
			"TRAVELRULE_CALLBACK_KEY: the capability key has a newline (U+000A) at byte offset"},
		{"a short capability key", map[string]string{"TRAVELRULE_CALLBACK_KEY": "PLANTED"},
			"TRAVELRULE_CALLBACK_KEY: the capability key is shorter than 16 bytes"},
		{"two signatures", map[string]string{"TRAVELRULE_SIGNING_SECRET": secret, "TRAVELRULE_WEBHOOK_SECRET_FILE": file},
			"both a signing secret (x-data-integrity) and a Standard Webhooks secret are set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", tt.env, "listen", "--addr", "127.0.0.1:0")
			assert.Equal(t, exitUsage, code, errOut)
			assert.Contains(t, errOut, "travelrule listen: "+tt.want)
			assert.Empty(t, out)
			assert.NotContains(t, errOut, "PLANTED")
		})
	}
}

// TestCallbackLineRedactsSenderText: without --show-pii, the identifiers,
// status, asset and amount of a callback are printed only when they have
// their shape and hold none of an inquiry's personal values.
func TestCallbackLineRedactsSenderText(t *testing.T) {
	cb, err := travelrule.ParseCallback([]byte(`{"transferId":"Ada-Lovelace","status":"inquiry","txId":"Lovelace","asset":"Ada Lovelace","amount":"one BTC",
	 "originator":{"personType":"natural","firstName":"Ada","lastName":"Lovelace"}}`))
	require.NoError(t, err)
	line := callbackLine(cb, false)
	out, err := json.Marshal(line)
	require.NoError(t, err)
	assert.NotContains(t, string(out), "Lovelace")
	assert.NotContains(t, string(out), "one BTC")
	assert.Equal(t, "inquiry", line["status"])

	shown := callbackLine(cb, true)
	assert.Equal(t, "Ada-Lovelace", shown["transferId"], "--show-pii shows it")
}

// TestListenRefusesABadPathPattern: a --path that http.ServeMux refuses is
// a usage error, not a panic.
func TestListenRefusesABadPathPattern(t *testing.T) {
	code, _, errOut := runCLI(t, context.Background(), "", nil, "listen", "--addr", "127.0.0.1:0", "--path", "/a/{")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--path: not a path pattern")
	assert.NotContains(t, errOut, "goroutine")
}

// TestListenServerTimeouts: listen's server has every time-out a public
// endpoint needs, each bounded, and the answer's outlasts the request's.
func TestListenServerTimeouts(t *testing.T) {
	srv := listenServer(http.NotFoundHandler(), defaultListenTimeouts)
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout, "WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout,
	} {
		assert.Positive(t, d, name)
		assert.LessOrEqual(t, d, time.Minute, name)
	}
	assert.LessOrEqual(t, srv.ReadHeaderTimeout, srv.ReadTimeout)
	assert.Greater(t, srv.WriteTimeout, srv.ReadTimeout, "a body that came just in time gets its answer")
	assert.Equal(t, 64<<10, srv.MaxHeaderBytes)

	custom := listenServer(http.NotFoundHandler(), serverTimeouts{header: 1, read: 2, write: 3, idle: 4})
	assert.Equal(t, []time.Duration{1, 2, 3, 4}, []time.Duration{custom.ReadHeaderTimeout, custom.ReadTimeout, custom.WriteTimeout, custom.IdleTimeout})
}

// TestListenSlowSenders: senders that trickle their headers or their
// bodies, hold an idle connection, or never read their answers cannot hold
// listen: the server closes each connection within its time-outs (small
// here), and answers another sender meanwhile.
func TestListenSlowSenders(t *testing.T) {
	limits := serverTimeouts{header: time.Second, read: time.Second, write: 2 * time.Second, idle: time.Second}
	var out, errOut syncBuffer
	// The server's send buffers are small, so that a sender that reads
	// nothing blocks the server's writes after a few answers, however the
	// kernel would size them (up to megabytes, which a loaded machine took
	// more than the test's bound to fill).
	smallBuffers := func(conn net.Conn) { _ = conn.(*net.TCPConn).SetWriteBuffer(4096) }
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, listenTimeouts: &limits, listenConns: smallBuffers}
	base := startListenCLI(t, c, &errOut)
	u, err := url.Parse(base)
	require.NoError(t, err)
	// The test's own bound: a connection still open then was held.
	bound := time.Now().Add(30 * time.Second)
	dial := func(t *testing.T, first string) net.Conn {
		conn, err := net.Dial("tcp", u.Host)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		require.NoError(t, conn.SetDeadline(bound))
		_, err = io.WriteString(conn, first)
		require.NoError(t, err)
		return conn
	}
	t.Run("trickled bodies, trickled headers, idle connections", func(t *testing.T) {
		var conns []net.Conn
		for range 40 { // headers, then one byte of a 1000-byte body
			conns = append(conns, dial(t, "POST /cb HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
		}
		for range 10 { // half of the headers
			conns = append(conns, dial(t, "POST /cb HTTP/1.1\r\nHost: x\r\n"))
		}
		for range 10 { // a whole request, answered, then nothing
			conns = append(conns, dial(t, "GET /elsewhere HTTP/1.1\r\nHost: x\r\n\r\n"))
		}
		assert.Equal(t, http.StatusNoContent, post(t, base, `{"transferId":"t-1","status":"approved"}`, nil), "answered meanwhile")
		ended := make(chan error, len(conns))
		for _, conn := range conns {
			go func() {
				_, err := io.Copy(io.Discard, conn) // nil at the server's close
				ended <- err
			}()
		}
		for range conns {
			err := <-ended
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "a slow sender held its connection for 30 s")
		}
		assert.Len(t, lines(t, out.String()), 1, "only the whole callback printed")
	})
	t.Run("answers never read", func(t *testing.T) {
		conn := dial(t, "")
		require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
		batch := strings.Repeat("GET /elsewhere HTTP/1.1\r\nHost: x\r\n\r\n", 100)
		// Requests go until the server, stuck writing answers nobody
		// reads, gives the connection up: then a write fails.
		var err error
		for err == nil {
			_, err = io.WriteString(conn, batch)
		}
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "a sender that reads nothing held its connection for 30 s")
	})
}
