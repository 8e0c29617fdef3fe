package travelruletest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/ivms101"
)

// What the console shows: a copy of the records, taken under their lock,
// turned into the views its templates render. Nothing here writes HTML:
// html/template escapes every value the views hold.

// consoleListLimit is how many transfers the console lists, the newest.
const consoleListLimit = 200

// consoleSnap is what the console shows, copied from the records at one
// version.
type consoleSnap struct {
	version uint64
	total   int           // transfers kept
	rows    []transferRec // the newest, newest first, at most consoleListLimit
	failed  map[string]int
	busy    map[string]bool // the transfers with a callback being sent
	open    *transferRec    // the transfer open, if kept
	// Of the transfer open: its finished callbacks, those being sent, and
	// the requests that named it, each in order.
	finished []Delivery
	sending  []sendingRec
	requests []Request
}

// consoleSnapshot copies what the console shows, with the transfer open,
// if open names one kept.
func (rs *records) consoleSnapshot(open string) consoleSnap {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	snap := consoleSnap{version: rs.version, total: len(rs.order) + len(rs.held), failed: make(map[string]int),
		busy: make(map[string]bool, len(rs.sending))}
	for _, d := range rs.sending {
		// An inbound inquiry is not among its transfer's callbacks.
		snap.busy[d.TransferID] = true
	}
	for i := len(rs.order) - 1; i >= 0 && len(snap.rows) < consoleListLimit; i-- {
		snap.rows = append(snap.rows, *rs.order[i])
	}
	if len(snap.rows) < consoleListLimit && len(rs.held) > 0 {
		held := make([]transferRec, 0, len(rs.held))
		for _, t := range rs.held {
			held = append(held, *t)
		}
		slices.SortFunc(held, func(a, b transferRec) int { return cmp.Compare(b.seq, a.seq) })
		snap.rows = append(snap.rows, held[:min(len(held), consoleListLimit-len(snap.rows))]...)
	}
	for d := range rs.deliveries.all() {
		if !d.Delivered && len(d.Attempts) > 0 {
			snap.failed[d.TransferID]++
		}
	}
	t := rs.transfers[open]
	if t == nil {
		return snap
	}
	c := *t
	snap.open = &c
	for d := range rs.deliveries.all() {
		if d.TransferID == open {
			d.Body = nil
			d.Attempts = slices.Clone(d.Attempts)
			snap.finished = append(snap.finished, d)
		}
	}
	for _, d := range rs.sending {
		if d.TransferID == open {
			d.Attempts = slices.Clone(d.Attempts)
			snap.sending = append(snap.sending, d)
		}
	}
	slices.SortFunc(snap.sending, func(a, b sendingRec) int { return cmp.Compare(a.ID, b.ID) })
	for r := range rs.requests.all() {
		if r.TransferID == open {
			r.Header = nil // never shown
			r.Faults = slices.Clone(r.Faults)
			snap.requests = append(snap.requests, r)
		}
	}
	return snap
}

// consoleView is what the person looking asked to see: the transfer open
// and whether personal data is revealed.
type consoleView struct {
	Open   string
	Reveal bool
}

// Link is the console's URL of the view with the transfer id open.
func (v consoleView) Link(id string) string {
	if q := v.query(id); q != "" {
		return "/?" + q
	}
	return "/"
}

// query is the view's query with the transfer id open.
func (v consoleView) query(id string) string {
	q := ""
	if id != "" {
		q = "transfer=" + id // an id the records keep: a UUID
	}
	if v.Reveal {
		if q != "" {
			q += "&"
		}
		q += "reveal=1"
	}
	return q
}

// consoleRow is a transfer in the console's list.
type consoleRow struct {
	ID                      string
	Created                 time.Time
	Asset, Amount           string
	Flow                    Flow
	State                   State
	Inquiry                 bool
	Originator, Beneficiary string // names when revealed, else redacted
	Awaiting                string // who must act next, if someone must
	Sending                 bool   // callbacks still to deliver
	Failed                  int    // callbacks given up
	Open                    bool
	Link                    string
}

// consoleList is the console's list of transfers.
type consoleList struct {
	Rows  []consoleRow
	Total int
}

