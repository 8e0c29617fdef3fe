package travelrule_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// echoJWT is a token of the live service's shape (EdDSA JWT) whose claims
// and signature are secret.
const echoJWT = "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjdXN0b21lci03Nzc3IiwiZXhwIjo0MTAyNDQ0ODAwfQ.c2lnbmF0dXJlLXNlY3JldC1vZi10aGUtdG9rZW4tMDEyMzQ1Njc4OQ"

// TestBearerTokenPartsNeverShown: a hostile service that echoes the
// token, or only its signature or claims, in a request id or a message
// gets none of it into an error string or a log line.
func TestBearerTokenPartsNeverShown(t *testing.T) {
	sig := echoJWT[strings.LastIndex(echoJWT, ".")+1:]
	claims := strings.Split(echoJWT, ".")[1]
	for _, echoed := range []string{echoJWT, sig, claims} {
		t.Run(echoed[:12], func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/auth/token") {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"accessToken":%q,"expiresIn":3600,"tokenType":"Bearer"}`, echoJWT)
					return
				}
				w.Header().Set("X-Request-Id", echoed)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"token %s refused"}]}`, echoed)
			}))
			defer srv.Close()
			var logs bytes.Buffer
			c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey("trp_live_key_for_the_echo_test"),
				travelrule.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			require.NoError(t, err)
			_, err = c.SubmitTxID(context.Background(), "t-1", "0xabc")
			require.Error(t, err)
			for _, out := range []string{err.Error(), fmt.Sprintf("%+v", err), logs.String()} {
				assert.NotContains(t, out, sig)
				assert.NotContains(t, out, claims)
			}
		})
	}
}

// TestLoginAnswerNotUnderstoodHidesItsToken: a 2xx login answer that holds
// a token but is not understood (a status that is not one of success)
// echoes that token in its request id; the LoginError shows none of it.
func TestLoginAnswerNotUnderstoodHidesItsToken(t *testing.T) {
	var logins atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logins.Add(1)
		w.Header().Set("X-Request-Id", echoJWT[len(echoJWT)-40:])
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"maybe","accessToken":%q,"message":"your token is %s"}`, echoJWT, echoJWT)
	}))
	defer srv.Close()
	c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey("trp_live_key_for_the_echo_test"))
	require.NoError(t, err)
	err = c.Login(context.Background())
	require.ErrorIs(t, err, travelrule.ErrLoginFailed)
	var le *travelrule.LoginError
	require.ErrorAs(t, err, &le)
	for _, out := range []string{err.Error(), fmt.Sprintf("%+v", le), printedForms(t, err), printedForms(t, le)} {
		assert.NotContains(t, out, echoJWT[len(echoJWT)-40:])
	}
	assert.Equal(t, "your token is "+echoJWT, le.ServerMessage(), "the message is the service's, as it came")
	assert.Equal(t, int32(1), logins.Load())
}

// TestResultsHideEchoedPersonalValues: an initiation or a resolution
// answered with a request id, or a transfer id, that repeats a personal
// value of the request shows none of it in its fmt and slog forms.
func TestResultsHideEchoedPersonalValues(t *testing.T) {
	req := minimalRequest()
	name := req.Originator.LastName
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-"+name)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":true,"data":{"transferId":"tr-%s"}}`, name)
	})
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "tr-"+name, res.TransferID, "the field keeps what the service said")
	assert.Empty(t, res.RequestID)
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("r", "res", res)
	for _, out := range []string{fmt.Sprint(res), fmt.Sprintf("%+v", *res), logs.String()} {
		assert.NotContains(t, out, name)
	}
	inq, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true", Callback: "https://vasp.example/cb?tr_tag=" + name})
	require.NoError(t, err)
	assert.Empty(t, inq.RequestID)
}

// TestRefusedTokenPartsNeverShown: after a 401, a call carries a new token;
// a service that then echoes part of the refused one, in a request id or
// an error code, or of the new one, or of the API key, gets none of it
// into the result, the error or its printed forms.
func TestRefusedTokenPartsNeverShown(t *testing.T) {
	const apiKey = "trp_live_rotation_key_0123456789"
	tokens := []string{echoJWT, echoJWT[:len(echoJWT)-10] + "rotated-01"}
	for _, tc := range []struct{ name, part string }{
		{"the refused token", tokens[0][len(tokens[0])-12:]},
		{"the new token", tokens[1][len(tokens[1])-12:]},
		{"the API key", apiKey[9:21]},
	} {
		for _, status := range []int{http.StatusOK, http.StatusConflict} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, status), func(t *testing.T) {
				var logins atomic.Int32
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					if strings.HasSuffix(r.URL.Path, "/auth/token") {
						fmt.Fprintf(w, `{"accessToken":%q,"expiresIn":3600,"tokenType":"Bearer"}`, tokens[min(int(logins.Add(1))-1, 1)])
						return
					}
					if r.Header.Get("Authorization") == "Bearer "+tokens[0] {
						w.WriteHeader(http.StatusUnauthorized) // the live service's answer to an expired token
						return
					}
					w.Header().Set("X-Request-Id", "req-"+tc.part)
					w.WriteHeader(status)
					if status == http.StatusOK {
						fmt.Fprint(w, `{"status":true,"data":{"transferId":"tr-1"}}`)
						return
					}
					fmt.Fprintf(w, `{"status":false,"errors":[{"code":"E_%s","message":"m"}]}`, tc.part)
				}))
				defer srv.Close()
				c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(apiKey))
				require.NoError(t, err)
				res, err := c.InitiateTransfer(context.Background(), fullRequest())
				require.Equal(t, int32(2), logins.Load(), "the refused token was replaced")
				var outs []string
				if status == http.StatusOK {
					require.NoError(t, err)
					assert.Empty(t, res.RequestID)
					outs = append(outs, fmt.Sprintf("%+v", *res), fmt.Sprint(res))
				} else {
					require.Error(t, err)
					outs = append(outs, err.Error(), fmt.Sprintf("%+v", err))
				}
				for _, out := range outs {
					assert.NotContains(t, out, tc.part)
				}
			})
		}
	}
}
