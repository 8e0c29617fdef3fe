package travelrule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vaspkit/travelrule/ivms101"
)

// ErrMalformedCallback means a callback body is not a JSON object, or gives
// a member's name twice in one of its objects. It is the only reason
// [ParseCallback] fails.
var ErrMalformedCallback = errors.New("travelrule: malformed callback")

// CallbackKind says which message a callback carries. The service sends no
// type field or header, so the kind is inferred from the fields present;
// see [ParseCallback]. Its values are lower-case words, stable across
// releases: package journal stores them.
type CallbackKind string

// The kinds of callback [ParseCallback] recognises: the live service's
// four messages, INQUIRY, INQUIRY_RESOLUTION, TRANSFER_RESOLUTION and
// TRANSFER_CONFIRMATION, in their live and their Travel Rule Protocol
// (TRP) forms, TRP's cancellation, and anything else. Read the decision of
// either resolution with [Callback.Decision].
const (
	// KindInquiry is an inbound inquiry, sent to the beneficiary's VASP:
	// the live service's INQUIRY, {"asset","amount","callback","IVMS101"}
	// with the parties in a nested IVMS101 payload, or with the payload's
	// members ("originator", "originatingVASP", …) at the top level, as
	// the service's docs also describe it; or the fields of a transfer
	// initiation request plus "transferId" and "status":"inquiry". Answer
	// it with [Client.ResolveInquiry].
	KindInquiry CallbackKind = "inquiry"
	// KindInquiryResolution is the beneficiary VASP's answer to an
	// inquiry, sent to the originator: the live service's
	// INQUIRY_RESOLUTION, {"approved":true|false,"callback":"…"} (or
	// "true"|"false"), or TRP's approval {"approved":{"address":"…",
	// "callback":"…"}} or rejection {"rejected":"reason"}. Its
	// [Callback.Decision] is [Approved] or [Rejected], never "".
	KindInquiryResolution CallbackKind = "inquiry_resolution"
	// KindTransferResolution is a status callback: the live service's
	// TRANSFER_RESOLUTION, {"transferId","status","statusComment",
	// "callback"}, sent to the originator once the beneficiary's VASP
	// decided; or the excerpt's form {"transferId","status","txId",
	// "timestamp"}. Its [Callback.Decision] is what its status says, ""
	// for a status that decides nothing (such as "received").
	KindTransferResolution CallbackKind = "transfer_resolution"
	// KindTransferConfirmation is a transaction confirmation, sent to the
	// beneficiary's VASP once the originator submitted the transaction's
	// hash: the live service's TRANSFER_CONFIRMATION, {"txid":"…"}, as
	// TRP has it.
	KindTransferConfirmation CallbackKind = "transfer_confirmation"
	// KindCanceled is a TRP cancellation: {"canceled":"reason"}.
	KindCanceled CallbackKind = "canceled"
	// KindUnknown is any other JSON object, or one that says both yes and
	// no. Its fields are in Raw.
	KindUnknown CallbackKind = "unknown"
)

