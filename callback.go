package travelrule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrMalformedCallback means a callback body is not a JSON object. It is the
// only reason [ParseCallback] fails.
var ErrMalformedCallback = errors.New("travelrule: malformed callback")

// CallbackKind says which message a callback carries. The description does
// not show the callback body (part 4.3), so the kind is inferred from the
// fields present; see [ParseCallback].
type CallbackKind string

// The kinds of callback [ParseCallback] recognises.
const (
	// KindStatus is a status callback:
	// {"transferId":"…","status":"…","txId":"…","timestamp":"…"}.
	KindStatus CallbackKind = "status"
	// KindInquiry is an inbound inquiry: the fields of a transfer
	// initiation request plus "transferId" and "status":"inquiry". Answer
	// it with [Client.ResolveInquiry].
	KindInquiry CallbackKind = "inquiry"
	// KindApproved is a Travel Rule Protocol (TRP) approval relayed by the
	// service: {"approved":{"address":"…","callback":"…"}}.
	KindApproved CallbackKind = "approved"
	// KindRejected is a TRP rejection: {"rejected":"reason"}.
	KindRejected CallbackKind = "rejected"
	// KindTxID is a TRP transaction confirmation: {"txid":"…"}.
	KindTxID CallbackKind = "txid"
	// KindCanceled is a TRP cancellation: {"canceled":"reason"}.
	KindCanceled CallbackKind = "canceled"
	// KindUnknown is any other JSON object. Its fields are in Raw.
	KindUnknown CallbackKind = "unknown"
)

// Callback is one callback request from the service, as decoded by
// [ParseCallback]. Fields the body does not carry are left empty; every
// field of the body, known or not, stays in Raw.
//
// Callback may hold personal data (a wallet address, free-text reasons, the
// parties of an inquiry). Its fmt and log/slog forms are redacted: Address,
// ApprovedCallback and Reason are shown as "[redacted]" when set, Inquiry
// as a [TransferRequest] is, and Raw only by its length. Its fields are not
// redacted: do not log Raw or the fields themselves.
type Callback struct {
	// Kind is the kind of message.
	Kind CallbackKind
	// TransferID is the body's "transferId" (a JSON number is kept as its
	// text). Callbacks in TRP form may not carry it: match them by Ref.
	TransferID string
	// Status is the body's "status", such as "received", "approved",
	// "rejected", "completed" or "inquiry".
	Status string
	// TxID is the on-chain transaction identifier: the body's "txId", or
	// the "txid" of a TRP confirmation.
	TxID string
	// Timestamp is the body's "timestamp" (RFC 3339 text or Unix seconds),
	// or the zero time if absent or unreadable.
	Timestamp time.Time
	// Ref is the verified reference of the capability callback URL the
	// callback arrived at (see [NewCallbackURL]). ParseCallback leaves it
	// empty; the callback handler sets it when it verified the URL.
	Ref string
	// Address is the wallet address of a TRP approval ("approved.address").
	// Personal data.
	Address string
	// ApprovedCallback is the callback URL of a TRP approval
	// ("approved.callback"). It may carry a capability: treat it as a
	// secret.
	ApprovedCallback string
	// Reason is the free text of a TRP rejection or cancellation. It comes
	// from the other VASP and may contain personal data.
	Reason string
	// Inquiry is the transfer an inbound inquiry asks about (Kind
	// KindInquiry), decoded leniently: numbers are kept as their text and
	// values of the wrong type are left empty. Nil for other kinds.
	Inquiry *TransferRequest
	// Raw is the whole body, byte for byte (a copy of ParseCallback's
	// input).
	Raw json.RawMessage
}

// callbackWire holds the top-level fields ParseCallback reads, undecoded.
// Declaring both "txId" and "txid" keeps them apart: encoding/json prefers
// an exact match of the name.
type callbackWire struct {
	TransferID flexString      `json:"transferId"`
	Status     flexString      `json:"status"`
	TxID       flexString      `json:"txId"`
	Txid       json.RawMessage `json:"txid"`
	Timestamp  flexString      `json:"timestamp"`
	Approved   json.RawMessage `json:"approved"`
	Rejected   json.RawMessage `json:"rejected"`
	Canceled   json.RawMessage `json:"canceled"`
	Cancelled  json.RawMessage `json:"cancelled"`
}

