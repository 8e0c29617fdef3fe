package travelruletest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vaspkit/travelrule"
)

// The callbacks of the live service (live-service.md, "Callbacks"): four
// bodies, told apart by their fields, signed with x-data-integrity, and
// retried on the service's schedule.

// DefaultSigningSecret is the signing secret the server signs its callbacks
// with unless [WithCallbackSecret] sets another: a published sandbox value,
// never a secret. The live service keys x-data-integrity with the
// customer's signing secret from its dashboard; verify the sandbox's
// callbacks with callback.NewDataIntegrityVerifier(DefaultSigningSecret).
const DefaultSigningSecret = "sandbox-signing-secret-not-a-secret"

// CallbackKind is which of the live service's four callbacks a delivery
// is. The service sends no type field or header: a receiver tells them
// apart by their fields.
type CallbackKind string

// The kinds of callback the server sends, named as the live service's
// docs name them.
const (
	// KindInquiry is an INQUIRY, to the beneficiary's VASP:
	// {"asset","amount","callback","IVMS101"}, the parties as a nested
	// IVMS101 payload and callback the URL that resolves it
	// (<URL>/transfers/inquiryResolution?q=<transferId>).
	KindInquiry CallbackKind = "INQUIRY"
	// KindInquiryResolution is an INQUIRY_RESOLUTION, to the originator:
	// {"approved":{"address","callback"},"callback"} when approved,
	// {"approved":false,"callback"} when rejected.
	KindInquiryResolution CallbackKind = "INQUIRY_RESOLUTION"
	// KindTransferResolution is a TRANSFER_RESOLUTION, to the originator
	// once the beneficiary's VASP approved:
	// {"transferId","status":"APPROVED","statusComment","callback"}; on a
	// rejection, "REJECTED", only under [WithRejectionResolution].
	KindTransferResolution CallbackKind = "TRANSFER_RESOLUTION"
	// KindTransferConfirmation is a TRANSFER_CONFIRMATION, to the
	// beneficiary's VASP once the transaction's hash is known:
	// {"txid":"<hash>"}.
	KindTransferConfirmation CallbackKind = "TRANSFER_CONFIRMATION"
)

// liveRetryMinutes are the live service's waits, in minutes, before the
// second to the tenth attempt at a callback; after the tenth it gives up.
var liveRetryMinutes = [...]int64{1, 5, 15, 30, 60, 180, 360, 720, 1440}

// liveSchedule is the live service's retry schedule with each minute
// lasting minute.
func liveSchedule(minute time.Duration) []time.Duration {
	out := make([]time.Duration, len(liveRetryMinutes))
	for i, m := range liveRetryMinutes {
		out[i] = time.Duration(m) * minute
	}
	return out
}

// exponentialSchedule is the waits of attempts attempts with exponential
// backoff: min before the second, doubling, at most max.
func exponentialSchedule(attempts int, min, max time.Duration) []time.Duration {
	out := make([]time.Duration, 0, attempts-1)
	wait := min
	for range attempts - 1 {
		out = append(out, wait)
		wait = minDuration(2*wait, max)
	}
	return out
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// retryWait is the wait after the failed attempt number i+1 (counting from
// 1) of a callback on the schedule delays: delays[i], lengthened by the
// receiver's Retry-After, if longer, up to the schedule's next delay
// (delays[i+1], or delays[i] itself after the last but one attempt).
func retryWait(delays []time.Duration, i int, retryAfter time.Duration) time.Duration {
	wait := delays[i]
	if retryAfter > wait {
		bound := delays[min(i+1, len(delays)-1)]
		wait = max(wait, minDuration(retryAfter, bound))
	}
	return wait
}

// inquiryMessage is the body of an INQUIRY.
type inquiryMessage struct {
	Asset    string `json:"asset"`
	Amount   string `json:"amount"`
	Callback string `json:"callback"`
	IVMS101  any    `json:"IVMS101"`
}

// The three small bodies below are written by hand, in the order of their
// fields, as encodeBody writes them (appendString): encoding/json's
// reflection cost more than the rest of an initiation's callbacks.

// approval is the approved member of an approving INQUIRY_RESOLUTION, as
// TRP writes it: {"address":…,"callback":…}, the address left out when
// empty.
type approval struct {
	Address  string
	Callback string
}

func (a *approval) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if a.Address != "" {
		b = append(appendString(append(b, `"address":`...), a.Address), ',')
	}
	b = appendString(append(b, `"callback":`...), a.Callback)
	return append(b, '}')
}

// inquiryResolution is the body of an INQUIRY_RESOLUTION:
// {"approved":…,"callback":…}, approved being the approval, or false
// (Approved nil).
type inquiryResolution struct {
	Approved *approval
	Callback string
}

func (r *inquiryResolution) body() []byte {
	n := 64 + len(r.Callback) // the body's length, but for escapes
	if r.Approved != nil {
		n += len(r.Approved.Address) + len(r.Approved.Callback)
	}
	b := append(make([]byte, 0, n), `{"approved":`...)
	if r.Approved != nil {
		b = r.Approved.appendJSON(b)
	} else {
		b = append(b, "false"...)
	}
	b = appendString(append(b, `,"callback":`...), r.Callback)
	return append(b, '}')
}

