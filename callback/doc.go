// Package callback receives the callback requests of the Travel Rule
// Transfer Exchange Service: status callbacks about transfers you initiated,
// Travel Rule Protocol (TRP) messages the service relays, and inbound
// inquiries about transfers to your customers. [NewHandler] returns an
// [http.Handler] to mount in your own mux; it decodes each callback with
// [travelrule.ParseCallback] and calls your function with it.
//
//	v, err := callback.NewDataIntegrityVerifier(signingSecret) // the service's x-data-integrity
//	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
//		return payments.Update(ctx, cb.Ref, cb.Decision()) // an error makes the service deliver again
//	}, callback.WithVerifier(v), callback.WithCapabilityKey(key))
//	mux.Handle("/travelrule/callback", h)
//
// A handler acts only on authenticated callbacks: without [WithVerifier]
// or [WithCapabilityKey] it refuses every request and [Handler.Err] wraps
// [ErrUnauthenticated]; [WithoutAuthentication] is the opt-out for local
// experiments.
//
// # Answers
//
// The handler answers 204 when your function returned nil (and to a
// delivery it has already processed), 500 when your function returned an
// error or panicked, so that the sender delivers again, 503 with
// Retry-After while the same delivery is still being processed, 400 to a
// body that is not a JSON object or names a member twice (in any case or
// spelling: see [travelrule.ParseCallback]), 401 to a request that fails
// authentication, 405 (with Allow: POST) to any method but POST and 413 to a
// body over the size limit (1 MiB unless set with [WithMaxBodyBytes]). Your
// function sees only authenticated, well-formed callbacks, with the
// request's context. Error answers never repeat the body.
//
// # What is trusted
//
// The interface description shows neither the callback body nor any
// authentication of callbacks (parts 4.3 and 6), so:
//
//   - [WithCapabilityKey] accepts only requests at a callback URL made with
//     [travelrule.NewCallbackURL] and the same key, checked in constant
//     time, and passes the URL's reference on in Callback.Ref; previous
//     keys listed after the first verify too, for a rotation. This trusts
//     that only the service (and whoever it shares the URL with, such as the
//     counterparty VASP of a TRP flow) learns the URL: the tag proves that
//     the sender knows the URL, not who the sender is, and it covers no part
//     of the body, so a sender that knows the URL can send any body to it,
//     and one that sees a request can replay it. Match callbacks to
//     transfers by Ref, not by the body's transferId; serve the URL over
//     TLS and keep its query string out of access logs.
//   - [WithVerifier] adds a check over the request and its body, for a
//     service that signs its callbacks. [WebhookVerifier] checks Standard
//     Webhooks signatures (HMAC-SHA256 over the webhook-id, the
//     webhook-timestamp and the body, with a shared secret): it trusts the
//     holders of the secret, proves the body unchanged, and bounds replays
//     to the timestamp tolerance, within which de-duplication by webhook-id
//     stops them. Deliveries signed by the svix library, which sends the
//     same headers as svix-id, svix-timestamp and svix-signature, verify
//     too.
//   - [WithoutAuthentication] accepts every well-formed callback from
//     anyone who can reach the URL: a claim, not a fact. Observers are told
//     (Delivery.Authenticated), and the journal acts on none.
//
// A handler configured with a key or a verifier never accepts a request
// that fails the check; a handler whose options are missing or invalid (no
// authentication, a key or secret shorter than 16 bytes, a key given twice,
// a nil function) answers 500 to everything,
// never calling your function, and reports why from [Handler.Err].
//
// # De-duplication
//
// Senders deliver again when they see no 2xx answer in time, so the same
// callback may arrive more than once, even concurrently. The handler
// claims each delivery in a [Store] before calling your function: a
// delivery already processed is answered 204 without calling it, one being
// processed 503, and a delivery whose function failed or panicked is
// released so that the next delivery reaches your function again. The
// default store is a [MemoryStore] of 100,000 deliveries in this process;
// a fleet of servers gives every replica a shared store with [WithStore]:
// the packages callback/redisstore (Redis) and callback/pgstore
// (PostgreSQL) are two, and callback/storetest tests one of your own.
// Their claims lapse after a lease, so that a replica that died does not
// hold a delivery forever, and are fenced ([FencedStore]), so that a
// replica whose lease lapsed cannot end the claim of the one after it.
//
// A delivery is identified by its webhook-id (or svix-id) header when a
// [WebhookVerifier], whose signature covers the id, checks it; else by the
// SHA-256 of the verified reference and the body, so that a body that
// differs by a byte is another delivery. Under a webhook-id, the id alone
// identifies the delivery: a redelivery under an id already processed is
// answered 204 without a call even if its body differs. Standard Webhooks
// has a sender resend a message under its id (and some re-encode the
// body when they do), and calling your function twice for one message is
// the failure this handler exists to prevent; the cost is that a sender
// that reused an id for another message would have that message
// acknowledged and dropped. The handler does not compare the bodies: the
// stores keep no digest of them, so it cannot tell, nor log, which case a
// differing body is.
//
// Once your function has returned nil, the handler records the delivery as
// processed and answers 204; if the store fails to record it, the handler
// answers 204 at once and tries again, with growing pauses, for up to one
// lease, while the claim keeps redeliveries out (503). So an outage of the
// store at that moment calls your function a second time only if it
// outlasts the lease (10 minutes by default: [DefaultLease]); [Handler] has
// the details, and [Handler.Stats] counts the retries and the completions
// lost. De-duplication is best effort all the same (a store forgets after
// its retention or size, a lease shorter than your function's call lets a
// redelivery in), so your function should still be idempotent.
//
// # Observing deliveries
//
// [WithObserver] adds an [Observer], which sees every delivery the handler
// accepts, before de-duplication and your function (package journal's
// journal is one). An observer that is also a [DeliveryObserver] (package
// oteltravelrule's, for OpenTelemetry) watches every request besides,
// accepted or not: StartDelivery on its arrival, whose context your
// function is called with (so a tracer's span is the parent of yours), and
// EndDelivery once it is answered, with a [DeliveryEnd]: the callback's
// kind, what the authentication checks and de-duplication found, the
// result (a fixed word fit for a metric's label), the status answered and
// the time taken, and never personal data. A handler without one measures
// nothing and costs nothing more.
//
// # Logging
//
// The handler logs nothing unless given a logger ([WithLogger]). It never
// logs bodies, query strings (a capability URL's tag is a secret), personal
// data or secrets; it does log the error text your function returns.
package callback
