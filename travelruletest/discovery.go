package travelruletest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vaspkit/travelrule"
)

// The VASP search of the live service: GET {URL}/discovery/vasp with the
// criteria in a JSON body ("for compatibility with the original TRP
// registry"), answered {"status":true,"data":{"count":N,"vasps":[…]}}. As
// the docs' curl example sends no Authorization header, none is needed
// (one sent is ignored). The sandbox's directory is small and fixed: its
// own beneficiary VASP and three sample VASPs.

// discoveryPath is where the search answers, after the path prefix.
const discoveryPath = "/discovery/vasp"

// maxVASPs is the most VASPs a search answers, as the live service's.
const maxVASPs = 100

// OwnVASPID is the id of the sandbox's own beneficiary VASP in its VASP
// directory (GET {URL}/discovery/vasp), whose domain is the sandbox's
// host and port, such as "127.0.0.1:8080": the VASP its travel addresses
// name.
const OwnVASPID = "6f1d3a4e-2b7c-4e58-9a10-5c3e7d2b8f01"

// vasp is an entry of the VASP directory.
type vasp struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Domain  string `json:"domain"`
	Country string `json:"country"`
}

// vaspDirectory is the directory of a sandbox at host: its own beneficiary
// VASP, then the samples, whose domains are under the reserved example
// domains (RFC 2606). No entry is a real VASP.
func vaspDirectory(host string) []vasp {
	return []vasp{
		{ID: OwnVASPID, Name: "travelruletest beneficiary VASP", Domain: host, Country: "DE"},
		{ID: "6f1d3a4e-2b7c-4e58-9a10-5c3e7d2b8f02", Name: "Example Exchange", Domain: "exchange.example.com", Country: "GB"},
		{ID: "6f1d3a4e-2b7c-4e58-9a10-5c3e7d2b8f03", Name: "Example Custody", Domain: "custody.example.com", Country: "CH"},
		{ID: "6f1d3a4e-2b7c-4e58-9a10-5c3e7d2b8f04", Name: "Sample Wallet", Domain: "wallet.example.org", Country: "SG"},
	}
}

// criterionOf returns the field of v that the criterion name matches, and
// whether name is a criterion.
func criterionOf(v *vasp, name string) (string, bool) {
	switch name {
	case "id":
		return v.ID, true
	case "name":
		return v.Name, true
	case "domain":
		return v.Domain, true
	case "country":
		return v.Country, true
	}
	return "", false
}

// criterion is one criterion of a search: a field and the text it must
// contain, in lower case.
type criterion struct{ name, text string }

// decodeCriteria decodes and checks the body of a search: a JSON object
// (an empty body counts as {}) of criteria among id, name, domain and
// country, each a string of at most 255 characters (null and "" count as
// absent), at least one given.
func decodeCriteria(body []byte) ([]criterion, []travelrule.FieldError, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var raw map[string]json.RawMessage
	if err := decodeObject(body, &raw); err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	slices.Sort(names) // faults in a stable order
	var cs []criterion
	var faults []travelrule.FieldError
	for _, name := range names {
		field := name
		if !isCriterionName(name) {
			field = "" // a name the message may not repeat
		}
		var v jsonString
		_ = v.UnmarshalJSON(raw[name])
		switch _, known := criterionOf(&vasp{}, name); {
		case !known:
			faults = append(faults, travelrule.FieldError{Field: field, Reason: "not a criterion of the sandbox's directory: use id, name, domain or country"})
		case v.bad:
			faults = append(faults, travelrule.FieldError{Field: field, Reason: "must be a string"})
		case utf8.RuneCountInString(v.v) > 255:
			faults = append(faults, travelrule.FieldError{Field: field, Reason: "longer than 255 characters"})
		case v.v != "":
			cs = append(cs, criterion{name: name, text: strings.ToLower(v.v)})
		}
	}
	if len(cs) == 0 && len(faults) == 0 {
		faults = append(faults, travelrule.FieldError{Reason: "at least one criterion is required (id, name, domain or country), such as {\"domain\":\"example.com\"}"})
	}
	return cs, faults, nil
}

// isCriterionName reports whether name is short and plain enough to be
// named in a fault: at most 64 ASCII letters, digits and '_'.
func isCriterionName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// serveDiscovery is GET {URL}/discovery/vasp: the VASPs that match every
// criterion (a case-insensitive "contains"), at most 100, in the
// directory's order. No token is needed and the Content-Type is not
// checked (a GET's body is JSON by the docs' word).
func (s *Server) serveDiscovery(r *http.Request) *answer {
	if r.Method != http.MethodGet {
		return methodNotAllowed(http.MethodGet)
	}
	body, a := readBody(r)
	if a != nil {
		return a
	}
	cs, faults, err := decodeCriteria(body)
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	found := []vasp{}
	for i := range s.vasps {
		v := &s.vasps[i]
		if matches(v, cs) {
			found = append(found, *v)
			if len(found) == maxVASPs {
				break
			}
		}
	}
	return dataAnswer(struct {
		Count int    `json:"count"`
		VASPs []vasp `json:"vasps"`
	}{len(found), found})
}

// matches reports whether v matches every criterion of cs.
func matches(v *vasp, cs []criterion) bool {
	for _, c := range cs {
		field, _ := criterionOf(v, c.name)
		if !strings.Contains(strings.ToLower(field), c.text) {
			return false
		}
	}
	return true
}
