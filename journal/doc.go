// Package journal follows every transfer this VASP started or received to
// its end: a write-ahead journal of initiations that callbacks reconcile,
// the service's stages for each transfer, and the transfers that need a
// person.
//
// The SDK's central promise ends with ErrOutcomeUnknown: the service may
// have stored an initiation, and the live service has no call to look a
// transfer up. The evidence comes later, as callbacks. A [Journal]
// collects it:
//
//	j, err := journal.New(redisstore.NewJournal(rdb))       // or pgstore.NewJournal, or NewMemoryStore
//	client, err := travelrule.NewClient(base, travelrule.WithAPIKey(key), travelrule.WithObserver(j))
//	h := callback.NewHandler(fn, callback.WithVerifier(v), callback.WithCapabilityKey(k), callback.WithObserver(j))
//
// Before an initiation leaves the process, the journal records it, and
// the call fails, with nothing sent, if it cannot. After the answer it
// records the outcome: stored, with its transfer id; not stored; or
// unknown. A process that dies in between leaves "sent, outcome unknown"
// ([InitiationSent]). Every authenticated callback is recorded on the
// entry it names, found by the verified reference of the capability URL
// it came to, or by the transfer id, if it can truthfully arrive there (an
// originator receives the resolutions, a beneficiary the inquiry and the
// confirmation). That moves the transfer through its stages ([Stage]),
// and turns an unknown outcome into [InitiationStored] with Reconciled
// set; any other delivery is recorded as refused and moves nothing.
// Inbound inquiries start entries of their own. [Journal.Stuck] lists the
// transfers that need a person ([Rule]); it never sends anything, and
// [Journal.Settle] records what an operator learnt of an unknown outcome.
// The SDK never sends a transfer again on its own.
//
// # What is stored
//
// Records are short JSON documents of fixed vocabulary: kinds, times, the
// operation, the capability URL's reference (the integrator's identifier,
// never personal data; see travelrule.NewCallbackURL), transfer ids,
// SHA-256 digests of request bodies, Idempotency-Keys, attempt counts,
// decisions, callback kinds, delivery digests, and an operator's reason
// for a settlement (see [Settlement]). Identifiers are kept only when they are 1 to 128 characters
// from A-Z a-z 0-9 -_.:~. No name, date of birth, national id, address,
// wallet address, amount, URL, token or secret is stored,
// whatever the service or a peer sends.
//
// # Stores
//
// A [Store] keeps records per entry, written at most once per record id,
// and names that point at entries. [MemoryStore] serves one process; the
// packages callback/redisstore (NewJournal) and callback/pgstore
// (NewJournal) serve a fleet whose replicas share Redis or PostgreSQL. An
// entry is forgotten one retention after its last record
// ([DefaultRetention], 30 days), so a store holds at most one retention of
// transfers. A store that forgets sooner (a Redis that evicts or keeps no
// persistence) forgets the entries that guard references: [New] refuses
// a store whose Err method reports such a fault. journal/storetest checks
// a store against the contract.
package journal