// ParseCallback decodes a callback body. The body's shape is not documented,
// so decoding is tolerant: unknown fields, missing fields and fields of an
// unexpected type never fail it, and Raw always holds a copy of body. Only a
// body that is not a JSON object (malformed JSON, an array, a string, null)
// fails, with an error matching [ErrMalformedCallback] that never repeats
// the body.
//
// Kind is chosen in this order: a "status" of "inquiry" (in any case) gives
// [KindInquiry], any other non-empty "status" [KindStatus]; without one,
// an "approved" object gives [KindApproved], then a "rejected" field
// [KindRejected], a "canceled" (or "cancelled") field [KindCanceled] and a
// "txid" field [KindTxID]; anything else is [KindUnknown]. Field names match
// as written here; as with encoding/json, a spelling that differs only in
// case matches too when no field has it exactly. The other fields are filled whatever the kind.
func ParseCallback(body []byte) (*Callback, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformedCallback)
	}
	// One allocation for the result and the wire form it is read from.
	p := new(struct {
		cb Callback
		w  callbackWire
	})
	if err := cbDecode(body, trimmed, &p.w); err != nil {
		return nil, err
	}
	cb, w := &p.cb, &p.w
	*cb = Callback{
		TransferID: string(w.TransferID),
		Status:     string(w.Status),
		TxID:       string(w.TxID),
		Timestamp:  cbTime(string(w.Timestamp)),
		Raw:        append(json.RawMessage(nil), body...),
	}
	if cb.TxID == "" {
		cb.TxID = cbText(w.Txid)
	}
	approved := cbIsObject(w.Approved) && cbApproved(cb, w.Approved)
	canceled := w.Canceled
	if canceled == nil {
		canceled = w.Cancelled
	}
	switch {
	case w.Rejected != nil:
		cb.Reason = cbText(w.Rejected)
	case canceled != nil:
		cb.Reason = cbText(canceled)
	}
	cb.Kind = cbKind(cb.Status, approved, w.Rejected != nil, canceled != nil, w.Txid != nil)
	if cb.Kind == KindInquiry {
		cb.Inquiry = cbInquiry(body)
	}
	return cb, nil
}

// cbDecode decodes body into w exactly as json.Unmarshal(body, w) does:
// each top-level member whose name matches a field (exactly, else the
// first field whose name equals it under Unicode case folding) goes to
// that field's UnmarshalJSON, later members overriding earlier ones.
// It checks the body with json.Valid and then walks its top level itself,
// which costs about half of what json.Unmarshal's reflection does. obj is
// body from its opening brace on.
func cbDecode(body, obj []byte, w *callbackWire) error {
	if !json.Valid(body) {
		err := json.Unmarshal(body, new(struct{})) // for the offset of the error
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%w: invalid JSON at offset %d", ErrMalformedCallback, se.Offset)
		}
		return fmt.Errorf("%w: invalid JSON", ErrMalformedCallback)
	}
	for i := cbSkipSpace(obj, 1); obj[i] == '"'; {
		keyEnd := cbValueEnd(obj, i)
		key := obj[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			_ = json.Unmarshal(obj[i:keyEnd], &s) // valid: it was checked
			key = []byte(s)
		}
		vStart := cbSkipSpace(obj, cbSkipSpace(obj, keyEnd)+1) // past the colon
		vEnd := cbValueEnd(obj, vStart)
		if u := w.field(key); u != nil {
			if err := u.UnmarshalJSON(obj[vStart:vEnd]); err != nil {
				return fmt.Errorf("%w: invalid JSON", ErrMalformedCallback)
			}
		}
		if i = cbSkipSpace(obj, vEnd); obj[i] == ',' {
			i = cbSkipSpace(obj, i+1)
		}
	}
	return nil
}

// cbFieldNames are the JSON names of callbackWire's fields, in order.
var cbFieldNames = [...]string{"transferId", "status", "txId", "txid", "timestamp", "approved", "rejected", "canceled", "cancelled"}

// field returns the decoder of the field that encoding/json would decode
// the member named key into, or nil.
func (w *callbackWire) field(key []byte) json.Unmarshaler {
	i := slices.Index(cbFieldNames[:], string(key))
	for j := 0; i < 0 && j < len(cbFieldNames); j++ {
		if bytes.EqualFold(key, []byte(cbFieldNames[j])) {
			i = j
		}
	}
	fields := [...]json.Unmarshaler{&w.TransferID, &w.Status, &w.TxID, &w.Txid, &w.Timestamp, &w.Approved, &w.Rejected, &w.Canceled, &w.Cancelled}
	if i < 0 {
		return nil
	}
	return fields[i]
}

// cbSkipSpace returns the index of the first byte of b at or after i that is
// not JSON white space.
func cbSkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// cbValueEnd returns the index just past the JSON value that starts at
// b[i], in a document that json.Valid accepted.
func cbValueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the object that holds a literal
				return i
			}
			depth--
		default:
			if depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
				return i
			}
			continue
		}
		if depth == 0 {
			return i + 1
		}
	}
	return i
}

// cbKind chooses a callback's kind as [ParseCallback] documents.
func cbKind(status string, approved, rejected, canceled, txid bool) CallbackKind {
	switch {
	case strings.EqualFold(status, "inquiry"):
		return KindInquiry
	case status != "":
		return KindStatus
	case approved:
		return KindApproved
	case rejected:
		return KindRejected
	case canceled:
		return KindCanceled
	case txid:
		return KindTxID
	}
	return KindUnknown
}

