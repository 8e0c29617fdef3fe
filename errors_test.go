package travelrule_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"

	"github.com/vaspkit/travelrule"
)

// hostileRequest is a request whose personal values have identifier shapes
// (a server can send them back as an error code or a field name).
func hostileRequest() *travelrule.TransferRequest {
	r := fullRequest()
	r.Originator.LastName = "Quarterfield"
	r.Originator.NationalID = "AB123456"
	return r
}

// assertNoPersonalData checks s for every personal value of r, whatever
// its case.
func assertNoPersonalData(t *testing.T, s string, r *travelrule.TransferRequest) {
	t.Helper()
	for _, v := range piiOf(r) {
		assert.NotContains(t, strings.ToLower(s), strings.ToLower(v))
	}
}

// printedForms is every printed form of v: its fmt verbs, its JSON, and
// the lines log/slog's text and JSON handlers write of it.
func printedForms(t *testing.T, v any) string {
	t.Helper()
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "v", v)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "v", v)
	return fmt.Sprintf("%v %+v %#v %s %q ", v, v, v, v, v) + mustJSON(t, v) + logs.String()
}

// An error string carries only the operation, the status, a code that is
// an identifier free of the request's personal values, a bounded request id
// and the request's field paths; the rest stays in the fields.
func TestAPIErrorTextCarriesNoServerText(t *testing.T) {
	req := hostileRequest()
	tests := []struct {
		name      string
		body      string
		requestID string
		wantText  string
	}{
		{"code is a last name, other case", `{"error":"QUARTERFIELD"}`, "req-1",
			"travelrule: InitiateTransfer: 400 Bad Request (request id req-1)"},
		{"code is a wallet address", `{"error":"` + strings.ToUpper(req.Originator.WalletAddress) + `"}`, "",
			"travelrule: InitiateTransfer: 400 Bad Request"},
		{"code contains a national id", `{"error":{"code":"rejected_ab123456"}}`, "",
			"travelrule: InitiateTransfer: 400 Bad Request"},
		{"plain code", `{"error":"invalid_party"}`, "",
			"travelrule: InitiateTransfer: 400 Bad Request: invalid_party"},
		{"field names that are not the request's paths", `{"error":"invalid_field","fields":[{"field":"Quarterfield","reason":"x"},{"field":"originator.lastName","reason":"unknown QUARTERFIELD"},{"field":"AB123456","reason":"x"}]}`, "",
			"travelrule: InitiateTransfer: 400 Bad Request: invalid_field (fields: originator.lastName)"},
		{"request id with a name in it", `{}`, "trace-quarterfield",
			"travelrule: InitiateTransfer: 400 Bad Request"},
		{"request id of any text", `{}`, "Zoë Quarterfield, Berlin",
			"travelrule: InitiateTransfer: 400 Bad Request"},
		{"request id too long", `{}`, strings.Repeat("a", 10<<10),
			"travelrule: InitiateTransfer: 400 Bad Request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.requestID != "" {
					w.Header().Set("X-Request-Id", tt.requestID)
				}
				answer(400, tt.body)(w, r)
			})
			_, err := c.InitiateTransfer(context.Background(), req)
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.wantText, err.Error())
			assertNoPersonalData(t, err.Error(), req)
			assertNoPersonalData(t, printedForms(t, err), req)
			assert.Equal(t, tt.requestID, apiErr.RequestID, "the field keeps what the server sent")
			assert.Equal(t, tt.body, string(apiErr.Body))
		})
	}
}

// hijacked answers every request with raw bytes, as a broken or hostile
// server (or proxy) would, and closes the connection.
func hijacked(raw string) http.HandlerFunc {
	return rawAnswer(func(w io.Writer, _ *http.Request) { _, _ = io.WriteString(w, raw) })
}

// rawAnswer answers every request with the raw bytes respond writes (it may
// read the request, body included) and closes the connection.
func rawAnswer(respond func(w io.Writer, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // the body is not to be read after Hijack
		r.Body = io.NopCloser(bytes.NewReader(body))
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		respond(buf, r)
		_ = buf.Flush()
	}
}

// rawServer starts a server whose every answer is respond's raw bytes and
// returns its URL.
func rawServer(t *testing.T, respond func(w io.Writer, r *http.Request)) string {
	ts := httptest.NewServer(rawAnswer(respond))
	t.Cleanup(ts.Close)
	return ts.URL
}

