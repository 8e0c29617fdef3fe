package travelrule_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"

	"github.com/vaspkit/travelrule"
)

// requireExternal is the variable that turns a test's skip for a missing
// external program into a failure; .ci/run sets it after installing them.
const requireExternal = "TRAVELRULE_REQUIRE_EXTERNAL"

// lookTool returns the path of the program name, or skips the test naming
// the Debian package that installs it (fails instead when requireExternal
// is set).
func lookTool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} { // off some users' PATH
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	msg := "this test runs " + name + ", which is not installed: install the Debian package " + debianPackage + " (apt-get install " + debianPackage + "); .ci/run does"
	if os.Getenv(requireExternal) != "" {
		t.Fatal(msg + " (" + requireExternal + " is set, so this is a failure)")
	}
	t.Skip(msg)
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// haproxy is a real haproxy between the client and an HTTP/2 upstream,
// speaking HTTP/2 on both sides: over TLS with ALPN h2, or over cleartext
// (h2c, prior knowledge).
type haproxy struct {
	url    string
	client *http.Client // speaks HTTP/2 to the proxy and trusts its certificate
}

// startHAProxy starts haproxy in front of upstream (an h2Server of the
// same scheme) and stops it when the test ends. Its frontend listens on a
// socket the test opened and hands it (bind fd@3), so that no port is
// raced for and a connection waits in the socket's backlog until haproxy
// accepts it: nothing has to poll for haproxy being up.
func startHAProxy(t *testing.T, upstream *h2Server, overTLS bool) *haproxy {
	t.Helper()
	bin := lookTool(t, "haproxy", "haproxy")
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lnFile, err := ln.(*net.TCPListener).File()
	require.NoError(t, err)
	ln.Close() // the duplicate in lnFile stays open for haproxy
	t.Cleanup(func() { lnFile.Close() })

	up := strings.TrimPrefix(strings.TrimPrefix(upstream.url, "https://"), "http://")
	hp := &haproxy{url: "http://" + ln.Addr().String(), client: h2cClient()}
	bind, server := "bind fd@3 proto h2", "server up "+up+" proto h2"
	if overTLS {
		certFile, pool := selfSignedPEM(t, dir)
		hp.url = "https://" + ln.Addr().String()
		hp.client = &http.Client{Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2: true,
		}}
		bind = "bind fd@3 ssl crt " + certFile + " alpn h2"
		server = "server up " + up + " ssl verify none alpn h2"
	}
	cfg := strings.Join([]string{
		"global",
		"  log stderr format raw local0 info",
		"defaults",
		"  mode http",
		"  log global",
		"  option httplog",
		"  timeout connect 5s",
		"  timeout client 30s",
		"  timeout server 30s",
		"frontend fe",
		"  " + bind,
		"  default_backend be",
		"backend be",
		"  " + server,
		"",
	}, "\n")
	cfgFile := filepath.Join(dir, "haproxy.cfg")
	require.NoError(t, os.WriteFile(cfgFile, []byte(cfg), 0o600))

	var logMu sync.Mutex
	var log bytes.Buffer
	cmd := exec.Command(bin, "-db", "-f", cfgFile)
	cmd.ExtraFiles = []*os.File{lnFile} // fd 3
	cmd.Stdout = lockedWriter{&logMu, &log}
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		hp.client.CloseIdleConnections()
		if t.Failed() {
			logMu.Lock()
			t.Logf("haproxy's log:\n%s", log.String())
			logMu.Unlock()
		}
	})
	return hp
}

// selfSignedPEM writes a certificate for 127.0.0.1 and its key, in the one
// PEM file haproxy's crt takes, and returns the file and a pool that
// trusts the certificate.
func selfSignedPEM(t *testing.T, dir string) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	var pemData bytes.Buffer
	require.NoError(t, pem.Encode(&pemData, &pem.Block{Type: "CERTIFICATE", Bytes: der}))
	require.NoError(t, pem.Encode(&pemData, &pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	file := filepath.Join(dir, "cert.pem")
	require.NoError(t, os.WriteFile(file, pemData.Bytes(), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return file, pool
}

// Behind haproxy 2.6 speaking HTTP/2 to both sides, an upstream that reads
// the whole initiation (stores it) and then resets the stream is answered
// to the client with RST_STREAM REFUSED_STREAM, which RFC 9113 reserves
// for a stream not processed. Trusting it sent every transfer four times
// and ended each call with a definite error. Every initiation reaches the
// upstream once, and every call ends ErrOutcomeUnknown.
func TestHAProxyResetAfterStoringIsNeverResent(t *testing.T) {
	const calls = 24
	for _, overTLS := range []bool{false, true} {
		name := "h2c"
		if overTLS {
			name = "TLS with ALPN h2"
		}
		t.Run(name, func(t *testing.T) {
			newUpstream := newH2CServer
			if overTLS {
				newUpstream = newH2Server
			}
			upstream := newUpstream(t, func(n int) h2Action {
				if n == 1 {
					return h2Answer(http.StatusOK, h2Success) // the proxy works
				}
				return h2Reset(http2.ErrCodeInternal)
			})
			hp := startHAProxy(t, upstream, overTLS)
			c, err := travelrule.NewClient(hp.url+"/api",
				travelrule.WithTokenSource(travelrule.StaticToken("tok")),
				travelrule.WithHTTPClient(hp.client),
				travelrule.WithRetryWait(0, 0))
			require.NoError(t, err)

			req := minimalRequest()
			req.Amount = "0.5"
			_, err = c.InitiateTransfer(context.Background(), req)
			require.NoError(t, err, "an answer through the proxy")

			var refused int
			for i := range calls {
				req := minimalRequest()
				req.Amount = strconv.Itoa(i + 1) // a body of its own
				_, err := c.InitiateTransfer(context.Background(), req)
				require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown, "call %d", i)
				var ou *travelrule.OutcomeUnknownError
				require.ErrorAs(t, err, &ou)
				assert.Equal(t, 1, ou.Attempts, "call %d", i)
				if saysRefusedStream(err) {
					refused++
				}
			}
			requests, distinct, repeated := upstream.counts()
			assert.Equal(t, calls+1, requests, "initiations the upstream read whole")
			assert.Equal(t, calls+1, distinct)
			assert.Zero(t, repeated, "no initiation stored twice")
			assert.Equal(t, calls, refused, "haproxy answered each with REFUSED_STREAM (the case under test)")
		})
	}
}

// saysRefusedStream reports whether some error in err's chain is
// net/http's for a RST_STREAM REFUSED_STREAM. (The client keeps a
// transport's error as text only.)
func saysRefusedStream(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if strings.Contains(err.Error(), "REFUSED_STREAM; received from peer") {
			return true
		}
	}
	return false
}
