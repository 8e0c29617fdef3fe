package travelruletest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
)

// The control plane: what Server.StartInquiry, Server.Transfer,
// Server.SetFaults and Server.SetDecision give a Go test, over HTTP, for
// integrators in other languages and tests of a sandbox in another process
// (ControlClient). Its paths are under
// the server's path prefix.
const (
	controlPrefix = "/sandbox/"  // after the path prefix
	inquiriesPath = "inquiries"  // after controlPrefix
	transfersPath = "transfers/" // after controlPrefix, then the transfer's id
)

// maxInquiriesInFlight bounds the inquiries the control plane delivers at
// once; beyond it, POST {base}/sandbox/inquiries answers 503 with
// Retry-After. Each delivery may take the retry schedule's 10 attempts of
// up to 10 s each, about 47 hours on the live schedule.
const maxInquiriesInFlight = 64

// serveControl serves a request to the control plane; rest is its path
// after the server's path prefix and "/sandbox/". Other paths under
// /sandbox/ are not found, as any unknown path.
func (s *Server) serveControl(r *http.Request, rest string) *answer {
	switch rest {
	case inquiriesPath:
		return s.serveStartInquiry(r)
	case faultsPath:
		return s.serveFaults(r)
	case decisionPath:
		return s.serveDecision(r)
	}
	if id, ok := strings.CutPrefix(rest, transfersPath); ok && id != "" && !strings.Contains(id, "/") {
		return s.serveTransferState(r, id)
	}
	return errorAnswer(http.StatusNotFound, codeNotFound, "no such endpoint")
}

// serveStartInquiry is POST {base}/sandbox/inquiries: the checks of the
// operations (method, token, Content-Type, body size), then the body's
// inquiry, started as StartInquiry starts one but not waited for.
func (s *Server) serveStartInquiry(r *http.Request) *answer {
	body, a := s.admit(r)
	if a != nil {
		return a
	}
	req, faults, err := decodeInquiry(body)
	if err == nil {
		faults = s.cfg.travelAddresses.travelAddressFaults(req.TravelAddress, faults)
	}
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	switch {
	case s.ctx.Err() != nil:
		return errorAnswer(http.StatusServiceUnavailable, codeServiceUnavailable, "server closing")
	case s.records.tooManyHeld():
		return errorAnswer(http.StatusServiceUnavailable, codeServiceUnavailable,
			"too many open inquiries beyond the record limit: resolve some first")
	}
	select {
	case s.inquirySlots <- struct{}{}:
	default:
		a := errorAnswer(http.StatusServiceUnavailable, codeServiceUnavailable,
			"too many inquiries being delivered at once ("+strconv.Itoa(cap(s.inquirySlots))+"): try again in a moment")
		a.header = []string{"Retry-After", "1"}
		return a
	}
	id, _ := s.beginInquiry(s.ctx, req.Callback, &req, func() { <-s.inquirySlots })
	out, _ := json.Marshal(struct {
		TransferID string `json:"transferId"`
	}{id})
	return &answer{status: http.StatusCreated, body: out, transferID: id,
		header: []string{"Location", s.absolute(r, s.prefix+controlPrefix+transfersPath+id)}}
}

// absolute returns the absolute URL of path on this server, on the host the
// request r named (so that it holds behind a port mapping), with the
// server's scheme.
func (s *Server) absolute(r *http.Request, path string) string {
	if r.Host == "" {
		return s.origin + path
	}
	scheme, _, _ := strings.Cut(s.origin, "://")
	return scheme + "://" + r.Host + path
}

// wireInquiry is the body of POST {base}/sandbox/inquiries: callback, where
// the inquiry goes, and the fields of an initiation, each optional.
type wireInquiry struct {
	wireTransfer
	// These hide the embedded parties, to tell a party given from one
	// absent.
	Originator  givenParty `json:"originator"`
	Beneficiary givenParty `json:"beneficiary"`
}

// givenParty is a jsonParty that records whether the body gave it (null
// counts as absent).
type givenParty struct {
	jsonParty
	given bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *givenParty) UnmarshalJSON(b []byte) error {
	p.given = b[0] != 'n'
	return p.jsonParty.UnmarshalJSON(b)
}

// sampleInquiry is the transfer of an inquiry whose body gives only its
// callback. The names and dates are those of public figures, not of
// customers; the originator's customer number, a sample, is what makes its
// IVMS101 valid (C1: a natural originator is located or identified, and
// its date of birth is left out of the payload, having no place of birth).
func sampleInquiry() travelrule.TransferRequest {
	return travelrule.TransferRequest{
		Asset:  "BTC",
		Amount: "0.25",
		Originator: travelrule.Party{
			PersonType: "natural", FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09", Country: "US",
			AccountNumber: "sample-customer-1",
		},
		Beneficiary: travelrule.Party{
			PersonType: "natural", FirstName: "Katherine", LastName: "Johnson", DateOfBirth: "1918-08-26", Country: "US",
			WalletAddress: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
		},
	}
}