// consoleDetail is the transfer open, with its timeline.
type consoleDetail struct {
	consoleRow
	View           consoleView
	Updated        time.Time
	TxID           string
	Confirmed      bool
	EmailDelivered bool
	Callback       string // scheme, host and path only
	TravelAddress  string // revealed, else redacted
	Email          string // revealed, else redacted
	IdempotencyKey bool
	Parties        []consoleParty
	Timeline       []consoleEvent
	CanDecide      bool
}

// consoleParty is a party of the transfer open: its fields that are set,
// the personal ones redacted unless revealed.
type consoleParty struct {
	Role   string
	Fields []consoleField
}

// consoleField is a party's field, revealed.
type consoleField struct{ Name, Value string }

// consoleEvent is a step of a transfer's timeline: a request that named
// it, a decision, or a callback about it.
type consoleEvent struct {
	Time     time.Time // zero: not started
	Title    string
	Outcome  string
	Bad      bool // a failure: an error answered, a fault, a callback given up
	Faults   string
	URL      string // a callback's, scheme, host and path only
	Scheme   string // how a callback is signed
	Attempts []consoleAttempt
	Next     time.Time // when a callback's next attempt is due
}

// consoleAttempt is an attempt at delivering a callback.
type consoleAttempt struct {
	N       int
	Time    time.Time
	Answer  string
	OK      bool
	Latency time.Duration
}

// rows are the console's list of the snapshot's transfers.
func (snap *consoleSnap) list(v consoleView) consoleList {
	out := consoleList{Rows: make([]consoleRow, len(snap.rows)), Total: snap.total}
	for i := range snap.rows {
		out.Rows[i] = rowOf(&snap.rows[i], snap.failed[snap.rows[i].ID], v)
		out.Rows[i].Sending = out.Rows[i].Sending || snap.busy[snap.rows[i].ID]
	}
	return out
}

// rowOf is the console's row of the transfer t, with failed callbacks
// given up.
func rowOf(t *transferRec, failed int, v consoleView) consoleRow {
	r := consoleRow{
		ID: t.ID, Created: t.Created, Flow: t.Flow,
		Asset:  shownValue(t.Request.Asset, isTicker(t.Request.Asset), &t.Request, v.Reveal),
		Amount: shownValue(t.Request.Amount, isDecimal(t.Request.Amount), &t.Request, v.Reveal),
		State:  t.State, Inquiry: t.Inquiry, Sending: t.callbacks > 0, Failed: failed,
		Open: t.ID == v.Open, Link: v.Link(t.ID),
		Originator: partyName(&t.Request.Originator, v.Reveal), Beneficiary: partyName(&t.Request.Beneficiary, v.Reveal),
	}
	switch {
	case t.awaitsSandbox():
		r.Awaiting = "the counterparty's decision"
	case t.resolvable && t.decision == "":
		r.Awaiting = "your inquiryResolution"
	}
	return r
}

// partyName is the party's name when revealed, else its redacted form.
func partyName(p *travelrule.Party, reveal bool) string {
	if !reveal {
		return "[redacted]"
	}
	name := p.LegalName
	if !strings.EqualFold(p.PersonType, "legal") || name == "" {
		name = strings.TrimSpace(p.FirstName + " " + p.LastName)
	}
	if name == "" {
		return "—"
	}
	return name
}

// detail is the console's view of the snapshot's transfer open, or nil.
func (snap *consoleSnap) detail(v consoleView, scheme string) *consoleDetail {
	t := snap.open
	if t == nil {
		return nil
	}
	req := &t.Request
	d := &consoleDetail{
		consoleRow: rowOf(t, snap.failed[t.ID], v), View: v, Updated: t.Updated,
		TxID:      shownValue(t.TxID, isIdentifier(t.TxID), req, v.Reveal),
		Confirmed: t.Confirmed, EmailDelivered: t.EmailDelivered, Callback: shownURL(req.Callback),
		TravelAddress: revealed(req.TravelAddress, v.Reveal), Email: revealed(cmp.Or(req.Beneficiary.Email, req.Email), v.Reveal),
		IdempotencyKey: t.IdempotencyKey != "", CanDecide: t.awaitsSandbox(),
	}
	for _, p := range []struct {
		role  string
		party *travelrule.Party
	}{{"Originator", &req.Originator}, {"Beneficiary", &req.Beneficiary}} {
		d.Parties = append(d.Parties, consoleParty{Role: p.role, Fields: partyFields(p.party, v.Reveal)})
	}
	d.Timeline = snap.timeline(scheme, v.Reveal)
	return d
}

