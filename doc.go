// Package travelrule is a client for the Travel Rule Transfer Exchange
// Service (interface description 3.2.1; KYCAID's TRP API 3.2.1, production
// https://trp.travel-rule.com), which a virtual asset service provider
// (VASP) uses to send the IVMS101 data of the originator and the
// beneficiary of a transfer to the beneficiary's VASP.
//
// # The five stages
//
// The service's own end-to-end guide has five stages, each a call here:
//
//  1. token          WithAPIKey             POST /auth/token (x-api-key) → a JWT, cached
//  2. travel address GenerateTravelAddress  POST /travel-address/generate → "ta…"
//  3. initiation     InitiateTransfer       POST /transfers/initiate → {"status":true,"data":{"transferId"}}
//  4. inquiry        callback.Handler       ◀── the beneficiary VASP's inquiry
//     and resolution ResolveInquiry         POST /transfers/inquiryResolution?q=<id>
//  5. txId           SubmitTxID             POST /transfers/txId?q=<id> after the broadcast
//
// Besides: [Client.LookupTravelAddress] (POST /travel-address/decode: the
// beneficiary an address of the service's stands for) and
// [Client.SearchVASPs] (GET /discovery/vasp: the service's directory).
// With a travelAddress an initiation takes the OPEN_VASP flow; with only
// an email (the top-level Email, or the beneficiary's Email, which wins)
// it takes the EMAIL flow. A party is a natural person or, with
// PersonType "legal" and a LegalName, a legal entity.
//
// A [Client] is made once with [NewClient] and its authentication: the
// service's API key ([WithAPIKey]), or a token source of bearer JWTs
// ([WithTokenSource], [WithClientCredentials], [StaticToken]); it is safe
// for concurrent use. Every call validates its request before anything is
// sent. Callbacks arrive at the callback URL given in the request: the
// sub-package callback has the handler to mount in your own mux, and
// [NewCallbackURL] makes a per-transfer callback URL that lets the handler
// match each callback to its transfer and refuse forged ones. The
// sub-package travelruletest runs the whole service in-process for tests
// and examples, as the live service's docs describe it.
//
// # Answers
//
// The excerpt of the interface description documents bare answers
// ({"status":"succes"}); the live service wraps them
// ({"status":true,"data":{…}}) and its errors
// ({"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"…"}]}).
// The client reads both: a status of true, "true", "succes" or "success" is
// success, fields are read at the top level or inside data, unknown fields
// are ignored and every result keeps the raw body. The codes reach
// [APIError.Codes] and match, with errors.Is, as [ErrorCode]s
// ([CodeValidationError], [CodeTransferNotFound], …) and as the status
// sentinels they mean.
//
// # Travel addresses
//
// A travel address names the beneficiary's account at its VASP: "ta" and
// a URL-safe token. The Travel Rule Protocol (TRP) makes it the base58
// form of a URI without scheme whose query has t=i, followed by a 4-byte
// checksum ("ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv" for
// "beneficiary.com/x/12345?t=i"); the live service leaves the checksum
// out, and some of its addresses are opaque. [InspectTravelAddress] tells
// the form, [DecodeTravelAddress] reads the URI where one can be read,
// [EncodeTravelAddress] and [EncodeUncheckedTravelAddress] make one, and
// [TransferRequest.ValidateStrict] refuses, before anything is sent, only
// what the service cannot have made, a mistyped checksummed address among
// it.
//
// # Errors and retries
//
// Errors are typed: [*ValidationError] (nothing was sent), [*LoginError]
// (the API key could not be exchanged for a token; nothing else was sent),
// [*APIError] (the service answered; match [ErrBadRequest],
// [ErrUnauthorized], [ErrForbidden], [ErrNotFound], the codes and the
// others with errors.Is), and [*OutcomeUnknownError] (matched by
// [ErrOutcomeUnknown]): the service may have acted, but no answer says
// whether it did. A transfer initiation is not idempotent, so the client
// retries it only where the service cannot have acted (a 429, the
// service's rate limit, honouring its Retry-After; connection failures
// before anything was written; an HTTP/2 stream above a GOAWAY's last
// stream id; one retry with a new token after a 401 or a 403, the
// service's answer to an expired token)
// and returns ErrOutcomeUnknown otherwise, carrying the txId and the
// callback reference to reconcile with. The other calls may be sent again
// and are retried after ambiguous failures too. [WithIdempotency] sends an
// Idempotency-Key so that a service that honours it lets an initiation be
// retried too.
//
// # Personal data
//
// [Party], [TransferRequest], the travel-address types and the callback
// model redact personal data in their fmt and log/slog forms. The client
// logs nothing unless given a logger ([WithLogger]), and never logs API
// keys, bearer tokens, bodies, query strings or personal data; error
// strings carry no server text that could echo it.
package travelrule
