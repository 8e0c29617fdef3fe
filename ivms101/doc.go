// Package ivms101 is the data model of IVMS101, the interVASP Messaging
// Standard: the originator, the beneficiary, their VASPs and the
// intermediary VASPs of a virtual-asset transfer, as Travel Rule networks
// (TRP, TRISA, CODE, Sygna, Notabene and others) exchange them in JSON.
//
// # Editions
//
// IVMS101 has two editions, issue 1 of 2020 ([Version2020], payload
// version "101") and IVMS101.2023 ([Version2023], "101.2023"). They
// differ in a few member names: originatorPersons and beneficiaryPersons
// became originatorPerson and beneficiaryPerson, nameIdentifierType became
// naturalPersonNameIdentifierType in a natural person's nameIdentifier,
// customerNumber became customerIdentification for a legal person, and
// the 2023 edition adds payloadMetadata.payloadVersion and an
// accountNumber on each person. One set of Go types holds both; a
// payload's [Payload.Version] records the edition it was read with, and
// [Payload.MarshalJSON] writes that edition's names throughout.
//
// # Reading: lenient and lossless
//
// [Parse] (and UnmarshalJSON on every type) reads what senders send, not
// only what the standard spells:
//
//   - Member names match as encoding/json matches them: exactly, else
//     without regard to case, so the PascalCase top-level members some
//     networks send ("Originator", "OriginatingVASP") are read, as is
//     "postcode" for postCode.
//   - Both editions' names are read, in either edition. The payload is
//     [Version2023] when originatorPerson, beneficiaryPerson or
//     naturalPersonNameIdentifierType (in nameIdentifier) was read, or
//     payloadMetadata.payloadVersion is "101.2023"; otherwise it is
//     [Version2020]. A legal person's customerIdentification does not
//     decide the edition: the 2020 standard's own table spells it so, and
//     networks send it in 2020 payloads.
//   - A single string where the standard has an array of strings
//     ("accountNumber": "0xabc", "addressLine": "1 Main St") is read as an
//     array of that one string.
//   - A natural or legal person's name given as an array of name objects
//     is read as one name holding the identifiers of all of them, in
//     order. An originatingVASP or beneficiaryVASP given as the person
//     itself ({"originatingVASP": {"legalPerson": ...}} at the top level)
//     is read as that person.
//   - Nothing a sender's parser would read is lost. A member the model does not name
//     goes into that level's Extra, as its JSON text. So does a member
//     the model names whose value has the wrong type (a number where a
//     string belongs, an object where an array belongs, null) or is empty
//     ("" or []): the field stays empty and the member is kept under its
//     own name. When a member is given more than once under one name,
//     only the last occurrence counts, as encoding/json and JavaScript's
//     JSON.parse read it: the identity screened is the one the sender's
//     parser saw, and the earlier occurrences, which no such parser sees,
//     are dropped (the one exception to this rule). When it is given
//     under several names (in another case, or in both editions' names),
//     the first that can be read among those spelled exactly as the
//     standard spells them is read, else the first among the others; the
//     others are kept in Extra, unless they have exactly the name that
//     MarshalJSON writes for that field (the value read wins). Member
//     names are kept as given.
//
// Only bytes that are not JSON, or a top-level value that is not an
// object, fail to parse, with an error matching [ErrMalformed] that never
// quotes the input. The work is linear in the size of the input: a
// member the model does not name is kept without being looked into.
//
// # Writing: the same payload again
//
// MarshalJSON writes the model's members in IVMS101's order, in the
// payload's edition, leaving out empty fields (IntermediaryVASP.Sequence,
// which the standard requires, is always written), then the members of
// Extra, sorted by name (a member of Extra with a name the model writes
// is left out). A type other than Payload marshalled on its own
// does not know the payload's edition and writes the 2020 names. For
// every input that parses, parsing what MarshalJSON writes gives the same
// Payload again; for an input that spells every member as the standard
// does and has no value of the wrong type, MarshalJSON writes the same
// JSON (up to member order and white space).
//
// # Validation
//
// [Payload.Validate] checks a payload against IVMS101's datatypes, code
// lists and constraints (C1 to C12, where they can be checked without
// outside registers) and reports every fault at once in a
// [*ValidationError], each with the JSON path of the member in the
// payload's edition. Paths and reasons never hold the payload's values.
// The code lists are exported for reuse: [NaturalPersonNameType.Valid],
// [LegalPersonNameType.Valid], [AddressType.Valid],
// [NationalIdentifierType.Valid], [ValidTransliterationMethod],
// [Version.Valid] (the payload versions) and [ValidCountry].
//
// # Redaction
//
// The types hold personal data. Their fmt forms (every verb, %#v and %+v
// included) and their log/slog forms show the codes of IVMS101's code
// lists and ISO 3166 countries when a value is one, the numbers of a
// transfer path, and "[redacted]" for every other value that is set:
// names, identifiers, dates, addresses, account numbers, and any code
// field holding something that is not a code (it is the sender's free
// text). Extra is shown by its number of members only. The methods have
// value receivers, so copies are redacted too. The JSON form is not
// redacted: it is the payload. A slice of these types is not itself a
// slog.LogValuer, and slog's JSON handler writes a slice it is given with
// MarshalJSON: log the value that holds the slice, or its elements.
//
// # Relation to the travelrule package
//
// This package imports nothing of the rest of the module. The root
// travelrule package converts IVMS101 persons to and from its flat Party;
// that conversion is not here.
package ivms101
