// Package travelruletest runs the Travel Rule Transfer Exchange Service
// (interface description 3.2.1) in-process, for tests and examples, in the
// spirit of net/http/httptest:
//
//	srv := travelruletest.NewServer()
//	defer srv.Close()
//	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
//
// [NewTLSServer] serves HTTPS instead, with HTTP/2 for clients that offer it
// by ALPN (HTTP/1.1 for the others), a certificate of its own
// ([Server.Certificate]) and a client that trusts it ([Server.Client]):
//
//	srv := travelruletest.NewTLSServer()
//	defer srv.Close()
//	client, err := travelrule.NewClient(srv.URL,
//		travelrule.WithTokenSource(srv.TokenSource()), travelrule.WithHTTPClient(srv.Client()))
//
// The server checks every request as the description says, sends status
// callbacks over HTTP, can play the counterparty VASP ([Server.StartInquiry],
// or over HTTP the control plane below), honours Idempotency-Key, injects faults on demand ([Fault]) and records what
// it saw ([Server.Transfers], [Server.Requests], [Server.Callbacks],
// [Server.Stats], [Server.WaitCallbacks]), the most recent 10,000 of each
// kind ([WithRecordLimit]). It logs nothing unless given a logger, and
// never logs bodies, tokens or the personal data they carry (see
// [WithLogger] for what a line holds).
//
// # Behaviour where the description says "not shown"
//
// The description leaves much open; the sandbox picks one behaviour for
// each gap:
//
//   - Authentication: every request to the operations (and to the control
//     plane below) needs
//     "Authorization: Bearer <JWT>": HS256 under a key random per server,
//     iss "travelruletest", aud "travel-rule-transfer-exchange", exp
//     required and in the future. Anything else is answered 401 with
//     WWW-Authenticate: Bearer error="invalid_token" (just Bearer
//     realm="travelruletest" when the header is missing, as RFC 6750
//     asks). Tokens come from [Server.TokenSource] or from the
//     client-credentials grant at [Server.TokenURL] (form-encoded POST,
//     client authenticated by HTTP Basic or form fields, answer
//     {"access_token","token_type":"Bearer","expires_in"}). A token
//     request whose body is JSON (declared application/json, or opening
//     with "{") is answered 400 {"error":"invalid_request"} with an
//     error_description saying that the grant is form-encoded.
//   - Media type: the body of an operation (and of the control plane's
//     POST) must be declared "Content-Type: application/json", as the
//     description says; parameters such as "; charset=utf-8" are accepted
//     and the type is compared in any case. Any other type, or none, is
//     answered 415 unsupported_media_type, with Accept-Post:
//     application/json. A request is checked for its method (405), then
//     its token (401), then its Content-Type (415), then its body (413,
//     400).
//   - Transfer identifiers are version 4 UUIDs in lower-case hex.
//   - Initiation answers 200 {"status":"succes","transferId":"<id>"} (the
//     documented misspelling, plus the id that part 1 says is returned), or
//     the documented {"status":"succes"} alone with
//     WithTransferIDInAnswer(false).
//   - Errors are JSON: {"error":"<code>","message":"<text>","fields":
//     [{"field":"originator.country","reason":"…"}]}, fields only on 400.
//     Messages and reasons name fields, never their values. Codes:
//     bad_request (400), unauthorized (401), not_found (404),
//     method_not_allowed (405), idempotency_key_in_use (409),
//     too_large (413), unsupported_media_type (415),
//     idempotency_key_reused (422), rate_limited (429),
//     internal (500), unavailable (503). Every answer has an X-Request-Id.
//   - 400: a body that is not a JSON object; a known field whose value is
//     not a JSON string ("must be a string"), or a party that is not an
//     object; and every fault that travelrule.TransferRequest.Validate finds
//     (required fields, the bounds of part 8 counted in code points, callback
//     an absolute http(s) URL, country two letters), with the same paths and
//     reasons; plus a travelAddress that is present but empty, or that starts
//     with "ta" (the prefix of Travel Rule Protocol travel addresses) and
//     does not decode (travelrule.DecodeTravelAddress: alphabet, checksum,
//     t=i). Unknown fields are ignored and null counts as absent. All faults
//     are reported at once; [CheckTransfer] reports them without a server.
//   - Travel addresses resolve as a directory would, with test values in
//     place of real VASPs: every travel address that decodes resolves to
//     the sandbox's beneficiary VASP, TRP's example [KnownTravelAddress]
//     among them; one whose host is under the reserved top-level domain
//     .invalid (RFC 2606), such as [UnknownTravelAddress], resolves to no
//     VASP: 404 on initiation. [WithTravelAddresses] and
//     [WithUnknownTravelAddresses] register more of either kind. A
//     travelAddress that does not start with "ta", and none, is accepted.
//   - Lifecycle: an initiated transfer is received, then approved and
//     completed, or rejected, as [WithApproval] decides (default: approve).
//     Each state is announced by a status callback to the request's callback
//     URL, and the transfer enters the state when its callback is sent.
//   - Status callbacks are POSTs of {"transferId":"<id>","status":"<state>",
//     "txId":"<the request's txId, omitted if none>","timestamp":"<RFC 3339,
//     UTC>"}, sent one after the other per transfer, in order. An attempt
//     answered other than 2xx (redirects are not followed) or not answered
//     is repeated, up to 5 attempts in all, after an exponential backoff
//     ([WithCallbackRetry]); then the server gives up on that callback and
//     goes on with the transfer's next one. Each callback carries
//     webhook-id (the same on every attempt) and webhook-timestamp headers,
//     and, with [WithCallbackSecret], a Standard Webhooks webhook-signature.
//     Callbacks still pending when the server closes are dropped.
//     [WithoutCallbacks] records callbacks without sending them, for tests
//     whose callback URLs are placeholders; inbound inquiries are still
//     sent.
//   - Inquiry resolution: q must name a transfer started by
//     [Server.StartInquiry] or the control plane, else 404 (an unknown id, or a transfer the
//     integrator initiated). approved is "true" (approve) or "false"
//     (reject); anything else is 400. The answer is {"status":true} when the
//     inquiry now carries that decision (the first resolution, or a repeat
//     of the same one) and {"status":false}, with the state unchanged, when
//     it was already resolved the other way. When the first resolution
//     carries a callback URL, a status callback "approved" or "rejected" is
//     sent there.
//   - Idempotency-Key (not in the description; see [WithoutIdempotency]):
//     the answer to a request with a key is stored, per operation and key,
//     and replayed for a later request with the same key and the same body
//     (and query) without acting again. The same key with a different body
//     is answered 422, and a request whose key is still being processed
//     409. 429 and 503 answers are not stored. The stored answer is the one
//     the operation gave before any fault after acting (500, drop, reset,
//     GOAWAY, a proxy's 503), so a retry after those faults gets the
//     original success.
//   - Faults ([Fault], [WithFaults], [Server.SetFaults]): 429 and 503 (with
//     Retry-After in seconds) are answered before the request is acted on;
//     the others after the transfer was stored or the resolution recorded:
//     500; a dropped connection (over HTTP/2, a RST_STREAM INTERNAL_ERROR
//     of the request's stream); over HTTP/2, a RST_STREAM PROTOCOL_ERROR or
//     REFUSED_STREAM of the stream, or a GOAWAY with last-stream-id 0 (over
//     HTTP/1.1 these three drop the connection); and a proxy's 503 without
//     Retry-After. Latency delays the request before anything else and ends
//     early if the client gives up. Which requests faults hit is random,
//     from a seeded generator ([WithSeed]): the same seed, faults and
//     sequence of requests give the same faults.
//   - After a GOAWAY fault the sandbox writes nothing more on the
//     connection (it half-closes it) but still reads it. The answers that
//     had not gone out in full are cut: one whose HEADERS had not gone out
//     is recorded with Status 0, one cut after its HEADERS keeps its Status
//     and is marked Truncated (the client saw the status, not the body). A
//     request that arrives on the connection afterwards (the client sent it
//     before it saw the GOAWAY) is recorded with Status 0 and not acted on;
//     one already being acted on finishes, and its answer is cut. So one
//     GOAWAY fault can leave several requests of the connection without a
//     whole answer, as a proxy's GOAWAY would; Stats.ByStatus[0] and
//     Stats.Truncated count them.
//   - Records: the server keeps the most recent 10,000
//     transfers, requests, finished callbacks and Idempotency-Key answers
//     ([WithRecordLimit]), and older ones that are still pending: an
//     inquiry awaiting resolution, a transfer with callbacks still to
//     deliver, an Idempotency-Key still being processed or answered within
//     the idempotency window ([WithIdempotencyWindow], default a day).
//     [Server.Stats] counts everything since the start.
//
// # Control plane
//
// Integrators in other languages run the sandbox as a server ("travelrule
// sandbox") and cannot call its methods. Two endpoints under the server's
// URL (path prefix included) do for them what [Server.StartInquiry] and
// [Server.Transfer] do. They take a bearer token as the operations do, are
// recorded by [Server.Requests] (with Op zero) and counted by
// [Server.Stats]. No fault is drawn for them and Idempotency-Key is
// ignored, though a GOAWAY fault stops them as it stops any request of its
// connection. Other paths under /sandbox/ are 404.
//
// POST {URL}/sandbox/inquiries starts an inbound inquiry, as the
// counterparty VASP would. The body (application/json, at most 1 MiB) is
//
//	{"callback":"https://vasp.example/inbound", ...}
//
// callback, required, is where the inquiry is sent: an absolute http(s)
// URL of at most 255 characters, which is also the inquiry's own callback
// field. Any field of an initiation may be given (travelAddress, email,
// txId, asset, amount, originator, beneficiary), each replacing a default:
//
//	"asset":"BTC", "amount":"0.25",
//	"originator":{"personType":"natural","firstName":"Grace","lastName":"Hopper",
//	  "dateOfBirth":"1906-12-09","country":"US"},
//	"beneficiary":{"personType":"natural","firstName":"Katherine","lastName":"Johnson",
//	  "dateOfBirth":"1918-08-26","country":"US",
//	  "walletAddress":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}
//
// and no travelAddress, email or txId. A party given replaces the default
// party whole: its fields are not merged with the default's, so it must
// carry the required ones. The body is checked as an initiation's is:
// fields of the wrong type, a travelAddress that starts with "ta" and does
// not decode, and every fault that travelrule.TransferRequest.Validate
// finds in the transfer with its defaults, are answered 400 with fields by
// path, all at once. At most 64 inquiries are delivered at once: beyond,
// the answer is 503 with Retry-After: 1; and while as many open inquiries
// as the record limit are kept beyond it ([WithRecordLimit]), 503 until
// some are resolved. Else the
// answer is 201 {"transferId":"<id>"} with a Location header, the URL of
// the transfer's state (below) on the host the request named. It comes as
// soon as the transfer is stored, in state inquiry, and the delivery of the
// inquiry has begun: the inquiry goes out as StartInquiry sends it (the
// same body, headers, signing, retries and records), in the background,
// even with [WithoutCallbacks]. Resolve it with inquiryResolution.
//
// GET {URL}/sandbox/transfers/{id} answers 200 with the state of a
// transfer the server keeps, initiated or inquiry, or 404 not_found:
//
//	{"transferId":"<id>","state":"approved","inquiry":true,
//	 "created":"<RFC 3339, UTC>","updated":"<RFC 3339, UTC: last change of state>",
//	 "callbacks":[{"webhookId":"msg_…","status":"inquiry",
//	   "url":"https://vasp.example/inbound","delivered":true,"pending":false,
//	   "attempts":[{"time":"<RFC 3339, UTC>","statusCode":500},
//	     {"time":"…","statusCode":204}]}]}
//
// callbacks lists, in the order they were sent, the transfer's callbacks
// (inbound inquiry included) that finished, delivered or given up
// (delivered false), kept within [WithRecordLimit], then the one being
// delivered now, if any (pending true, with its attempts so far; the
// attempt under way is not listed until it ends). Callbacks still queued
// behind it are not listed: state tells how far the transfer got. An
// attempt's statusCode is the receiver's answer, 0 if none came, and then
// error says why. The state carries none of the request's values (no
// party, name, date of birth, address, national id, account or wallet
// number, travel address, email, txId, asset, amount or callback body); a callback's url is cut to scheme, host
// and path, without user information, query or fragment (where a
// capability goes), so keep secrets out of callback paths.
package travelruletest
