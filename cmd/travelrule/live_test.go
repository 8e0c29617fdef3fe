package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A test double of the live service, written from
// /work/shared/spec/live-service.md: POST /auth/token takes the API key in
// x-api-key and answers the documented unwrapped camelCase token; every
// other call needs "Authorization: Bearer <token>" and gets the answer the
// test gives for its path. Refusals are the documented envelope
// {"status":false,"errors":[{"code","message"}]}.

// Planted values: a test that finds one in the command's output fails.
const (
	liveAPIKey = "trk_live_PLANTED_API_KEY_4f1c"
	liveToken  = "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.PLANTED-TOKEN-PAYLOAD.PLANTED-SIG"
)

// The documented answers.
const (
	liveTokenBody = `{"accessToken":"` + liveToken + `","expiresIn":3600,"expiresAt":"2026-05-11T10:00:00.000Z","tokenType":"Bearer"}`
	// The service's examples of travel addresses.
	uncheckedTA   = "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN"
	opaqueTA      = "taCFLQmuE6GqfR2jRM6m8qF7b9V8PjhzGiED4KmteccXagHRPKVDbLSKe9MwF755NJuKL5Q1CJ1zmXDm2m7crZBUJ7pPfDCoKL1n"
	placeholderTA = "ta1qexamplebeneficiaryvasp1ahjk23"
	uncheckedURI  = "trp.your-domain.com/transfers/inquiry/019ac452-8660-7061-9b93-8d72eaa11a89?t=i"
	liveGenerate  = `{"status":true,"data":{"travelAddress":"` + uncheckedTA + `"}}`
)

// liveAnswer is what the double answers a call.
type liveAnswer struct {
	status int // liveDrop: none
	body   string
}

// liveDrop is the status of an answer that never comes: the double records
// the request (the service stored it) and closes the connection.
const liveDrop = -1

// liveRequest is a request the double received.
type liveRequest struct {
	method, path, query string
	header              http.Header
	body                string
}

// liveService is the double: answers by path, and the requests it got.
type liveService struct {
	URL     string
	answers map[string]liveAnswer

	mu       sync.Mutex
	requests []liveRequest
}

// newLiveService starts the double until the test ends. answers holds the
// answer of each path; /auth/token defaults to the documented token.
func newLiveService(t *testing.T, answers map[string]liveAnswer) *liveService {
	t.Helper()
	ls := &liveService{answers: map[string]liveAnswer{"/auth/token": {http.StatusOK, liveTokenBody}}}
	for p, a := range answers {
		ls.answers[p] = a
	}
	srv := httptest.NewServer(http.HandlerFunc(ls.serve))
	t.Cleanup(srv.Close)
	ls.URL = srv.URL
	return ls
}

func (ls *liveService) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ls.mu.Lock()
	ls.requests = append(ls.requests, liveRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
	ls.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch {
	case r.Method != http.MethodPost && r.URL.Path != "/discovery/vasp":
		refuse(w, http.StatusMethodNotAllowed, "INVALID_REQUEST", "method not allowed")
		return
	case r.URL.Path == "/auth/token" && r.Header.Get("X-Api-Key") == "":
		refuse(w, http.StatusUnauthorized, "UNAUTHORIZED", "API key missing")
		return
	case r.URL.Path == "/auth/token" && r.Header.Get("X-Api-Key") != liveAPIKey:
		refuse(w, http.StatusUnauthorized, "UNAUTHORIZED", "API key not recognised")
		return
	case r.URL.Path != "/auth/token" && r.Header.Get("Authorization") != "Bearer "+liveToken:
		refuse(w, http.StatusUnauthorized, "UNAUTHORIZED", "JWT missing")
		return
	}
	a, ok := ls.answers[r.URL.Path]
	if !ok {
		refuse(w, http.StatusNotFound, "NOT_FOUND", "no such path")
		return
	}
	if a.status == liveDrop {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

// refuse answers with the documented error envelope.
func refuse(w http.ResponseWriter, status int, code, message string) {
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"status":false,"errors":[{"code":"`+code+`","message":"`+message+`"}]}`)
}

// received returns the requests to path, in order.
func (ls *liveService) received(path string) []liveRequest {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []liveRequest
	for _, r := range ls.requests {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

// env is the environment of a shell that logs in to the double with its
// API key.
func (ls *liveService) env() map[string]string {
	return map[string]string{"TRAVELRULE_BASE_URL": ls.URL, "TRAVELRULE_API_KEY": liveAPIKey}
}

// assertNoSecrets fails the test if out holds the key, the token, or any
// of more.
func assertNoSecrets(t *testing.T, out string, more ...string) {
	t.Helper()
	for _, s := range append([]string{liveAPIKey, liveToken, "PLANTED"}, more...) {
		if strings.Contains(out, s) {
			t.Errorf("the output holds %q:\n%s", s, out)
		}
	}
}
