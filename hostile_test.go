package travelrule_test

// Hostile servers, proxies and token endpoints: what they send never
// reaches an error string, and nothing sent twice goes uncounted.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
)

// An endpoint's status line is its own text (it may echo the client
// secret it was just sent): a token error shows the status number and its
// standard text only.
func TestTokenEndpointReasonPhraseStaysOutOfErrors(t *testing.T) {
	const secret = "CLIENT-SECRET-MARKER"
	tokenURL := rawServer(t, func(w io.Writer, r *http.Request) {
		_ = r.ParseForm()
		echo := r.PostForm.Get("client_secret") // the endpoint echoes what it got
		_, _ = io.WriteString(w, "HTTP/1.1 401 "+echo+" Quarterfield\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	})
	c, ts := setup(t, answer(200, `{"status":"succes"}`), travelrule.WithClientCredentials(&clientcredentials.Config{
		ClientID: "id", ClientSecret: secret, TokenURL: tokenURL + "/token", AuthStyle: oauth2.AuthStyleInParams,
	}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	assert.Zero(t, ts.hits.Load())
	assert.NotContains(t, err.Error(), "MARKER", "the secret echoed in the status line")
	assert.NotContains(t, err.Error(), "Quarterfield", "server text in the status line")
}

// A short client secret echoed inside a longer error code is hidden too:
// secrets are matched as substrings, never only as whole words.
func TestShortClientSecretEchoedInAWordStaysOut(t *testing.T) {
	const secret = "Zq7"
	tokenURL := rawServer(t, func(w io.Writer, r *http.Request) {
		_ = r.ParseForm()
		body := `{"error":"bad` + r.PostForm.Get("client_secret") + `x","error_description":"no"}`
		_, _ = io.WriteString(w, "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	})
	c, _ := setup(t, answer(200, `{"status":"succes"}`), travelrule.WithClientCredentials(&clientcredentials.Config{
		ClientID: "id", ClientSecret: secret, TokenURL: tokenURL + "/token", AuthStyle: oauth2.AuthStyleInParams,
	}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	assert.NotContains(t, strings.ToLower(err.Error()), strings.ToLower(secret))
	assert.NotContains(t, strings.ToLower(fmt.Sprintf("%+v", err)), strings.ToLower(secret))
}

// selfSignedWithURI makes a TLS certificate whose URI SAN crypto/x509
// refuses to parse ("invalid domain"), so that the handshake fails with
// crypto/tls's "failed to parse certificate from server" and x509's error,
// which quotes the URI.
func selfSignedWithURI(t *testing.T, uri *url.URL) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		URIs:         []*url.URL{uri},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// A certificate's bytes stay out of error strings: crypto/tls appends
// x509's parse error, which quotes the certificate's URI SAN, chosen by
// whoever answers the TCP connection, before any trust check.
func TestCertificateBytesStayOutOfErrors(t *testing.T) {
	cert := selfSignedWithURI(t, &url.URL{Scheme: "https", Host: "Quarterfield..x"})
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	c, err := travelrule.NewClient("https://"+ln.Addr().String(), travelrule.WithTokenSource(travelrule.StaticToken("t")),
		travelrule.WithRetryMax(0))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	t.Log(err)
	assert.NotContains(t, err.Error(), "Quarterfield")
}

// A code or request id that is a personal value of the request reshaped
// (hex, base64, a separator for a space, an account number without its
// spaces, an umlaut written out) stays out of the error string.
func TestReshapedPersonalValuesStayOutOfErrors(t *testing.T) {
	req := hostileRequest()
	req.Originator.AccountNumber = "DE89 3704 0044 0532 0130 00"
	req.Beneficiary.FirstName = "Anna Maria"
	req.Beneficiary.LastName = "Müller"
	req.Originator.FirstName = "Mü" // a short name: found as a whole word only
	last := req.Originator.LastName // "Quarterfield"
	tests := []struct {
		name, code, requestID, leak string
	}{
		{"hex code", hex.EncodeToString([]byte(last)), "", hex.EncodeToString([]byte(last))},
		{"base64 request id", "bad_request", base64.StdEncoding.EncodeToString([]byte(last)), base64.StdEncoding.EncodeToString([]byte(last))},
		{"separator", "unknown_Anna_Maria", "", "Anna_Maria"},
		{"account number without spaces", "iban_DE89370400440532013000", "", "DE89370400440532013000"},
		{"ICAO transliteration", "sanctions_hit_MUELLER", "", "MUELLER"},
		{"ICAO transliteration of a short name", "SANCTIONS_HIT_MUE", "", "MUE"},
		{"a short name in a request id", "bad_request", "req-mu-7", "req-mu-7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.requestID != "" {
					w.Header().Set("X-Request-Id", tt.requestID)
				}
				answer(400, `{"error":"`+tt.code+`"}`)(w, r)
			})
			_, err := c.InitiateTransfer(context.Background(), req)
			require.ErrorIs(t, err, travelrule.ErrBadRequest)
			assert.NotContains(t, err.Error(), tt.leak)
			assert.NotContains(t, fmt.Sprintf("%+v", err), tt.leak)
		})
	}
}

// An inbound inquiry's TxID, Asset, Amount and the parties' codes are the
// sender's text: Callback's fmt and slog forms show them only in their own
// shapes (in a request the integrator built they are its own values).
func TestInquiryCallbackRedaction(t *testing.T) {
	const name = "Zebulon Quaxworth"
	body := `{"status":"inquiry","transferId":"t-1","txId":"` + name + `","asset":"` + name + `","amount":"` + name +
		`","callback":"https://x.example/cb","originator":{"personType":"` + name + `","country":"` + name +
		`","addressType":"` + name + `","nationalIdType":"` + name + `","firstName":"A","lastName":"B","dateOfBirth":"C"}}`
	cb, err := travelrule.ParseCallback([]byte(body))
	require.NoError(t, err)
	require.Equal(t, travelrule.KindInquiry, cb.Kind)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("callback", "cb", cb)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("callback", "cb", cb)
	for form, out := range map[string]string{"%v": fmt.Sprintf("%v", cb), "%+v": fmt.Sprintf("%+v", cb), "slog": buf.String()} {
		assert.NotContains(t, out, "Quaxworth", form)
	}
}

// A server's FieldErrors logged as a slice with slog's JSON handler (which
// uses encoding/json) show neither its reason text nor a field name that is
// not one of the request's.
func TestServerFieldErrorsInSlogJSON(t *testing.T) {
	c, _ := setup(t, answer(400, `{"fields":[{"field":"Zebulon Quaxworth","reason":"Zebulon Quaxworth is not allowed"}]}`))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("rejected", "fields", apiErr.Fields)
	assert.NotContains(t, buf.String(), "Quaxworth")
}

// A request net/http would refuse before dialing (an access token with a
// line break, a User-Agent product or idempotency key with one) is refused
// before anything is sent: a definite error, never ErrOutcomeUnknown for a
// transfer that cannot exist.
func TestRefusedBeforeDialIsNotOutcomeUnknown(t *testing.T) {
	c, ts := setup(t, answer(200, `{"status":"succes"}`),
		travelrule.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "abc\r\nX-Evil: 1"})))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	assert.Zero(t, ts.hits.Load())
	assert.NotErrorIs(t, err, travelrule.ErrOutcomeUnknown, "nothing was sent: %v", err)
	assert.Contains(t, err.Error(), "cannot go in an Authorization header")

	_, err = travelrule.NewClient("https://travelrule.example", travelrule.WithTokenSource(travelrule.StaticToken("t")),
		travelrule.WithUserAgent("acme\r\nX-Evil: 1"))
	require.ErrorContains(t, err, "WithUserAgent")

	c, ts = setup(t, answer(200, `{"status":"succes"}`), travelrule.WithIdempotency())
	_, err = c.InitiateTransfer(travelrule.ContextWithIdempotencyKey(context.Background(), "k\r\nX-Evil: 1"), minimalRequest())
	require.ErrorIs(t, err, travelrule.ErrInvalidRequest)
	assert.Zero(t, ts.hits.Load())
}

// typedSource issues a new token of a type other than Bearer on each call.
type typedSource struct{ n atomic.Int32 }

func (s *typedSource) Token() (*oauth2.Token, error) {
	return &oauth2.Token{AccessToken: "tok-" + strconv.Itoa(int(s.n.Add(1))), TokenType: "MAC", Expiry: time.Now().Add(time.Hour)}, nil
}

// After a 401 the rejected token is recognised by its whole Authorization
// header, so a token of another type than Bearer is refreshed too rather
// than sent again.
func TestUnauthorizedRefreshesNonBearerTokens(t *testing.T) {
	src := &typedSource{}
	var seen []string
	var mu sync.Mutex
	c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") == "MAC tok-1" {
			answer(401, `{}`)(w, r)
			return
		}
		answer(200, `{"status":"succes"}`)(w, r)
	}, travelrule.WithTokenSource(src))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	t.Log(seen)
	assert.NoError(t, err, "a refreshed token would have been accepted")
	assert.EqualValues(t, 2, ts.hits.Load())
	assert.EqualValues(t, 2, src.n.Load(), "one fetch after the 401")
}