// cbApproved fills the fields of a TRP approval from its "approved" object
// and reports whether the object decoded.
func cbApproved(cb *Callback, raw json.RawMessage) bool {
	var approved map[string]json.RawMessage
	if json.Unmarshal(raw, &approved) != nil || approved == nil {
		return false
	}
	cb.Address = cbText(approved["address"])
	cb.ApprovedCallback = cbText(approved["callback"])
	return true
}

// Format implements fmt.Formatter so that no verb prints personal data,
// capability tags, the raw body, or a value of the sender's that is not an
// identifier.
func (c Callback) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.Callback")
	var ts string
	if !c.Timestamp.IsZero() {
		ts = c.Timestamp.Format(time.RFC3339Nano)
	}
	fmt.Fprintf(f, "{Kind:%s TransferID:%s Status:%s TxID:%s Timestamp:%s Ref:%s Address:%s ApprovedCallback:%s Reason:%s Inquiry:",
		shownID(string(c.Kind)), shownID(c.TransferID), shownID(c.Status), shownID(c.TxID), ts, shownID(c.Ref), mask(c.Address), mask(c.ApprovedCallback), mask(c.Reason))
	if c.Inquiry == nil {
		fmt.Fprint(f, "<nil>")
	} else {
		c.Inquiry.format(f, true)
	}
	fmt.Fprintf(f, " Raw:[%d bytes]}", len(c.Raw))
}

// LogValue implements slog.LogValuer: the kind, identifiers and status
// only; an inquiry is logged as a [TransferRequest] is.
func (c Callback) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("kind", shownID(string(c.Kind))),
		slog.String("transferId", shownID(c.TransferID)),
		slog.String("status", shownID(c.Status)),
		slog.String("txId", shownID(c.TxID)),
		slog.String("ref", shownID(c.Ref)),
	)
	if !c.Timestamp.IsZero() {
		attrs = append(attrs, slog.Time("timestamp", c.Timestamp))
	}
	if c.Inquiry != nil {
		attrs = append(attrs, slog.Attr{Key: "inquiry", Value: c.Inquiry.logValue(true)})
	}
	if c.Address != "" || c.ApprovedCallback != "" || c.Reason != "" {
		attrs = append(attrs, slog.String("personalData", redacted))
	}
	return slog.GroupValue(attrs...)
}

// cbInquiry decodes the transfer request fields of an inquiry body
// leniently: numbers and booleans become their text, values of another
// type are dropped, so that Unmarshal only ever sees strings where the
// request has strings.
func cbInquiry(body []byte) *TransferRequest {
	var req TransferRequest
	_ = json.Unmarshal(cbStringsOnly(body, 2), &req)
	return &req
}

// cbStringsOnly rewrites a JSON object so that every value is a string, up
// to depth levels of nested objects; other values are dropped.
func cbStringsOnly(raw json.RawMessage, depth int) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return json.RawMessage("{}")
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		switch {
		case cbIsObject(v):
			if depth > 1 {
				out[k] = cbStringsOnly(v, depth-1)
			}
		default:
			if s, ok := cbScalar(v); ok {
				q, _ := json.Marshal(s)
				out[k] = q
			}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// cbText returns the text of a JSON string, number or boolean, or "" for
// anything else.
func cbText(raw json.RawMessage) string {
	s, _ := cbScalar(raw)
	return s
}

func cbScalar(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	var f flexString
	if f.UnmarshalJSON(raw) != nil || (f == "" && !bytes.Equal(raw, []byte(`""`))) {
		return "", false
	}
	return string(f), true
}

func cbIsObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// cbTime reads RFC 3339 text or Unix seconds; anything else gives the zero
// time.
func cbTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n < 1<<40 {
		return time.Unix(n, 0).UTC()
	}
	return time.Time{}
}

// flexString decodes a JSON string, or a number or boolean as its text;
// anything else (null, objects, arrays) gives "". Servers and callbacks that
// the description does not show may type a field either way.
type flexString string

// UnmarshalJSON implements json.Unmarshaler as flexString's comment says.
func (f *flexString) UnmarshalJSON(data []byte) error {
	switch {
	case len(data) >= 2 && data[0] == '"':
		// The decoder has validated the string: without escapes it is
		// its bytes between the quotes.
		if inner := data[1 : len(data)-1]; bytes.IndexByte(inner, '\\') < 0 {
			*f = flexString(inner)
			return nil
		}
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*f = flexString(s)
	case len(data) > 0 && (data[0] == '-' || data[0] >= '0' && data[0] <= '9'):
		*f = flexString(data)
	case string(data) == "true" || string(data) == "false":
		*f = flexString(data)
	}
	return nil
}