// Callback is one callback request from the service, as decoded by
// [ParseCallback]. Fields the body does not carry are left empty; every
// field of the body, known or not, stays in Raw.
//
// Callback may hold personal data (a wallet address, free-text reasons, the
// parties of an inquiry). Its fmt and log/slog forms are redacted: Address,
// ApprovedCallback, Reason and StatusComment are shown as "[redacted]" when
// set, Inquiry as a [TransferRequest] is, IVMS101 as package ivms101
// redacts it, Unmapped and Raw only by their length. Its fields are not
// redacted: do not log Raw or the fields themselves.
type Callback struct {
	// Kind is the kind of message.
	Kind CallbackKind
	// TransferID is the body's "transferId" (a JSON number is kept as its
	// text). The live service's INQUIRY carries none: its transfer id is
	// read from the "q" query parameter of its "callback" URL (the
	// service's inquiryResolution?q=<id>). Callbacks in TRP form
	// (approvals, confirmations) may not carry it: match them by Ref.
	TransferID string
	// Status is the body's "status" as written, such as the live
	// service's "APPROVED" (its docs show no other value), or "received",
	// "completed" or "inquiry". Do not compare it with words of your own:
	// read the decision with [Callback.Decision], which knows the
	// spellings.
	Status string
	// StatusComment is a TRANSFER_RESOLUTION's "statusComment": the
	// beneficiary VASP's reason for its decision. It comes from the other
	// VASP and may contain personal data.
	StatusComment string
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
	// Address is the beneficiary's wallet address that an approval (an
	// INQUIRY_RESOLUTION) carries back to the originator: TRP's
	// "approved.address", or, since the service's docs do not name the
	// field, the string value of the members named "address",
	// "walletAddress", "beneficiaryWalletAddress", "beneficiaryAddress" or
	// "wallet" (in any case) found in the body's objects and arrays, down
	// to four levels below the top, outside members that hold another
	// party ("originator", "from", "sender", "IVMS101", …); empty when
	// none is found or those found disagree. Personal data.
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
	// values of the wrong type are left empty. Its Originator and
	// Beneficiary are read from the IVMS101 payload when the body has one
	// (see [PartiesFromIVMS101]), else from the body's flat "originator"
	// and "beneficiary": what the payload carries, so a DateOfBirth only
	// from a dateAndPlaceOfBirth (the sandbox's INQUIRY has none, its
	// parties having no place of birth), and Inquiry.Validate may report
	// one missing. Its Callback is the URL to answer through. Nil for
	// other kinds.
	Inquiry *TransferRequest
	// IVMS101 is the IVMS101 payload of a live INQUIRY (the body's
	// "IVMS101" member, or, without one, the body's members of IVMS101's
	// top-level names when it carries the payload at its top level), read
	// leniently and losslessly: every person, name, address and
	// identifier, and the VASPs. Nil when the body has none.
	IVMS101 *ivms101.Payload
	// Unmapped lists the fields of the IVMS101 payload's originator and
	// beneficiary that Inquiry's flat parties do not hold (a second name,
	// an address line, a place of birth), as paths; they are still in
	// IVMS101; at most 256, then "… and N more". A path may name a member
	// the sender added under the sender's own name: do not log it
	// unfiltered.
	Unmapped []string
	// CallbackURL is the body's top-level "callback": for an INQUIRY the
	// URL to answer through (as Inquiry.Callback), for a resolution the
	// callback URL of the transfer it is about. When it is a capability
	// URL, the callback handler checks that it names the transfer whose
	// URL the callback arrived at. It may carry a capability: treat it as
	// a secret.
	CallbackURL string
	// Raw is the whole body, byte for byte (a copy of ParseCallback's
	// input).
	Raw json.RawMessage

	// decision is an INQUIRY_RESOLUTION's decision (KindInquiryResolution
	// only): the body's "approved", or Rejected for TRP's "rejected".
	decision Decision
}

// callbackWire holds the top-level fields ParseCallback reads, undecoded.
// Declaring both "txId" and "txid" keeps them apart: encoding/json prefers
// an exact match of the name.
type callbackWire struct {
	TransferID    flexString      `json:"transferId"`
	Status        flexString      `json:"status"`
	TxID          flexString      `json:"txId"`
	Txid          json.RawMessage `json:"txid"`
	Timestamp     flexString      `json:"timestamp"`
	Approved      json.RawMessage `json:"approved"`
	Rejected      json.RawMessage `json:"rejected"`
	Canceled      json.RawMessage `json:"canceled"`
	Cancelled     json.RawMessage `json:"cancelled"`
	StatusComment flexString      `json:"statusComment"`
	IVMS101       json.RawMessage `json:"IVMS101"`
	Callback      flexString      `json:"callback"`
	// The members that say a body without "IVMS101" is itself an IVMS101
	// payload (see cbTopLevelIVMS101).
	Originator      json.RawMessage `json:"originator"`
	OriginatingVASP json.RawMessage `json:"originatingVASP"`
}