// On a reused HTTP/1 connection the server reads the whole initiation and
// closes without answering. net/http would resend a request with GetBody and
// an Idempotency-Key header by itself; the guard refuses, and every request
// that left is counted.
func TestHTTP1ReusedConnectionDropIsCounted(t *testing.T) {
	for _, idem := range []bool{false, true} {
		t.Run("idempotency "+strconv.FormatBool(idem), func(t *testing.T) {
			var n atomic.Int32
			opts := []travelrule.Option{travelrule.WithRetryWait(0, 0)}
			if idem {
				opts = append(opts, travelrule.WithIdempotency())
			}
			c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 2 {
					// The whole request was read; the kept-alive
					// connection closes unanswered.
					rawAnswer(func(io.Writer, *http.Request) {})(w, r)
					return
				}
				answer(200, `{"status":"succes"}`)(w, r)
			}, opts...)
			_, err := c.InitiateTransfer(context.Background(), minimalRequest()) // primes a kept-alive connection
			require.NoError(t, err)
			res, err := c.InitiateTransfer(context.Background(), minimalRequest())
			if idem {
				require.NoError(t, err)
				assert.Equal(t, 2, res.Attempts)
				assert.EqualValues(t, 3, ts.hits.Load())
				return
			}
			var ou *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &ou)
			assert.Equal(t, 1, ou.Attempts)
			assert.EqualValues(t, 2, ts.hits.Load())
		})
	}
}

