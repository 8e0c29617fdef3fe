// Package travelrule is a client for the Travel Rule Transfer Exchange
// Service (interface description 3.2.1), which a virtual asset service
// provider (VASP) uses to send the IVMS101 data of the originator and the
// beneficiary of a transfer to the beneficiary's VASP.
//
// # The flow
//
//	originator VASP (you)                  service                    beneficiary VASP
//	---------------------                  -------                    ----------------
//	InitiateTransfer ──POST /transfers/initiate──▶
//	                 ◀── 200 {"status":"succes"}
//	                                         ──── transfer inquiry ────▶
//	callback.Handler ◀── POST <callback URL> status callbacks
//	                     (received, approved|rejected, completed)
//
//	As a beneficiary, the service calls you with an inbound inquiry:
//	callback.Handler ◀── POST <callback URL> {"status":"inquiry", ...}
//	ResolveInquiry   ──POST /transfers/inquiryResolution?q=<id>──▶
//	                 ◀── 200 {"status":true}
//
// A [Client] is made once with [NewClient] and a token source of bearer
// JWTs ([WithTokenSource], [WithClientCredentials] or [StaticToken]), and is
// safe for concurrent use. [Client.InitiateTransfer] validates the request
// ([TransferRequest.Validate]) before anything is sent;
// [Client.ResolveInquiry] answers an inquiry. Status callbacks arrive at the
// callback URL given in the request: the sub-package callback has the
// handler to mount in your own mux, and [NewCallbackURL] makes a per-transfer
// callback URL that lets the handler match each callback to its transfer
// and refuse forged ones. The sub-package travelruletest runs the whole
// service in-process for tests and examples.
//
// # Travel addresses
//
// A beneficiary names its account at its VASP with a travel address of the
// Travel Rule Protocol (TRP): "ta" and the base58check form of a URI
// without scheme whose query has t=i, such as
// "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv" for
// "beneficiary.com/x/12345?t=i". [DecodeTravelAddress] reads one (the
// checksum catches a mistyped address), [EncodeTravelAddress] makes one,
// and [TransferRequest.ValidateStrict] refuses a travelAddress that starts
// with "ta" and does not decode, before anything is sent.
//
// # Errors and retries
//
// Errors are typed: [*ValidationError] (nothing was sent), [*APIError] (the
// service answered; match [ErrBadRequest], [ErrUnauthorized], [ErrNotFound]
// and the others with errors.Is), and [*OutcomeUnknownError] (matched by
// [ErrOutcomeUnknown]): the service may have acted, but no answer says
// whether it did. A transfer initiation is not idempotent, so the client
// retries it only where the service cannot have acted (429 and 503 that
// carry Retry-After, honouring it; connection failures before anything was
// written;
// one retry with a refreshed token after a 401) and returns
// ErrOutcomeUnknown otherwise, carrying the txId and the callback reference
// to reconcile with. [WithIdempotency] sends an Idempotency-Key so that a
// service that honours it lets those failures be retried too.
//
// # Personal data
//
// [Party], [TransferRequest] and the callback model redact personal data in
// their fmt and log/slog forms. The client logs nothing unless given a
// logger ([WithLogger]), and never logs bearer tokens, bodies, query strings
// or personal data; error strings carry no server text that could echo it.
package travelrule
