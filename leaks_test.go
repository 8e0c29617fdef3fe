package travelrule_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
)

// Every form of err: Error, JSON, and formsOf's (every fmt verb, log/slog's
// text and JSON handlers, nested).
func errorForms(t *testing.T, err error) map[string]string {
	t.Helper()
	out := valueForms(t, err)
	out["Error"] = err.Error()
	return out
}

// A 2xx answer the client does not understand, or a refusal after an
// attempt the service may have acted on, that names as its transferId a
// personal value of the request (the beneficiary's wallet address): the
// *OutcomeUnknownError shows it in no form, as TransferResult does not.
func TestOutcomeUnknownHidesEchoedTransferID(t *testing.T) {
	req := fullRequest()
	wallet := req.Beneficiary.WalletAddress
	for name, body := range map[string]string{
		"status not understood": `{"status":"weird","transferId":"` + wallet + `"}`,
		"status false":          `{"status":false,"transferId":"` + wallet + `"}`,
		"inside data":           `{"status":"weird","data":{"transferId":"` + wallet + `"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := setup(t, answer(200, body))
			_, err := c.InitiateTransfer(context.Background(), req)
			var unknown *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, wallet, unknown.TransferID, "the field keeps the server's value")
			for form, s := range errorForms(t, err) {
				assert.NotContains(t, s, wallet, form)
			}
		})
	}
}

// A transfer id that is an identifier and no personal value is still shown.
func TestOutcomeUnknownShowsPlainTransferID(t *testing.T) {
	c, _ := setup(t, answer(200, `{"status":"weird","transferId":"tr-12345"}`))
	_, err := c.InitiateTransfer(context.Background(), fullRequest())
	var unknown *travelrule.OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)
	assert.Contains(t, fmt.Sprintf("%+v", err), "TransferID:tr-12345")
}

// wrappingSource returns its tokens in order, then err: the text of an
// integrator's source that wraps a context error in its own words.
type wrappingSource struct {
	n    atomic.Int32
	toks []string
	err  error
}

func (s *wrappingSource) Token() (*oauth2.Token, error) {
	if i := int(s.n.Add(1)) - 1; i < len(s.toks) {
		return &oauth2.Token{AccessToken: s.toks[i]}, nil
	}
	return nil, s.err
}

// A token source's error that wraps a context error is described in the
// client's words: its own text (and the secret it carries) reaches neither
// the call's error, nor Login's, nor an APIError's "no new token" part;
// errors.Is still finds the context error.
func TestTokenSourceTextWrappingContextErrorStaysOut(t *testing.T) {
	const secret = "sk_live_SECRET123"
	for _, cause := range []error{context.DeadlineExceeded, context.Canceled} {
		t.Run(cause.Error(), func(t *testing.T) {
			srcErr := fmt.Errorf("vault read with secret %s: %w", secret, cause)
			check := func(t *testing.T, err error) {
				t.Helper()
				require.Error(t, err)
				require.ErrorIs(t, err, cause)
				for form, s := range errorForms(t, err) {
					assert.NotContains(t, s, secret, form)
				}
			}

			t.Run("first token", func(t *testing.T) {
				c, err := travelrule.NewClient("https://127.0.0.1:1", travelrule.WithTokenSource(&wrappingSource{err: srcErr}))
				require.NoError(t, err)
				_, err = c.InitiateTransfer(context.Background(), fullRequest())
				check(t, err)
				check(t, c.Login(context.Background()))
			})

			t.Run("refresh after a 401", func(t *testing.T) {
				c, _ := setup(t, answer(401, `{"message":"expired"}`),
					travelrule.WithTokenSource(&wrappingSource{toks: []string{"first-token-value"}, err: srcErr}))
				_, err := c.SubmitTxID(context.Background(), "t-1", "0xabc")
				var apiErr *travelrule.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Contains(t, err.Error(), "no new token")
				check(t, err)
			})
		})
	}
}

// deadlineTransport fails every request as a transport whose deadline
// passed does.
type deadlineTransport struct{}

func (deadlineTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, context.DeadlineExceeded
}

// A token request whose deadline passed: oauth2's error names the token
// URL, whose query here carries a secret; the error says only that the
// deadline passed.
func TestClientCredentialsTimeoutNamesNoTokenURL(t *testing.T) {
	const secret = "tokenurlsecret9876"
	tokenURL := "https://auth.example/token?k=" + secret
	c, err := travelrule.NewClient("https://travelrule.example",
		travelrule.WithHTTPClient(&http.Client{Transport: deadlineTransport{}}),
		travelrule.WithClientCredentials(&clientcredentials.Config{
			ClientID: "id", ClientSecret: "client-secret-value", TokenURL: tokenURL,
		}))
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), fullRequest())
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	for form, s := range errorForms(t, err) {
		assert.NotContains(t, s, secret, form)
		assert.NotContains(t, s, "auth.example", form)
	}
}

// A server that rejects the first token with a 401, and then, to the
// request with the new token, echoes the rejected token's signature as its
// request id or error code: the rejected token is as secret as the new one.
func TestRejectedTokenEchoAfterRefresh(t *testing.T) {
	toks := []string{
		"eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjdXN0LTEiLCJuIjoxfQ.c2lnbmF0dXJlLW9mLXRva2VuLW9uZS0wMTIzNDU2Nzg5",
		"eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjdXN0LTEiLCJuIjoyfQ.c2lnbmF0dXJlLW9mLXRva2VuLXR3by0wMTIzNDU2Nzg5",
	}
	sig1 := strings.Split(toks[0], ".")[2]
	for name, echo := range map[string]func(w http.ResponseWriter){
		"request id": func(w http.ResponseWriter) {
			w.Header().Set("X-Request-Id", sig1)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"x"}]}`)
		},
		"error code": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"status":false,"errors":[{"code":%q,"message":"x"}]}`, sig1)
		},
		"refused 2xx": func(w http.ResponseWriter) {
			w.Header().Set("X-Request-Id", sig1)
			fmt.Fprint(w, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"x"}]}`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			src := &wrappingSource{toks: toks, err: errors.New("no more tokens")}
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.Header.Get("Authorization") == "Bearer "+toks[0] {
					w.WriteHeader(http.StatusUnauthorized)
					fmt.Fprint(w, `{"status":false,"errors":[{"code":"UNAUTHORIZED","message":"x"}]}`)
					return
				}
				echo(w)
			}, travelrule.WithTokenSource(src))
			_, err := c.SubmitTxID(context.Background(), "t-1", "0xabc")
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			require.EqualValues(t, 2, src.n.Load(), "the call refreshed its token")
			for form, s := range errorForms(t, err) {
				assert.NotContains(t, s, sig1, form)
			}
		})
	}
}

