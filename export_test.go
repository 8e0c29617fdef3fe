package travelrule

// EncodeTravelAddressWithoutChecks makes travel addresses of URIs that
// EncodeTravelAddress refuses, for tests of what decoding refuses.
var EncodeTravelAddressWithoutChecks = encodeTravelAddress

// CallbackNamesTwice is the tests' oracle of the bodies ParseCallback
// refuses for giving a member's name twice in one object.
var CallbackNamesTwice = oracleCallbackDupNames