// revealed is v when reveal, else its redacted form.
func revealed(v string, reveal bool) string {
	if v == "" || reveal {
		return v
	}
	return "[redacted]"
}

// partyFields are the party's fields that are set: when not revealed,
// the personal ones "[redacted]" and its codes only when they are codes
// of IVMS101, as the SDK's fmt form shows a party an inbound inquiry
// carries (the text of whoever sent it).
func partyFields(p *travelrule.Party, reveal bool) []consoleField {
	personal := func(v string) string { return revealed(v, reveal) }
	code := func(v string, ok bool) string {
		if reveal || ok {
			return v
		}
		return revealed(v, false)
	}
	var out []consoleField
	for _, f := range []consoleField{
		{"Person type", code(p.PersonType, strings.EqualFold(p.PersonType, "natural") || strings.EqualFold(p.PersonType, "legal"))},
		{"First name", personal(p.FirstName)}, {"Last name", personal(p.LastName)},
		{"Legal name", personal(p.LegalName)}, {"Date of birth", personal(p.DateOfBirth)}, {"Email", personal(p.Email)},
		{"Address type", code(p.AddressType, ivms101.AddressType(p.AddressType).Valid())},
		{"Street", personal(p.StreetName)}, {"Building number", personal(p.BuildingNumber)},
		{"Post code", personal(p.PostCode)}, {"Town", personal(p.TownName)},
		{"Country", code(p.Country, isCountryCode(p.Country))},
		{"National id", personal(p.NationalID)},
		{"National id type", code(p.NationalIDType, ivms101.NationalIdentifierType(p.NationalIDType).Valid())},
		{"Account number", personal(p.AccountNumber)}, {"Wallet address", personal(p.WalletAddress)},
	} {
		if f.Value != "" {
			out = append(out, f)
		}
	}
	return out
}

