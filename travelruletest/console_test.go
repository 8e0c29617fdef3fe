package travelruletest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// consoleServer starts a server with the console and opts, closed when the
// test ends.
func consoleServer(t *testing.T, opts ...travelruletest.Option) *travelruletest.Server {
	t.Helper()
	srv := newServer(t, append([]travelruletest.Option{travelruletest.WithConsole()}, opts...)...)
	require.NotEmpty(t, srv.ConsoleURL())
	return srv
}

// consoleClient is a client of the console that follows no redirect, with
// connections of its own, closed when the test ends.
func consoleClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// consoleDo sends a request to path (and query) of srv's console: a POST
// of form if form is not nil, else a GET; header holds name/value pairs,
// "Host" setting the request's Host.
func consoleDo(t *testing.T, srv *travelruletest.Server, path string, form url.Values, header ...string) rawAnswer {
	t.Helper()
	method := http.MethodGet
	var body io.Reader
	if form != nil {
		method, body = http.MethodPost, strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(srv.ConsoleURL(), "/")+path, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := consoleClient(t).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawAnswer{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// consoleAct posts form to the console's action at path as the page's
// script does (asking for text), and returns the answer.
func consoleAct(t *testing.T, srv *travelruletest.Server, path string, form url.Values) rawAnswer {
	t.Helper()
	return consoleDo(t, srv, path, form, "Accept", "text/plain", "Sec-Fetch-Site", "same-origin")
}

// consoleParts are the parts of the page that GET /console/live renders.
type consoleParts struct {
	Version  uint64 `json:"version"`
	List     string `json:"list"`
	Detail   string `json:"detail"`
	Settings string `json:"settings"`
}

// all is the parts' HTML, one after the other.
func (p consoleParts) all() string { return p.List + p.Detail + p.Settings }

// consoleLive fetches the live parts of srv's console for the query.
func consoleLive(t *testing.T, srv *travelruletest.Server, query string) consoleParts {
	t.Helper()
	a := consoleDo(t, srv, "/console/live?"+query, nil)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	require.Equal(t, "application/json", a.Header.Get("Content-Type"))
	var p consoleParts
	require.NoError(t, json.Unmarshal(a.Body, &p), "body %s", a.Body)
	return p
}

// consoleInitiate initiates req on srv over HTTP and returns the
// transfer's id.
func consoleInitiate(t *testing.T, srv *travelruletest.Server, req *travelrule.TransferRequest) string {
	t.Helper()
	a := post(t, srv.URL+"/transfers/initiate", token(t, srv), req)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	var out struct {
		Data struct {
			TransferID string `json:"transferId"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(a.Body, &out))
	require.NotEmpty(t, out.Data.TransferID)
	return out.Data.TransferID
}

// fragment parses s as HTML inside a div.
func fragment(t *testing.T, s string) *html.Node {
	t.Helper()
	div := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(s), div)
	require.NoError(t, err)
	for _, n := range nodes {
		div.AppendChild(n)
	}
	return div
}

// elements are the elements under n, n included, that match.
func elements(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	if n.Type == html.ElementNode && match(n) {
		out = append([]*html.Node{n}, out...)
	}
	return out
}

// attr is n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasClass reports whether n has the class c.
func hasClass(n *html.Node, c string) bool {
	return strings.Contains(" "+attr(n, "class")+" ", " "+c+" ")
}

// text is the texts under n, joined by spaces, its spaces collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data + " ")
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// noInjection fails if the HTML under n holds an element or attribute that
// no console page has: a script but the console's own, an img, an iframe,
// an svg, or an event handler attribute.
func noInjection(t *testing.T, n *html.Node) {
	t.Helper()
	for _, e := range elements(n, func(*html.Node) bool { return true }) {
		switch e.DataAtom {
		case atom.Script:
			assert.Equal(t, "/console/console.js", attr(e, "src"), "a script")
		case atom.Img, atom.Iframe, atom.Svg, atom.Object, atom.Embed:
			assert.Fail(t, "an injected element", "<%s>", e.Data)
		}
		for _, a := range e.Attr {
			assert.False(t, strings.HasPrefix(strings.ToLower(a.Key), "on"), "an event handler %s on <%s>", a.Key, e.Data)
			assert.NotContains(t, strings.ToLower(a.Val), "javascript:", "attribute %s of <%s>", a.Key, e.Data)
		}
	}
}

// TestConsoleRefusesCrossOrigin: the console's actions refuse requests
// that a browser says come from another origin (or another port), and the
// transfer stays undecided; the same request from the console's own
// origin decides it, and the two resolution callbacks follow.
func TestConsoleRefusesCrossOrigin(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := consoleServer(t)
	srv.SetDecision(travelruletest.DecisionNone)
	id := consoleInitiate(t, srv, validRequest(rc.URL+"/cb"))
	origin := strings.TrimSuffix(srv.ConsoleURL(), "/")
	u, err := url.Parse(origin)
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)
	otherPort := "http://" + u.Hostname() + ":" + strconv.Itoa(port%65535+1)

	approve := url.Values{"decision": {"approve"}}
	for _, tt := range []struct {
		name   string
		header []string
	}{
		{"Sec-Fetch-Site: cross-site", []string{"Sec-Fetch-Site", "cross-site"}},
		{"Sec-Fetch-Site: same-site", []string{"Sec-Fetch-Site", "same-site"}},
		{"an Origin of another port", []string{"Origin", otherPort}},
		{"an Origin of another host", []string{"Origin", "http://evil.example"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := consoleDo(t, srv, "/console/transfers/"+id+"/decision", approve, append([]string{"Accept", "text/plain"}, tt.header...)...)
			assert.Equal(t, http.StatusForbidden, a.Status, "body %s", a.Body)
			assert.Contains(t, string(a.Body), "another origin")
			tr, ok := srv.Transfer(id)
			require.True(t, ok)
			assert.Equal(t, travelruletest.StateReceived, tr.State)
			assert.Contains(t, consoleLive(t, srv, "transfer="+id).Detail, `id="approve"`, "still waits for a decision")
		})
	}
	assert.Empty(t, srv.Callbacks())
	assert.Empty(t, rc.Hits())

	a := consoleDo(t, srv, "/console/transfers/"+id+"/decision", approve, "Accept", "text/plain", "Sec-Fetch-Site", "same-origin", "Origin", origin)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	assert.Equal(t, "approved: the INQUIRY_RESOLUTION and TRANSFER_RESOLUTION callbacks follow\n", string(a.Body))
	ds := waitCallbacks(t, srv, 2)
	require.Len(t, ds, 2)
	assert.Equal(t, resolutionKinds, kinds(ds))
	assert.Equal(t, "approved,completed", statuses(ds))
	for _, d := range ds {
		assert.Equal(t, id, d.TransferID)
		assert.True(t, d.Delivered)
	}
	require.Len(t, rc.Hits(), 2)
	assert.Equal(t, "0xfeedbeef", mustApproval(t, rc.Hits()[0].callback(t).Approved)["address"])
	tr, _ := srv.Transfer(id)
	assert.Equal(t, travelruletest.StateCompleted, tr.State)
	assert.NotContains(t, consoleLive(t, srv, "transfer="+id).Detail, `id="approve"`)
}

// mustApproval decodes an INQUIRY_RESOLUTION's approved object.
func mustApproval(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m), "approved %s", raw)
	return m
}

// TestConsoleSecurityHeaders: every answer of the console, whatever it
// is, forbids framing, other scripts, sniffing and caching.
func TestConsoleSecurityHeaders(t *testing.T) {
	srv := consoleServer(t)
	for _, tt := range []struct {
		name   string
		path   string
		form   url.Values
		header []string
		status int
	}{
		{"the page", "/", nil, nil, http.StatusOK},
		{"the live parts", "/console/live?reveal=1", nil, nil, http.StatusOK},
		{"the script", "/console/console.js", nil, nil, http.StatusOK},
		{"the style", "/console/console.css", nil, nil, http.StatusOK},
		{"an unknown path", "/console/nothing", nil, nil, http.StatusNotFound},
		{"a wrong method", "/console/live", url.Values{}, []string{"Sec-Fetch-Site", "same-origin"}, http.StatusMethodNotAllowed},
		{"an action", "/console/decision", url.Values{"decision": {"reject"}}, []string{"Accept", "text/plain"}, http.StatusOK},
		{"a bad action", "/console/decision", url.Values{"decision": {"maybe"}}, nil, http.StatusBadRequest},
		{"a cross-origin action", "/console/decision", url.Values{"decision": {"reject"}}, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"a host name", "/", nil, []string{"Host", "evil.example"}, http.StatusMisdirectedRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := consoleDo(t, srv, tt.path, tt.form, tt.header...)
			assert.Equal(t, tt.status, a.Status, "body %s", a.Body)
			assertConsoleHeaders(t, a.Header)
		})
	}
	t.Run("the event stream", func(t *testing.T) {
		resp, _, _ := openEvents(t, srv)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assertConsoleHeaders(t, resp.Header)
	})
}

// assertConsoleHeaders checks the console's security headers.
func assertConsoleHeaders(t *testing.T, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		assert.Contains(t, csp, want)
	}
	assert.NotContains(t, csp, "unsafe-inline")
	assert.NotContains(t, csp, "unsafe-eval")
	assert.Equal(t, "DENY", h.Get("X-Frame-Options"))
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.Equal(t, "no-store", h.Get("Cache-Control"))
	assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
}

// markup are texts that would run a script if a page put them in raw.
var markup = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`'><svg onload=alert(1)>`,
	`</td></tr></table><iframe src=javascript:alert(1)>`,
	`{{.View}}<!--`,
}

// TestConsoleEscapes: a transfer whose free texts are markup shows them
// as text, revealed or not, in the page and in its live parts: no element
// or attribute of theirs gets in.
func TestConsoleEscapes(t *testing.T) {
	srv := consoleServer(t, travelruletest.WithTravelAddresses("taHostile"))
	srv.SetDecision(travelruletest.DecisionNone)
	req := validRequest("http://127.0.0.1:1/cb/" + url.PathEscape(markup[1]))
	req.Originator.FirstName, req.Originator.LastName = markup[0], markup[1]
	req.Beneficiary.FirstName, req.Beneficiary.LastName = markup[2], markup[3]
	req.Originator.StreetName, req.Originator.TownName = markup[4], markup[3]
	req.Beneficiary.WalletAddress = markup[1]
	req.TravelAddress = "taHostile"
	id := consoleInitiate(t, srv, req)

	for _, query := range []string{"", "reveal=1", "transfer=" + id, "transfer=" + id + "&reveal=1",
		"transfer=" + url.QueryEscape(markup[0]) + "&reveal=1"} {
		t.Run("?"+query, func(t *testing.T) {
			a := consoleDo(t, srv, "/?"+query, nil)
			require.Equal(t, http.StatusOK, a.Status)
			assert.Equal(t, "text/html; charset=utf-8", a.Header.Get("Content-Type"))
			doc, err := html.Parse(strings.NewReader(string(a.Body)))
			require.NoError(t, err)
			noInjection(t, doc)
			live := consoleLive(t, srv, query)
			for _, part := range []string{live.List, live.Detail, live.Settings} {
				noInjection(t, fragment(t, part))
			}
			for _, body := range []string{string(a.Body), live.all()} {
				assert.NotContains(t, body, "<script>alert")
				assert.NotContains(t, body, "<img src=x")
				assert.NotContains(t, body, "<svg")
				assert.NotContains(t, body, "<iframe")
			}
			if strings.HasPrefix(query, "transfer="+id+"&reveal=1") {
				// Revealed, the texts are there, as text.
				shown := text(fragment(t, live.List+live.Detail))
				for _, h := range markup {
					assert.Contains(t, shown, h)
				}
				assert.Contains(t, text(doc), markup[0])
			}
		})
	}
}

// TestConsoleShowsNoSecret: the page and its live parts never show the
// API key, the signing secret, a bearer token or the callback URL's query
// and user information; without reveal=1 they show no personal value, and
// with it they do.
func TestConsoleShowsNoSecret(t *testing.T) {
	const apiKey, signing = "apikey-PLANTED-7f3a9c11", "signing-PLANTED-0123456789abcdef"
	rc := newReceiver(t, func(*http.Request, []byte, int) int { return http.StatusInternalServerError })
	srv := consoleServer(t, travelruletest.WithAPIKeys(apiKey), travelruletest.WithCallbackSecret([]byte(signing)),
		travelruletest.WithTravelAddresses("taPlantedTravelAddr"), travelruletest.WithCallbackRetry(2, time.Millisecond, time.Millisecond))
	a := login(t, http.MethodPost, srv.LoginURL(), "x-api-key", apiKey)
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	var answer struct {
		Data struct {
			AccessToken string `json:"accessToken"`
		} `json:"data"`
		AccessToken string `json:"accessToken"`
	}
	require.NoError(t, json.Unmarshal(a.Body, &answer))
	bearer := answer.Data.AccessToken + answer.AccessToken
	require.NotEmpty(t, bearer, "body %s", a.Body)

	req := validRequest(strings.Replace(rc.URL, "http://", "http://capuser:cappass@", 1) + "/cb?ref=1&tag=cap-XYZ-planted")
	req.TravelAddress = "taPlantedTravelAddr"
	ia := post(t, srv.URL+"/transfers/initiate", bearer, req)
	require.Equal(t, http.StatusOK, ia.Status, "body %s", ia.Body)
	var out struct {
		Data struct {
			TransferID string `json:"transferId"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(ia.Body, &out))
	id := out.Data.TransferID
	waitCallbacks(t, srv, 2) // given up, each after an error answer

	secrets := []string{apiKey, signing, bearer, "eyJ", "cap-XYZ", "ref=1", "capuser", "cappass", "?tag", travelruletest.DefaultSigningSecret}
	personal := []string{"Ada", "Lovelace", "1815-12-10", "Baker Street", "Alan", "Turing", "1912-06-23", "X1234567",
		"0xfeedbeef", "ada@example.com", "taPlantedTravelAddr"}
	for _, query := range []string{"", "transfer=" + id, "reveal=1", "transfer=" + id + "&reveal=1"} {
		t.Run("?"+query, func(t *testing.T) {
			page := consoleDo(t, srv, "/?"+query, nil)
			require.Equal(t, http.StatusOK, page.Status)
			live := consoleLive(t, srv, query)
			events := readEvents(t, srv, 1)
			for _, body := range []string{string(page.Body), live.all(), events} {
				for _, s := range secrets {
					assert.NotContains(t, body, s)
				}
			}
			revealed := strings.Contains(query, "reveal=1")
			for _, body := range []string{string(page.Body), live.all()} {
				for _, p := range personal {
					if !revealed {
						assert.NotContains(t, body, p)
					}
				}
			}
			if revealed && strings.Contains(query, "transfer=") {
				for _, p := range personal {
					assert.Contains(t, live.Detail, p, "revealed")
				}
			}
			if strings.Contains(query, "transfer=") {
				assert.Contains(t, live.Detail, rc.URL+"/cb", "the callback's scheme, host and path")
			}
		})
	}
}

// openEvents opens srv's console event stream, ended by stop, when the
// test ends, or after 30 seconds (so that a test waiting for an event that
// never comes fails), and returns the answer and a reader of its body.
func openEvents(t *testing.T, srv *travelruletest.Server) (resp *http.Response, r *bufio.Reader, stop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.ConsoleURL()+"console/events", nil)
	require.NoError(t, err)
	resp, err = consoleClient(t).Do(req)
	require.NoError(t, err)
	stop = func() {
		cancel()
		_ = resp.Body.Close()
	}
	t.Cleanup(stop)
	return resp, bufio.NewReader(resp.Body), stop
}

// nextData reads the stream up to its next data event and returns its
// data.
func nextData(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSuffix(data, "\n")
		}
	}
}

// readEvents opens the event stream, reads n data events and returns all
// it read.
func readEvents(t *testing.T, srv *travelruletest.Server, n int) string {
	t.Helper()
	_, r, _ := openEvents(t, srv)
	var all strings.Builder
	for range n {
		all.WriteString(nextData(t, r))
	}
	return all.String()
}

// TestConsoleEvents: the event stream sends the records' version at once,
// another when a transfer arrives, and ends when the server closes.
func TestConsoleEvents(t *testing.T) {
	srv := travelruletest.NewServer(travelruletest.WithConsole(), travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	resp, r, _ := openEvents(t, srv)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "retry: 2000\n", line)
	first, err := strconv.ParseUint(nextData(t, r), 10, 64)
	require.NoError(t, err)

	consoleInitiate(t, srv, validRequest("http://127.0.0.1:1/cb"))
	second, err := strconv.ParseUint(nextData(t, r), 10, 64)
	require.NoError(t, err)
	assert.Greater(t, second, first)
	assert.GreaterOrEqual(t, consoleLive(t, srv, "").Version, second, "the page sees at least what the event said")

	closed := make(chan struct{})
	go func() {
		defer close(closed)
		srv.Close()
	}()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "Close did not return while a console stream was open")
	}
	for err == nil {
		_, err = r.ReadString('\n')
	}
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF), "the stream ends: %v", err)
}

// TestConsoleBoundsStreams: at most 16 event streams are open at once; the
// 17th is answered 503, until one closes.
func TestConsoleBoundsStreams(t *testing.T) {
	srv := consoleServer(t)
	stops := make([]func(), 16)
	for i := range stops {
		resp, r, stop := openEvents(t, srv)
		require.Equal(t, http.StatusOK, resp.StatusCode, "stream %d", i+1)
		nextData(t, r)
		stops[i] = stop
	}
	resp, r, _ := openEvents(t, srv)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	body, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Contains(t, string(body), "too many console pages open")

	stops[0]()
	require.Eventually(t, func() bool {
		resp, _, stop := openEvents(t, srv)
		if resp.StatusCode != http.StatusOK {
			stop()
			return false
		}
		return true
	}, 10*time.Second, 5*time.Millisecond, "a stream closed frees its place")
}

// TestConsoleDecide: the console's Approve and Reject decide a transfer
// that waits for the beneficiary's VASP, once; what cannot be decided is
// refused.
func TestConsoleDecide(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := consoleServer(t)
	decidedBySandbox := consoleInitiate(t, srv, validRequest(rc.URL+"/cb"))
	waitCallbacks(t, srv, 2)
	srv.SetDecision(travelruletest.DecisionNone)
	waiting := func() string { return consoleInitiate(t, srv, validRequest(rc.URL+"/cb")) }
	toApprove, toReject, twice, badDecision := waiting(), waiting(), waiting(), waiting()
	require.Equal(t, http.StatusOK, consoleAct(t, srv, "/console/transfers/"+twice+"/decision", url.Values{"decision": {"reject"}}).Status)

	for _, tt := range []struct {
		name     string
		id       string
		decision string
		status   int
		answer   string
	}{
		{"approve", toApprove, "approve", http.StatusOK, "approved: the INQUIRY_RESOLUTION and TRANSFER_RESOLUTION callbacks follow"},
		{"reject", toReject, "reject", http.StatusOK, "rejected: the INQUIRY_RESOLUTION callback follows"},
		{"unknown id", "6f1c1b51-0b6d-4a47-9b3e-5b1e6c7d8e9f", "approve", http.StatusNotFound, "no transfer with this id is kept"},
		{"decided already, here", twice, "approve", http.StatusConflict, "does not wait"},
		{"decided already, by the sandbox", decidedBySandbox, "reject", http.StatusConflict, "does not wait"},
		{"a bad decision", badDecision, "maybe", http.StatusBadRequest, `decision must be "approve" or "reject"`},
		{"no decision", badDecision, "", http.StatusBadRequest, `decision must be "approve" or "reject"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := consoleAct(t, srv, "/console/transfers/"+tt.id+"/decision", url.Values{"decision": {tt.decision}})
			assert.Equal(t, tt.status, a.Status, "body %s", a.Body)
			assert.Contains(t, string(a.Body), tt.answer)
		})
	}

	waitCallbacks(t, srv, 2+2+1+1) // approvals get two callbacks, rejections one
	for id, want := range map[string]travelruletest.State{
		toApprove: travelruletest.StateCompleted, toReject: travelruletest.StateRejected, twice: travelruletest.StateRejected,
		badDecision: travelruletest.StateReceived, decidedBySandbox: travelruletest.StateCompleted,
	} {
		tr, ok := srv.Transfer(id)
		require.True(t, ok)
		assert.Equal(t, want, tr.State, id)
	}
	detail := fragment(t, consoleLive(t, srv, "transfer="+toApprove).Detail)
	assert.Contains(t, text(detail), "Decision approved by the console's button")
	detail = fragment(t, consoleLive(t, srv, "transfer="+decidedBySandbox).Detail)
	assert.Contains(t, text(detail), "Decision approved by the sandbox")
	waitingDetail := consoleLive(t, srv, "transfer="+badDecision).Detail
	assert.Contains(t, waitingDetail, `action="/console/transfers/`+badDecision+`/decision"`)
	assert.Contains(t, text(fragment(t, consoleLive(t, srv, "").List)), "awaits the counterparty's decision")
}

// TestConsoleDecidesOnce: Approve pressed many times at once decides the
// transfer once, even while its callbacks wait for a worker (every worker
// is held by a receiver that does not answer): until they go, the
// transfer is decided but not yet advanced, and no longer offers Approve.
func TestConsoleDecidesOnce(t *testing.T) {
	entered, release := make(chan struct{}, 64), make(chan struct{})
	rc := newReceiver(t, func(r *http.Request, _ []byte, _ int) int {
		if strings.HasPrefix(r.URL.Path, "/held/") {
			entered <- struct{}{}
			<-release
		}
		return http.StatusNoContent
	})
	srv := consoleServer(t)
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // before the server's and the receiver's Close
	const workers = 32     // callbackWorkers
	for i := range workers {
		consoleInitiate(t, srv, validRequest(rc.URL+"/held/"+strconv.Itoa(i)))
	}
	for range workers {
		<-entered
	}
	srv.SetDecision(travelruletest.DecisionNone)
	raced := consoleInitiate(t, srv, validRequest(rc.URL+"/cb"))

	answers := make(chan int, 16)
	client := consoleClient(t)
	concurrently(16, func() bool {
		req, err := http.NewRequest(http.MethodPost, srv.ConsoleURL()+"console/transfers/"+raced+"/decision", strings.NewReader("decision=approve"))
		if !assert.NoError(t, err) {
			return false
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "text/plain")
		resp, err := client.Do(req)
		if !assert.NoError(t, err) {
			return false
		}
		_ = resp.Body.Close()
		answers <- resp.StatusCode
		return true
	})
	close(answers)
	counts := map[int]int{}
	for status := range answers {
		counts[status]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: 1, http.StatusConflict: 15}, counts)
	tr, ok := srv.Transfer(raced)
	require.True(t, ok)
	assert.Equal(t, travelruletest.StateReceived, tr.State, "its callbacks wait for a worker")
	live := consoleLive(t, srv, "transfer="+raced)
	assert.NotContains(t, live.Detail, `id="approve"`)
	assert.NotContains(t, live.List, "awaits the counterparty")
	assert.Contains(t, text(fragment(t, live.Detail)), "Decision approved by the console's button")

	releaseOnce()
	ds := byTransfer(waitCallbacks(t, srv, 2*workers+2))[raced]
	assert.Equal(t, resolutionKinds, kinds(ds))
	assert.Equal(t, "approved,completed", statuses(ds))
}

// TestConsoleFormsRedirect: a form sent without the page's script (not
// asking for text) is sent back to the page, with the view it came from.
func TestConsoleFormsRedirect(t *testing.T) {
	srv := consoleServer(t, travelruletest.WithoutCallbacks())
	srv.SetDecision(travelruletest.DecisionNone)
	id := consoleInitiate(t, srv, validRequest("http://127.0.0.1:1/cb"))
	for _, tt := range []struct {
		name string
		path string
		form url.Values
		want url.Values
	}{
		{"decide, open and revealed", "/console/transfers/" + id + "/decision",
			url.Values{"decision": {"approve"}, "transfer": {id}, "reveal": {"1"}}, url.Values{"transfer": {id}, "reveal": {"1"}}},
		{"the decision, nothing open", "/console/decision", url.Values{"decision": {"reject"}}, url.Values{}},
		{"the faults, an unknown transfer open", "/console/faults", url.Values{"faults": {"internal"}, "transfer": {"nope"}}, url.Values{}},
		{"the switch, revealed", "/console/faults/switch", url.Values{"on": {"0"}, "reveal": {"1"}}, url.Values{"reveal": {"1"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := consoleDo(t, srv, tt.path, tt.form)
			require.Equal(t, http.StatusSeeOther, a.Status, "body %s", a.Body)
			loc, err := url.Parse(a.Header.Get("Location"))
			require.NoError(t, err)
			assert.Equal(t, "/", loc.Path)
			assert.Equal(t, tt.want, loc.Query())
		})
	}
}

// faultsState is the body of GET {base}/sandbox/faults.
type faultsState struct {
	Faults []struct {
		Kind  string `json:"kind"`
		Fired int    `json:"fired"`
	} `json:"faults"`
	Off bool `json:"off"`
}

// faultsOf fetches srv's faults from its control plane.
func faultsOf(t *testing.T, srv *travelruletest.Server) (faultsState, string) {
	t.Helper()
	a := get(t, srv.URL+"/sandbox/faults", token(t, srv))
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	var fs faultsState
	require.NoError(t, json.Unmarshal(a.Body, &fs), "body %s", a.Body)
	return fs, string(a.Body)
}

// TestConsoleSetsFaults: the faults form takes a fault a line, as
// ParseFault reads them, names the line at fault, and takes at most 64.
func TestConsoleSetsFaults(t *testing.T) {
	srv := consoleServer(t, travelruletest.WithoutCallbacks())
	ok := consoleAct(t, srv, "/console/faults", url.Values{"faults": {" rate-limit:retry-after=2s,times=1\r\n\ninternal:ops=initiate+resolve\n"}})
	require.Equal(t, http.StatusOK, ok.Status, "body %s", ok.Body)
	assert.Equal(t, "2 faults set\n", string(ok.Body))
	fs, _ := faultsOf(t, srv)
	require.Len(t, fs.Faults, 2)
	assert.Equal(t, "rate-limit", fs.Faults[0].Kind)
	assert.Equal(t, "internal", fs.Faults[1].Kind)
	settings := fragment(t, consoleLive(t, srv, "").Settings)
	assert.Contains(t, text(settings), "rate-limit:times=1,retry-after=2s 0 internal:ops=initiate+resolve 0")
	page, err := html.Parse(strings.NewReader(string(consoleDo(t, srv, "/", nil).Body)))
	require.NoError(t, err)
	area := elements(page, func(n *html.Node) bool { return n.DataAtom == atom.Textarea })
	require.Len(t, area, 1)
	assert.Equal(t, "rate-limit:times=1,retry-after=2s\ninternal:ops=initiate+resolve", area[0].FirstChild.Data, "the form holds the faults set")

	many := strings.Repeat("latency:latency=1ms\n", 64)
	for _, tt := range []struct {
		name, faults, want string
	}{
		{"an unknown kind", "internal\n\nnope:times=1", "line 3: unknown fault kind \"nope\""},
		{"a bad key", "latency:latency=1ms\r\ninternal:when=now", "line 2: internal: unknown key \"when\""},
		{"a bad value", "internal:rate=2", "line 1: internal: rate=2: want a number above 0 and at most 1"},
		{"65 faults", many + "internal", "at most 64 faults"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := consoleAct(t, srv, "/console/faults", url.Values{"faults": {tt.faults}})
			assert.Equal(t, http.StatusBadRequest, a.Status, "body %s", a.Body)
			assert.True(t, strings.HasPrefix(string(a.Body), tt.want), "body %s", a.Body)
			assert.NotContains(t, string(a.Body), "travelruletest:")
			fs, _ := faultsOf(t, srv)
			assert.Len(t, fs.Faults, 2, "the faults set stay")
		})
	}
	a := consoleAct(t, srv, "/console/faults", url.Values{"faults": {many}})
	assert.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	fs, _ = faultsOf(t, srv)
	assert.Len(t, fs.Faults, 64)
	a = consoleAct(t, srv, "/console/faults", url.Values{"faults": {""}})
	assert.Equal(t, "0 faults set\n", string(a.Body))
	fs, _ = faultsOf(t, srv)
	assert.Empty(t, fs.Faults)
}

// TestConsoleFaultSwitch: the switch holds the faults set off, keeping
// them, and turns them on again; the control plane says when they are
// off.
func TestConsoleFaultSwitch(t *testing.T) {
	srv := consoleServer(t, travelruletest.WithoutCallbacks())
	require.Equal(t, http.StatusOK, consoleAct(t, srv, "/console/faults", url.Values{"faults": {"internal:ops=initiate"}}).Status)
	initiate := func() int {
		return post(t, srv.URL+"/transfers/initiate", token(t, srv), validRequest("http://127.0.0.1:1/cb")).Status
	}
	require.Equal(t, http.StatusInternalServerError, initiate())

	a := consoleAct(t, srv, "/console/faults/switch", url.Values{"on": {"0"}})
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	assert.Equal(t, "fault injection off\n", string(a.Body))
	fs, raw := faultsOf(t, srv)
	assert.True(t, fs.Off, "body %s", raw)
	require.Len(t, fs.Faults, 1, "kept")
	assert.Equal(t, 1, fs.Faults[0].Fired)
	assert.Equal(t, http.StatusOK, initiate())
	assert.Contains(t, text(fragment(t, consoleLive(t, srv, "").Settings)), "Fault injection off")

	a = consoleAct(t, srv, "/console/faults/switch", url.Values{"on": {"1"}})
	require.Equal(t, http.StatusOK, a.Status, "body %s", a.Body)
	assert.Equal(t, "fault injection on\n", string(a.Body))
	fs, raw = faultsOf(t, srv)
	assert.False(t, fs.Off)
	assert.NotContains(t, raw, `"off"`)
	assert.Equal(t, http.StatusInternalServerError, initiate())
	fs, _ = faultsOf(t, srv)
	assert.Equal(t, 2, fs.Faults[0].Fired)

	// Setting faults turns injection on again.
	require.Equal(t, http.StatusOK, consoleAct(t, srv, "/console/faults/switch", url.Values{"on": {"0"}}).Status)
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 1, Ops: travelruletest.OpInitiate})
	fs, _ = faultsOf(t, srv)
	assert.False(t, fs.Off)
	assert.Equal(t, http.StatusInternalServerError, initiate())

	for _, on := range []string{"", "yes", "2"} {
		a := consoleAct(t, srv, "/console/faults/switch", url.Values{"on": {on}})
		assert.Equal(t, http.StatusBadRequest, a.Status, "on=%q", on)
	}
}

// TestConsoleSetsDecision: the decision form sets the decision on the
// transfers initiated from then on.
func TestConsoleSetsDecision(t *testing.T) {
	srv := consoleServer(t, travelruletest.WithoutCallbacks())
	for _, tt := range []struct {
		decision  string
		status    int
		callbacks int                  // of a transfer initiated then
		state     travelruletest.State // of that transfer, once its callbacks went
	}{
		{"none", http.StatusOK, 0, travelruletest.StateReceived},
		{"reject", http.StatusOK, 1, travelruletest.StateRejected},
		{"approve", http.StatusOK, 2, travelruletest.StateCompleted},
		{"maybe", http.StatusBadRequest, 2, travelruletest.StateCompleted},
		{"", http.StatusBadRequest, 2, travelruletest.StateCompleted},
	} {
		t.Run(tt.decision, func(t *testing.T) {
			a := consoleAct(t, srv, "/console/decision", url.Values{"decision": {tt.decision}})
			require.Equal(t, tt.status, a.Status, "body %s", a.Body)
			if tt.status == http.StatusOK {
				assert.Equal(t, "the sandbox now decides "+tt.decision+" on the transfers initiated\n", string(a.Body))
				assert.Equal(t, tt.decision, text(elements(fragment(t, consoleLive(t, srv, "").Settings), func(n *html.Node) bool {
					return attr(n, "id") == "decision-now"
				})[0]))
			}
			n := srv.Stats().Callbacks
			id := consoleInitiate(t, srv, validRequest("http://127.0.0.1:1/cb"))
			waitCallbacks(t, srv, n+tt.callbacks)
			tr, _ := srv.Transfer(id)
			assert.Equal(t, tt.state, tr.State)
		})
	}
}

// attemptsOf finds the timeline step titled title in the detail, and
// returns its outcome line and its attempts' cells, a row each.
func attemptsOf(t *testing.T, detail, title string) (line string, rows [][]string, step *html.Node) {
	t.Helper()
	steps := elements(fragment(t, detail), func(n *html.Node) bool {
		return n.DataAtom == atom.Li && hasClass(n, "event") && strings.Contains(text(n), title)
	})
	require.Len(t, steps, 1, "the step %q in %s", title, detail)
	step = steps[0]
	line = text(elements(step, func(n *html.Node) bool { return n.DataAtom == atom.P })[0])
	for _, tr := range elements(step, func(n *html.Node) bool { return n.DataAtom == atom.Tr && n.Parent.DataAtom == atom.Tbody }) {
		var cells []string
		for _, td := range elements(tr, func(n *html.Node) bool { return n.DataAtom == atom.Td }) {
			cells = append(cells, text(td))
		}
		rows = append(rows, cells)
	}
	return line, rows, step
}

var latencyCell = regexp.MustCompile(`^[0-9]+\.[0-9] ms$`)

// TestConsoleTimelineAttempts: the timeline shows every attempt at a
// callback with its answer and latency, as the control plane does.
func TestConsoleTimelineAttempts(t *testing.T) {
	rc := newReceiver(t, func(_ *http.Request, _ []byte, prior int) int {
		if prior == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	srv := consoleServer(t, travelruletest.WithCallbackTimeScale(time.Millisecond))
	id := consoleInitiate(t, srv, validRequest(rc.URL+"/cb"))
	waitCallbacks(t, srv, 2)

	detail := consoleLive(t, srv, "transfer="+id).Detail
	for _, kind := range []string{"INQUIRY_RESOLUTION", "TRANSFER_RESOLUTION"} {
		line, rows, step := attemptsOf(t, detail, kind+" callback")
		assert.Contains(t, line, "delivered (announces ")
		assert.False(t, hasClass(step, "bad"))
		require.Len(t, rows, 2, kind)
		for i, want := range []string{"500", "204"} {
			require.Len(t, rows[i], 4)
			assert.Equal(t, strconv.Itoa(i+1), rows[i][0])
			assert.Equal(t, want, rows[i][2])
			assert.Regexp(t, latencyCell, rows[i][3])
		}
	}
	assert.NotContains(t, detail, "Next attempt at")

	_, raw := stateOf(t, srv, id)
	var st struct {
		Callbacks []struct {
			Attempts []struct {
				Latency string `json:"latency"`
			} `json:"attempts"`
		} `json:"callbacks"`
	}
	require.NoError(t, json.Unmarshal(raw, &st))
	require.Len(t, st.Callbacks, 2)
	for _, cb := range st.Callbacks {
		require.Len(t, cb.Attempts, 2)
		for _, a := range cb.Attempts {
			d, err := time.ParseDuration(a.Latency)
			require.NoError(t, err)
			assert.Positive(t, d)
		}
	}
	for _, d := range srv.Callbacks() {
		for _, a := range d.Attempts {
			assert.Positive(t, a.Latency)
		}
	}
}

// TestConsoleTimelineNextAttempt: while a callback waits for its retry,
// its step shows when the next attempt is due, as the control plane's
// nextAttempt does.
func TestConsoleTimelineNextAttempt(t *testing.T) {
	rc := newReceiver(t, func(*http.Request, []byte, int) int { return http.StatusInternalServerError })
	srv := consoleServer(t, travelruletest.WithCallbackRetry(2, time.Hour, time.Hour))
	id := consoleInitiate(t, srv, validRequest(rc.URL+"/cb"))

	var next string
	require.Eventually(t, func() bool {
		_, raw := stateOf(t, srv, id)
		var st struct {
			Callbacks []struct {
				Pending     bool   `json:"pending"`
				NextAttempt string `json:"nextAttempt"`
			} `json:"callbacks"`
		}
		require.NoError(t, json.Unmarshal(raw, &st))
		if len(st.Callbacks) == 1 && st.Callbacks[0].Pending {
			next = st.Callbacks[0].NextAttempt
		}
		return next != ""
	}, 10*time.Second, time.Millisecond, "the first attempt fails and the next is due")
	due, err := time.Parse(time.RFC3339Nano, next)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(time.Hour), due, time.Minute)

	detail := consoleLive(t, srv, "transfer="+id).Detail
	line, rows, step := attemptsOf(t, detail, "INQUIRY_RESOLUTION callback")
	assert.Contains(t, line, "retrying (announces approved)")
	assert.True(t, hasClass(step, "bad"))
	require.Len(t, rows, 1)
	assert.Equal(t, "500", rows[0][2])
	nexts := elements(step, func(n *html.Node) bool { return n.DataAtom == atom.P && hasClass(n, "next") })
	require.Len(t, nexts, 1)
	assert.Equal(t, "Next attempt at "+due.UTC().Format("15:04:05.000")+" UTC", text(nexts[0]))
	times := elements(nexts[0], func(n *html.Node) bool { return n.DataAtom == atom.Time })
	require.Len(t, times, 1)
	assert.Equal(t, next, attr(times[0], "datetime"))
}

// TestConsoleOff: a server without WithConsole serves no console: "/" is
// a path of the service, answered 404 and recorded as before.
func TestConsoleOff(t *testing.T) {
	srv := newServer(t, travelruletest.WithoutCallbacks())
	assert.Empty(t, srv.ConsoleURL())
	for _, path := range []string{"/", "/console/live"} {
		a := get(t, srv.URL+path, "")
		assert.Equal(t, http.StatusNotFound, a.Status, path)
		assert.Empty(t, a.Header.Get("Content-Security-Policy"), path)
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "/", reqs[0].Path)
	assert.Equal(t, http.StatusNotFound, reqs[0].Status)
	assert.Equal(t, "/console/live", reqs[1].Path)
}

// TestConsoleIsNotTheService: the console's requests are neither recorded
// nor hit by faults, even faults on every operation.
func TestConsoleIsNotTheService(t *testing.T) {
	srv := consoleServer(t, travelruletest.WithoutCallbacks(), travelruletest.WithFaults(
		travelruletest.Fault{Kind: travelruletest.FaultDrop, Rate: 1},
		travelruletest.Fault{Kind: travelruletest.FaultUnavailable, Rate: 1},
	))
	for _, path := range []string{"/", "/console/live", "/console/console.js", "/console/nothing"} {
		a := consoleDo(t, srv, path, nil)
		assert.NotEqual(t, http.StatusServiceUnavailable, a.Status, path)
	}
	a := consoleAct(t, srv, "/console/decision", url.Values{"decision": {"none"}})
	assert.Equal(t, http.StatusOK, a.Status)
	resp, r, _ := openEvents(t, srv)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	nextData(t, r)
	assert.Empty(t, srv.Requests())
	st := srv.Stats()
	assert.Empty(t, st.ByFault)
	assert.Empty(t, st.ByStatus)
	assert.Zero(t, st.InFlight, "an open page's event stream is not a request in flight")
}

// TestConsoleHost: the console answers an IP address or localhost as the
// Host, and refuses another name (a DNS rebinding) with 421.
func TestConsoleHost(t *testing.T) {
	srv := consoleServer(t)
	u, err := url.Parse(srv.ConsoleURL())
	require.NoError(t, err)
	for _, tt := range []struct {
		host   string
		status int
	}{
		{u.Host, http.StatusOK},
		{"[::1]:" + u.Port(), http.StatusOK},
		{"localhost:" + u.Port(), http.StatusOK},
		{"app.localhost", http.StatusOK},
		{"evil.example", http.StatusMisdirectedRequest},
		{"evil.example:" + u.Port(), http.StatusMisdirectedRequest},
		{"localhost.evil.example", http.StatusMisdirectedRequest},
	} {
		t.Run(tt.host, func(t *testing.T) {
			a := consoleDo(t, srv, "/", nil, "Host", tt.host)
			assert.Equal(t, tt.status, a.Status, "body %s", a.Body)
			if tt.status != http.StatusOK {
				assert.Contains(t, string(a.Body), "not a host name")
			}
		})
	}
}

// TestWithConsoleRefusals: the console's paths cannot be the service's,
// and an invalid prefix of clients is refused.
func TestWithConsoleRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []travelruletest.Option
		want string
	}{
		{"prefix /console", []travelruletest.Option{travelruletest.WithConsole(), travelruletest.WithPathPrefix("/console")},
			`travelruletest: WithConsole: the path prefix "/console" is the console's`},
		{"prefix /console, given first", []travelruletest.Option{travelruletest.WithPathPrefix("/console"), travelruletest.WithConsole()},
			`travelruletest: WithConsole: the path prefix "/console" is the console's`},
		{"prefix under /console/", []travelruletest.Option{travelruletest.WithConsole(), travelruletest.WithPathPrefix("/console/api")},
			`travelruletest: WithConsole: the path prefix "/console/api" is the console's`},
		{"an invalid prefix", []travelruletest.Option{travelruletest.WithConsole(netip.Prefix{})},
			"travelruletest: WithConsole: an invalid address prefix"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.PanicsWithError(t, tt.want, func() { travelruletest.NewServer(tt.opts...).Close() })
		})
	}
	srv := travelruletest.NewServer(travelruletest.WithConsole(netip.MustParsePrefix("10.0.0.0/8")), travelruletest.WithPathPrefix("/consoles"))
	defer srv.Close()
	assert.Equal(t, http.StatusOK, consoleDo(t, srv, "/", nil).Status)
}

