package travelruletest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
)

// The control plane's faults and decision: what Server.SetFaults and
// Server.SetDecision do in-process, over HTTP.
const (
	faultsPath   = "faults"   // after controlPrefix
	decisionPath = "decision" // after controlPrefix
)

// wireFault is a Fault in the control plane's JSON: the kind and the
// operations by name, the durations as Go durations ("2s"). Rate absent
// is 1.
type wireFault struct {
	Kind       string   `json:"kind"`
	Rate       *float64 `json:"rate,omitempty"`
	Ops        []string `json:"ops,omitempty"`
	Times      int      `json:"times,omitempty"`
	RetryAfter string   `json:"retryAfter,omitempty"`
	Latency    string   `json:"latency,omitempty"`
}

// wireFaults is the body of POST {base}/sandbox/faults.
type wireFaults struct {
	Faults []wireFault `json:"faults"`
}

// shownFault is a fault in the answers of {base}/sandbox/faults: the fault,
// and how many requests it has hit since it was set.
type shownFault struct {
	wireFault
	Fired int `json:"fired"`
}

// toWire is f in the control plane's JSON, its rate as the share it hits
// (1 for a zero Rate).
func (f Fault) toWire() wireFault {
	rate := f.rate()
	w := wireFault{Kind: f.Kind.String(), Rate: &rate, Times: f.Times}
	for i, name := range opNames {
		if f.Ops&(1<<i) != 0 {
			w.Ops = append(w.Ops, name)
		}
	}
	if f.RetryAfter != 0 {
		w.RetryAfter = f.RetryAfter.String()
	}
	if f.Latency != 0 {
		w.Latency = f.Latency.String()
	}
	return w
}

// fault is the Fault w describes, or the faults of its fields, with paths
// under path.
func (w wireFault) fault(path string) (Fault, []travelrule.FieldError) {
	var faults []travelrule.FieldError
	bad := func(field, reason string) {
		faults = append(faults, travelrule.FieldError{Field: path + "." + field, Reason: reason})
	}
	f := Fault{Rate: 1, Times: w.Times}
	var ok bool
	if f.Kind, ok = faultKindNamed(w.Kind); !ok {
		bad("kind", "must be one of "+strings.Join(faultKindNames(), ", "))
	}
	if w.Rate != nil {
		f.Rate = *w.Rate
	}
	if !(f.Rate > 0 && f.Rate <= 1) {
		bad("rate", "must be above 0 and at most 1, 1 if absent (a fault that hits no request is left out)")
	}
	if f.Times < 0 {
		bad("times", "must not be negative")
	}
	ops, err := operationsNamed(w.Ops)
	if err != nil {
		bad("ops", "must name operations: "+strings.Join(opNames[:], ", "))
	}
	f.Ops = ops
	for _, d := range []struct {
		name string
		v    string
		dst  *time.Duration
	}{{"retryAfter", w.RetryAfter, &f.RetryAfter}, {"latency", w.Latency, &f.Latency}} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		switch {
		case err != nil || v < 0:
			bad(d.name, "must be a duration such as 2s or 300ms, not negative")
		case v > MaxFaultLatency:
			bad(d.name, "must be at most "+MaxFaultLatency.String())
		}
		*d.dst = v
	}
	if len(faults) == 0 {
		if err := f.check(); err != nil { // what SetFaults would refuse with a panic
			bad("kind", strings.TrimPrefix(err.Error(), "travelruletest: Fault: "))
		}
	}
	return f, faults
}

// decodeControlBody decodes the JSON object body into v, refusing unknown
// fields: a control plane's typo must not pass unnoticed. It returns the
// faults to answer 400 with, or the error of a body that is not a JSON
// object of v's shape.
//
// A fault names its field by its path without array indexes
// ("faults.times"): encoding/json gives them from Go 1.27 on only, and a
// path reads the same whichever Go built the sandbox.
func decodeControlBody(body []byte, v any) ([]travelrule.FieldError, error) {
	if err := decodeObject(body, &json.RawMessage{}); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &te):
		return []travelrule.FieldError{{Field: withoutIndexes(te.Field), Reason: "must be a JSON " + te.Type.Kind().String()}}, nil
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return []travelrule.FieldError{{Field: name, Reason: "unknown field"}}, nil
	}
	return nil, errNotObject
}

// serveFaults is {base}/sandbox/faults: GET lists the faults injected, POST
// replaces them as Server.SetFaults does.
func (s *Server) serveFaults(r *http.Request) *answer {
	if r.Method == http.MethodGet {
		if a := s.authenticate(r); a != nil {
			return a
		}
		return s.faultsAnswer()
	}
	if r.Method != http.MethodPost {
		return methodNotAllowed("GET, POST")
	}
	body, a := s.admit(r)
	if a != nil {
		return a
	}
	var w wireFaults
	faults, err := decodeControlBody(body, &w)
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	if len(w.Faults) > maxControlFaults {
		// Every request draws from each fault: a long list costs each one.
		return badRequest(nil, []travelrule.FieldError{{Field: "faults", Reason: "at most " + strconv.Itoa(maxControlFaults) + " faults"}})
	}
	set := make([]Fault, len(w.Faults))
	for i, wf := range w.Faults {
		f, ff := wf.fault("faults[" + strconv.Itoa(i) + "]")
		set[i], faults = f, append(faults, ff...)
	}
	if len(faults) > 0 {
		return badRequest(nil, faults)
	}
	s.SetFaults(set...)
	return s.faultsAnswer()
}

// maxControlFaults bounds the faults one POST {base}/sandbox/faults sets.
const maxControlFaults = 64

// faultsAnswer is the 200 answer that lists the faults injected.
func (s *Server) faultsAnswer() *answer {
	fs := s.faults
	fs.mu.Lock()
	out := struct {
		Faults []shownFault `json:"faults"`
		// Off is true while the console's switch holds the faults off.
		Off bool `json:"off,omitempty"`
	}{make([]shownFault, len(fs.slots)), fs.off}
	for i, slot := range fs.slots {
		out.Faults[i] = shownFault{wireFault: slot.toWire(), Fired: slot.fired}
	}
	fs.mu.Unlock()
	body, _ := json.Marshal(out)
	return &answer{status: http.StatusOK, body: body}
}

// wireDecision is the body of POST {base}/sandbox/decision and of its
// answer.
type wireDecision struct {
	Decision *Decision `json:"decision"`
}

// serveDecision is POST {base}/sandbox/decision: the decision on the
// transfers initiated from now on, as Server.SetDecision sets it.
func (s *Server) serveDecision(r *http.Request) *answer {
	body, a := s.admit(r)
	if a != nil {
		return a
	}
	var w wireDecision
	faults, err := decodeControlBody(body, &w)
	if err == nil && len(faults) == 0 && (w.Decision == nil || w.Decision.check() != nil) {
		faults = []travelrule.FieldError{{Field: "decision", Reason: `must be "approve", "reject", "none" or "" (the server's own)`}}
	}
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	s.SetDecision(*w.Decision)
	out, _ := json.Marshal(w)
	return &answer{status: http.StatusOK, body: out}
}

// withoutIndexes drops the array indexes of a JSON path as encoding/json
// writes it: "faults.0.times" is "faults.times".
func withoutIndexes(path string) string {
	parts := strings.Split(path, ".")
	kept := parts[:0]
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ".")
}