// ParseCallback decodes a callback body. The service sends no type field,
// so decoding is tolerant: unknown fields, missing fields and fields of an
// unexpected type never fail it, and Raw always holds a copy of body. Only a
// body that is not a JSON object (malformed JSON, an array, a string, null),
// or that gives a name twice (see below), fails, with an error matching
// [ErrMalformedCallback] that never repeats the body.
//
// Kind is chosen in this order: an "IVMS101" object (or a JSON string
// holding one); without an "IVMS101" member, an IVMS101 payload at the top
// level (an "originatingVASP" object, or an "originator" object holding
// "originatorPersons" or "originatorPerson"); or a "status" of "inquiry"
// (in any case), gives [KindInquiry]; any other non-empty "status"
// [KindTransferResolution]; without one, an "approved" object, true,
// false, "true" or "false" (in any case), or a "rejected" field, gives
// [KindInquiryResolution]; then a "canceled" (or "cancelled") field
// [KindCanceled] and a "txid" field [KindTransferConfirmation]; anything
// else is [KindUnknown]. It fails closed: a body that says both yes and no
// (an approval beside a rejection, a cancellation or a status such as
// "REJECTED"; a status such as "APPROVED" beside a rejection), or an
// inquiry that also carries a decision, is [KindUnknown].
//
// Field names match as written here. As with encoding/json, a spelling
// that differs only in case matches too, filling the first field above it
// folds to ("TXID" fills "txId"). The other fields are filled whatever the
// kind.
//
// A body is refused when one of its objects, at any depth (the IVMS101
// payload's too, even sent as a string), gives two names that
// encoding/json matches to each other: the same name twice, or in another
// case or spelling ("status" and "Status", "\u0073tatus" or "ſtatus"), so
// that no other reader of an accepted body reads another member.
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
		TransferID:    string(w.TransferID),
		Status:        string(w.Status),
		StatusComment: string(w.StatusComment),
		TxID:          string(w.TxID),
		Timestamp:     cbTime(string(w.Timestamp)),
		Raw:           append(json.RawMessage(nil), body...),
	}
	if cb.TxID == "" {
		cb.TxID = cbText(w.Txid)
	}
	decision := cbDecision(cb, w.Approved)
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
	cb.CallbackURL = string(w.Callback)
	ivms := cbIVMS101(w.IVMS101)
	if ivms != nil && w.IVMS101[0] == '"' && dupNames(ivms) { // a payload sent as a string: read as JSON too
		return nil, errDuplicateName
	}
	if w.IVMS101 == nil {
		ivms = cbTopLevelIVMS101(trimmed, w)
	}
	cb.Kind, cb.decision = cbKind(cb.Status, ivms != nil, decision, w.Rejected != nil, canceled != nil, w.Txid != nil)
	switch cb.Kind {
	case KindInquiry:
		cbFillInquiry(cb, body, ivms)
	case KindInquiryResolution:
		if cb.Address == "" {
			cb.Address = cbFindAddress(body)
		}
	}
	return cb, nil
}

// cbIVMS101 returns the IVMS101 payload of a body's "IVMS101" member: the
// member itself when it is an object, or the object a JSON string holds
// (some senders stringify the payload); nil otherwise.
func cbIVMS101(raw json.RawMessage) json.RawMessage {
	if cbIsObject(raw) {
		return raw
	}
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil && cbIsObject(json.RawMessage(s)) && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return nil
}

// cbIVMS101TopMembers are the names of an IVMS101 payload's top-level
// members, in either edition.
var cbIVMS101TopMembers = [...]string{"originator", "beneficiary", "originatingVASP", "beneficiaryVASP", "transferPath", "payloadMetadata"}

