package travelrule

import (
	"net/http"
	"slices"
	"unicode/utf8"
)

// callSecrets is what no string of one call may show: the request's
// personal values, every bearer token the call sent, its WithCallHeader
// values and the client's credential. Every check of what the call shows
// is one of its methods; each asks a [secrets] built once per call.
type callSecrets struct {
	pii        []string    // the request's personal values, listed once
	bearers    []*bearer   // every token the call sent, the rejected ones too
	header     http.Header // the call's WithCallHeader values; nil without
	credential *keyTable   // the parts of the client's API key or client secret; nil without

	ids       secrets  // without the header values (see ofIDs)
	all       *secrets // with them: &ids without header values, else its own
	builtFor  int      // len(bearers)+1 when ids and all were built
	keyBuf    [3]*keyTable
	piiBuf    [32]string // where pii starts: a request's values and its callback's tags
	bearerBuf [2]*bearer

	hidden   int8   // hidesTransferID's answer for hiddenID: 0 not asked, 1 shown, 2 hidden
	hiddenID string // the transfer id hidden is about
}

// sent records a token the call sent.
func (s *callSecrets) sent(b *bearer) {
	if s.bearers == nil {
		s.bearers = s.bearerBuf[:0]
	}
	if !slices.Contains(s.bearers, b) {
		s.bearers = append(s.bearers, b)
	}
}

// of is what no code or request id of the call may echo.
func (s *callSecrets) of() *secrets {
	s.build()
	return s.all
}

// ofIDs is what no transfer id of the call may echo: not the
// WithCallHeader values, as a gateway that puts a tenant header's value in
// its transfer ids would lose the journal's joins, and they are the
// caller's, not a person's.
func (s *callSecrets) ofIDs() *secrets {
	s.build()
	return &s.ids
}

func (s *callSecrets) build() {
	if s.builtFor == len(s.bearers)+1 {
		return
	}
	s.builtFor = len(s.bearers) + 1
	keys := s.keys()
	s.ids = secrets{personal: s.pii, keys: keys}
	s.all = &s.ids
	if hv := headerValues(s.header); len(hv) > 0 {
		s.all = &secrets{personal: slices.Concat(s.pii, hv), keys: keys}
	}
}

// headerValues lists the WithCallHeader values of five characters or
// more: a gateway's key is a secret of the caller's. A shorter one (a
// tenant "eu-1") would hide every request id that holds it.
func headerValues(h http.Header) []string {
	var v []string
	for _, vv := range h {
		for _, x := range vv {
			if utf8.RuneCountInString(x) >= 5 {
				v = append(v, x)
			}
		}
	}
	return v
}

// keys are the parts of every token the call sent and of the client's
// credential (each token's table holds them too): what no identifier of an
// answer may hold keyPart characters of (a JWT's claims or signature alone
// too: they are in the token).
func (s *callSecrets) keys() []*keyTable {
	v := s.keyBuf[:0]
	for _, b := range s.bearers {
		v = append(v, b.parts)
	}
	if len(v) == 0 && s.credential != nil {
		v = append(v, s.credential)
	}
	return v
}

// hidesTransferID reports whether id, the call's transfer id, which may be
// the server's (an initiation's answer), is no identifier or echoes a
// secret of the call: the fmt and slog forms of a [TransferResult] and of
// an [*OutcomeUnknownError] then show "[redacted]" in its place. It is
// asked during the call: no result keeps the call's secrets.
func (s *callSecrets) hidesTransferID(id string) bool {
	if s.hidden == 0 || s.hiddenID != id {
		s.hidden, s.hiddenID = 1, id
		if id != "" && (!isIdentifier(id, maxRequestID) || s.ofIDs().echoesWord(id)) {
			s.hidden = 2
		}
	}
	return s.hidden == 2
}

// requestID is the answer's X-Request-Id (from h) for a result, or "" when,
// of a request id's shape, it echoes a secret of the call or one of extra
// (what the answer itself holds of a person): a result's fmt and slog
// forms check its shape.
func (s *callSecrets) requestID(h http.Header, extra ...string) string {
	id := h.Get("X-Request-Id")
	if id == "" || !showRequestID(id) {
		return id
	}
	if s.of().echoes(id) {
		return ""
	}
	if len(extra) > 0 {
		if x := newSecrets(extra, nil); x.echoes(id) {
			return ""
		}
	}
	return id
}

// unshown reports whether an observer may not be told v, a request id or
// an error code, whatever the server echoes there: it echoes the call's
// secrets, or one of ids (its transfer id, txid and idempotency key) of
// five characters or more (a shorter one, such as the docs' "abc", would
// hide every request id that holds it). Telemetry exports what observers
// are told.
func (s *callSecrets) unshown(v string, ids ...string) bool {
	if s.of().echoes(v) {
		return true
	}
	var long []string
	for _, id := range ids {
		if utf8.RuneCountInString(id) >= 5 {
			long = append(long, id)
		}
	}
	x := newSecrets(long, nil)
	return x.echoes(v)
}

// noPII is the personal data of a call that carries none.
type noPII struct{}

func (noPII) appendPII(dst []string) []string { return dst }

// piiList is a call's personal values, listed.
type piiList []string

func (p piiList) appendPII(dst []string) []string { return append(dst, p...) }
