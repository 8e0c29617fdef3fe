package travelrule

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors. Test for them with [errors.Is]; the concrete error is
// usually an [*APIError], a [*ValidationError] or an [*OutcomeUnknownError].
var (
	// ErrBadRequest matches an [*APIError] with status 400, or with the
	// code INVALID_REQUEST or VALIDATION_ERROR.
	ErrBadRequest = errors.New("travelrule: bad request")
	// ErrUnauthorized matches an [*APIError] with status 401 or the code
	// UNAUTHORIZED.
	ErrUnauthorized = errors.New("travelrule: unauthorized")
	// ErrForbidden matches an [*APIError] with status 403 or the code
	// FORBIDDEN. The live service answers 403 to an expired token (the
	// client then fetches a new one and tries once more), to an inactive
	// or expired API key, and to a forbidden operation.
	ErrForbidden = errors.New("travelrule: forbidden")
	// ErrNotFound matches an [*APIError] with status 404, or with one of
	// the codes NOT_FOUND, TRANSFER_NOT_FOUND, COMMENT_NOT_FOUND and
	// CALLBACK_NOT_FOUND.
	ErrNotFound = errors.New("travelrule: not found")
	// ErrRateLimited matches an [*APIError] with status 429, the live
	// service's rate limit: it refused before acting.
	ErrRateLimited = errors.New("travelrule: rate limited")
	// ErrServer matches an [*APIError] with a 5xx status or the code
	// INTERNAL_ERROR.
	ErrServer = errors.New("travelrule: server error")
	// ErrUnexpectedResponse matches an [*APIError] whose status was 2xx but
	// whose body could not be understood (not JSON, too large, or a status
	// value that does not mean success).
	ErrUnexpectedResponse = errors.New("travelrule: unexpected response")
	// ErrNotApplied matches an [*APIError] of a 2xx answer whose status
	// said false: the service answered, and did not apply the request
	// (a refused initiation made no transfer; a refused resolution did not
	// set the decision sent). Nothing was done: sending again is safe once
	// the cause is fixed. It is the error of [Client.ResolveInquiry] when
	// the service answers {"status":false}; without an error code the
	// likely cause is an inquiry already resolved: the other way, which
	// stays so, or this way by an earlier attempt whose outcome was
	// unknown, if the service refuses a repeat. A status false after an earlier attempt
	// the service may have acted on is an [*OutcomeUnknownError] instead,
	// which does not match ErrNotApplied.
	ErrNotApplied = errors.New("travelrule: not applied")
	// ErrInvalidRequest matches a [*ValidationError]: the request was
	// refused by the client before anything was sent.
	ErrInvalidRequest = errors.New("travelrule: invalid request")
	// ErrOutcomeUnknown matches an [*OutcomeUnknownError]: the service may
	// have acted on the request, but no answer says whether it did. A
	// transfer initiation that fails this way must be reconciled (see
	// [OutcomeUnknownError]) before it is sent again.
	ErrOutcomeUnknown = errors.New("travelrule: outcome unknown")
)

// ErrorCode is an error code of the service, from the "code" of an entry
// of its error envelope ({"status":false,"errors":[{"code":…}]}). An
// [*APIError] or a [*LoginError] matches, with [errors.Is], every code its
// answer carried, compared without regard to case; the list is open, so
// ErrorCode("ANY_CODE") works for codes not named here.
type ErrorCode string

// Error implements error.
func (c ErrorCode) Error() string { return "travelrule: service error code " + string(c) }

// The error codes the service's error reference lists (service-wide, not
// per operation).
const (
	CodeInvalidRequest       ErrorCode = "INVALID_REQUEST"        // a generic validation failure
	CodeValidationError      ErrorCode = "VALIDATION_ERROR"       // a field failed validation
	CodeInvalidTravelAddress ErrorCode = "INVALID_TRAVEL_ADDRESS" // malformed or unknown travel address; also matches [ErrInvalidTravelAddress]
	CodeTransferNotFound     ErrorCode = "TRANSFER_NOT_FOUND"     // no transfer with the given id
	CodeCommentNotFound      ErrorCode = "COMMENT_NOT_FOUND"      // no such comment
	CodeCallbackNotFound     ErrorCode = "CALLBACK_NOT_FOUND"     // the confirmation callback URL cannot be resolved
	CodeNotFound             ErrorCode = "NOT_FOUND"              // no such resource
	CodeUnauthorized         ErrorCode = "UNAUTHORIZED"           // API key or token missing
	CodeForbidden            ErrorCode = "FORBIDDEN"              // API key or customer inactive, token expired, or forbidden
	CodeInternalError        ErrorCode = "INTERNAL_ERROR"         // the service failed
)