// A server that echoes a piece of the bearer token (40 characters of its
// signature, or of its claims) in a request id, a code or a transfer id:
// the piece is hidden as a piece of an API key is (8 characters or more),
// in errors and in results.
func TestPartialTokenEchoIsHidden(t *testing.T) {
	segs := strings.Split(echoJWT, ".")
	sigPart, claimsPart := segs[2][:40], segs[1][3:30]
	refusal := `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"x"}]}`
	type reply struct {
		status    int
		requestID string
		body      string
	}
	for _, tc := range []struct {
		name  string
		reply reply
		part  string
	}{
		{"signature in a 400's request id", reply{400, "req-" + sigPart, refusal}, sigPart},
		{"claims in a 400's request id", reply{400, "req-" + claimsPart, refusal}, claimsPart},
		{"signature in a refusal's request id", reply{200, "req-" + sigPart, refusal}, sigPart},
		{"signature in a code", reply{400, "", `{"status":false,"errors":[{"code":"E_` + sigPart[:20] + `","message":"x"}]}`}, sigPart[:20]},
		{"signature in an answer not understood", reply{200, "req-" + sigPart, `{"status":"weird"}`}, sigPart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tc.reply.requestID != "" {
					w.Header().Set("X-Request-Id", tc.reply.requestID)
				}
				w.WriteHeader(tc.reply.status)
				fmt.Fprint(w, tc.reply.body)
			}, travelrule.WithTokenSource(travelrule.StaticToken(echoJWT)))
			_, err := c.SubmitTxID(context.Background(), "t-1", "0xabc")
			require.Error(t, err)
			for form, s := range errorForms(t, err) {
				assert.NotContains(t, s, tc.part, form)
			}
		})
	}

	t.Run("a result's request id", func(t *testing.T) {
		c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Request-Id", "req-"+sigPart)
			fmt.Fprint(w, `{"status":true}`)
		}, travelrule.WithTokenSource(travelrule.StaticToken(echoJWT)))
		res, err := c.SubmitTxID(context.Background(), "t-1", "0xabc")
		require.NoError(t, err)
		assert.Empty(t, res.RequestID)
	})

	t.Run("an echoed transfer id", func(t *testing.T) {
		c, _ := setup(t, answer(200, `{"status":"weird","transferId":"tr-`+sigPart[:20]+`"}`),
			travelrule.WithTokenSource(travelrule.StaticToken(echoJWT)))
		_, err := c.InitiateTransfer(context.Background(), fullRequest())
		var unknown *travelrule.OutcomeUnknownError
		require.ErrorAs(t, err, &unknown)
		for form, s := range errorForms(t, err) {
			assert.NotContains(t, s, sigPart[:20], form)
		}
	})

	t.Run("a request id of no token is shown", func(t *testing.T) {
		c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Request-Id", "req-7f3a9c21-55e0-4d1b-9a8e-2c6f0b1d4e77")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, refusal)
		}, travelrule.WithTokenSource(travelrule.StaticToken(echoJWT)))
		_, err := c.SubmitTxID(context.Background(), "t-1", "0xabc")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "req-7f3a9c21-55e0-4d1b-9a8e-2c6f0b1d4e77")
		assert.Contains(t, err.Error(), "VALIDATION_ERROR")
	})
}

