package travelrule_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// liveService is a test server written from ../shared/spec/live-service.md
// (the facts of KYCAID's TRP API 3.2.1 docs), not from our sandbox, which
// shares the SDK's assumptions and so cannot catch them. It mounts the
// service under /v1, as the docs' integration guide does
// (https://api.trp.example.com/v1), and answers:
//
//   - POST /v1/auth/token: the key in x-api-key, no body; unwrapped
//     camelCase {accessToken, expiresIn, expiresAt, tokenType}; 401 for a
//     missing or unknown key, 403 for an inactive or expired one.
//   - every other call: Authorization: Bearer <JWT>; 401 without one, 403
//     for an expired one (the live service's answer, not 401).
//   - success wrapped {"status":true,"data":{…}}; errors
//     {"status":false,"errors":[{"code","message"}]} with the documented
//     codes.
//   - /transfers/initiate, /transfers/inquiryResolution?q=,
//     /travel-address/generate, /travel-address/decode,
//     /transfers/txId?q=, GET /discovery/vasp (criteria in a JSON body, no
//     Authorization needed).
//
// A test changes an answer with handle(path, handler).
type liveService struct {
	*httptest.Server
	t *testing.T

	mu       sync.Mutex
	keys     map[string]string // API key → "active", "inactive", "expired"
	tokens   map[string]bool   // issued token → still valid
	reqs     []recorded
	handlers map[string]http.HandlerFunc
	// The token answer: its fields (a key absent is not sent), and
	// whether it is wrapped in data.
	tokenFields  map[string]any
	tokenWrapped bool
	holdLogin    chan struct{} // closed to let logins answer; nil answers at once

	logins, inFlight, maxInFlight atomic.Int64
}

const (
	liveBase        = "/v1"
	liveKey         = "trp_live_key_0123456789abcdef"
	liveInactiveKey = "trp_live_key_inactive_98765"
	liveExpiredKey  = "trp_live_key_expired_55555"
	liveTransferID  = "019ac452-8660-7061-9b93-8d72eaa11a89"
)

func newLiveService(t *testing.T) *liveService {
	t.Helper()
	s := &liveService{
		t:        t,
		keys:     map[string]string{liveKey: "active", liveInactiveKey: "inactive", liveExpiredKey: "expired"},
		tokens:   map[string]bool{},
		handlers: map[string]http.HandlerFunc{},
		tokenFields: map[string]any{
			"expiresIn": 3600,
			"expiresAt": time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z"),
			"tokenType": "Bearer",
		},
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// client returns a client of the service that logs in with key.
func (s *liveService) client(t *testing.T, key string, opts ...travelrule.Option) *travelrule.Client {
	t.Helper()
	c, err := travelrule.NewClient(s.URL+liveBase, append([]travelrule.Option{
		travelrule.WithAPIKey(key), travelrule.WithRetryWait(time.Millisecond, 5*time.Millisecond),
	}, opts...)...)
	require.NoError(t, err)
	return c
}

// handle replaces the answer at path (after /v1).
func (s *liveService) handle(path string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[path] = h
}

// requests returns the requests received at path (after /v1), or all.
func (s *liveService) requests(path string) []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recorded
	for _, r := range s.reqs {
		if path == "" || r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// expireTokens makes every token issued so far expired: the service
// answers them 403.
func (s *liveService) expireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok := range s.tokens {
		s.tokens[tok] = false
	}
}

// setKey sets an API key's state.
func (s *liveService) setKey(key, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key] = state
}

// liveError writes the live service's error envelope.
func liveError(w http.ResponseWriter, status int, code, msg string) {
	liveJSON(w, status, map[string]any{"status": false, "errors": []map[string]string{{"code": code, "message": msg}}})
}

func liveJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *liveService) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path, ok := strings.CutPrefix(r.URL.Path, liveBase)
	if !ok {
		s.t.Errorf("request outside the base path: %s %s", r.Method, r.URL.Path)
		liveError(w, http.StatusNotFound, "NOT_FOUND", "no such route")
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, recorded{r.Method, path, r.URL.RawQuery, r.Header.Clone(), body})
	h := s.handlers[path]
	s.mu.Unlock()
	if path == "/auth/token" {
		if h != nil {
			h(w, r)
			return
		}
		s.login(w, r, body)
		return
	}
	if path != "/discovery/vasp" && !s.authorized(w, r) {
		return
	}
	if h != nil {
		h(w, r)
		return
	}
	s.answer(w, r, path, body)
}

