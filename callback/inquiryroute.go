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
// to a path of the inquiry route: the originator's handler, made with
// WithCapabilityKey, mounted where INQUIRY callbacks arrive. They never
// carry a tag (the live docs: trust rests on x-data-integrity and the
// travel address), so the text says which handler fits that route.
var errInquiryUntagged = fmt.Errorf("%w: INQUIRY callbacks come to the travel address's path (%s{id}) without one, "+
	"trusted by their x-data-integrity signature: serve that route with its own handler, made with "+
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