// A transport's error text can quote the server's bytes; the SDK's never
// does.
func TestTransportErrorQuotesNoServerBytes(t *testing.T) {
	req := hostileRequest()
	for _, tt := range []struct{ name, raw string }{
		{"malformed Location", "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://[Quarterfield%zz\r\nContent-Length: 0\r\n\r\n"},
		{"malformed status line", "HTTP/1.1 Quarterfield AB123456\r\nContent-Length: 0\r\n\r\n"},
		{"malformed header", "HTTP/1.1 200 OK\r\nQuarterfield AB123456\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, opts := range [][]travelrule.Option{nil, {travelrule.WithIdempotency()}} {
				c, _ := setup(t, hijacked(tt.raw), opts...)
				_, err := c.InitiateTransfer(context.Background(), req)
				require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
				assertNoPersonalData(t, err.Error(), req)
			}
		})
	}
	t.Run("HTTP/2 GOAWAY debug data", func(t *testing.T) {
		s := newH2Server(t, func(int) h2Action {
			return h2Action{goAway: true, last: 1, code: http2.ErrCodeNo, debug: "Quarterfield AB123456"}
		})
		_, err := h2Client(t, s).InitiateTransfer(context.Background(), req)
		require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
		assertNoPersonalData(t, err.Error(), req)
	})
}

// An error keeps a bounded copy of the answer's headers, whatever the
// transport let through (APIError.Header kept 9 MiB).
func TestAPIErrorKeepsBoundedHeaders(t *testing.T) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxResponseHeaderBytes = 16 << 20
	c, _ := setup(t, hugeHeader(400, 9<<20), travelrule.WithHTTPClient(&http.Client{Transport: tr}))
	_, err := c.InitiateTransfer(context.Background(), minimalRequest())
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	size := 0
	for k, vs := range apiErr.Header {
		for _, v := range vs {
			size += len(k) + len(v)
		}
	}
	assert.LessOrEqual(t, size, 64<<10)
	assert.Equal(t, "2", apiErr.Header.Get("Content-Length"), "what fits is kept")
}

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		status   int
		sentinel error
	}{
		{400, travelrule.ErrBadRequest},
		{401, travelrule.ErrUnauthorized},
		{403, nil},
		{404, travelrule.ErrNotFound},
		{409, nil},
		{422, nil},
	}
	body := `{"error":"bad_request","message":"asset is not supported","fields":[{"field":"asset","reason":"unsupported"}],"secretish":"RAW-BODY-MARKER"}`
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			for _, op := range []string{"InitiateTransfer", "ResolveInquiry"} {
				c, ts := setup(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Request-Id", "rid-1")
					answer(tt.status, body)(w, r)
				})
				var err error
				if op == "InitiateTransfer" {
					_, err = c.InitiateTransfer(context.Background(), minimalRequest())
				} else {
					_, err = c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
				}
				var apiErr *travelrule.APIError
				require.ErrorAs(t, err, &apiErr, op)
				assert.Equal(t, tt.status, apiErr.StatusCode)
				assert.Equal(t, op, apiErr.Op)
				assert.Equal(t, body, string(apiErr.Body), "raw body kept")
				assert.Equal(t, "asset is not supported", apiErr.ServerMessage())
				assert.NotContains(t, printedForms(t, err), "not supported")
				assert.Equal(t, "bad_request", apiErr.Code)
				assert.Contains(t, err.Error(), "bad_request (fields: asset)")
				assert.NotContains(t, err.Error(), "not supported", "free server text stays out of the error string")
				require.Len(t, apiErr.Fields, 1)
				assert.Equal(t, "asset", apiErr.Fields[0].Field)
				assert.Equal(t, "unsupported", apiErr.Fields[0].Reason)
				assert.Equal(t, "asset: [redacted]", apiErr.Fields[0].Error(), "the server's reason stays in the field")
				assert.Equal(t, "rid-1", apiErr.RequestID)
				assert.Contains(t, err.Error(), op)
				assert.Contains(t, err.Error(), http.StatusText(tt.status))
				assert.NotContains(t, err.Error(), "RAW-BODY-MARKER", "the raw body never goes into the error string")
				if tt.sentinel != nil {
					assert.ErrorIs(t, err, tt.sentinel)
				}
				for _, other := range []error{travelrule.ErrBadRequest, travelrule.ErrUnauthorized, travelrule.ErrNotFound, travelrule.ErrOutcomeUnknown} {
					if other != tt.sentinel {
						assert.NotErrorIs(t, err, other)
					}
				}
				// A 4xx other than 429 is never retried (a 401 with a
				// static token cannot be cured by a refresh).
				assert.EqualValues(t, 1, ts.hits.Load(), "%s must not retry a %d", op, tt.status)
			}
		})
	}
}