// login is POST /auth/token.
func (s *liveService) login(w http.ResponseWriter, r *http.Request, body []byte) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.maxInFlight.Load(); n > m && !s.maxInFlight.CompareAndSwap(m, n); m = s.maxInFlight.Load() {
	}
	s.logins.Add(1)
	if s.holdLogin != nil {
		<-s.holdLogin
	}
	if r.Method != http.MethodPost || len(body) != 0 {
		liveError(w, http.StatusBadRequest, "INVALID_REQUEST", "POST without body")
		return
	}
	key := r.Header.Get("X-Api-Key")
	s.mu.Lock()
	state := s.keys[key]
	s.mu.Unlock()
	switch {
	case key == "":
		liveError(w, http.StatusUnauthorized, "UNAUTHORIZED", "API key missing")
		return
	case state == "inactive":
		liveError(w, http.StatusForbidden, "FORBIDDEN", "API key "+key+" is inactive")
		return
	case state == "expired":
		liveError(w, http.StatusForbidden, "FORBIDDEN", "API key expired")
		return
	case state != "active":
		liveError(w, http.StatusUnauthorized, "UNAUTHORIZED", "API key not found: "+key)
		return
	}
	tok := "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ2YXNwIn0.sig" + strconv.FormatInt(s.logins.Load(), 10)
	s.mu.Lock()
	s.tokens[tok] = true
	fields := map[string]any{"accessToken": tok}
	for k, v := range s.tokenFields {
		fields[k] = v
	}
	wrapped := s.tokenWrapped
	s.mu.Unlock()
	if wrapped {
		liveJSON(w, http.StatusOK, map[string]any{"status": true, "data": fields})
		return
	}
	liveJSON(w, http.StatusOK, fields)
}

// authorized checks the bearer JWT as the live service does, and answers
// when it fails.
func (s *liveService) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	valid, known := s.tokens[tok]
	s.mu.Unlock()
	switch {
	case !ok || !known:
		liveError(w, http.StatusUnauthorized, "UNAUTHORIZED", "JWT missing or invalid")
		return false
	case !valid:
		liveError(w, http.StatusForbidden, "FORBIDDEN", "JWT expired")
		return false
	}
	return true
}

// answer is each operation's documented success.
func (s *liveService) answer(w http.ResponseWriter, r *http.Request, path string, body []byte) {
	var in map[string]any
	if len(body) > 0 && json.Unmarshal(body, &in) != nil {
		liveError(w, http.StatusBadRequest, "INVALID_REQUEST", "body is not JSON")
		return
	}
	switch path {
	case "/transfers/initiate":
		if in["asset"] == nil {
			liveError(w, http.StatusBadRequest, "INVALID_REQUEST", "Asset is required")
			return
		}
		liveJSON(w, http.StatusOK, map[string]any{"status": true, "data": map[string]any{"transferId": liveTransferID}})
	case "/transfers/inquiryResolution":
		if r.URL.Query().Get("q") != liveTransferID {
			liveError(w, http.StatusNotFound, "TRANSFER_NOT_FOUND", "no transfer with publicId "+r.URL.Query().Get("q"))
			return
		}
		liveJSON(w, http.StatusOK, map[string]any{"status": true})
	case "/travel-address/generate":
		liveJSON(w, http.StatusOK, map[string]any{"status": true, "data": map[string]any{"travelAddress": liveUncheckedAddress}})
	case "/travel-address/decode":
		if in["travelAddress"] != liveUncheckedAddress {
			liveError(w, http.StatusNotFound, "INVALID_TRAVEL_ADDRESS", "unknown travel address")
			return
		}
		liveJSON(w, http.StatusOK, map[string]any{"status": true, "data": map[string]any{
			"firstName": "Alan", "lastName": "Turing", "walletAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "externalId": "cust-42",
		}})
	case "/transfers/txId":
		if r.URL.Query().Get("q") != liveTransferID {
			liveError(w, http.StatusNotFound, "TRANSFER_NOT_FOUND", "no transfer")
			return
		}
		liveJSON(w, http.StatusOK, map[string]any{"status": true})
	case "/discovery/vasp":
		if r.Method != http.MethodGet || len(in) == 0 {
			liveError(w, http.StatusBadRequest, "VALIDATION_ERROR", "at least one criterion is required")
			return
		}
		liveJSON(w, http.StatusOK, map[string]any{"status": true, "data": map[string]any{"count": 1, "vasps": []map[string]any{
			{"id": "vasp-1", "name": "Example VASP", "domain": "example.com", "country": "DE"},
		}}})
	default:
		liveError(w, http.StatusNotFound, "NOT_FOUND", "no such route")
	}
}
