package travelruletest

import (
	"sync"

	"github.com/vaspkit/travelrule"
)

// The beneficiaries the sandbox made travel addresses for (POST
// {URL}/travel-address/generate), as the live service "creates (or
// upserts) a beneficiary applicant": one per externalId, or, without one,
// per person type, names and wallet; each with a public id and the travel
// address that names it. The most recent ones are kept, within the record
// limit.

// beneficiary is a beneficiary the sandbox made a travel address for.
type beneficiary struct {
	id            string // the public id, in the travel address's path
	travelAddress string
	req           travelrule.TravelAddressRequest // as last generated (upserted)
	key           string                          // in beneficiaries.byKey
}

// beneficiaries holds the beneficiaries, by identity and by travel address.
type beneficiaries struct {
	limit int // the record limit, 0 for none; fixed at start

	mu        sync.Mutex // guards every field below
	byKey     map[string]*beneficiary
	byAddress map[string]*beneficiary
	order     []*beneficiary // oldest first
}

func newBeneficiaries(limit int) *beneficiaries {
	return &beneficiaries{limit: limit, byKey: make(map[string]*beneficiary), byAddress: make(map[string]*beneficiary)}
}

// beneficiaryKey is the identity of the beneficiary req names: its
// externalId when it has one, else its person type, names and wallet.
func beneficiaryKey(req *travelrule.TravelAddressRequest) string {
	if req.ExternalID != "" {
		return "x\x00" + req.ExternalID
	}
	return "n\x00" + req.PersonType + "\x00" + req.FirstName + "\x00" + req.LastName + "\x00" + req.LegalName + "\x00" + req.WalletAddress
}

// upsert returns the beneficiary req names, updated with req, or a new one
// whose id and travel address address makes (it may fail: nothing is then
// stored), forgetting the oldest beyond the record limit.
func (bs *beneficiaries) upsert(req travelrule.TravelAddressRequest, address func(id string) (string, error)) (beneficiary, error) {
	key := beneficiaryKey(&req)
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if b := bs.byKey[key]; b != nil {
		b.req = req
		return *b, nil
	}
	id := newTransferID()
	ta, err := address(id)
	if err != nil {
		return beneficiary{}, err
	}
	b := &beneficiary{id: id, travelAddress: ta, req: req, key: key}
	bs.byKey[key] = b
	bs.byAddress[ta] = b
	bs.order = append(bs.order, b)
	for bs.limit > 0 && len(bs.order) > bs.limit {
		old := bs.order[0]
		bs.order[0] = nil
		bs.order = bs.order[1:]
		delete(bs.byKey, old.key)
		delete(bs.byAddress, old.travelAddress)
	}
	return *b, nil
}

// lookup returns the beneficiary whose travel address is ta, if kept.
func (bs *beneficiaries) lookup(ta string) (beneficiary, bool) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.byAddress[ta]
	if b == nil {
		return beneficiary{}, false
	}
	return *b, true
}