// TestResolveInquiryErrorShowsNoEchoedValue: a resolution sends no
// personal value, so the SDK cannot look for one; a server whose error code
// echoes the beneficiary's wallet address or last name (the inquiry's, which
// the caller holds) must not get it into any printed form of the error.
func TestResolveInquiryErrorShowsNoEchoedValue(t *testing.T) {
	const wallet, lastName = "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", "Quarterfield"
	tests := []struct {
		name, body string
		wantText   string
	}{
		{"wallet address as the error", `{"error":"` + wallet + `"}`,
			"travelrule: ResolveInquiry: 400 Bad Request"},
		{"last name as the error", `{"error":"` + lastName + `"}`,
			"travelrule: ResolveInquiry: 400 Bad Request"},
		{"last name as an envelope code", `{"status":false,"errors":[{"code":"` + strings.ToUpper(lastName) + `","message":"x"}]}`,
			"travelrule: ResolveInquiry: 400 Bad Request"},
		{"wallet address as an error object's code", `{"error":{"code":"` + wallet + `"}}`,
			"travelrule: ResolveInquiry: 400 Bad Request"},
		{"documented code kept", `{"status":false,"errors":[{"code":"TRANSFER_NOT_FOUND","message":"` + lastName + `"}]}`,
			"travelrule: ResolveInquiry: 400 Bad Request: TRANSFER_NOT_FOUND"},
		{"code-shaped code kept", `{"error":"bad_request"}`,
			"travelrule: ResolveInquiry: 400 Bad Request: bad_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := setup(t, answer(400, tt.body))
			_, err := c.ResolveInquiry(context.Background(), "tr-1", &travelrule.InquiryResolution{Approved: "true"})
			var apiErr *travelrule.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.wantText, err.Error())
			var text, jsonLog bytes.Buffer
			slog.New(slog.NewTextHandler(&text, nil)).Info("x", "err", err)
			slog.New(slog.NewJSONHandler(&jsonLog, nil)).Info("x", "err", err)
			for _, out := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), text.String(), jsonLog.String()} {
				assert.NotContains(t, strings.ToLower(out), strings.ToLower(wallet))
				assert.NotContains(t, strings.ToLower(out), strings.ToLower(lastName))
			}
			assert.True(t, errors.Is(err, travelrule.ErrBadRequest))
		})
	}
}

// TestErrorsLogTheirText: %+v (what log/slog's text handler and testify
// print) and both slog handlers show every error type's Error text, the
// advice of an unknown outcome included, never a struct dump alone.
func TestErrorsLogTheirText(t *testing.T) {
	c, _ := setup(t, answer(502, `{"status":false,"errors":[{"code":"INTERNAL_ERROR","message":"down"}]}`))
	_, unknown := c.InitiateTransfer(context.Background(), fullRequest())
	require.ErrorIs(t, unknown, travelrule.ErrOutcomeUnknown)
	c404, _ := setup(t, answer(404, `{"status":false,"errors":[{"code":"NOT_FOUND","message":"no"}]}`))
	_, notFound := c404.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	require.ErrorIs(t, notFound, travelrule.ErrNotFound)
	_, invalid := c.InitiateTransfer(context.Background(), &travelrule.TransferRequest{})
	require.ErrorIs(t, invalid, travelrule.ErrInvalidRequest)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cd, err := travelrule.NewClient(dead.URL, travelrule.WithTokenSource(travelrule.StaticToken(testToken)), travelrule.WithRetryMax(0))
	require.NoError(t, err)
	_, transport := cd.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
	require.Error(t, transport)

	for name, e := range map[string]error{
		"outcome unknown": unknown, "api": notFound, "validation": invalid, "transport": transport,
		"field": travelrule.FieldError{Field: "asset", Reason: "required"}, "code": travelrule.CodeForbidden,
	} {
		t.Run(name, func(t *testing.T) {
			text := e.Error()
			for _, verb := range []string{"%v", "%s", "%+v"} {
				assert.True(t, strings.HasPrefix(fmt.Sprintf(verb, e), text), "%s: %s", verb, fmt.Sprintf(verb, e))
			}
			var tb, jb bytes.Buffer
			slog.New(slog.NewTextHandler(&tb, nil)).Info("x", "err", e)
			assert.Contains(t, tb.String(), fmt.Sprintf("err=%q", text))
			assert.NotContains(t, tb.String(), "Error{", "the text alone, no field dump")
			slog.New(slog.NewJSONHandler(&jb, nil)).Info("x", "err", e)
			if name != "field" { // a FieldError is the JSON object of its wire form
				assert.Contains(t, jb.String(), fmt.Sprintf(`"err":%q`, text))
			}
		})
	}
	assert.Contains(t, unknown.Error(), "reconcile before sending again")
}