// decodeInquiry decodes and checks the body of POST {base}/sandbox/inquiries
// by the rules of initiation (decode.go): the fields given replace those of
// sampleInquiry (a party as a whole), and the result must pass
// TransferRequest.Validate (the amount by its length alone, as at
// initiation: validateTransfer). callback is both where the inquiry is sent and
// the inquiry's own callback field. It returns the request, or the faults to
// answer 400 with (err set for a body that is not a JSON object).
func decodeInquiry(body []byte) (travelrule.TransferRequest, []travelrule.FieldError, error) {
	req := sampleInquiry()
	var w wireInquiry
	if err := decodeObject(body, &w); err != nil {
		return req, nil, err
	}
	var t typeFaults
	given := func(dst *string, path string, v jsonString) {
		if v.set || v.bad {
			t.str(dst, path, v)
		}
	}
	given(&req.TravelAddress, "travelAddress", w.TravelAddress)
	given(&req.Email, "email", w.Email)
	given(&req.TxID, "txId", w.TxID)
	given(&req.Asset, "asset", w.Asset)
	given(&req.Amount, "amount", w.Amount)
	given(&req.Callback, "callback", w.Callback)
	for _, p := range []struct {
		dst  *travelrule.Party
		path string
		w    givenParty
	}{{&req.Originator, "originator", w.Originator}, {&req.Beneficiary, "beneficiary", w.Beneficiary}} {
		if p.w.given {
			// Every field of the party is set, those absent to "": a
			// party given replaces the default whole.
			t.party(p.dst, p.path, p.w.jsonParty)
		}
	}
	// As at initiation: present, a travelAddress has 1..255 characters.
	if w.TravelAddress.set && w.TravelAddress.v == "" {
		t = append(t, travelrule.FieldError{Field: "travelAddress", Reason: "shorter than 1 characters"})
	}
	return req, t.merge(validateTransfer(&req)), nil
}

// transferState is the body of GET {base}/sandbox/transfers/{id}: a
// transfer's state and callbacks, without personal data.
type transferState struct {
	TransferID string          `json:"transferId"`
	State      State           `json:"state"`
	Inquiry    bool            `json:"inquiry"`
	Created    string          `json:"created"`
	Updated    string          `json:"updated"`
	Callbacks  []callbackState `json:"callbacks"`
}

// callbackState is a callback of a transferState.
type callbackState struct {
	WebhookID string       `json:"webhookId"`
	Kind      CallbackKind `json:"kind"`
	Status    State        `json:"status"`
	URL       string       `json:"url"`
	Delivered bool         `json:"delivered"`
	Pending   bool         `json:"pending"`
	// NextAttempt is when the next attempt of a pending callback is due,
	// if it waits for one.
	NextAttempt string         `json:"nextAttempt,omitempty"`
	Attempts    []attemptState `json:"attempts"`
}

// attemptState is an attempt of a callbackState.
type attemptState struct {
	Time       string `json:"time"`
	StatusCode int    `json:"statusCode"`
	Error      string `json:"error,omitempty"`
	// Latency is how long the attempt took, as a Go duration ("12.5ms").
	Latency string `json:"latency"`
}

// serveTransferState is GET {base}/sandbox/transfers/{id}.
func (s *Server) serveTransferState(r *http.Request, id string) *answer {
	if r.Method != http.MethodGet {
		return methodNotAllowed(http.MethodGet)
	}
	if a := s.authenticate(r); a != nil {
		return a
	}
	t, finished, sending, ok := s.records.callbacksOf(id)
	if !ok {
		return errorAnswer(http.StatusNotFound, codeTransferNotFound, "no transfer with this id (never made, or no longer kept)")
	}
	out := transferState{
		TransferID: t.ID, State: t.State, Inquiry: t.Inquiry,
		Created: timestamp(t.Created), Updated: timestamp(t.Updated),
		Callbacks: make([]callbackState, 0, len(finished)+len(sending)),
	}
	for _, d := range finished {
		out.Callbacks = append(out.Callbacks, callbackOf(d, false))
	}
	for _, d := range sending {
		cs := callbackOf(d.Delivery, true)
		if !d.next.IsZero() {
			cs.NextAttempt = timestamp(d.next)
		}
		out.Callbacks = append(out.Callbacks, cs)
	}
	body, _ := json.Marshal(out)
	return &answer{status: http.StatusOK, body: body, transferID: t.ID}
}

// callbackOf is the shown form of the delivery d: its URL cut to scheme,
// host and path (the query may carry a capability), and never its body.
func callbackOf(d Delivery, pending bool) callbackState {
	cs := callbackState{WebhookID: d.ID, Kind: d.Kind, Status: d.Status, URL: shownURL(d.URL), Delivered: d.Delivered,
		Pending: pending, Attempts: make([]attemptState, len(d.Attempts))}
	for i, a := range d.Attempts {
		cs.Attempts[i] = attemptState{Time: timestamp(a.Time), StatusCode: a.StatusCode, Error: a.Err, Latency: a.Latency.String()}
	}
	return cs
}

// shownURL is the scheme, host and path of the URL raw, or "" if it does not
// parse: never its user information, query or fragment.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// timestamp is t in RFC 3339, in UTC.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