// TestConsoleRefusesUnreadableForms: a form body that does not parse, or
// is too long, is a 400 and changes nothing (it is not an empty fault
// list).
func TestConsoleRefusesUnreadableForms(t *testing.T) {
	srv := consoleServer(t)
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 1, Ops: travelruletest.OpSubmitTxID})
	for _, tt := range []struct {
		name string
		body string
	}{
		{"not URL-encoded", "faults=%zz"},
		{"too long", "faults=" + strings.Repeat("a", 70<<10)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.ConsoleURL()+"console/faults", strings.NewReader(tt.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := consoleClient(t).Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			fs, _ := faultsOf(t, srv)
			assert.Len(t, fs.Faults, 1, "the faults set stay")
		})
	}
}

// TestConsoleRefusesCrossSiteReads: the live data and the event stream
// answer the console's own page (and requests with no Sec-Fetch-Site),
// not a page of another origin.
func TestConsoleRefusesCrossSiteReads(t *testing.T) {
	srv := consoleServer(t)
	for _, path := range []string{"/console/live", "/console/events"} {
		for _, tt := range []struct {
			site string
			want int
		}{{"cross-site", http.StatusForbidden}, {"same-site", http.StatusForbidden}, {"same-origin", http.StatusOK}, {"", http.StatusOK}} {
			t.Run(path+" "+tt.site, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(srv.ConsoleURL(), "/")+path, nil)
				require.NoError(t, err)
				if tt.site != "" {
					req.Header.Set("Sec-Fetch-Site", tt.site)
				}
				resp, err := consoleClient(t).Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				assert.Equal(t, tt.want, resp.StatusCode)
			})
		}
	}
}