// TestOutcomeUnknownIsLoggedAtWarn: with a logger, an unknown outcome is a
// WARN line with the error's text; nothing else of a failed call is.
func TestOutcomeUnknownIsLoggedAtWarn(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, _ := setup(t, answer(502, `{}`), travelrule.WithLogger(log))
	req := fullRequest()
	_, err := c.InitiateTransfer(context.Background(), req)
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	assert.Contains(t, buf.String(), "level=WARN")
	assert.Contains(t, buf.String(), "reconcile before sending again")
	assert.Contains(t, buf.String(), "op=InitiateTransfer")
	assertNoPersonalData(t, buf.String(), req)

	buf.Reset()
	c400, _ := setup(t, answer(400, `{}`), travelrule.WithLogger(log))
	_, err = c400.InitiateTransfer(context.Background(), req)
	require.ErrorIs(t, err, travelrule.ErrBadRequest)
	assert.Empty(t, buf.String(), "a refusal is not a warning")
}

// TestOutcomeUnknownAdviceFitsTheOperation: an unknown outcome's text, and
// its WARN line, give the advice that fits the operation, as its retry
// policy does: an operation the text says may be sent again was retried
// already (two attempts under a budget of one retry); an initiation without
// an Idempotency-Key, which was not, is to be reconciled first.
func TestOutcomeUnknownAdviceFitsTheOperation(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		op       string
		call     func(*travelrule.Client) error
		opts     []travelrule.Option
		advice   string
		attempts int
	}{
		{"InitiateTransfer", func(c *travelrule.Client) error { _, err := c.InitiateTransfer(ctx, fullRequest()); return err }, nil,
			"reconcile before sending again (a transfer may exist; its callbacks name it by CallbackRef, and package journal follows it)", 1},
		{"InitiateTransfer", func(c *travelrule.Client) error { _, err := c.InitiateTransfer(ctx, fullRequest()); return err },
			[]travelrule.Option{travelrule.WithIdempotency()},
			"reconcile before sending again (a transfer may exist; the same IdempotencyKey makes sending again safe only if the service honours it", 2},
		{"ResolveInquiry", func(c *travelrule.Client) error {
			_, err := c.ResolveInquiry(ctx, "t-1", travelrule.Reject())
			return err
		}, nil,
			"the same decision may be sent again (resolving is idempotent)", 2},
		{"SubmitTxID", func(c *travelrule.Client) error { _, err := c.SubmitTxID(ctx, "t-1", "0xfeed"); return err }, nil,
			"the same txId may be submitted again", 2},
		{"GenerateTravelAddress", func(c *travelrule.Client) error {
			_, err := c.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{PersonType: "natural", FirstName: "Alan", LastName: "Turing"})
			return err
		}, nil, "the same request may be sent again (an upsert, which gives the same beneficiary the same address)", 2},
		{"LookupTravelAddress", func(c *travelrule.Client) error {
			_, err := c.LookupTravelAddress(ctx, liveUncheckedAddress)
			return err
		}, nil,
			"it may be sent again (a read)", 2},
		{"SearchVASPs", func(c *travelrule.Client) error {
			_, err := c.SearchVASPs(ctx, &travelrule.VASPQuery{Domain: "example.com"})
			return err
		}, nil, "it may be sent again (a read)", 2},
	}
	for _, tt := range tests {
		name := tt.op
		if len(tt.opts) > 0 {
			name += " WithIdempotency"
		}
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
			c, _ := setup(t, answer(http.StatusBadGateway, `{}`), append(tt.opts, travelrule.WithLogger(log), travelrule.WithRetryMax(1))...)
			err := tt.call(c)
			var unknown *travelrule.OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, tt.op, unknown.Op)
			assert.Equal(t, tt.attempts, unknown.Attempts, "the advice matches the retry policy")
			assert.Contains(t, err.Error(), "outcome unknown after "+fmt.Sprint(tt.attempts)+" attempt(s), "+tt.advice)
			assert.Contains(t, buf.String(), fmt.Sprintf("msg=%q", "travelrule: outcome unknown: "+adviceOf(err)))
			if tt.attempts > 1 && tt.op != "InitiateTransfer" {
				assert.NotContains(t, err.Error(), "reconcile", "an operation that may be sent again is not to be reconciled first")
			}
			assertNoPersonalData(t, buf.String(), fullRequest())
		})
	}
	custom := &travelrule.OutcomeUnknownError{Op: "SomethingNew", Attempts: 1, Err: errors.New("x")}
	assert.Contains(t, custom.Error(), "reconcile before sending again", "an operation it does not know gets the cautious advice")
}

