package travelruletest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// jsonEndpoints are the endpoints whose bodies must be declared JSON, each
// with a body it accepts and the status of its success.
func jsonEndpoints(t *testing.T, srv *travelruletest.Server) []struct {
	name, path string
	body       any
	ok         int
} {
	t.Helper()
	rc := newReceiver(t, nil)
	id, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://vasp.example/cb"))
	require.NoError(t, err)
	return []struct {
		name, path string
		body       any
		ok         int
	}{
		{"initiate", "/transfers/initiate", validRequest("https://vasp.example/cb"), http.StatusOK},
		{"inquiryResolution", "/transfers/inquiryResolution?q=" + id, `{"approved":"true"}`, http.StatusOK},
		{"sandbox/inquiries", "/sandbox/inquiries", map[string]string{"callback": rc.URL}, http.StatusCreated},
	}
}

func TestUnsupportedMediaType(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	refused := []struct{ name, contentType string }{
		{"absent", ""},
		{"text/plain", "text/plain"},
		{"text/plain with charset", "text/plain; charset=utf-8"},
		{"form", "application/x-www-form-urlencoded"},
		{"multipart", "multipart/form-data; boundary=x"},
		{"text/json", "text/json"},
		{"a +json type", "application/problem+json"},
		{"no subtype", "application"},
	}
	for _, ep := range jsonEndpoints(t, srv) {
		for _, ct := range refused {
			t.Run(ep.name+"/"+ct.name, func(t *testing.T) {
				before := len(srv.Transfers())
				a := post(t, srv.URL+ep.path, tok, ep.body, "Content-Type", ct.contentType)
				require.Equal(t, http.StatusUnsupportedMediaType, a.Status, "body %s", a.Body)
				code, msg, fields := a.errorBody(t)
				assert.Equal(t, "UNSUPPORTED_MEDIA_TYPE", code)
				assert.Contains(t, msg, "Content-Type: application/json", "the message says what to send")
				assert.Empty(t, fields)
				assert.Equal(t, "application/json", a.Header.Get("Accept-Post"))
				assert.NotEmpty(t, a.Header.Get("X-Request-Id"))
				assert.Len(t, srv.Transfers(), before, "nothing was acted on")
			})
		}
	}
	for _, ep := range jsonEndpoints(t, srv) {
		for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;Charset=UTF-8", "application/json; charset"} {
			t.Run(ep.name+"/accepts "+ct, func(t *testing.T) {
				a := post(t, srv.URL+ep.path, tok, ep.body, "Content-Type", ct)
				assert.Equal(t, ep.ok, a.Status, "body %s", a.Body)
			})
		}
	}
}

// TestMediaTypeCheckOrder: the method is checked first, then the token,
// then the Content-Type, then the body.
func TestMediaTypeCheckOrder(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	tok := token(t, srv)
	for _, ep := range jsonEndpoints(t, srv) {
		t.Run(ep.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPut, srv.URL+ep.path, nil)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "text/plain")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "method before token and Content-Type")

			a := post(t, srv.URL+ep.path, "", ep.body, "Content-Type", "text/plain")
			assert.Equal(t, http.StatusUnauthorized, a.Status, "token before Content-Type")

			a = post(t, srv.URL+ep.path, tok, "not json", "Content-Type", "text/plain")
			assert.Equal(t, http.StatusUnsupportedMediaType, a.Status, "Content-Type before the body")
		})
	}
}

// TestClientSendsJSON: the SDK's client declares exactly application/json,
// so the sandbox's check refuses nothing of ours.
func TestClientSendsJSON(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	c := newClient(t, srv)
	res, err := c.InitiateTransfer(context.Background(), validRequest("https://vasp.example/cb"))
	require.NoError(t, err)
	_, err = c.ResolveInquiry(context.Background(), res.TransferID, &travelrule.InquiryResolution{Approved: "true"})
	require.ErrorIs(t, err, travelrule.ErrNotFound, "sent, and refused for its id only")
	rs := srv.Requests()
	require.Len(t, rs, 2)
	for _, r := range rs {
		assert.Equal(t, []string{"application/json"}, r.Header.Values("Content-Type"), "%s", r.Path)
	}
}
