package travelruletest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"time"
)

// Client returns an HTTP client configured for requests to the server, as
// httptest.Server.Client does: for a server made by [NewTLSServer] it
// trusts the server's certificate and attempts HTTP/2. Close closes its
// idle connections. Give it to travelrule.WithHTTPClient, or to
// golang.org/x/oauth2 (through the oauth2.HTTPClient context value) to
// reach [Server.TokenURL].
func (s *Server) Client() *http.Client { return s.client }

// Certificate returns the certificate of a server made by [NewTLSServer],
// or nil for one made by [NewServer]. It is self-signed, made when the
// server starts, and valid for 127.0.0.1, ::1, "localhost" and the
// address the server listens on.
func (s *Server) Certificate() *x509.Certificate { return s.cert }

// newCertificate makes a self-signed certificate for a server listening at
// addr.
func newCertificate(addr net.Addr) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, err
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if tcp, ok := addr.(*net.TCPAddr); ok && !tcp.IP.IsUnspecified() && !tcp.IP.IsLoopback() {
		ips = append(ips, tcp.IP)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"travelruletest"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           ips,
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