// cbTopLevelIVMS101 returns the IVMS101 payload of a body that carries one
// at its top level instead of in an "IVMS101" member (live-service.md
// describes the inbound inquiry so: "an IVMS101 originator envelope with
// originator and originatingVASP keys"): when the body has an
// "originatingVASP" object, or an "originator" object holding
// "originatorPersons" (or the 2023 edition's "originatorPerson"), the
// body's members of IVMS101's top-level names, in order; else nil. The
// body's other members (the transfer's id, asset, amount, callback) are
// not the payload's: they are read as an inquiry's. obj is the body from
// its opening brace on; w is what cbDecode read of it.
func cbTopLevelIVMS101(obj []byte, w *callbackWire) json.RawMessage {
	persons := false
	if cbIsObject(w.Originator) {
		cbMembers(bytes.TrimLeft(w.Originator, " \t\r\n"), func(key, _ []byte) bool {
			persons = bytes.EqualFold(key, []byte("originatorPersons")) || bytes.EqualFold(key, []byte("originatorPerson"))
			return !persons
		})
	}
	if !persons && !cbIsObject(w.OriginatingVASP) {
		return nil
	}
	payload := []byte{'{'}
	cbMembers(obj, func(key, value []byte) bool {
		if oneOfFold(string(key), cbIVMS101TopMembers[:]...) {
			if len(payload) > 1 {
				payload = append(payload, ',')
			}
			name, _ := json.Marshal(string(key)) // a string always marshals
			payload = append(append(append(payload, name...), ':'), value...)
		}
		return true
	})
	return append(payload, '}')
}

// cbDecode decodes body into w as json.Unmarshal(body, w) does: each
// top-level member whose name matches a field (exactly, else under case
// folding) goes to that field's UnmarshalJSON. It checks the body with
// json.Valid, refuses it if dupNames finds a name given twice in one object
// (so no member can override another), and then walks its top level
// itself, which costs about half of what json.Unmarshal's reflection does.
// obj is body from its opening brace on.
func cbDecode(body, obj []byte, w *callbackWire) error {
	if !json.Valid(body) {
		err := json.Unmarshal(body, new(struct{})) // for the offset of the error
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%w: invalid JSON at offset %d", ErrMalformedCallback, se.Offset)
		}
		return fmt.Errorf("%w: invalid JSON", ErrMalformedCallback)
	}
	if dupNames(obj) {
		return errDuplicateName
	}
	var err error
	cbMembers(obj, func(key, value []byte) bool {
		if f := w.field(key); f >= 0 && w.decoder(f).UnmarshalJSON(value) != nil {
			err = fmt.Errorf("%w: invalid JSON", ErrMalformedCallback)
			return false
		}
		return true
	})
	return err
}

// cbMembers calls fn with the name (unescaped) and the value of each member
// of obj, a JSON object that json.Valid accepted, from its opening brace
// on, in order, until fn returns false.
func cbMembers(obj []byte, fn func(key, value []byte) bool) {
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
		if !fn(key, obj[vStart:vEnd]) {
			return
		}
		if i = cbSkipSpace(obj, vEnd); obj[i] == ',' {
			i = cbSkipSpace(obj, i+1)
		}
	}
}

// cbFieldNames are the JSON names of callbackWire's fields, in order.
var cbFieldNames = [...]string{"transferId", "status", "txId", "txid", "timestamp", "approved", "rejected", "canceled", "cancelled", "statusComment", "IVMS101", "callback", "originator", "originatingVASP"}

// field returns the index in cbFieldNames of the field the member named key
// is read into, -1 if none: as with encoding/json, the field of the exact
// name, else the first one the name folds to.
func (w *callbackWire) field(key []byte) int {
	if i := slices.Index(cbFieldNames[:], string(key)); i >= 0 {
		return i
	}
	return slices.IndexFunc(cbFieldNames[:], func(n string) bool { return bytes.EqualFold(key, []byte(n)) })
}

