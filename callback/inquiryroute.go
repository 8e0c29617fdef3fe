package callback

import (
	"fmt"
	"strings"

	"github.com/vaspkit/travelrule"
)

// inquirySegment is the path a travel address names for inquiries (live
// docs: the address encodes /transfers/inquiry/{beneficiaryPublicId}).
const inquirySegment = "/transfers/inquiry/"

// errInquiryUntagged is the refusal of a request without a capability tag
// to a path of the inquiry route: likely the originator's handler, made
// with WithCapabilityKey, mounted on the path a travel address encodes. No
// tag is part of that path, and the live docs' inbound endpoint there takes
// no bearer token and trusts x-data-integrity, so the text says which
// handler fits that route.
var errInquiryUntagged = fmt.Errorf("%w: %s{id} is the path a travel address encodes, whose inbound endpoint "+
	"takes no bearer token and trusts x-data-integrity (live docs): serve that route with its own handler, made with "+
	"WithVerifier (a callback.NewDataIntegrityVerifier of the signing secret) and no WithCapabilityKey",
	travelrule.ErrCallbackUnsigned, inquirySegment)

// inquiryRoute returns the shape of path, when it is one of the inquiry
// route's (".../transfers/inquiry/<id>"): the path with the id replaced by
// "{id}", so that a log line shows the route and no beneficiary's id; ok is
// false for any other path.
func inquiryRoute(path string) (shape string, ok bool) {
	i := strings.LastIndex(path, inquirySegment)
	if i < 0 || strings.Trim(path[i+len(inquirySegment):], "/") == "" {
		return "", false
	}
	return path[:i] + inquirySegment + "{id}", true
}
