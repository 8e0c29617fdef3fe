package journal

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
)

// The kinds of record a journal writes.
const (
	kindSent       = "sent"       // an initiation is about to be sent (written ahead)
	kindStored     = "stored"     // the service answered that it stored the initiation
	kindNotStored  = "not-stored" // the service refused it, or it never reached the service
	kindUnknown    = "unknown"    // the service may have stored it: ErrOutcomeUnknown
	kindResolution = "resolution" // this VASP's ResolveInquiry was applied
	kindTxID       = "txid"       // this VASP's SubmitTxID was applied
	kindCallback   = "callback"   // a verified callback delivery about the transfer
	kindRefused    = "refused"    // a callback delivery the journal did not act on (see Refused)
	kindSettled    = "settled"    // an operator settled the initiations whose outcome was unknown (see Journal.Settle)
	kindJoined     = "joined"     // an unattached entry's records belong to this entry
)

// record is one fact of an entry, as stored: JSON of fixed vocabulary,
// identifiers and counts, never personal data.
type record struct {
	Kind           string    `json:"kind"`
	At             time.Time `json:"at"`
	Call           string    `json:"call,omitempty"`           // the call's id, across its sent and outcome records
	Op             string    `json:"op,omitempty"`             // the client's operation
	Ref            string    `json:"ref,omitempty"`            // the capability callback URL's reference
	TransferID     string    `json:"transferId,omitempty"`     // the service's transfer id
	Digest         string    `json:"digest,omitempty"`         // the request body's SHA-256, hex
	IdempotencyKey string    `json:"idempotencyKey,omitempty"` // the request's Idempotency-Key
	Attempts       int       `json:"attempts,omitempty"`       // how many times the request was sent
	Decision       string    `json:"decision,omitempty"`       // approved or rejected (a resolution's, or a callback's: Callback.Decision)
	Callback       string    `json:"callback,omitempty"`       // a callback's kind (travelrule.CallbackKind; older records: see legacyCallbacks)
	Delivery       string    `json:"delivery,omitempty"`       // a callback delivery's id
	Joined         string    `json:"joined,omitempty"`         // the unattached entry a joined record joins
	Refused        string    `json:"refused,omitempty"`        // why a callback was not acted on, or an initiation not sent (see refusedKind)
	Settled        string    `json:"settled,omitempty"`        // a settlement's outcome: kindStored or kindNotStored
	Reason         string    `json:"reason,omitempty"`         // a settlement's reason, in the operator's words
}

// Why a callback delivery was recorded without being acted on, or why the
// journal did not let an initiation be sent (a not-stored record's).
const (
	refusedKind            = "kind"            // its kind cannot arrive at an entry of this direction
	refusedUnauthenticated = "unauthenticated" // the handler had no authentication (callback.WithoutAuthentication)
	refusedRefInUse        = "ref-in-use"      // ErrRefInUse: the reference names a transfer stored or maybe stored
	refusedFailed          = "journal-failed"  // the journal could not record or check it first
)

// belongs reports whether a callback of kind can truthfully arrive at the
// entry key: an originator receives the resolutions, a beneficiary the
// inquiry and the confirmation, and either side a TRP cancellation.
func belongs(kind travelrule.CallbackKind, key string) bool {
	switch kind {
	case travelrule.KindCanceled:
		return true
	case travelrule.KindInquiry, travelrule.KindTransferConfirmation:
		return strings.HasPrefix(key, inboundPrefix)
	case travelrule.KindInquiryResolution, travelrule.KindTransferResolution:
		return strings.HasPrefix(key, outboundPrefix) || strings.HasPrefix(key, unattachedPrefix)
	}
	return false
}

func (r *record) encode() ([]byte, error) { return json.Marshal(r) }

// decode reads a stored record; one that does not read is skipped by the
// caller (a newer journal's, or damaged). A callback record of an older
// journal is read in today's words (see upgradeCallback).
func decode(b []byte) (record, bool) {
	var r record
	if json.Unmarshal(b, &r) != nil || r.Kind == "" || r.At.IsZero() {
		return record{}, false
	}
	if r.Kind == kindCallback {
		r.Callback, r.Decision = upgradeCallback(r.Callback, r.Decision)
	}
	return r, true
}

// legacyCallbacks are the callback kinds that records of older journals
// hold, when kinds were named after their decision or field, and the kind
// each is now. The decision of "approved" and "rejected" was their kind.
var legacyCallbacks = map[string]travelrule.CallbackKind{
	"approved": travelrule.KindInquiryResolution,
	"rejected": travelrule.KindInquiryResolution,
	"status":   travelrule.KindTransferResolution,
	"txid":     travelrule.KindTransferConfirmation,
}

// storedKind is the word a callback record stores for kind: the word of
// the journal before the kinds were renamed (see legacyCallbacks), so that
// during a rolling deploy the nodes of both releases, sharing one store,
// read each other's records; today's word for a kind that had none then.
func storedKind(kind travelrule.CallbackKind, d travelrule.Decision) string {
	switch kind {
	case travelrule.KindInquiryResolution:
		if d != "" {
			return string(d) // "approved" or "rejected": the kind was the decision
		}
	case travelrule.KindTransferResolution:
		return "status"
	case travelrule.KindTransferConfirmation:
		return "txid"
	}
	return string(kind)
}

// upgradeCallback returns a stored callback record's kind and decision in
// today's words: an older journal's kind becomes the kind it is now, and
// an older "approved" or "rejected" record without a decision gets the
// one its kind said.
func upgradeCallback(kind, decision string) (string, string) {
	now, ok := legacyCallbacks[kind]
	if !ok {
		return kind, decision
	}
	if decision == "" && (kind == string(travelrule.Approved) || kind == string(travelrule.Rejected)) {
		decision = kind
	}
	return string(now), decision
}

// decodeAll reads the stored records that read, skipping the others.
func decodeAll(raw [][]byte) []record {
	recs := make([]record, 0, len(raw))
	for _, b := range raw {
		if r, ok := decode(b); ok {
			recs = append(recs, r)
		}
	}
	return recs
}

// isID reports whether s may be kept as an identifier (a transfer id, a
// reference, an idempotency key): 1 to 128 characters from A-Z, a-z, 0-9
// and -_.:~. Anything else the service or a sender wrote is not kept.
func isID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':' || c == '~') {
			return false
		}
	}
	return true
}

// idOrEmpty is s when isID(s), else "".
func idOrEmpty(s string) string {
	if isID(s) {
		return s
	}
	return ""
}