// codeSentinels maps the documented codes to the status sentinels they
// also match, so that errors.Is(err, ErrNotFound) holds for a
// TRANSFER_NOT_FOUND however the service sent it (a 404, or a 2xx with
// status false).
var codeSentinels = map[ErrorCode]error{
	CodeInvalidRequest:       ErrBadRequest,
	CodeValidationError:      ErrBadRequest,
	CodeInvalidTravelAddress: ErrInvalidTravelAddress,
	CodeTransferNotFound:     ErrNotFound,
	CodeCommentNotFound:      ErrNotFound,
	CodeCallbackNotFound:     ErrNotFound,
	CodeNotFound:             ErrNotFound,
	CodeUnauthorized:         ErrUnauthorized,
	CodeForbidden:            ErrForbidden,
	CodeInternalError:        ErrServer,
}

// matchesCode reports whether target is one of codes, or a sentinel that
// one of codes maps to.
func matchesCode(codes []string, target error) bool {
	for _, c := range codes {
		code := ErrorCode(strings.ToUpper(c))
		if t, ok := target.(ErrorCode); ok && strings.EqualFold(string(t), c) {
			return true
		}
		if s, ok := codeSentinels[code]; ok && s == target {
			return true
		}
	}
	return false
}

// APIError is a non-2xx answer of the service, or a 2xx answer the client
// could not understand. Its Error method names the operation, the status,
// the server's error code and the paths of the fields it refused, and never
// any free text of the server, which may echo personal data: the raw body
// stays in Body and the server's message behind ServerMessage.
type APIError struct {
	// Op is the SDK operation, such as "InitiateTransfer" or "SubmitTxID".
	Op string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Body is the raw answer body, read through the client's size limit.
	// It may carry personal data echoed by the server: do not log it.
	Body []byte
	// Code is the server's first error code: the "code" of the first entry
	// of the live service's "errors" array (such as "VALIDATION_ERROR"), or
	// the body's "error" field when it is a short identifier such as
	// "bad_request". A code that contains one of the request's personal
	// values stays out of Error's text.
	Code string
	// Codes lists every error code of the answer's "errors" array, in
	// order (Code is the first); errors.Is matches each as an [ErrorCode].
	Codes []string
	// Fields lists the fields the server named as invalid, when its error
	// body carried them (see docs/assumptions.md for the shape). Their
	// Reason is the server's text, masked in every printed form.
	Fields []FieldError
	// RequestID is the value of the answer's X-Request-Id header, if any.
	// Error's text shows it only when it has a request id's shape (at most
	// 128 letters, digits and "-_.:;=+/") and no personal value.
	RequestID string
	// RetryAfter is the wait the server asked for with Retry-After on a 429
	// or 503 that the client did not retry (zero if none).
	RetryAfter time.Duration
	// Header holds the answer's headers, up to 64 KiB of them (see
	// boundedHeader).
	Header http.Header

	unexpected          bool
	refused             bool   // a 2xx answer whose status said false: nothing was applied
	earlierMayHaveActed bool   // a status false after an attempt the service may have acted on
	route               string // "METHOD /path" of a 404 or 405, without the query
	cause               error  // after a 401 or 403: why no new token could be had
	hideCode            bool   // a code holds a secret of the call
	reason              string // the client's own words for an answer not understood or a 3xx
	message             string // the server's message (ServerMessage)
	hideRequestID       bool   // RequestID is not of a request id's shape, or contains a personal value
}

