// Package livedocs is a test server written from the live service's docs
// alone (../shared/spec/live-service.md), not from the sandbox: the
// originator's side of KYCAID's TRP API 3.2.1 as those pages promise it,
// and no more. Tests of the README and the examples run against it, so
// that code which only works because the sandbox sends more than the live
// service promises fails there.
//
// It answers POST /auth/token (the key in x-api-key; an unwrapped
// {accessToken, expiresIn, expiresAt, tokenType}), and, with the bearer
// JWT, POST /travel-address/generate and /travel-address/decode,
// /transfers/initiate and /transfers/txId?q=, each wrapped
// {"status":true,"data":…}. After an initiation it sends the originator's
// callbacks to the request's callback URL, signed with x-data-integrity
// (the lower-case hex of HMAC-SHA512, keyed with SigningSecret, over the
// standard base64 of the body):
//
//   - a rejection: {"approved":false,"callback":…} alone, the
//     INQUIRY_RESOLUTION, which is all the docs promise for one;
//   - an approval: {"approved":true,"callback":…} and
//     {"transferId","status":"APPROVED","statusComment","callback"}, the
//     TRANSFER_RESOLUTION sent "once the beneficiary VASP approves", both
//     at once, in no order (the docs promise none).
//
// An answer other than 2xx is tried again, a few milliseconds later (the
// live service waits 1 m, 5 m, …).
package livedocs

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// The server's credentials, and the travel address it makes.
const (
	// APIKey is the key the server takes in x-api-key.
	APIKey = "trp_live_key_0123456789abcdef"
	// SigningSecret keys the callbacks' x-data-integrity, as the
	// customer's signing secret does; the docs' own test vector uses it.
	SigningSecret = "whsec-live-signing-secret-0123456789abcdef"
	// TravelAddress is what /travel-address/generate answers: the docs'
	// unchecked example (base58 of a URI ending in t=i, no checksum).
	TravelAddress = "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN"
)

const (
	token    = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ2YXNwIn0.c2ln"
	attempts = 50 // per callback
	pause    = 5 * time.Millisecond
)

// Server is the live service as its docs describe it; its beneficiary's
// VASP approves every transfer or rejects every one.
type Server struct {
	*httptest.Server
	approve bool

	mu          sync.Mutex
	calls       map[string]int    // path → requests answered 2xx
	beneficiary map[string]string // the fields of the last /travel-address/generate
	sent        []Callback
	wg          sync.WaitGroup
}

// Callback is one callback the server sent.
type Callback struct {
	Body   string // the JSON body
	Status int    // the answer to its last attempt, 0 when none was answered
}

// New starts a server whose beneficiary's VASP approves (approve) or
// rejects every transfer. Close it when done.
func New(approve bool) *Server {
	s := &Server{approve: approve, calls: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Calls is the number of requests to path answered 2xx.
func (s *Server) Calls(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[path]
}

// Wait waits until every callback of the transfers initiated so far was
// acknowledged or its attempts ran out, and returns those sent.
func (s *Server) Wait() []Callback {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Callback(nil), s.sent...)
}

// Close waits for the callbacks in flight, then closes the server.
func (s *Server) Close() {
	s.wg.Wait()
	s.Server.Close()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || r.Method != http.MethodPost {
		fail(w, http.StatusBadRequest, "INVALID_REQUEST", "POST a JSON body")
		return
	}
	if r.URL.Path == "/auth/token" {
		if r.Header.Get("X-Api-Key") != APIKey {
			fail(w, http.StatusUnauthorized, "UNAUTHORIZED", "API key missing or unknown")
			return
		}
		s.count(r.URL.Path)
		answer(w, map[string]any{"accessToken": token, "expiresIn": 3600,
			"expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "tokenType": "Bearer"})
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+token {
		fail(w, http.StatusUnauthorized, "UNAUTHORIZED", "JWT missing or invalid")
		return
	}
	var in map[string]any
	if json.Unmarshal(body, &in) != nil && len(body) > 0 {
		fail(w, http.StatusBadRequest, "INVALID_REQUEST", "the body is not JSON")
		return
	}
	switch r.URL.Path {
	case "/travel-address/generate":
		b := map[string]string{}
		for _, k := range []string{"firstName", "lastName", "walletAddress", "externalId"} {
			b[k], _ = in[k].(string)
		}
		s.mu.Lock()
		s.beneficiary = b
		s.mu.Unlock()
		s.wrapped(w, r, map[string]any{"travelAddress": TravelAddress})
	case "/travel-address/decode":
		s.mu.Lock()
		b := s.beneficiary
		s.mu.Unlock()
		if in["travelAddress"] != TravelAddress || b == nil {
			fail(w, http.StatusNotFound, "INVALID_TRAVEL_ADDRESS", "unknown travel address")
			return
		}
		s.wrapped(w, r, b)
	case "/transfers/initiate":
		cb, _ := in["callback"].(string)
		if in["asset"] == nil || cb == "" {
			fail(w, http.StatusBadRequest, "INVALID_REQUEST", "Asset and callback are required")
			return
		}
		id := newID()
		s.wrapped(w, r, map[string]any{"transferId": id})
		s.resolve(id, cb)
	case "/transfers/txId":
		s.wrapped(w, r, map[string]any{})
	default:
		fail(w, http.StatusNotFound, "NOT_FOUND", "no such route")
	}
}

// resolve sends the callbacks of the beneficiary VASP's decision on the
// transfer id to cb.
func (s *Server) resolve(id, cb string) {
	bodies := []any{map[string]any{"approved": false, "callback": cb}}
	if s.approve {
		bodies = []any{
			map[string]any{"approved": true, "callback": cb},
			map[string]any{"transferId": id, "status": "APPROVED", "statusComment": "approved by the beneficiary's VASP", "callback": cb},
		}
	}
	for _, b := range bodies {
		body, err := json.Marshal(b)
		if err != nil {
			panic(err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			status := deliver(cb, body)
			s.mu.Lock()
			s.sent = append(s.sent, Callback{Body: string(body), Status: status})
			s.mu.Unlock()
		}()
	}
}

// deliver posts body to url, signed, until an answer is 2xx or the
// attempts run out, and returns the last status.
func deliver(url string, body []byte) int {
	mac := hmac.New(sha512.New, []byte(SigningSecret))
	mac.Write([]byte(base64.StdEncoding.EncodeToString(body)))
	sig := hex.EncodeToString(mac.Sum(nil))
	status := 0
	for i := 0; i < attempts; i++ {
		if i > 0 {
			time.Sleep(pause) // the live schedule's wait, shortened
		}
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-data-integrity", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		status = resp.StatusCode
		if status >= 200 && status <= 299 {
			break
		}
	}
	return status
}

func (s *Server) count(path string) {
	s.mu.Lock()
	s.calls[path]++
	s.mu.Unlock()
}

// wrapped answers data as the docs show a success.
func (s *Server) wrapped(w http.ResponseWriter, r *http.Request, data any) {
	s.count(r.URL.Path)
	answer(w, map[string]any{"status": true, "data": data})
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers an error as the docs show one.
func fail(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": false, "errors": []map[string]string{{"code": code, "message": message}}})
}

// newID is a transfer's publicId, shaped as the docs' (a UUID).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return strings.Join([]string{h[:8], h[8:12], h[12:16], h[16:20], h[20:]}, "-")
}