// digestTransport signs the body, as transports for HTTP message signatures
// (Content-Digest) do: it reads a copy of the body through GetBody when
// there is one, then sends the request once.
type digestTransport struct{ base http.RoundTripper }

func (d digestTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.GetBody != nil {
		rc, err := r.GetBody()
		if err != nil {
			if r.Body != nil {
				r.Body.Close()
			}
			return nil, err
		}
		body, _ = io.ReadAll(rc)
	} else if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	r = r.Clone(r.Context())
	r.Header.Set("Content-Digest", "len="+strconv.Itoa(len(body)))
	return d.base.RoundTrip(r)
}

// A transport given to WithHTTPClient that reads a copy of the body through
// GetBody before sending (to sign it) works for repeatable calls: only a
// resend of a written request is refused.
func TestSigningTransportWorksForRepeatableCalls(t *testing.T) {
	c, ts := setup(t, answer(200, `{"status":true}`),
		travelrule.WithHTTPClient(&http.Client{Transport: digestTransport{http.DefaultTransport}}))
	res, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	require.NoError(t, err, "hits %d", ts.hits.Load())
	assert.Equal(t, 1, res.Attempts)
}

// A token endpoint that echoes the Basic credentials it received (base64 of
// "id:secret") as its error code does not get them into the error string:
// only RFC 6749's codes are shown.
func TestTokenEndpointEchoedCredentialsStayOutOfErrors(t *testing.T) {
	const secret = "CLIENT-SECRET-MARKER"
	tokenURL := rawServer(t, func(w io.Writer, r *http.Request) {
		cred := strings.TrimRight(strings.TrimPrefix(r.Header.Get("Authorization"), "Basic "), "=")
		body := `{"error":"` + cred + `"}`
		_, _ = io.WriteString(w, "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	})
	c, _ := setup(t, answer(200, `{"status":"succes"}`), travelrule.WithClientCredentials(&clientcredentials.Config{
		ClientID: "id", ClientSecret: secret, TokenURL: tokenURL + "/token", AuthStyle: oauth2.AuthStyleInHeader,
	}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	enc := strings.TrimRight(base64.StdEncoding.EncodeToString([]byte("id:"+secret)), "=")
	assert.NotContains(t, err.Error(), enc, "base64 of id:secret")
}

// An HTTPS proxy's refusal of CONNECT becomes an error made of the proxy's
// own reason phrase; even one that starts "tls: " stays out of the error
// string.
func TestProxyReasonPhraseStaysOutOfErrors(t *testing.T) {
	proxy := rawServer(t, func(w io.Writer, _ *http.Request) {
		_, _ = io.WriteString(w, "HTTP/1.1 403 tls: Quarterfield AB123456\r\nContent-Length: 0\r\n\r\n")
	})
	proxyURL, err := url.Parse(proxy)
	require.NoError(t, err)
	c, err := travelrule.NewClient("https://travelrule.example", travelrule.WithTokenSource(travelrule.StaticToken("t")),
		travelrule.WithRetryMax(0), travelrule.WithHTTPClient(&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), minimalRequest())
	require.Error(t, err)
	t.Log(err)
	assert.NotContains(t, err.Error(), "Quarterfield")
}