// Error implements error. It names the operation and the status, then the
// server's error code, the request's field paths the server named, and the
// request id, each only when it cannot carry server text or personal data
// (see shown.go); never the body or the message.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("travelrule: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.unexpected {
		b.WriteString("unexpected response: ")
	}
	fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.route != "" {
		b.WriteString(" (")
		b.WriteString(e.route)
		b.WriteByte(')')
	}
	b.WriteString(e.falseStatus())
	switch codes := e.visibleCodes(); {
	case len(codes) > 0:
		b.WriteString(": ")
		b.WriteString(joinShown(codes))
	case e.unexpected || e.StatusCode/100 == 3:
		b.WriteString(": ")
		b.WriteString(e.reason)
	}
	if shown := e.shownFields(); len(shown) > 0 {
		b.WriteString(" (fields: ")
		b.WriteString(joinShown(shown))
		b.WriteByte(')')
	}
	if !e.hideRequestID && showRequestID(e.RequestID) {
		b.WriteString(" (request id ")
		b.WriteString(e.RequestID)
		b.WriteString(")")
	}
	if e.cause != nil {
		b.WriteString("; no new token: ")
		b.WriteString(transportText(e.cause))
	}
	return b.String()
}

// falseStatus is what Error says of an answer whose status said false:
// that nothing was applied (and why, likely, for the bare false that
// answers ResolveInquiry), or that an earlier attempt may have been; ""
// for any other answer.
func (e *APIError) falseStatus() string {
	switch {
	case e.refused && e.Op == "ResolveInquiry" && len(e.allCodes()) == 0:
		// A bare false: what the sandbox answers, and the excerpt shows,
		// when the inquiry was resolved the other way (A3); a live
		// service may answer it too to a repeat of a decision an earlier
		// attempt (an ErrOutcomeUnknown) applied.
		return ", status false, not applied (likely already resolved: the other way, or this way by an earlier attempt)"
	case e.refused:
		return ", status false, not applied"
	case e.earlierMayHaveActed:
		return ", status false (an earlier attempt may have been applied)"
	}
	return ""
}

// shownFields are the fields of Fields that Error names, each once, in
// order: those whose name is a path of the request, not a server's text.
func (e *APIError) shownFields() []string {
	if len(e.Fields) == 0 {
		return nil
	}
	paths := requestPaths()
	var shown []string
	for _, f := range e.Fields {
		if paths[f.Field] && !slices.Contains(shown, f.Field) {
			shown = append(shown, f.Field)
		}
	}
	return shown
}

// ServerMessage returns the server's message, from the body's "message",
// "error" or "detail" field, as the server sent it. It may hold personal
// data or a credential the server echoed: treat it as you treat Body. No
// printed form of the error shows it.
func (e *APIError) ServerMessage() string { return e.message }

// redirectReason is the client's words for an unfollowed 3xx, or "".
func (e *APIError) redirectReason() string {
	if e.StatusCode/100 == 3 {
		return e.reason
	}
	return ""
}