// isCountryCode reports whether v has the shape of an ISO 3166-1 alpha-2
// code: two ASCII letters.
func isCountryCode(v string) bool {
	return len(v) == 2 && isASCIILetter(v[0]) && isASCIILetter(v[1])
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// shownValue is v as the console shows the asset, amount or txId of a
// transfer when personal data is not revealed: only in its own shape
// (ok), and holding none of the request's personal values; else
// "[redacted]". An inbound inquiry's are the text of whoever sent it.
func shownValue(v string, ok bool, req *travelrule.TransferRequest, reveal bool) string {
	if reveal || v == "" {
		return v
	}
	if !ok || holdsPersonalValue(v, req) {
		return "[redacted]"
	}
	return v
}

// holdsPersonalValue reports whether v holds, in any case, a personal
// value of req of three characters or more.
func holdsPersonalValue(v string, req *travelrule.TransferRequest) bool {
	lower := strings.ToLower(v)
	for _, p := range []*travelrule.Party{&req.Originator, &req.Beneficiary} {
		for _, pv := range []string{p.FirstName, p.LastName, p.LegalName, p.DateOfBirth, p.Email, p.StreetName,
			p.BuildingNumber, p.PostCode, p.TownName, p.NationalID, p.AccountNumber, p.WalletAddress} {
			if len(pv) >= 3 && strings.Contains(lower, strings.ToLower(pv)) {
				return true
			}
		}
	}
	for _, pv := range []string{req.TravelAddress, req.Email} {
		if len(pv) >= 3 && strings.Contains(lower, strings.ToLower(pv)) {
			return true
		}
	}
	return false
}

// isTicker, isDecimal and isIdentifier are the shapes of an asset, an
// amount and a txId.
func isTicker(v string) bool {
	return len(v) <= 16 && onlyOf(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-_")
}

func isDecimal(v string) bool {
	whole, frac, _ := strings.Cut(v, ".")
	return len(v) <= 64 && whole != "" && onlyOf(whole, "0123456789") && (frac == "" || onlyOf(frac, "0123456789")) && !strings.HasSuffix(v, ".")
}

func isIdentifier(v string) bool {
	return len(v) <= 128 && onlyOf(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789:._-")
}

// onlyOf reports whether v is not empty and made only of the bytes of set.
func onlyOf(v, set string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if strings.IndexByte(set, v[i]) < 0 {
			return false
		}
	}
	return true
}

// timeline is the steps of the transfer open, in the order they began:
// its storing, the requests that named it, the decision on it, and its
// callbacks, each with its attempts. A callback not yet attempted comes
// last.
func (snap *consoleSnap) timeline(scheme string, reveal bool) []consoleEvent {
	t := snap.open
	stored := consoleEvent{Time: t.Created, Title: "Initiated", Outcome: "stored in state " + string(StateReceived)}
	if t.Inquiry {
		stored = consoleEvent{Time: t.Created, Title: "Inbound inquiry started", Outcome: "stored in state " + string(StateInquiry)}
	} else if t.resolvable {
		stored.Outcome = "stored in state " + string(StateInquiry) + ", sent to your inquiry URL"
	}
	evs := []consoleEvent{stored}
	for _, r := range snap.requests {
		e := consoleEvent{Time: r.Time, Title: r.Method + " " + r.Path, Outcome: answerOf(r.Status), Bad: r.Status == 0 || r.Status >= 400}
		if r.Replayed {
			e.Outcome += ", replayed for its Idempotency-Key"
		}
		if len(r.Faults) > 0 {
			names := make([]string, len(r.Faults))
			for i, k := range r.Faults {
				names[i] = k.String()
			}
			e.Faults, e.Bad = strings.Join(names, ", "), true
		}
		evs = append(evs, e)
	}
	if t.decision != "" {
		evs = append(evs, consoleEvent{Time: t.decided, Title: "Decision", Outcome: string(t.decision) + " by " + t.decidedBy.String()})
	}
	for _, d := range snap.finished {
		evs = append(evs, callbackEvent(d, time.Time{}, false, scheme, reveal))
	}
	for _, d := range snap.sending {
		evs = append(evs, callbackEvent(d.Delivery, d.next, true, scheme, reveal))
	}
	slices.SortStableFunc(evs, func(a, b consoleEvent) int {
		switch {
		case a.Time.IsZero() || b.Time.IsZero():
			return cmp.Compare(boolInt(a.Time.IsZero()), boolInt(b.Time.IsZero()))
		}
		return a.Time.Compare(b.Time)
	})
	return evs
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// String names who made a decision.
func (d decider) String() string {
	switch d {
	case decidedBySandbox:
		return "the sandbox (the beneficiary's VASP)"
	case decidedByIntegrator:
		return "your inquiryResolution"
	case decidedByConsole:
		return "the console's button (as the beneficiary's VASP)"
	}
	return "?"
}

// answerOf says what a request was answered.
func answerOf(status int) string {
	if status == 0 {
		return "no answer (dropped, reset or abandoned)"
	}
	return fmt.Sprintf("answered %d", status)
}

// attemptText is why an attempt got no answer, as the console shows it:
// net/http quotes what the receiver sent (a malformed status line, say),
// which could echo the callback's personal data, so unless revealed the
// text stops at its first quote.
func attemptText(err string, reveal bool) string {
	if reveal {
		return err
	}
	if before, _, quoted := strings.Cut(err, `"`); quoted {
		return strings.TrimSpace(before) + " […]"
	}
	return err
}

// callbackEvent is the timeline's step of the callback d: pending while
// it is being sent, with its next attempt due at next; reveal shows the
// attempts' errors whole.
func callbackEvent(d Delivery, next time.Time, pending bool, scheme string, reveal bool) consoleEvent {
	e := consoleEvent{Title: string(d.Kind) + " callback", URL: shownURL(d.URL), Scheme: scheme, Next: next}
	if len(d.Attempts) > 0 {
		e.Time = d.Attempts[0].Time
	}
	for i, a := range d.Attempts {
		ca := consoleAttempt{N: i + 1, Time: a.Time, OK: a.StatusCode >= 200 && a.StatusCode <= 299, Latency: a.Latency,
			Answer: fmt.Sprintf("%d", a.StatusCode)}
		if a.StatusCode == 0 {
			ca.Answer = "no answer: " + attemptText(a.Err, reveal)
		}
		e.Attempts = append(e.Attempts, ca)
	}
	announces := " (announces " + string(d.Status) + ")"
	switch {
	case pending && len(d.Attempts) == 0:
		e.Outcome = "sending" + announces
	case pending:
		e.Outcome, e.Bad = "retrying"+announces, true
	case d.Delivered:
		e.Outcome = "delivered" + announces
	case len(d.Attempts) == 0:
		e.Outcome = "never attempted (the sandbox sends no callbacks, closed, or gave the inquiry up first)"
	default:
		e.Outcome, e.Bad = "given up"+announces, true
	}
	return e
}
