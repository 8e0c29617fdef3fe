package travelrule

// EncodeTravelAddressUnchecked makes travel addresses of URIs that
// EncodeTravelAddress refuses, for tests of what decoding refuses.
var EncodeTravelAddressUnchecked = encodeTravelAddress