// visibleCodes returns the codes Error shows: those of Codes (or Code
// alone) that showCode lets through, none at all when one of them holds a
// personal value of the request.
func (e *APIError) visibleCodes() []string {
	if e.hideCode {
		return nil
	}
	codes := e.Codes
	if len(codes) == 0 && e.Code != "" {
		codes = []string{e.Code}
	}
	out := make([]string, 0, len(codes))
	for _, c := range codes {
		if showCode(c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// maxShown bounds the codes or field paths an error string lists, so that
// a server's thousand-entry errors array makes a line, not a page.
const maxShown = 5

// joinShown lists at most maxShown of items, and how many more there are.
func joinShown(items []string) string {
	if len(items) <= maxShown {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:maxShown], ", ") + " (+" + strconv.Itoa(len(items)-maxShown) + " more)"
}

// Unwrap returns why no new token could be had after a 401 or 403 answer
// (a [*LoginError] when the client logs in with [WithAPIKey]), or nil.
func (e *APIError) Unwrap() error { return e.cause }

// Format implements fmt.Formatter: every verb prints the text of Error,
// and %+v (what log/slog's text handler and testify print) and %#v the
// fields too, after that text, without the body, the headers, the
// server's message or any value Error leaves out.
func (e APIError) Format(f fmt.State, verb rune) {
	if verb == 'v' && (f.Flag('#') || f.Flag('+')) {
		io.WriteString(f, e.Error())
		io.WriteString(f, " ")
		code, requestID := e.Code, e.RequestID
		if e.hideCode || !showCode(code) {
			code = mask(code)
		}
		if e.hideRequestID {
			requestID = mask(requestID)
		}
		fields := e.Fields
		more := ""
		if len(fields) > maxShown {
			fields, more = fields[:maxShown], " (+"+strconv.Itoa(len(e.Fields)-maxShown)+" more)"
		}
		fmt.Fprintf(f, "&travelrule.APIError{Op:%s StatusCode:%d Code:%s Codes:%s Message:%s Fields:%v%s RequestID:%s RetryAfter:%s Body:%s Header:[%d keys]}",
			e.Op, e.StatusCode, code, joinShown(e.visibleCodes()), mask(e.message), fields, more, shownRequestID(requestID), e.RetryAfter, size(e.Body), len(e.Header))
		return
	}
	writeError(f, verb, e.Error())
}

// MarshalJSON encodes the error as the JSON string of its Error text, so
// that a log line or a struct that carries it as JSON shows no more than
// Error does.
func (e APIError) MarshalJSON() ([]byte, error) { return json.Marshal(e.Error()) }

// LogValue implements slog.LogValuer: the text of Error, under every
// handler.
func (e APIError) LogValue() slog.Value { return slog.StringValue(e.Error()) }

// writeError writes an error's text as %q asks, or as it is.
func writeError(f fmt.State, verb rune, text string) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", text)
		return
	}
	io.WriteString(f, text)
}

// Is reports whether the error matches one of the package's sentinels, by
// its status or by its codes, or one of its codes as an [ErrorCode].
func (e *APIError) Is(target error) bool {
	if matchesCode(e.allCodes(), target) {
		return true
	}
	switch target {
	case ErrBadRequest:
		return e.StatusCode == http.StatusBadRequest
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrServer:
		return e.StatusCode >= 500 && e.StatusCode <= 599
	case ErrUnexpectedResponse:
		return e.unexpected
	case ErrNotApplied:
		return e.refused
	}
	return false
}

// allCodes is Codes, or Code alone.
func (e *APIError) allCodes() []string {
	if len(e.Codes) == 0 && e.Code != "" {
		return []string{e.Code}
	}
	return e.Codes
}

// FieldError is one fault of one field. Field is the JSON path of the field
// as it goes on the wire ("asset", "originator.country",
// "beneficiary.firstName"); Reason says what is wrong without repeating the
// value.
type FieldError struct {
	// Field is the JSON path of the field, such as "originator.country".
	Field string `json:"field"`
	// Reason says what is wrong, without the value. From the service's
	// answer it is the server's text, which may hold personal data: every
	// printed form masks it.
	Reason string `json:"reason"`

	server bool // from the service's answer: Reason is its text
}

// Error implements error. The reason the service gave and a path that is
// not one of the request's are shown as "[redacted]": read them from the
// fields.
func (f FieldError) Error() string { return f.shownField() + ": " + f.shownReason() }

// Format implements fmt.Formatter with the text of Error under every verb.
func (f FieldError) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('#') {
		fmt.Fprintf(s, "travelrule.FieldError{Field:%s Reason:%s}", f.shownField(), f.shownReason())
		return
	}
	io.WriteString(s, f.Error())
}

// MarshalJSON encodes the field error's wire form, or, for one from the
// service's answer, the form Error shows.
func (f FieldError) MarshalJSON() ([]byte, error) {
	type wire FieldError // without this method
	return json.Marshal(wire{Field: f.shownField(), Reason: f.shownReason()})
}

func (f FieldError) shownField() string {
	if !f.server || requestPaths()[f.Field] {
		return f.Field
	}
	return mask(f.Field)
}

func (f FieldError) shownReason() string {
	if f.server {
		return mask(f.Reason)
	}
	return f.Reason
}

