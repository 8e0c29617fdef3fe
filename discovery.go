package travelrule

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The VASP search of the live service: GET /discovery/vasp.

// VASPQuery is the criteria of a VASP search. Each criterion is a
// case-insensitive "contains" match and all of them must match; at least
// one is required. Domain is the criterion the docs show; Name and any
// other (Criteria, sent as given, such as "country") are passed on for the
// service to judge.
type VASPQuery struct {
	// Domain matches the VASP's domain, such as "example.com".
	Domain string
	// Name matches the VASP's name.
	Name string
	// Criteria holds other criteria by their JSON name. A key "domain" or
	// "name" here is overridden by the field of the same name.
	Criteria map[string]string
}

// body returns the JSON object of the query's non-empty criteria.
func (q *VASPQuery) body() map[string]string {
	m := make(map[string]string, len(q.Criteria)+2)
	for k, v := range q.Criteria {
		if v != "" {
			m[k] = v
		}
	}
	if q.Domain != "" {
		m["domain"] = q.Domain
	}
	if q.Name != "" {
		m["name"] = q.Name
	}
	return m
}

// Validate reports the faults of the query as a [*ValidationError], or
// nil: at least one non-empty criterion, criteria names that are plain
// identifiers, and values of at most 255 characters of plain text (see
// [TransferRequest.Validate]).
func (q *VASPQuery) Validate() error {
	var errs []FieldError
	m := q.body()
	if len(m) == 0 {
		errs = append(errs, FieldError{Field: "", Reason: "at least one criterion is required (domain, name, ...)"})
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if !isIdentifier(k, 64) {
			errs = append(errs, FieldError{Field: "criteria", Reason: "a criterion's name must be a plain identifier"})
			continue
		}
		errs = length(errs, k, v, 0, 255)
		errs = plainText(errs, "", k, v)
	}
	if len(errs) > 0 {
		return &ValidationError{Fields: errs}
	}
	return nil
}

// VASP is one VASP of a search's results. Its fields beyond these are not
// documented: read them from Raw.
type VASP struct {
	// ID is the VASP's identifier ("id" or "publicId"), if given.
	ID string
	// Name is the VASP's name.
	Name string
	// Domain is the VASP's domain.
	Domain string
	// Raw is the VASP's whole JSON object.
	Raw json.RawMessage
}

// UnmarshalJSON implements json.Unmarshaler leniently: fields of
// unexpected types are read as text or left empty, and the object is kept
// in Raw.
func (v *VASP) UnmarshalJSON(b []byte) error {
	var f struct {
		ID       flexString `json:"id"`
		PublicID flexString `json:"publicId"`
		Name     flexString `json:"name"`
		Domain   flexString `json:"domain"`
	}
	if len(b) > 0 && b[0] == '{' {
		_ = json.Unmarshal(b, &f)
	}
	*v = VASP{ID: first(f.ID, f.PublicID), Name: string(f.Name), Domain: string(f.Domain), Raw: append(json.RawMessage(nil), b...)}
	return nil
}

// VASPSearchResult is the answer to a successful SearchVASPs.
type VASPSearchResult struct {
	// Count is the answer's count, or the number of VASPs when it had none.
	Count int
	// VASPs are the matches, at most 100.
	VASPs []VASP
	// RequestID is the answer's X-Request-Id header, if any: empty when,
	// of a request id's shape, it echoes a secret of the call; one of
	// another shape is kept as sent and masked in every printed form.
	RequestID string
	// Attempts is how many times the request was sent.
	Attempts int
	// Raw is the whole answer body, unknown fields included.
	Raw json.RawMessage
}

// Format implements fmt.Formatter: the count and the names, no bodies.
func (r VASPSearchResult) Format(f fmt.State, verb rune) {
	goSyntaxName(f, verb, "travelrule.VASPSearchResult")
	fmt.Fprintf(f, "{Count:%d VASPs:[%d] RequestID:%s Attempts:%d Raw:%s}", r.Count, len(r.VASPs), shownRequestID(r.RequestID), r.Attempts, size(r.Raw))
}

// MarshalJSON implements json.Marshaler with the fields of LogValue: no
// form of a result carries its Raw body or an identifier it hides.
func (r VASPSearchResult) MarshalJSON() ([]byte, error) { return logJSON(r.LogValue()) }

// LogValue implements slog.LogValuer, with the same fields as Format.
func (r VASPSearchResult) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int("count", r.Count),
		slog.Int("vasps", len(r.VASPs)),
		slog.String("requestId", shownRequestID(r.RequestID)),
		slog.Int("attempts", r.Attempts),
		slog.Int("rawBytes", len(r.Raw)),
	)
}

type vaspFields struct {
	Count *flexString `json:"count"`
	VASPs *[]VASP     `json:"vasps"`
}

type searchAnswer struct {
	envelope
	vaspFields
	Data vaspFields `json:"data"`
}

// SearchVASPs searches the service's directory of VASPs with
// GET {base}/discovery/vasp, the criteria in a JSON body ("for
// compatibility with the original TRP registry", as the service documents).
// A query without criteria returns a [*ValidationError] and nothing is
// sent. The service answers at most 100 VASPs.
//
// It changes nothing, so it is retried like [Client.ResolveInquiry]. The
// request carries the client's bearer token like every other, although the
// docs' example sends none. opts set this call's own settings (see
// [CallOption]).
func (c *Client) SearchVASPs(ctx context.Context, q *VASPQuery, opts ...CallOption) (*VASPSearchResult, error) {
	const op = "SearchVASPs"
	if q == nil {
		return nil, c.invalid(ctx, op, &ValidationError{Fields: []FieldError{{Field: "", Reason: "query is nil"}}})
	}
	if err := q.Validate(); err != nil {
		return nil, c.invalid(ctx, op, err)
	}
	co, err := settleCall(opts)
	if err != nil {
		return nil, c.invalid(ctx, op, err)
	}
	body, err := encodeBody(op, q.body())
	if err != nil {
		return nil, err
	}
	var res VASPSearchResult
	spec := callSpec{op: op, method: http.MethodGet, url: c.baseURL + "/discovery/vasp", body: body, repeatable: true, pii: noPII{}}
	ans, err := c.do(ctx, spec, co, func(got *answer) outcome {
		var a searchAnswer
		if !decodeLenient(got.body, &a) {
			return outcomeOther
		}
		f := &a.vaspFields
		if a.Data.VASPs != nil || a.Data.Count != nil {
			f = &a.Data
		}
		if o := a.refusal(); o != outcomeSuccess {
			return o
		}
		if !understood(a.Status, f.VASPs != nil) {
			return outcomeOther
		}
		if f.VASPs != nil {
			res.VASPs = *f.VASPs
		}
		res.Count = len(res.VASPs)
		if f.Count != nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(*f.Count))); err == nil && n >= 0 {
				res.Count = n
			}
		}
		return outcomeSuccess
	})
	if err != nil {
		return nil, err
	}
	res.RequestID, res.Attempts, res.Raw = ans.shown.requestID(ans.header), ans.attempts, ans.body
	return &res, nil
}