// valueForms prints v, a struct value rather than a pointer, in every form
// a log line could take: formsOf's and JSON.
func valueForms(t *testing.T, v any) map[string]string {
	t.Helper()
	js, err := json.Marshal(v)
	require.NoError(t, err)
	out := formsOf(v, false)
	out["json"] = string(js)
	return out
}

// The error types' values (*ou, *apiErr), not only their pointers, print
// no capability tag, body, header or server message.
func TestErrorValuesAreRedacted(t *testing.T) {
	const capKey = "PlantedCapabilityKey0123"
	cbURL, err := travelrule.NewCallbackURL("https://vasp.example/cb", "pay-1", []byte(capKey))
	require.NoError(t, err)
	u, err := url.Parse(cbURL)
	require.NoError(t, err)
	tag := u.Query().Get("tr_tag")
	require.NotEmpty(t, tag)
	req := fullRequest()
	req.Callback = cbURL
	const message = "server-message-with-PlantedBodySecret"
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Planted-Header", "PlantedHeaderSecret")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"message":%q}`, message)
	}, travelrule.WithRetryMax(0))
	_, err = c.InitiateTransfer(context.Background(), req)
	var ou *travelrule.OutcomeUnknownError
	require.ErrorAs(t, err, &ou)
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr, "errors.As still finds the pointer types")
	for name, v := range map[string]any{"OutcomeUnknownError": *ou, "APIError": *apiErr} {
		for form, s := range valueForms(t, v) {
			for _, secret := range []string{cbURL, tag, capKey, "PlantedBodySecret", "PlantedHeaderSecret", req.Beneficiary.WalletAddress} {
				assert.NotContains(t, s, secret, "%s %s", name, form)
			}
		}
	}
}
