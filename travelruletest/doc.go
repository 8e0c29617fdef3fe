// Package travelruletest runs the Travel Rule Transfer Exchange Service
// (interface description 3.2.1) in-process, for tests and examples, in the
// spirit of net/http/httptest:
//
//	srv := travelruletest.NewServer()
//	defer srv.Close()
//	client, err := travelrule.NewClient(srv.URL, travelrule.WithTokenSource(srv.TokenSource()))
//
// The server checks every request as the description says, sends status
// callbacks over HTTP, can play the counterparty VASP ([Server.StartInquiry]),
// honours Idempotency-Key, injects faults on demand ([Fault]) and records what
// it saw ([Server.Transfers], [Server.Requests], [Server.Callbacks],
// [Server.Stats], [Server.WaitCallbacks]). It logs nothing unless given a
// logger, and never logs bodies, tokens or the personal data they carry
// (see [WithLogger] for what a line holds).
//
// # Behaviour where the description says "not shown"
//
// The description leaves much open; the sandbox picks one behaviour for
// each gap:
//
//   - Authentication: every request to the operations needs
//     "Authorization: Bearer <JWT>": HS256 under a key random per server,
//     iss [Issuer], aud [Audience], exp required and in the future. Anything
//     else is answered 401 with WWW-Authenticate: Bearer
//     error="invalid_token" (just Bearer realm="travelruletest" when the
//     header is missing, as RFC 6750 asks). Tokens come from
//     [Server.TokenSource] or from the client-credentials grant at
//     [Server.TokenURL] (form-encoded POST, client authenticated by HTTP
//     Basic or form fields, answer {"access_token","token_type":"Bearer",
//     "expires_in"}).
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
//     too_large (413), idempotency_key_reused (422), rate_limited (429),
//     internal (500), unavailable (503). Every answer has an X-Request-Id.
//   - 400: a body that is not a JSON object; a known field whose value is
//     not a JSON string ("must be a string"), or a party that is not an
//     object; and every fault that travelrule.TransferRequest.Validate finds
//     (required fields, the bounds of part 8 counted in code points, callback
//     an absolute http(s) URL, country two letters), with the same paths and
//     reasons; plus a travelAddress that is present but empty. Unknown fields
//     are ignored and null counts as absent. All faults are reported at once.
//   - 404 on initiation: a travelAddress that starts with "ta" (the prefix of
//     Travel Rule Protocol travel addresses) and is not registered
//     ([KnownTravelAddress], [WithTravelAddresses]) resolves to no VASP.
//     Other travel addresses, and none, are accepted.
//   - Lifecycle: an initiated transfer is received, then approved and
//     completed, or rejected, as [WithApproval] decides (default: approve).
//     Each state is announced by a status callback to the request's callback
//     URL, and the transfer enters the state when its callback is sent.
//   - Status callbacks are POSTs of {"transferId":"<id>","status":"<state>",
//     "txId":"<the request's txId, omitted if none>","timestamp":"<RFC 3339,
//     UTC>"}, sent one after the other per transfer, in order. An attempt
//     answered other than 2xx (redirects are not followed) or not answered
//     is repeated, up to [DefaultCallbackAttempts] attempts in all, after an
//     exponential backoff ([WithCallbackRetry]); then the server gives up on
//     that callback and goes on with the transfer's next one. Each callback
//     carries webhook-id (the same on every attempt) and webhook-timestamp
//     headers, and, with [WithCallbackSecret], a Standard Webhooks
//     webhook-signature. Callbacks still pending when the server closes are
//     dropped. [WithoutCallbacks] records callbacks without sending them,
//     for tests whose callback URLs are placeholders.
//   - Inquiry resolution: q must name a transfer started by
//     [Server.StartInquiry], else 404 (an unknown id, or a transfer the
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
//     the operation gave before any 500 or drop fault, so a retry after
//     those faults gets the original success.
//   - Faults ([Fault], [WithFaults], [Server.SetFaults]): 429 and 503 (with
//     Retry-After in seconds) are answered before the request is acted on;
//     500 and a dropped connection after the transfer was stored or the
//     resolution recorded; latency delays the request before anything else
//     and ends early if the client gives up. Which requests faults hit is
//     random, from a seeded generator ([WithSeed]): the same seed, faults
//     and sequence of requests give the same faults.
package travelruletest
