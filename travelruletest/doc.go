// Package travelruletest runs the Travel Rule Transfer Exchange Service
// (KYCAID's "Travel Rule Protocol (TRP) API", interface description
// 3.2.1) in-process, for tests and examples, in the spirit of
// net/http/httptest. By default it is the live service's twin, as far as
// the service's documentation goes:
//
//	srv := travelruletest.NewServer()
//	defer srv.Close()
//	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
//
// (travelrule.WithTokenSource(srv.TokenSource()) skips the login.)
// [NewTLSServer] serves HTTPS instead, with HTTP/2 for clients that offer it
// by ALPN (HTTP/1.1 for the others), a certificate of its own
// ([Server.Certificate]) and a client that trusts it ([Server.Client]):
//
//	srv := travelruletest.NewTLSServer()
//	defer srv.Close()
//	client, err := travelrule.NewClient(srv.URL,
//		travelrule.WithAPIKey(travelruletest.DefaultAPIKey), travelrule.WithHTTPClient(srv.Client()))
//
// The server serves the five stages of the live service's guide (a token
// for an API key, a travel address, the initiation, the inquiry and its
// resolution, the txId) and its VASP search, checks every request, sends
// the live service's four callbacks, signed and retried as it does them,
// can play the counterparty VASP ([Server.StartInquiry], or over HTTP the
// control plane below) or send the integrator the inquiries of its own
// travel addresses ([WithInquiryURL]), honours Idempotency-Key, injects
// faults on demand ([Fault]) and records what it saw ([Server.Transfers],
// [Server.Requests], [Server.Callbacks], [Server.Stats],
// [Server.WaitCallbacks]), the most recent 10,000 of each kind
// ([WithRecordLimit]). It logs nothing unless given a logger, and never
// logs bodies, API keys, tokens or the personal data they carry (see
// [WithLogger] for what a line holds).
//
// # Where each behaviour comes from
//
// Three sources decide, marked below: [live docs] is the live service's
// documentation (docs.travel-rule.com, as read for this SDK); [excerpt] is
// the interface description 3.2.1, which leaves much "not shown"; [own] is
// the sandbox's own choice where neither says, listed with the others in
// docs/assumptions.md ("The sandbox's own choices"). Where the two
// documents disagree the sandbox answers as the live docs say by default,
// and as the excerpt says under an option.
//
// # Endpoints
//
// Every endpoint answers under [Server.URL], path prefix included
// ([WithPathPrefix]), but the OAuth2 token endpoint at /oauth/token:
//
//	POST {URL}/auth/token                   API key → bearer JWT             [live docs]
//	POST {URL}/travel-address/generate      a beneficiary's travel address   [live docs]
//	POST {URL}/travel-address/decode        the beneficiary of an address    [live docs]
//	POST {URL}/transfers/initiate           a transfer                       [excerpt, live docs]
//	POST {URL}/transfers/inquiryResolution  resolves an inbound inquiry      [excerpt, live docs]
//	POST {URL}/transfers/txId?q=<id>        the transaction's hash           [live docs]
//	GET  {URL}/discovery/vasp               VASP search, no token            [live docs]
//	POST /oauth/token                       OAuth2 client credentials        [own]
//	POST {URL}/sandbox/inquiries            control plane: an inquiry        [own]
//	GET  {URL}/sandbox/transfers/{id}       control plane: a transfer        [own]
//	POST {URL}/sandbox/faults               control plane: the faults        [own]
//	GET  {URL}/sandbox/faults               control plane: the faults set    [own]
//	POST {URL}/sandbox/decision             control plane: the decision      [own]
//
// The operations (the POSTs from generate to txId, see [Operation]) need
// "Authorization: Bearer <JWT>" and a body declared
// "Content-Type: application/json" [excerpt]; each request is checked for
// its method (405), then its token (401, 403), then its Content-Type
// (415), then its body (413, 400) [own].
//
// # Behaviour
//
//   - API keys [live docs]: POST {URL}/auth/token, no body (one sent is
//     ignored), the key in "x-api-key: <key>" or "Authorization: ApiKey
//     <key>", answers 200, unwrapped, {"accessToken":"<JWT>","expiresIn":
//     3600,"expiresAt":"2026-05-11T10:00:00.000Z","tokenType":"Bearer"}
//     (expiresIn is the token lifetime in seconds, expiresAt the JWT's
//     exp in ISO 8601 UTC with milliseconds) with Cache-Control: no-store.
//     A missing or unknown key is 401 UNAUTHORIZED; an inactive key is 403
//     FORBIDDEN "API key inactive", an expired one 403 FORBIDDEN "API key
//     expired". The keys [own]: [DefaultAPIKey] is accepted (others with
//     [WithAPIKeys]); [InactiveAPIKey] and [ExpiredAPIKey] are refused so
//     ([WithInactiveAPIKeys], [WithExpiredAPIKeys] add more). Keys are
//     compared by their SHA-256, and never recorded or logged.
//   - Tokens: JWTs signed EdDSA (Ed25519) [live docs: the example token's
//     header], under a key random per server, iss "travelruletest", aud
//     "travel-rule-transfer-exchange", exp required, an hour by default
//     ([WithTokenLifetime]) [own; the live docs say about an hour]. The same
//     tokens come from the login, [Server.TokenSource] and the OAuth2
//     endpoint. A missing token, one that is not Bearer, malformed, forged
//     ([Server.ForgedToken]), of another algorithm or with the wrong
//     claims is 401 UNAUTHORIZED; an expired one ([Server.ExpiredToken]),
//     good but for its age, is 403 FORBIDDEN [live docs]. Both carry
//     WWW-Authenticate: Bearer (with error="invalid_token" but for a
//     missing token, as RFC 6750 asks) [own].
//   - The OAuth2 client-credentials grant at [Server.TokenURL] [own; kept
//     for clients that use one]: a form-encoded POST, the client
//     authenticated by HTTP Basic or form fields ([WithClientCredentials]),
//     answered {"access_token","token_type":"Bearer","expires_in"}; its
//     errors keep RFC 6749's shape, {"error","error_description"}, the one
//     exception to the envelopes below, and a JSON body is answered 400
//     invalid_request saying that the grant is form-encoded.
//   - Envelopes [live docs]: a success is {"status":true,"data":{…}}; every
//     error is {"status":false,"errors":[{"code":"<CODE>","message":
//     "<text>"}]}, with an X-Request-Id header [own] like every answer. The
//     codes [live docs]: INVALID_REQUEST (400: a body that is not a JSON
//     object or cannot be read, an Idempotency-Key too long),
//     VALIDATION_ERROR (400: a field fault), INVALID_TRAVEL_ADDRESS (400: a
//     travelAddress no one could have made; 404: one that resolves to no
//     VASP or that decode does not know), TRANSFER_NOT_FOUND (404),
//     NOT_FOUND (404: no such endpoint), UNAUTHORIZED (401), FORBIDDEN
//     (403), INTERNAL_ERROR (500); and [own] METHOD_NOT_ALLOWED (405, with
//     Allow), IDEMPOTENCY_KEY_IN_USE (409), PAYLOAD_TOO_LARGE (413, a body
//     over 1 MiB), UNSUPPORTED_MEDIA_TYPE (415, with Accept-Post:
//     application/json), IDEMPOTENCY_KEY_REUSED (422), RATE_LIMITED (429),
//     SERVICE_UNAVAILABLE (503). A field fault is an entry of its own
//     [own], with an extra "field" member, the fault's JSON path (such as
//     "originator.country"), and the message "<path>: <reason>"; all faults
//     are reported at once. Messages name fields, never their values.
//     Where the live docs show an error by example, the sandbox answers it
//     word for word [live docs]: an empty asset (the member missing, "" or
//     null) is the entry {"code":"INVALID_REQUEST","message":"Asset is
//     required"}, without field, 400.
//   - 400 on initiation: a body that is not a JSON object (INVALID_REQUEST);
//     a known field whose value is not a JSON string ("must be a string"),
//     or a party that is not an object [own]; every fault that
//     travelrule.TransferRequest.Validate finds [excerpt: required fields,
//     the bounds of part 8 counted in code points, callback an absolute
//     http(s) URL, country two letters; live docs: a legal person
//     (personType "legal") needs legalName instead of firstName, lastName
//     and dateOfBirth], with the same paths and reasons, but an amount's
//     form: the live backend validates its length alone, so "one BTC",
//     "-1" and "1e-07", which the client refuses, are accepted [live
//     docs]; a travelAddress present but empty; and a travelAddress that starts with "ta" and that
//     no one could have made (below). Unknown fields are ignored and null
//     counts as absent [own]. [CheckTransfer] reports the same faults
//     without a server.
//   - Travel addresses (the travelAddress of an initiation) come in three
//     forms, told apart by travelrule.InspectTravelAddress [live docs, TRP]:
//     TRP's checksummed form, the live service's unchecked form ("ta" and
//     base58 of a URI that ends in t=i) and the opaque form (a URL-safe
//     "ta" token whose URI cannot be read, such as the docs' placeholder
//     [PlaceholderTravelAddress], or the service's encrypted-looking
//     addresses). They resolve as a directory would, with test values in
//     place of real VASPs [own]: an address the sandbox generated resolves
//     to its beneficiary (Transfer.BeneficiaryID); an opaque one resolves
//     to the sandbox's beneficiary VASP; a readable one (checksummed or
//     unchecked, [KnownTravelAddress] among them) resolves to it too, unless
//     its host is under the reserved top-level domain .invalid (RFC 2606),
//     such as [UnknownTravelAddress]'s: 404 INVALID_TRAVEL_ADDRESS, field
//     travelAddress; one that no one could have made (a character outside
//     the URL-safe set, a failed checksum on bytes that do not end in t=i,
//     nothing after "ta", more than 255 characters) is a 400
//     INVALID_TRAVEL_ADDRESS fault of the field travelAddress, in the words
//     of the client's ValidateStrict. [WithTravelAddresses] and
//     [WithUnknownTravelAddresses] register more of either kind. A
//     travelAddress that does not start with "ta" is accepted: the sandbox
//     judges only the "ta" forms [own].
//   - Generate [live docs]: POST {URL}/travel-address/generate with
//     {personType, firstName, lastName, legalName, walletAddress,
//     externalId, isSelfHosted}, checked as
//     travelrule.TravelAddressRequest.Validate checks it (a walletAddress
//     with a hexadecimal digit [live docs]; at most 255 characters per field
//     [own]) and for its types, answers
//     {"status":true,"data":{"travelAddress":"ta…"}}, the address alone, as
//     the live docs show it [live docs]. The address is in the live
//     service's unchecked form, of the URI
//     "<host:port><prefix>/transfers/inquiry/<beneficiaryId>?t=i" [live
//     docs], with the sandbox's own host (whatever host a request named)
//     and a version 4 UUID as the id [own], which the answer does not
//     carry beside it (Transfer.BeneficiaryID records it). It is stable per beneficiary,
//     as the service "creates (or upserts) a beneficiary" [live docs]: the
//     same externalId gets the same address (its names, wallet and custody
//     are updated); without one, the same personType, firstName, lastName,
//     legalName and walletAddress do. The beneficiaries are kept within the
//     record limit [own]: a forgotten one gets a new address.
//   - Decode [live docs]: POST {URL}/travel-address/decode with
//     {"travelAddress":"ta…"} answers {"status":true,"data":{"firstName",
//     "lastName","walletAddress","externalId" [live docs], "personType",
//     "legalName" [own]}}, empty ones left out, for an address the sandbox
//     generated and keeps; any other well-formed address (registered,
//     opaque, another VASP's) is 404 INVALID_TRAVEL_ADDRESS, one that no
//     one could have made, or that does not start with "ta", 400
//     INVALID_TRAVEL_ADDRESS, a missing one 400 VALIDATION_ERROR [own].
//   - Flows [live docs]: an initiation with a travelAddress goes by the
//     OPEN_VASP flow; one without, with an email (beneficiary.email, else
//     the top-level email), by the EMAIL flow: Transfer.Flow says which,
//     and Transfer.EmailDelivered is set at once, as if the mail provider
//     had acknowledged (the sandbox sends no mail) [own]. An initiation
//     with neither is accepted, as the excerpt (travelAddress optional)
//     allows, and goes by the OPEN_VASP flow to the sandbox's own
//     beneficiary VASP [own]; [WithTravelAddressRequired] refuses it, 400
//     VALIDATION_ERROR for travelAddress, as the live guide lists
//     travelAddress as required.
//   - Transfer identifiers are version 4 UUIDs in lower-case hex [own].
//   - Initiation answers 200 {"status":true,"data":{"transferId":"<id>"}}
//     [live docs: wrapped, and carrying the transfer's id], or
//     {"status":true,"data":{}} with WithTransferIDInAnswer(false). With
//     [WithExcerptAnswers] it answers as the excerpt documents,
//     {"status":"succes"} (sic) [excerpt], with "transferId" beside it
//     unless WithTransferIDInAnswer(false) [own: part 1 says an id is
//     returned].
//   - Lifecycle [own]: an initiated transfer is received, then approved and
//     completed, or rejected, as [Server.SetDecision] (or the control
//     plane's decision) and else [WithApproval] decide (default: approve):
//     the sandbox is the beneficiary's VASP and decides at once; with
//     [DecisionNone] it never decides, and the transfer stays received with
//     no callback, as with a counterparty that never answers. The
//     transfer enters approved or rejected when its INQUIRY_RESOLUTION is
//     sent, completed when its TRANSFER_RESOLUTION is. With
//     [WithInquiryURL], a transfer to a travel address the sandbox
//     generated is the integrator's to decide instead: it is in state
//     inquiry, its INQUIRY goes to the integrator, and its resolution moves
//     it to approved or rejected (completed when its TRANSFER_RESOLUTION is
//     sent). An inquiry the sandbox started is inquiry, then approved or
//     rejected.
//   - Callbacks [live docs]: four kinds, told apart by their fields (no
//     type field or header; [Delivery].Kind records which):
//     to the originator (the initiation's callback URL), once the
//     beneficiary's VASP decided, an INQUIRY_RESOLUTION,
//     {"approved":{"address":"<the beneficiary's wallet>","callback":
//     "<URL>/transfers/txId?q=<id>"},"callback":"<the transfer's callback
//     URL>"} (TRP's shape; the address is the request's
//     beneficiary.walletAddress, else the wallet of the generated travel
//     address, left out if neither [own]; approved.callback is where the
//     originator submits the txId [own]) or {"approved":false,"callback":
//     "<the transfer's callback URL>"}, then, for an approval, a
//     TRANSFER_RESOLUTION, {"transferId":"<id>","status":"APPROVED",
//     "statusComment":"approved by the beneficiary's VASP","callback":
//     "<the transfer's callback URL>"} (the status values and comments are
//     [own]). A rejection gets the INQUIRY_RESOLUTION alone: the live docs
//     send a TRANSFER_RESOLUTION "once the beneficiary VASP approves" and
//     promise none for a rejection, so act on the first decision that
//     arrives; [WithRejectionResolution] adds one, "REJECTED", "rejected by
//     the beneficiary's VASP" [own]. To the beneficiary's VASP an INQUIRY,
//     {"asset","amount","callback":"<URL>/transfers/inquiryResolution?q=
//     <id>","IVMS101":{…}}, the parties as an IVMS101 payload
//     (travelrule.TransferRequest.IVMS101: the 2020 edition, the 2023 one
//     for a wallet address over the 2020 edition's 100 characters; a
//     party's email and date of birth are left out, IVMS101 having no
//     place for an email and none for a date of birth without a place of
//     birth, which the service's party has not; nothing is made up), valid
//     IVMS101 whenever the request passes the client's ValidateStrict,
//     and callback the URL that resolves it,
//     the transfer's id in its q (the body has no transferId) [own: the
//     live docs show the fields, not the id]; and a TRANSFER_CONFIRMATION,
//     {"txid":"<hash>"}, once the txId is known. No received or completed
//     status callbacks are sent: the live docs have none.
//   - Signing [live docs]: every callback carries x-data-integrity, the
//     lower-case hex of the HMAC-SHA512, keyed with the signing secret
//     ([DefaultSigningSecret], a published sandbox value, unless
//     [WithCallbackSecret]), of the base64 text of the body; no id, no
//     timestamp. [WithStandardWebhooks] signs with Standard Webhooks
//     headers instead (webhook-id, the same on every attempt,
//     webhook-timestamp, webhook-signature under the same secret) [own].
//   - Delivery [live docs]: a POST with Content-Type: application/json;
//     any 2xx acknowledges; any other answer (redirects are not followed
//     [own]), or none, is retried after 1, 5, 15, 30 and 60 minutes, 3, 6,
//     12 and 24 hours, ten attempts in all (about 47 hours), then the
//     callback is given up (Delivered false, Stats.CallbacksFailed) and the
//     transfer's next callback goes. [WithCallbackTimeScale] shortens each
//     minute of that schedule (time.Millisecond: 47 hours in 2.8 s), and
//     [WithCallbackRetry] replaces it with an exponential backoff. A
//     Retry-After (in seconds) of the receiver lengthens the wait before the
//     next attempt, up to the schedule's delay after it, never shortens it
//     [own]. A transfer's callbacks are sent one after the other, in order,
//     whatever their URLs [own]. Callbacks still pending when the server
//     closes are dropped. [WithoutCallbacks] records callbacks without
//     sending them, for tests whose callback URLs are placeholders;
//     inquiries are still sent.
//   - Inquiry resolution [excerpt]: q must name a transfer started by
//     [Server.StartInquiry] or the control plane, or one sent to the
//     integrator's inquiry URL, else 404 TRANSFER_NOT_FOUND (an unknown id,
//     or another transfer the integrator initiated) [own]. approved is "true" (approve) or "false" (reject);
//     anything else is 400 [own]. The answer is the excerpt's boolean,
//     {"status":true} when the inquiry now carries that decision (the first
//     resolution, or a repeat of the same one) and {"status":false}, with
//     the state unchanged, when it was already resolved the other way
//     [own]. A transfer the integrator initiated to a travel address the
//     sandbox generated, sent to the integrator's inquiry URL
//     ([WithInquiryURL]), is resolved the same way: its first resolution
//     sends the originator's INQUIRY_RESOLUTION (and, for an approval, its
//     TRANSFER_RESOLUTION).
//     An approval with a callback URL names where the TRANSFER_CONFIRMATION
//     goes [TRP: approved.callback]: for a transfer sent to the integrator,
//     once its txId is submitted; for an inquiry the sandbox started, at
//     once, the sandbox being the originator that broadcasts the
//     transaction, with the request's txId or a made-up hash (0x and 64 hex
//     digits, recorded in Transfer.TxID) [own].
//   - txId [live docs]: POST {URL}/transfers/txId?q=<transferId> with
//     {"txId":"…"} (required, at most 255 characters [own]) records the
//     txId on a transfer the integrator initiated (Transfer.TxID, which an
//     initiation's txId also sets) and answers
//     {"status":true,"data":{"transferId","txId"}} [own]; the same txId
//     again answers the same; another txId for a transfer that has one,
//     or any txId for a transfer the beneficiary's VASP rejected (it is
//     not to be broadcast), is 400 VALIDATION_ERROR for txId; an unknown
//     id, or an inquiry's, is 404
//     TRANSFER_NOT_FOUND [own]. The service then sends a
//     TRANSFER_CONFIRMATION to the beneficiary's VASP [live docs]: to the
//     callback URL of the integrator's approval when the integrator is that
//     VASP ([WithInquiryURL]); else the beneficiary's VASP is the sandbox
//     itself, and the confirmation is only recorded. Either way
//     Transfer.Confirmed records it and Stats.Confirmations counts it
//     [own].
//   - Discovery [live docs]: GET {URL}/discovery/vasp with the criteria in a
//     JSON body, such as {"domain":"example.com"}; no Authorization needed
//     (one sent is ignored) and any Content-Type; each criterion a
//     case-insensitive "contains", all of them combined with AND; at least
//     one non-empty criterion, else 400 VALIDATION_ERROR; at most 100 VASPs;
//     the answer {"status":true,"data":{"count":N,"vasps":[{"id","name",
//     "domain","country"}]}}. The directory is fixed [own]: the sandbox's
//     own beneficiary VASP ([OwnVASPID], whose domain is the sandbox's host
//     and port) and three sample VASPs under example.com and example.org;
//     the criteria are id, name, domain and country (any other is 400
//     VALIDATION_ERROR), each a string of at most 255 characters.
//   - Idempotency-Key (in neither document; see [WithoutIdempotency])
//     [own]: the answer to a request to an operation with a key is stored,
//     per operation and key, and replayed for a later request with the same
//     key and the same body (and query) without acting again. The same key
//     with a different body is answered 422, and a request whose key is
//     still being processed 409. Nothing is stored for a fault before
//     acting (429, the service's 503, a refused stream). The stored answer
//     is the one the operation gave before any fault after acting (500,
//     drop, PROTOCOL_ERROR reset, a proxy's or a gateway's 503), so a
//     retry after those faults gets the original success.
//   - Faults ([Fault], [WithFaults], [Server.SetFaults]) [own], on the
//     operations. Before the request is acted on, with nothing stored:
//     429 and 503 with Retry-After (in seconds), in the service's
//     envelope; over HTTP/2, a RST_STREAM REFUSED_STREAM of the request's
//     stream (RFC 9113, section 8.7: the stream was not processed; over
//     HTTP/1.1, a connection closed without answer). After the transfer
//     was stored, the resolution or txId recorded, the beneficiary
//     upserted: 500; a dropped connection (over HTTP/2, a RST_STREAM
//     INTERNAL_ERROR of the request's stream); over HTTP/2, a RST_STREAM
//     PROTOCOL_ERROR of the stream (over HTTP/1.1, a dropped connection); a
//     proxy's 503 without Retry-After (an upstream reset before headers);
//     and a gateway's 503 with Retry-After and a maintenance page (nginx's
//     "error_page 502 504 =503" with "add_header Retry-After 1 always"):
//     a 503 with Retry-After proves nothing either way, for the same
//     status and header come before and after acting. A GOAWAY fault
//     shuts the connection down gracefully (below). Latency delays the
//     request before anything else and ends early if the client gives up.
//     Which requests faults hit is random, from a seeded generator
//     ([WithSeed]): the same seed, faults and sequence of requests give
//     the same faults. A Fault without a Rate hits every request (as
//     Rate 1 does, with the same draws); one that is to hit none is left
//     out.
//   - A GOAWAY fault (over HTTP/2) is the graceful shutdown of nginx at
//     keepalive_requests or on a reload, and keeps RFC 9113's promise
//     (section 6.8): the sandbox never declares unprocessed a stream it
//     acted on. As the faulted request arrives, the sandbox sends a GOAWAY
//     (NO_ERROR) whose last-stream-id is the highest stream of the
//     connection it had taken (acted on, or begun to answer), 0 for none.
//     Every stream at or below that id is served and answered in full;
//     the faulted request itself is, if a higher stream was taken before
//     it. A request on a stream above it (the faulted one, and those the
//     client sent before it saw the GOAWAY) is recorded with Status 0, is
//     not acted on, and gets nothing, not even a reset. Once the streams
//     at or below the id have ended, the sandbox half-closes the
//     connection; it still reads it, so that every request the client
//     sent is recorded. A client may send a request above the
//     last-stream-id again; no other fault says anything of the kind. Over
//     HTTP/1.1 a GOAWAY fault closes the connection without answering,
//     before acting.
//   - Records [own]: the server keeps the most recent 10,000 transfers,
//     requests, finished callbacks, Idempotency-Key answers and generated
//     beneficiaries ([WithRecordLimit]), and older ones that are still
//     pending: an inquiry awaiting resolution, a transfer with callbacks
//     still to deliver, an Idempotency-Key still being processed or
//     answered within the idempotency window ([WithIdempotencyWindow],
//     default a day). [Server.Stats] counts everything since the start.
//     Recorded requests carry neither Authorization nor x-api-key.
//
// # Console
//
// With [WithConsole] (on by default in "travelrule sandbox") the server
// serves a web page for a person at "/" of its own address
// ([Server.ConsoleURL]), outside the path prefix: the transfers kept, the
// newest 200 first, as they arrive (time, asset, amount, flow, state,
// unless the person reveals them, the parties redacted as the SDK's fmt
// form redacts an inbound inquiry's, the text of whoever sent it:
// personal fields "[redacted]", codes only when IVMS101's, the asset,
// amount and txId only in their own shapes and holding no personal
// value, and an attempt's error cut before what it quotes of the
// receiver); the transfer opened, with its timeline: the requests that named
// it (status, faults, replays), the decision and who made it, and each
// callback with its URL cut to scheme, host and path, how it is signed,
// and every attempt with its answer (or why none came), its latency
// ([Attempt.Latency]) and, while it waits, when the next is due; Approve
// and Reject buttons on a transfer that waits for the decision of the
// beneficiary's VASP (initiated under [DecisionNone]), which decide it as
// that VASP would, with the same callbacks [own]; and the faults, set as
// "--fault" takes them, with a switch that holds them off ([Server.SetFaults]
// and the control plane turn them back on), and the decision. It updates
// as the sandbox changes (server-sent events, at most 20 a second), with
// no reload; without script it is a plain page whose forms post and come
// back. Each page holds one event stream: over HTTP/1.1 a browser opens
// at most six connections to a host, so a seventh tab waits (serve TLS,
// HTTP/2, for more); beyond 16 streams the server refuses one, and that
// page polls every 2 seconds instead. A transfer waiting for its decision
// is kept as any other: [WithRecordLimit] forgets it among the oldest.
//
// Its requests are not the service's: they are not recorded, counted, or
// hit by faults. It answers clients on loopback, and those in the prefixes
// WithConsole names, and a Host that is an IP address, localhost or a
// name under .localhost (421 otherwise: a name could be another site's
// page that its DNS turned to this address); its forms refuse requests
// from pages of other origins (net/http's CrossOriginProtection: 403), as
// do its live data and event stream when the browser says another
// origin's page asks; its forms are read up to 64 KiB;
// every answer forbids framing and any script, style or connection but
// its own (Content-Security-Policy), and is not cached. It shows no API
// key, token, signing secret, callback body, or URL query, user
// information or fragment (where a capability tag goes); html/template
// escapes everything it shows. It has no login: anyone it answers can
// reveal the personal data and decide the transfers.
//
// # Control plane
//
// Integrators in other languages run the sandbox as a server ("travelrule
// sandbox") and cannot call its methods. Endpoints under the server's URL
// (path prefix included) do for them what [Server.StartInquiry],
// [Server.Transfer], [Server.SetFaults] and [Server.SetDecision] do [own];
// in Go, [ControlClient] calls them, for a sandbox in another process. They take a bearer token as the operations
// do (a token from the login included; 401 and 403 as there), answer
// errors in the same envelopes, are recorded by [Server.Requests] (with Op
// zero) and counted by [Server.Stats]. No fault is drawn for them and
// Idempotency-Key is ignored, though a GOAWAY fault on their connection
// refuses them as any request on a stream above its last-stream-id. Other
// paths under /sandbox/ are 404
// NOT_FOUND. The bodies of POST {URL}/sandbox/faults and
// {URL}/sandbox/decision must not carry unknown fields (400
// VALIDATION_ERROR naming the field: a typo must not pass unnoticed).
//
// POST {URL}/sandbox/faults replaces the faults injected, as
// [Server.SetFaults] does (their Times counts start again), at most 64,
// each latency and retryAfter at most [MaxFaultLatency]:
//
//	{"faults":[{"kind":"rate-limit","times":1,"retryAfter":"2s"},
//	  {"kind":"internal","ops":["initiate"],"rate":0.5}]}
//
// kind is a [FaultKind]'s name (latency, rate-limit, unavailable, internal,
// drop, reset-protocol-error, reset-refused-stream, goaway,
// proxy-unavailable, gateway-unavailable); rate is above 0 and at most 1,
// 1 if absent (0 is refused: a fault that is to hit nothing is left out),
// as a [Fault] without a Rate hits every request; ops names operations as [Operation.String] does (initiate,
// resolve, generate-travel-address, decode-travel-address, submit-txid),
// all if absent; times is at most how many requests the fault hits, no
// limit if absent or 0; retryAfter and latency are Go durations ("2s",
// "300ms"). {"faults":[]} turns injection off. A fault that cannot be is
// 400 VALIDATION_ERROR with the field's path, such as "faults[0].kind";
// nothing is changed then. The answer, as that of GET {URL}/sandbox/faults,
// is 200 {"faults":[…]}, each fault as set with its rate and "fired", how
// many requests it has hit since it was set, and "off":true while the
// console's switch holds them off (a POST turns them back on).
//
// POST {URL}/sandbox/decision {"decision":"reject"} sets, as
// [Server.SetDecision] does, what the sandbox decides on the transfers
// initiated from then on: "approve", "reject", "none" (never: the transfer
// stays received, with no callback), or "" (the server's own: approval, or
// [WithApproval]'s function). It
// answers 200 with the decision; one missing or unknown is 400
// VALIDATION_ERROR for decision.
//
// POST {URL}/sandbox/inquiries starts an inbound inquiry, as the
// counterparty VASP would. The body (application/json, at most 1 MiB) is
//
//	{"callback":"https://vasp.example/inbound", ...}
//
// callback, required, is where the inquiry is sent: an absolute http(s)
// URL of at most 255 characters (the INQUIRY's own callback field is the
// sandbox's URL that resolves it). Any field of an initiation may be given (travelAddress, email,
// txId, asset, amount, originator, beneficiary), each replacing a default:
//
//	"asset":"BTC", "amount":"0.25",
//	"originator":{"personType":"natural","firstName":"Grace","lastName":"Hopper",
//	  "dateOfBirth":"1906-12-09","country":"US","accountNumber":"sample-customer-1"},
//	"beneficiary":{"personType":"natural","firstName":"Katherine","lastName":"Johnson",
//	  "dateOfBirth":"1918-08-26","country":"US",
//	  "walletAddress":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}
//
// and no travelAddress, email or txId. A party given replaces the default
// party whole: its fields are not merged with the default's, so it must
// carry the required ones. The body is checked as an initiation's is:
// fields of the wrong type, a travelAddress that starts with "ta" and that
// no one could have made, and every fault that
// travelrule.TransferRequest.Validate finds in the transfer with its
// defaults (an amount by its length alone, as at initiation), are answered 400 with an entry per fault, all at once. At most 64 inquiries are delivered at once: beyond,
// the answer is 503 with Retry-After: 1; and while as many open inquiries
// as the record limit are kept beyond it ([WithRecordLimit]), 503 until
// some are resolved. Else the
// answer is 201 {"transferId":"<id>"} (not wrapped: the control plane is
// not the live service's) with a Location header, the URL of
// the transfer's state (below) on the host the request named. It comes as
// soon as the transfer is stored, in state inquiry, and the delivery of the
// inquiry has begun: the inquiry goes out as StartInquiry sends it (the
// same body, headers, signing, retries and records), in the background,
// even with [WithoutCallbacks]. Resolve it with inquiryResolution; an
// approval with a callback URL gets the TRANSFER_CONFIRMATION there.
//
// GET {URL}/sandbox/transfers/{id} answers 200 with the state of a
// transfer the server keeps, initiated or inquiry, or 404
// TRANSFER_NOT_FOUND:
//
//	{"transferId":"<id>","state":"approved","inquiry":true,
//	 "created":"<RFC 3339, UTC>","updated":"<RFC 3339, UTC: last change of state>",
//	 "callbacks":[{"webhookId":"msg_…","kind":"INQUIRY","status":"inquiry",
//	   "url":"https://vasp.example/inbound","delivered":true,"pending":false,
//	   "attempts":[{"time":"<RFC 3339, UTC>","statusCode":500,"latency":"3.2ms"},
//	     {"time":"…","statusCode":204,"latency":"1.1ms"}]}]}
//
// callbacks lists, in the order they were sent, the transfer's callbacks
// (inbound inquiry included), each with its kind ([CallbackKind]), the
// State it announces (Delivery.Status) and its delivery id (sent as
// webhook-id only under [WithStandardWebhooks]), that finished, delivered or given up
// (delivered false), kept within [WithRecordLimit], then the one being
// delivered now, if any (pending true, with its attempts so far and,
// while it waits for the next, nextAttempt, when that is due; the attempt
// under way is not listed until it ends). Callbacks still queued
// behind it are not listed: state tells how far the transfer got. An
// attempt's statusCode is the receiver's answer, 0 if none came, and then
// error says why; latency is how long it took, as a Go duration. The state carries none of the request's values (no
// party, name, date of birth, address, national id, account or wallet
// number, travel address, email, txId, asset, amount or callback body); a callback's url is cut to scheme, host
// and path, without user information, query or fragment (where a
// capability goes), so keep secrets out of callback paths.
package travelruletest
