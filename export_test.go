package travelrule

// EncodeTravelAddressWithoutChecks makes travel addresses of URIs that
// EncodeTravelAddress refuses, for tests of what decoding refuses.
var EncodeTravelAddressWithoutChecks = encodeTravelAddress