// ValidationError lists every fault the client found in a request before
// sending it. Nothing was sent. It matches [ErrInvalidRequest].
type ValidationError struct {
	// Fields lists every fault found, in the order of the request's fields.
	Fields []FieldError
}

// Error implements error. Values are never repeated, only field paths.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("travelrule: invalid request: ")
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Reason)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidRequest) hold.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidRequest }

// FieldErrors returns the faults of each field that err names, whichever
// side found them: the client before sending (a [*ValidationError],
// [ErrInvalidRequest]) or the service (an [*APIError]'s Fields, from a 400
// or a refusal). It returns nil when err carries none. A fault from the
// service's answer shows its reason, and a path that is not one of the
// request's, as "[redacted]" in its fmt forms (see [FieldError]); its
// fields hold the server's text.
func FieldErrors(err error) []FieldError {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Fields
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Fields
	}
	return nil
}

// Has reports whether field (a JSON path such as "originator.country") is
// among the faults.
func (e *ValidationError) Has(field string) bool {
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// OutcomeUnknownError reports a call that failed after the service may have
// acted on it: a 5xx answer other than 501 and a 503 with Retry-After, a 503
// without Retry-After, a 2xx answer the client could not understand, an
// unfollowed 3xx, a time-out or cancellation after
// the request was written, or a connection dropped or an HTTP/2 stream reset
// before the answer came. For a
// transfer initiation this means a transfer may exist: reconcile it (through
// its status callback, matched by CallbackRef or TxID, or with the service's
// operator) before initiating the same payment again, or send it again with
// the same IdempotencyKey if the service honours idempotency keys. Every
// other operation may be sent again as it was (the same decision, the same
// txId, the same beneficiary, a read): the client retried it already,
// within its budget. The error's text says which applies.
//
// It matches [ErrOutcomeUnknown] with errors.Is, and unwraps to the cause, so
// errors.Is(err, context.DeadlineExceeded) and errors.As(err, &apiErr) still
// work where they apply.
type OutcomeUnknownError struct {
	// Op is the SDK operation, such as "InitiateTransfer" or "SubmitTxID".
	Op string
	// Attempts is how many times the request was sent.
	Attempts int
	// TxID is the request's txId, if it had one.
	TxID string
	// TransferID is the transfer identifier of a ResolveInquiry or
	// SubmitTxID call, or the one an initiation's answer named.
	TransferID string
	// Callback is the request's callback URL. It may carry a capability
	// tag (see [NewCallbackURL]): treat it as a secret.
	Callback string
	// CallbackRef is the reference carried by a capability callback URL
	// made with [NewCallbackURL], or "" if the callback URL has none.
	CallbackRef string
	// IdempotencyKey is the Idempotency-Key the request carried, or "" if
	// the client did not send one.
	IdempotencyKey string
	// Err is the cause: an [*APIError], a context error or a transport error.
	Err error

	hideTransferID bool // TransferID holds a personal or secret value of the request
}

// Error implements error. It says what to do next, which depends on Op.
func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("travelrule: %s: outcome unknown after %d attempt(s), %s: %v", e.Op, e.Attempts, e.advice(), e.Err)
}

// advice is what the caller of e.Op does next. It follows the retry
// policy: every operation but an initiation is sent again safely (each
// is retried as repeatable, retry.go), while an initiation may have made a
// transfer that only its callbacks will show. An operation it does not
// know gets the initiation's caution.
func (e *OutcomeUnknownError) advice() string {
	switch e.Op {
	case "InitiateTransfer":
		if e.IdempotencyKey != "" {
			return "reconcile before sending again (a transfer may exist; the same IdempotencyKey makes sending again safe only if the service honours it, which its docs do not say)"
		}
		return "reconcile before sending again (a transfer may exist; its callbacks name it by CallbackRef, and package journal follows it)"
	case "ResolveInquiry":
		return "the same decision may be sent again (resolving is idempotent)"
	case "SubmitTxID":
		return "the same txId may be submitted again (the service records one per transfer)"
	case "GenerateTravelAddress":
		return "the same request may be sent again (an upsert, which gives the same beneficiary the same address)"
	case "LookupTravelAddress", "SearchVASPs":
		return "it may be sent again (a read)"
	}
	return "reconcile before sending again"
}