// transferResolution is the body of a TRANSFER_RESOLUTION:
// {"transferId":…,"status":…,"statusComment":…,"callback":…}.
type transferResolution struct {
	TransferID    string
	Status        string
	StatusComment string
	Callback      string
}

func (r *transferResolution) body() []byte {
	n := 64 + len(r.TransferID) + len(r.Status) + len(r.StatusComment) + len(r.Callback) // but for escapes
	b := appendString(append(make([]byte, 0, n), `{"transferId":`...), r.TransferID)
	b = appendString(append(b, `,"status":`...), r.Status)
	b = appendString(append(b, `,"statusComment":`...), r.StatusComment)
	b = appendString(append(b, `,"callback":`...), r.Callback)
	return append(b, '}')
}

// transferConfirmation is the body of a TRANSFER_CONFIRMATION:
// {"txid":…}.
type transferConfirmation struct {
	TxID string
}

func (c *transferConfirmation) body() []byte {
	return append(appendString(append(make([]byte, 0, 16+len(c.TxID)), `{"txid":`...), c.TxID), '}')
}

// appendString appends s as a JSON string, as encodeBody writes it: as it
// is between quotes when it needs no escape, else by encodeBody itself.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return append(b, encodeBody(s)...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// The statusComment of a TRANSFER_RESOLUTION [own]: the live docs show
// the field, not its values.
const (
	commentApproved = "approved by the beneficiary's VASP"
	commentRejected = "rejected by the beneficiary's VASP"
)

// encodeBody is v's JSON, without HTML escaping (callback URLs keep their
// '&'), as the body of a callback.
func encodeBody(v any) []byte {
	e := bodyEncoders.Get().(*bodyEncoder)
	defer bodyEncoders.Put(e)
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		// The bodies are made of strings and the IVMS101 model, which
		// always encode.
		panic("travelruletest: encoding a callback: " + err.Error())
	}
	return bytes.Clone(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
}

// bodyEncoder is an encoder of callback bodies and its buffer, reused.
type bodyEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// bodyEncoders holds the bodyEncoders not in use.
var bodyEncoders = sync.Pool{New: func() any {
	e := new(bodyEncoder)
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// resolutionURL is the callback of the INQUIRY about the transfer id: the
// sandbox's own inquiryResolution with the id in q.
func (s *Server) resolutionURL(id string) string {
	return s.URL + "/transfers/inquiryResolution?q=" + id
}

// txIDURL is the callback of an approving INQUIRY_RESOLUTION of the
// transfer id: where the originator submits the transaction's hash.
func (s *Server) txIDURL(id string) string {
	return s.URL + "/transfers/txId?q=" + id
}

// inquiryEvent is the INQUIRY about the transfer id, whose request is req,
// to url.
func (s *Server) inquiryEvent(id, url string, req *travelrule.TransferRequest) *event {
	body := encodeBody(inquiryMessage{
		Asset: req.Asset, Amount: req.Amount, Callback: s.resolutionURL(id), IVMS101: ivms101Of(req),
	})
	return &event{id: newEventID(), kind: KindInquiry, transferID: id, status: StateInquiry, url: url, body: body}
}

// resolutionEvents are the originator's callbacks once the beneficiary's
// VASP decided on the transfer t: the INQUIRY_RESOLUTION, which moves it
// to approved or rejected, then, on an approval, the TRANSFER_RESOLUTION,
// which moves it to completed. A rejection gets its TRANSFER_RESOLUTION
// only under [WithRejectionResolution]: the live docs promise one "once
// the beneficiary VASP approves" and none for a rejection.
func (s *Server) resolutionEvents(t *transferRec, approved bool) []*event {
	cb := t.Request.Callback
	ir := inquiryResolution{Callback: cb}
	tr := transferResolution{TransferID: t.ID, Status: "REJECTED", StatusComment: commentRejected, Callback: cb}
	decided, final := StateRejected, StateRejected
	if approved {
		ir.Approved = &approval{Address: t.wallet, Callback: s.txIDURL(t.ID)}
		tr.Status, tr.StatusComment = "APPROVED", commentApproved
		decided, final = StateApproved, StateCompleted
	}
	evs := make([]*event, 1, 2)
	evs[0] = &event{id: newEventID(), kind: KindInquiryResolution, transferID: t.ID, status: decided, url: cb, body: ir.body(), advance: true}
	if approved || s.cfg.rejectionResolution {
		evs = append(evs, &event{id: newEventID(), kind: KindTransferResolution, transferID: t.ID, status: final, url: cb, body: tr.body(), advance: true})
	}
	return evs
}

// confirmationEvent is the TRANSFER_CONFIRMATION of the transfer t's txId
// to url. It moves the transfer to no other state: its Status is the
// transfer's state when it was queued.
func confirmationEvent(t *transferRec, url string) *event {
	return &event{id: newEventID(), kind: KindTransferConfirmation, transferID: t.ID, status: t.State, url: url,
		body: (&transferConfirmation{TxID: t.TxID}).body()}
}

// madeUpTxHash is the transaction hash of an inquiry the sandbox started,
// approved without a txId of its own: 0x and 64 random hex digits, as an
// Ethereum transaction's.
func madeUpTxHash() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "0x" + hex.EncodeToString(b[:])
}