// decoder returns the decoder of field i of cbFieldNames.
func (w *callbackWire) decoder(i int) json.Unmarshaler {
	fields := [...]json.Unmarshaler{&w.TransferID, &w.Status, &w.TxID, &w.Txid, &w.Timestamp, &w.Approved, &w.Rejected, &w.Canceled, &w.Cancelled, &w.StatusComment, &w.IVMS101, &w.Callback, &w.Originator, &w.OriginatingVASP}
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

// cbKind chooses a callback's kind as [ParseCallback] documents, and for
// a KindInquiryResolution its decision ("" for any other kind). decision
// is the "approved" field's: Approved, Rejected or "". It fails closed: a
// body that says both yes and no (an approval and a rejection,
// cancellation or rejecting status; an approving status and a rejection),
// or an inquiry that also carries a decision, is KindUnknown, left to a
// person, never read as one of its halves.
func cbKind(status string, ivms bool, decision Decision, rejected, canceled, txid bool) (CallbackKind, Decision) {
	inquiry := ivms || strings.EqualFold(status, "inquiry")
	says := statusDecision(status)
	yes := decision == Approved || says == Approved
	no := decision == Rejected || rejected || canceled || says == Rejected
	switch {
	case yes && no, inquiry && (decision != "" || rejected || canceled):
		return KindUnknown, ""
	case inquiry:
		return KindInquiry, ""
	case status != "":
		return KindTransferResolution, ""
	case decision != "":
		return KindInquiryResolution, decision
	case rejected:
		return KindInquiryResolution, Rejected
	case canceled:
		return KindCanceled, ""
	case txid:
		return KindTransferConfirmation, ""
	}
	return KindUnknown, ""
}

// Decision returns the decision the callback carries, [Approved] or
// [Rejected], whichever form it came in: for a [KindInquiryResolution]
// (the live service's INQUIRY_RESOLUTION, or TRP's approval or
// rejection) the one it carries, never ""; for a [KindTransferResolution]
// (a TRANSFER_RESOLUTION) the one its status says: "approved",
// "completed", "confirmed" or "accepted" approve, "rejected", "declined",
// "canceled", "cancelled" or "failed" reject, in any case (the live
// service sends "APPROVED"), any other status none. Any other callback, a
// cancellation included, carries none: "".
//
// The decision of an INQUIRY_RESOLUTION is set by [ParseCallback]: a
// Callback of that kind made otherwise carries none. Make test callbacks
// with ParseCallback.
func (c Callback) Decision() Decision {
	switch c.Kind {
	case KindInquiryResolution:
		return c.decision
	case KindTransferResolution:
		return statusDecision(c.Status)
	}
	return ""
}

// oneOfFold reports whether s equals one of set under case folding.
func oneOfFold(s string, set ...string) bool {
	for _, v := range set {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}

// cbDecision reads the "approved" field: an object (TRP's approval, whose
// address and callback it puts in cb), true or "true" give Approved,
// false or "false" Rejected (in any case), anything else "".
func cbDecision(cb *Callback, raw json.RawMessage) Decision {
	if cbIsObject(raw) {
		var approved map[string]json.RawMessage
		if json.Unmarshal(raw, &approved) != nil || approved == nil {
			return ""
		}
		cb.Address = cbText(approved["address"])
		cb.ApprovedCallback = cbText(approved["callback"])
		return Approved
	}
	switch v, _ := cbScalar(raw); strings.ToLower(v) {
	case "true":
		return Approved
	case "false":
		return Rejected
	}
	return ""
}

// cbAddressKeys are the names, compared in any case, of a member that may
// carry the beneficiary's wallet address in an approval: TRP's "address"
// and the names the service uses for wallet addresses elsewhere.
var cbAddressKeys = [...]string{"address", "walletAddress", "beneficiaryWalletAddress", "beneficiaryAddress", "wallet"}

// cbNotBeneficiary are the names, compared in any case, of members whose
// contents are not the beneficiary's: the address search does not look
// into them.
var cbNotBeneficiary = [...]string{"IVMS101", "originator", "originatorPersons", "originatorPerson", "originatingVASP",
	"from", "sender", "source", "payer", "callback"}

// cbMaxAddressDepth is how many levels below the top the address search
// looks, and cbMaxAddressNodes how many objects and arrays it opens at most.
const (
	cbMaxAddressDepth = 4
	cbMaxAddressNodes = 256
)

// cbFindAddress returns the beneficiary's wallet address in an approval
// that does not carry it as TRP's approved.address: the string value of
// the members named one of cbAddressKeys, searched in objects and arrays,
// level by level from the top, at most cbMaxAddressDepth levels down,
// outside the members named in cbNotBeneficiary. When the members found
// disagree, it returns "": an address it cannot tell is the beneficiary's
// is no address.
func cbFindAddress(body []byte) string {
	level := []json.RawMessage{body}
	found, opened := "", 0
	for depth := 0; depth <= cbMaxAddressDepth && len(level) > 0; depth++ {
		var next []json.RawMessage
		for _, raw := range level {
			if opened++; opened > cbMaxAddressNodes {
				return found
			}
			var children []json.RawMessage
			switch {
			case cbIsObject(raw):
				var obj map[string]json.RawMessage
				if json.Unmarshal(raw, &obj) != nil {
					continue
				}
				for _, k := range slices.Sorted(maps.Keys(obj)) { // the same answer for the same body
					v := obj[k]
					if oneOfFold(k, cbNotBeneficiary[:]...) {
						continue
					}
					if oneOfFold(k, cbAddressKeys[:]...) && len(v) > 0 && v[0] == '"' {
						a := cbText(v)
						switch {
						case a == "":
						case found == "":
							found = a
						case found != a:
							return ""
						}
						continue
					}
					children = append(children, v)
				}
			case len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '[':
				_ = json.Unmarshal(raw, &children)
			}
			for _, c := range children {
				if c = bytes.TrimSpace(c); len(c) > 0 && (c[0] == '{' || c[0] == '[') {
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return found
}

// Format implements fmt.Formatter so that no verb prints personal data,
// capability tags, the raw body, or a value of the sender's that is not an
// identifier.
func (c Callback) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.Callback")
	pii := c.piiValues()
	sec := newSecrets(pii, nil)
	var ts string
	if !c.Timestamp.IsZero() {
		ts = c.Timestamp.Format(time.RFC3339Nano)
	}
	fmt.Fprintf(f, "{Kind:%s TransferID:%s Status:%s StatusComment:%s TxID:%s Timestamp:%s Ref:%s Address:%s ApprovedCallback:%s Reason:%s CallbackURL:%s Decision:%s Inquiry:",
		shownID(string(c.Kind)), shownIDNotIn(c.TransferID, &sec), shownIDNotIn(c.Status, &sec), mask(c.StatusComment), shownIDNotIn(c.TxID, &sec), ts, shownID(c.Ref),
		mask(c.Address), mask(c.ApprovedCallback), mask(c.Reason), mask(c.CallbackURL), c.Decision())
	if c.Inquiry == nil {
		fmt.Fprint(f, "<nil>")
	} else {
		c.Inquiry.format(f, true, pii)
	}
	fmt.Fprint(f, " IVMS101:")
	if c.IVMS101 == nil {
		fmt.Fprint(f, "<nil>")
	} else {
		fmt.Fprintf(f, "%v", *c.IVMS101)
	}
	fmt.Fprintf(f, " Unmapped:[%d paths] Raw:[%d bytes]}", len(c.Unmapped), len(c.Raw))
}

// SafeTransferID returns TransferID, or "" when it is not a short
// identifier or when it repeats one of the callback's personal or secret
// values (the sender chose both, so a transfer id may be a wallet address
// or a name). A value of five letters or more counts wherever it stands, a
// shorter one only as a word (see secrets.echoesWord), so that a transfer id that
// holds a short number or name inside a longer word ("trngx-42" beside the
// comment "Ng") still joins a transfer's records. The fmt and log/slog
// forms are stricter: they hide such an id. Keep or show this one, as
// package journal does.
func (c Callback) SafeTransferID() string {
	sec := newSecrets(c.piiValues(), nil)
	if c.TransferID == "" || !isIdentifier(c.TransferID, maxRequestID) || sec.echoesWord(c.TransferID) {
		return ""
	}
	return c.TransferID
}

// shownIDNotIn is shownID, but also "[redacted]" when the value echoes
// sec, the callback's own personal or secret values (see piiValues): the
// sender chose both, so an identifier may repeat a wallet address, a
// reason, a capability tag or a name.
func shownIDNotIn(s string, sec *secrets) string {
	if s == "" || !isIdentifier(s, maxRequestID) {
		return shownID(s)
	}
	if sec.echoes(s) {
		return redacted
	}
	return s
}

// piiValues are the callback's values that its fmt and log/slog forms
// never show: the wallet address, the reasons, the callback URLs and their
// capability tags, an inquiry's parties, and
// every text of its IVMS101 payload that is not a code of IVMS101's code
// lists or a country.
func (c Callback) piiValues() []string {
	v := []string{c.Address, c.Reason, c.StatusComment}
	v = appendURLSecrets(v, c.ApprovedCallback)
	v = appendURLSecrets(v, c.CallbackURL)
	if c.Inquiry != nil {
		v = c.Inquiry.appendPII(v)
	}
	if c.IVMS101 != nil {
		v = appendPayloadTexts(v, reflect.ValueOf(c.IVMS101).Elem())
	}
	return v
}

// appendPayloadTexts appends to v the texts of x, an IVMS101 payload or a
// part of one, that are not codes of IVMS101's code lists or countries:
// every text of its model, and the string values of its Extra members. It
// walks the structs, without writing the payload's JSON again.
func appendPayloadTexts(v []string, x reflect.Value) []string {
	switch x.Kind() {
	case reflect.String:
		if s := x.String(); s != "" && !ivmsCode(s) {
			v = append(v, s)
		}
	case reflect.Pointer:
		if !x.IsNil() {
			v = appendPayloadTexts(v, x.Elem())
		}
	case reflect.Slice:
		for i := range x.Len() {
			v = appendPayloadTexts(v, x.Index(i))
		}
	case reflect.Map: // Extra
		for _, raw := range x.Interface().(map[string]json.RawMessage) {
			v = appendTexts(v, raw)
		}
	case reflect.Struct:
		for i := range x.NumField() {
			if f := x.Field(i); f.Type() != payloadVersionType { // Payload.Version: not the payload's, a code anyway
				v = appendPayloadTexts(v, f)
			}
		}
	}
	return v
}

var payloadVersionType = reflect.TypeFor[ivms101.Version]()

// appendTexts appends to v the string and number values (not the member
// names) of the JSON document b that are not codes of IVMS101's code lists
// or countries.
func appendTexts(v []string, b []byte) []string {
	var doc any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // a number where a text belongs (a national identifier) is the person's all the same
	if d.Decode(&doc) != nil {
		return v
	}
	var walk func(x any)
	walk = func(x any) {
		switch x := x.(type) {
		case json.Number:
			v = append(v, string(x))
		case string:
			if !ivmsCode(x) {
				v = append(v, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return v
}

// ivmsCode reports whether s is a code of one of IVMS101's code lists or
// an ISO 3166 country: values the redacted forms may show.
func ivmsCode(s string) bool {
	return ivms101.ValidCountry(s) || ivms101.NaturalPersonNameType(s).Valid() || ivms101.LegalPersonNameType(s).Valid() ||
		ivms101.AddressType(s).Valid() || ivms101.NationalIdentifierType(s).Valid() || ivms101.Version(s).Valid()
}

// LogValue implements slog.LogValuer: the kind, decision, identifiers and
// status only; an inquiry is logged as a [TransferRequest] is.
func (c Callback) LogValue() slog.Value {
	pii := c.piiValues()
	sec := newSecrets(pii, nil)
	attrs := make([]slog.Attr, 0, 10)
	attrs = append(attrs,
		slog.String("kind", shownID(string(c.Kind))),
		slog.String("transferId", shownIDNotIn(c.TransferID, &sec)),
		slog.String("status", shownIDNotIn(c.Status, &sec)),
		slog.String("decision", string(c.Decision())),
		slog.String("txId", shownIDNotIn(c.TxID, &sec)),
		slog.String("ref", shownID(c.Ref)),
	)
	if !c.Timestamp.IsZero() {
		attrs = append(attrs, slog.Time("timestamp", c.Timestamp))
	}
	if c.Inquiry != nil {
		attrs = append(attrs, slog.Attr{Key: "inquiry", Value: c.Inquiry.logValue(true, pii)})
	}
	if c.IVMS101 != nil {
		attrs = append(attrs, slog.Any("ivms101", *c.IVMS101), slog.Int("unmapped", len(c.Unmapped)))
	}
	if c.Address != "" || c.ApprovedCallback != "" || c.Reason != "" || c.StatusComment != "" || c.CallbackURL != "" {
		attrs = append(attrs, slog.String("personalData", redacted))
	}
	return slog.GroupValue(attrs...)
}

// cbFillInquiry fills the inquiry fields of cb: Inquiry from the body's
// flat fields, its parties from the IVMS101 payload when there is one, and
// the transfer id from the callback URL's q when the body has none.
func cbFillInquiry(cb *Callback, body []byte, ivms json.RawMessage) {
	cb.Inquiry = cbInquiry(body)
	cb.Inquiry.Callback = cb.CallbackURL
	if cbIsObject(ivms) {
		if p, err := ivms101.Parse(ivms); err == nil {
			cb.IVMS101 = p
			cb.Inquiry.Originator, cb.Inquiry.Beneficiary, cb.Unmapped = PartiesFromIVMS101(p)
		}
	}
	if cb.TransferID == "" {
		cb.TransferID = cbQueryID(cb.Inquiry.Callback)
	}
}

// cbQueryID returns the "q" query parameter of an absolute URL: the
// transfer id in the service's inquiryResolution?q=<id>. It is kept only
// when it has an identifier's shape.
func cbQueryID(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return ""
	}
	q := u.Query().Get("q")
	if !isIdentifier(q, maxRequestID) {
		return ""
	}
	return q
}

// cbInquiry decodes the transfer request fields of an inquiry body
// leniently: numbers and booleans become their text, values of another
// type are dropped, so that Unmarshal only ever sees strings where the
// request has strings. Members are matched to fields as cbDecode matches
// them (ParseCallback refused a name given twice), so that the inquiry the
// integrator screens is the one the service read.
func cbInquiry(body []byte) *TransferRequest {
	var req TransferRequest
	_ = json.Unmarshal(cbStringsOnly(body, reflect.TypeFor[TransferRequest]()), &req)
	return &req
}

// cbStringsOnly rewrites a JSON object for the struct type t: each of t's
// JSON fields takes the member whose name is its own or folds to it, under
// its own name;
// a string, number or boolean becomes a string, an object for a struct
// field is rewritten for the struct's type, and other values are dropped,
// as are members that name no field.
func cbStringsOnly(raw json.RawMessage, t reflect.Type) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if !cbIsObject(raw) || !json.Valid(raw) {
		return json.RawMessage("{}")
	}
	names, types := cbJSONFields(t)
	picked := make([]json.RawMessage, len(names))
	cbMembers(raw, func(key, value []byte) bool {
		if f := slices.IndexFunc(names, func(n string) bool { return bytes.EqualFold(key, []byte(n)) }); f >= 0 {
			picked[f] = value
		}
		return true
	})
	out := make(map[string]json.RawMessage, len(names))
	for f, v := range picked {
		switch {
		case v == nil:
		case types[f].Kind() == reflect.Struct:
			if cbIsObject(v) {
				out[names[f]] = cbStringsOnly(v, types[f])
			}
		default:
			if s, ok := cbScalar(v); ok {
				q, _ := json.Marshal(s)
				out[names[f]] = q
			}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// cbJSONFields returns the JSON names of a struct type's fields and their
// types.
func cbJSONFields(t reflect.Type) (names []string, types []reflect.Type) {
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		names = append(names, name)
		types = append(types, t.Field(i).Type)
	}
	return names, types
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
		// The decoder has validated the string: without escapes, and in
		// valid UTF-8, it is its bytes between the quotes. Invalid UTF-8
		// goes through encoding/json, which reads each bad byte as U+FFFD,
		// so that a string reads the same whichever path it takes.
		if inner := data[1 : len(data)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
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