// Format implements fmt.Formatter: every verb prints the text of Error,
// and %+v and %#v the fields too, after that text, with the callback URL
// (which may carry a capability tag) redacted.
func (e OutcomeUnknownError) Format(f fmt.State, verb rune) {
	if verb == 'v' && (f.Flag('#') || f.Flag('+')) {
		io.WriteString(f, e.Error())
		io.WriteString(f, " ")
		fmt.Fprintf(f, "&travelrule.OutcomeUnknownError{Op:%s Attempts:%d TxID:%s TransferID:%s Callback:%s CallbackRef:%s IdempotencyKey:%s Err:%v}",
			e.Op, e.Attempts, shownID(e.TxID), shownTransferID(e.TransferID, e.hideTransferID), mask(e.Callback), shownID(e.CallbackRef), e.IdempotencyKey, e.Err)
		return
	}
	writeError(f, verb, e.Error())
}

// MarshalJSON encodes the error as the JSON string of its Error text.
func (e OutcomeUnknownError) MarshalJSON() ([]byte, error) { return json.Marshal(e.Error()) }

// LogValue implements slog.LogValuer: the text of Error, under every
// handler.
func (e OutcomeUnknownError) LogValue() slog.Value { return slog.StringValue(e.Error()) }

// Is makes errors.Is(err, ErrOutcomeUnknown) hold.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// Unwrap returns the cause.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// transportError is a call that failed below HTTP: no answer, or no whole
// one. Its text is the client's own (see transportText), since the
// transports' texts can quote the server's bytes; the cause, such as a
// *url.Error, stays reachable with errors.Is and errors.As.
type transportError struct {
	op     string
	method string
	url    string // the client's own request URL, without a query
	err    error
}

// Error implements error in the client's own words. A call that could not
// obtain a token says that nothing was sent.
func (e *transportError) Error() string {
	var te *tokenError
	if errors.As(e.err, &te) {
		return "travelrule: " + e.op + ": nothing sent: " + transportText(e.err)
	}
	method := e.method
	if method == "" {
		method = http.MethodPost
	}
	return "travelrule: " + e.op + ": " + method + " " + e.url + ": " + transportText(e.err)
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *transportError) Unwrap() error { return e.err }

// sanitize keeps query strings (transfer ids) out of error text: a
// *url.Error names the URL without its query.
func sanitize(err error) error {
	var ue *url.Error
	var te *tokenError
	if errors.As(err, &te) || !errors.As(err, &ue) {
		// A token's failure is described in the client's words already
		// (tokenError.Error), and its types must stay reachable.
		return err
	}
	clean := *ue
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.RawQuery, u.Fragment, u.User = "", "", nil
		clean.URL = u.String()
	} else {
		clean.URL = "[unparseable URL]"
	}
	return &clean
}

// errorBody is the error shape the client understands: "message" or "error"
// (a string, or an object with "message"), and optional "fields". Anything
// else is kept in APIError.Body only.
type errorBody struct {
	Message flexString      `json:"message"`
	Error   json.RawMessage `json:"error"`
	Detail  flexString      `json:"detail"`
	Fields  []FieldError    `json:"fields"`
	Errors  errorList       `json:"errors"` // the live service's envelope
}

// newAPIError builds the *APIError of a non-2xx answer to a call with the
// secrets sec, which its request id and codes are shown only without.
func newAPIError(op string, status int, h http.Header, body []byte, sec secrets) *APIError {
	e := &APIError{
		Op:         op,
		StatusCode: status,
		Body:       body,
		RequestID:  h.Get("X-Request-Id"),
		Header:     boundedHeader(h),
	}
	e.hideRequestID = sec.echoes(e.RequestID)
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		e.RetryAfter, _ = retryAfter(h, time.Now())
	}
	if status >= 300 && status <= 399 {
		e.reason = "redirect not followed"
		return e
	}
	var eb errorBody
	if len(body) == 0 || json.Unmarshal(body, &eb) != nil {
		return e
	}
	e.readErrorBody(&eb, &sec)
	return e
}

