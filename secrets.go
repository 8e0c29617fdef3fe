package travelrule

import (
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// secrets is what no string of one call may show: the request's personal
// values, every bearer token the call sent, its WithCallHeader values and
// the client's credential. Every check of what the call shows against
// them is one of its methods.
type secrets struct {
	pii        []string    // the request's personal values, listed once
	auths      []string    // every Authorization header the call sent, the rejected ones too
	header     http.Header // the call's WithCallHeader values; nil without
	credential string      // the client's API key or client secret; "" without
	parts      []string    // credentialParts, for partsOf of the auths
	partsOf    int

	hidden   int8   // hidesTransferID's answer for hiddenID: 0 not asked, 1 shown, 2 hidden
	hiddenID string // the transfer id hidden is about
}

// sent records an Authorization header the call sent.
func (s *secrets) sent(auth string) {
	if !slices.Contains(s.auths, auth) {
		s.auths = append(s.auths, auth)
	}
}

// piiValues lists what no error string of the call may show: the
// request's personal values and every bearer token the call sent (the one
// a 401 or 403 rejected too, which a retry replaced), which a hostile
// server may echo in a header or a code.
func (s *secrets) piiValues() []string {
	return slices.Concat(s.pii, s.tokenParts(), s.headerValues())
}

// headerValues lists the values of the call's WithCallHeader options of
// five characters or more: a gateway's key is a secret of the caller's. A
// shorter one (a tenant "eu-1") would hide every request id that holds
// it.
func (s *secrets) headerValues() []string {
	var v []string
	for _, vv := range s.header {
		for _, x := range vv {
			if utf8.RuneCountInString(x) >= 5 {
				v = append(v, x)
			}
		}
	}
	return v
}

// tokenParts returns the parts (see tokenParts) of every bearer token the
// call sent.
func (s *secrets) tokenParts() []string {
	var v []string
	for _, auth := range s.auths {
		if tok, ok := strings.CutPrefix(auth, "Bearer "); ok {
			v = append(v, tokenParts(tok)...)
		}
	}
	return v
}

// credentialParts is tokenParts and the client's credential: what no
// request id, code or transfer id of an answer may hold eight characters
// of (holdsTokenPart), lest an error, a result or an observer show it.
// The credential is checked that way only, not searched for in texts as
// the personal values are (piiValues): that search costs an initiation a
// third more for a value that, unlike a name, a server has no reason to
// reshape. The list is the call's own: it is not to be changed.
func (s *secrets) credentialParts() []string {
	if s.parts == nil || s.partsOf != len(s.auths) {
		v := s.tokenParts()
		if s.credential != "" {
			v = append(v, s.credential)
		}
		s.parts, s.partsOf = slices.Clip(v), len(s.auths)
	}
	return s.parts
}

// hidesTransferID reports whether id, the call's transfer id, which may be
// the server's (an initiation's answer), holds a personal or secret value
// of the call: the fmt and slog forms of a [TransferResult] and of an
// [*OutcomeUnknownError] then show "[redacted]" in its place.
func (s *secrets) hidesTransferID(id string) bool {
	if s.hidden == 0 || s.hiddenID != id {
		s.hidden, s.hiddenID = 1, id
		// Not the WithCallHeader values: a gateway that puts a tenant
		// header's value in its transfer ids would lose the journal's
		// joins, and they are the caller's, not a person's.
		if containsAny(id, s.pii) || holdsTokenPart(id, s.credentialParts()) {
			s.hidden = 2
		}
	}
	return s.hidden == 2
}

// requestID is the answer's X-Request-Id (from h) for a result, or "" when
// it holds one of the call's values (piiValues), of extra (what the answer
// itself holds of a person) or a part of a bearer token the call sent
// (holdsTokenPart): a result's fmt and slog forms check only its shape.
func (s *secrets) requestID(h http.Header, extra ...string) string {
	id := h.Get("X-Request-Id")
	if containsAnywhere(id, append(s.piiValues(), extra...)) || holdsTokenPart(id, s.credentialParts()) {
		return ""
	}
	return id
}

// unshown lists what an observer is never told in a request id or an
// error code, whatever the server echoes there: the call's personal and
// secret values (piiValues), and ids (its transfer id, txid and
// idempotency key) of five characters or more (a shorter one, such as the
// docs' "abc", would hide every request id that holds it). Telemetry
// exports what observers are told, and holds none of these; see also
// holdsCredential.
func (s *secrets) unshown(ids ...string) []string {
	v := s.piiValues()
	for _, id := range ids {
		if utf8.RuneCountInString(id) >= 5 {
			v = append(v, id)
		}
	}
	return v
}

// holdsCredential reports whether v, a request id or a code, holds a part
// of the call's bearer tokens or of the client's API key or client secret
// (see credentialParts and holdsTokenPart: any eight characters of one).
func (s *secrets) holdsCredential(v string) bool { return holdsTokenPart(v, s.credentialParts()) }

// tokenParts returns a bearer token and, for a JWT, its claims and its
// signature: a server that echoes only a part of the token (its signature
// in a request id, say) must not get it into an error string either. The
// JWT's header is left out: it is the same for every token of a service
// and secret of none.
func tokenParts(tok string) []string {
	parts := []string{tok}
	if segs := strings.Split(tok, "."); len(segs) == 3 {
		parts = append(parts, segs[1], segs[2])
	}
	return parts
}

// noPII is the personal data of a call that carries none.
type noPII struct{}

func (noPII) piiValues() []string { return nil }

// piiList is a call's personal values, listed.
type piiList []string

func (p piiList) piiValues() []string { return p }