// adviceOf is the advice in the text of an *OutcomeUnknownError.
func adviceOf(err error) string {
	_, rest, _ := strings.Cut(err.Error(), " attempt(s), ")
	advice, _, _ := strings.Cut(rest, ": ")
	return advice
}

// TestFieldErrorsOfEitherSide: one function reads the field faults of a
// refusal before sending and of the service's 400 alike.
func TestFieldErrorsOfEitherSide(t *testing.T) {
	c, ts := setup(t, answer(400, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"bad","field":"originator.country"}]}`))
	_, server := c.InitiateTransfer(context.Background(), fullRequest())
	require.ErrorIs(t, server, travelrule.ErrBadRequest)
	bad := fullRequest()
	bad.Asset = ""
	_, client := c.InitiateTransfer(context.Background(), bad)
	require.ErrorIs(t, client, travelrule.ErrInvalidRequest)
	require.Len(t, ts.requests(), 1, "the invalid request was not sent")

	got := travelrule.FieldErrors(server)
	require.Len(t, got, 1)
	assert.Equal(t, "originator.country", got[0].Field)
	assert.Equal(t, "bad", got[0].Reason)
	got = travelrule.FieldErrors(fmt.Errorf("wrapped: %w", client))
	require.NotEmpty(t, got)
	assert.Equal(t, "asset", got[0].Field)
	assert.Nil(t, travelrule.FieldErrors(errors.New("other")))
	assert.Nil(t, travelrule.FieldErrors(nil))
}

// TestNotFoundNamesTheRoute: a 404 or 405 names the method and the path
// the request went to (a wrong path prefix is then plain), never the
// query, which carries the transfer id.
func TestNotFoundNamesTheRoute(t *testing.T) {
	for _, status := range []int{404, 405} {
		c, _ := setup(t, answer(status, `{}`))
		_, err := c.ResolveInquiry(context.Background(), "secret-transfer-77", &travelrule.InquiryResolution{Approved: "true"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "(POST "+basePath+"/transfers/inquiryResolution)")
		assert.NotContains(t, err.Error(), "secret-transfer-77")
		assert.NotContains(t, err.Error(), "q=")
	}
	for _, h := range []http.HandlerFunc{answer(400, `{}`), answer(404, `{"status":false,"errors":[{"code":"TRANSFER_NOT_FOUND","message":"no"}]}`)} {
		c, _ := setup(t, h)
		_, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true"})
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "POST", "only a 404 or 405 without the service's code names the route")
	}
}

// TestAPIKeyEchoedInARequestIDStaysOut: a server that echoes the client's
// API key, or its start, in X-Request-Id gets it into no error text, no
// %+v and no result.
func TestAPIKeyEchoedInARequestIDStaysOut(t *testing.T) {
	const apiKey = "trp_live_0123456789abcdef"
	for _, status := range []int{200, 400} {
		for _, echo := range []string{"req-" + apiKey, "req-trp_live_0123456789a"} {
			t.Run(fmt.Sprint(status, echo), func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/auth/token" {
						io.WriteString(w, `{"accessToken":"echo-test-token","expiresIn":3600}`)
						return
					}
					w.Header().Set("X-Request-Id", echo)
					w.WriteHeader(status)
					io.WriteString(w, map[int]string{200: `{"status":true}`, 400: `{"status":false,"errors":[{"code":"VALIDATION_ERROR"}]}`}[status])
				}))
				defer srv.Close()
				c, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(apiKey))
				require.NoError(t, err)
				res, err := c.SubmitTxID(context.Background(), "tr-1", "0xabc")
				shown := fmt.Sprintf("%v %+v %+v", err, err, res)
				if res != nil {
					shown += res.RequestID
				}
				assert.NotContains(t, shown, "trp_live_0123456789")
			})
		}
	}
}
