package travelruletest

import (
	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/ivms101"
)

// ivms101Of is the IVMS101 payload of req's parties, as an INQUIRY carries
// it: TransferRequest.IVMS101's, in the 2020 edition. What IVMS101 has no
// place for (a party's email) is left out of the INQUIRY [own].
func ivms101Of(req *travelrule.TransferRequest) *ivms101.Payload {
	p, _ := req.IVMS101()
	return p
}