// readErrorBody sets the code, codes, message and fields of an error body:
// the live service's "errors" array first, then the other shapes.
func (e *APIError) readErrorBody(eb *errorBody, sec *secrets) {
	msg := e.readErrorField(eb.Error)
	if codes := eb.Errors.codes(); len(codes) > 0 {
		e.Code, e.Codes = codes[0], codes
	}
	var first string
	if len(eb.Errors) > 0 {
		first = eb.Errors[0].Message
	}
	for _, m := range []string{string(eb.Message), first, string(eb.Detail), e.Code} {
		if msg == "" {
			msg = m
		}
	}
	if eb.Message != "" {
		msg = string(eb.Message)
	}
	for _, c := range e.allCodes() {
		if !documentedCode(c) && sec.echoes(c) {
			e.hideCode = true
		}
	}
	e.message = msg
	for _, f := range eb.Fields[:min(len(eb.Fields), maxErrorItems)] {
		e.Fields = append(e.Fields, FieldError{Field: f.Field, Reason: f.Reason, server: true})
	}
	for _, it := range eb.Errors {
		if it.Field != "" {
			e.Fields = append(e.Fields, FieldError{Field: it.Field, Reason: it.Message, server: true})
		}
	}
}

// withRoute names, in the text of a 404 or 405 that carries no error code
// of the service (a proxy's or a router's: the service would have named
// its code, such as TRANSFER_NOT_FOUND), the method and the path of rawURL
// the request went to, never its query (it carries transfer ids): a wrong
// base path prefix shows where the request went. It returns e.
func (e *APIError) withRoute(method, rawURL string) *APIError {
	if e.StatusCode != http.StatusNotFound && e.StatusCode != http.StatusMethodNotAllowed || len(e.allCodes()) > 0 {
		return e
	}
	if u, err := url.Parse(rawURL); err == nil && u.Path != "" {
		e.route = method + " " + u.EscapedPath()
	}
	return e
}

// refusedAnswer is the error of a 2xx answer whose status said false: the
// service refused, with the codes of its "errors" array.
func refusedAnswer(op string, status int, h http.Header, body []byte, sec secrets) *APIError {
	e := newAPIError(op, status, h, body, sec)
	e.refused = true
	return e
}

// readErrorField reads the body's "error" field: a code, a message, or an
// object with both. It sets e.Code and returns the message.
func (e *APIError) readErrorField(raw json.RawMessage) (msg string) {
	var code string
	var obj struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	switch {
	case len(raw) == 0:
	case json.Unmarshal(raw, &code) == nil:
		if !isIdentifier(code, maxCode) {
			return code
		}
		e.Code = code
	case json.Unmarshal(raw, &obj) == nil:
		if isIdentifier(obj.Code, maxCode) {
			e.Code = obj.Code
		}
		return obj.Message
	}
	return ""
}

// unexpectedAnswer is the error of a 2xx answer whose body does not mean
// success, or could not be read.
func unexpectedAnswer(op string, status int, h http.Header, body []byte, sec secrets) *APIError {
	return &APIError{
		Op:            op,
		StatusCode:    status,
		Body:          body,
		reason:        "answer body not understood",
		RequestID:     h.Get("X-Request-Id"),
		Header:        boundedHeader(h),
		unexpected:    true,
		hideRequestID: sec.echoes(h.Get("X-Request-Id")),
	}
}

// maxHeaderCopy bounds the headers an error keeps; the default transport
// refuses larger headers outright (MaxResponseHeaderBytes), a transport
// given to WithHTTPClient may not.
const maxHeaderCopy = 64 << 10

// boundedHeader copies h, key by key in sorted order, until the copy holds
// maxHeaderCopy bytes of keys and values; what does not fit is left out.
func boundedHeader(h http.Header) http.Header {
	out := make(http.Header, min(len(h), 32))
	size := 0
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			size += len(k) + len(v)
			if size > maxHeaderCopy {
				return out
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}
