package travelruletest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The console: a web page on the server's own address that shows what the
// sandbox does (transfers, their requests, decisions and callbacks, the
// faults) as it does it, and lets a person decide transfers as the
// beneficiary's VASP, set the faults and the decision. See WithConsole.
//
// It is served to loopback clients (and those WithConsole lets in) for a
// Host that is an IP address or localhost (a name could be a DNS rebinding
// of a page on another site), its state changes refuse cross-origin
// requests (http.CrossOriginProtection), and every answer forbids framing
// and any script but its own. It shows no secret: no API key, token,
// signing secret, callback body, or URL query, user information or
// fragment; personal data only when the person asks to reveal it.

//go:embed console
var consoleFiles embed.FS

// consolePage renders the page and its live parts.
var consolePage = template.Must(template.New("console.html").Funcs(template.FuncMap{
	"clock": func(t time.Time) string { return t.UTC().Format("15:04:05.000") },
	"stamp": func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"latency": func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
	},
}).ParseFS(consoleFiles, "console/console.html"))

// consoleAssetsPrefix is where the console's own paths begin; its page is
// at "/".
const consoleAssetsPrefix = "/console/"

// maxConsoleStreams bounds the console's event streams open at once.
const maxConsoleStreams = 16

// consoleEventGap is the least time between two events of a stream: a
// busy sandbox changes faster than a page redraws.
const consoleEventGap = 50 * time.Millisecond

// isConsolePath reports whether the path p is the console's.
func isConsolePath(p string) bool { return p == "/" || strings.HasPrefix(p, consoleAssetsPrefix) }

// console serves the console of a server.
type console struct {
	s       *Server
	from    []netip.Prefix // clients beyond loopback let in
	handler http.Handler   // the console's routes, behind CrossOriginProtection
	streams chan struct{}  // one value per event stream open
}

func newConsole(s *Server, from []netip.Prefix) *console {
	c := &console{s: s, from: from, streams: make(chan struct{}, maxConsoleStreams)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", c.servePage)
	mux.HandleFunc("GET /console/console.js", serveAsset("console/console.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /console/console.css", serveAsset("console/console.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /console/events", c.serveEvents)
	mux.HandleFunc("GET /console/live", c.serveLive)
	mux.HandleFunc("POST /console/transfers/{id}/decision", c.serveDecide)
	mux.HandleFunc("POST /console/faults", c.serveSetFaults)
	mux.HandleFunc("POST /console/faults/switch", c.serveSwitch)
	mux.HandleFunc("POST /console/decision", c.serveSetDecision)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "refused: a request from another origin may not change the sandbox", http.StatusForbidden)
	}))
	c.handler = cop.Handler(mux)
	return c
}

// ServeHTTP serves a request to the console's paths.
func (c *console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if status, why := consoleRefusal(r.RemoteAddr, r.Host, c.from); status != 0 {
		http.Error(w, why, status)
		return
	}
	if crossSiteRead(r) {
		http.Error(w, "refused: a page of another origin may not read the console", http.StatusForbidden)
		return
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxConsoleForm)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form could not be read (at most 64 KiB, URL-encoded)", http.StatusBadRequest)
			return
		}
	}
	c.handler.ServeHTTP(w, r)
}

// maxConsoleForm bounds the body of a form the console takes.
const maxConsoleForm = 64 << 10

// crossSiteRead reports whether r is a read of the console's live data
// that a browser says came from a page of another origin, not from a
// navigation: no such page can read the answer, but it could hold the
// console's connections open.
func crossSiteRead(r *http.Request) bool {
	if r.URL.Path != "/console/live" && r.URL.Path != "/console/events" {
		return false
	}
	site := r.Header.Get("Sec-Fetch-Site")
	return site != "" && site != "same-origin" && site != "none"
}

// consoleRefusal decides whether the console answers a request from the
// client at remote (host:port) for the Host host: it returns the status
// and the reason to refuse with, or 0. It answers clients on loopback or
// in from, and a Host that is an IP address, localhost or a name under
// .localhost (or none): another name could be a page of another site that
// its DNS turned to this address (DNS rebinding), which the browser would
// take for the console's own origin.
func consoleRefusal(remote, host string, from []netip.Prefix) (int, string) {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return http.StatusForbidden, "refused: the console answers loopback clients only"
	}
	ip := ap.Addr().Unmap().WithZone("")
	if !ip.IsLoopback() && !slices.ContainsFunc(from, func(p netip.Prefix) bool { return p.Contains(ip) }) {
		return http.StatusForbidden, "refused: the console answers loopback clients only (travelrule sandbox --console-allow lets others in)"
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	lower := strings.ToLower(name)
	if _, err := netip.ParseAddr(name); err == nil || name == "" || lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return 0, ""
	}
	return http.StatusMisdirectedRequest, "refused: open the console at an IP address or localhost, not a host name"
}

// serveAsset serves the embedded file name with the content type ctype.
func serveAsset(name, ctype string) http.HandlerFunc {
	body, err := consoleFiles.ReadFile(name)
	if err != nil {
		panic("travelruletest: the console's " + name + " is missing: " + err.Error())
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	}
}

// viewOf is the view the request r asks for: ?transfer=<id>&reveal=1.
func viewOf(r *http.Request) consoleView {
	q := r.URL.Query()
	return consoleView{Open: q.Get("transfer"), Reveal: q.Get("reveal") == "1"}
}

// consoleData is what the page renders: the view, and the parts that the
// page updates live.
type consoleData struct {
	View     consoleView
	Version  uint64
	Service  string // the service's URL
	Scheme   string // how callbacks are signed
	List     consoleList
	Detail   *consoleDetail
	Settings consoleSettings
}

// consoleSettings are the faults and the decision, as the console shows
// them.
type consoleSettings struct {
	Off       bool // the switch holds the faults off
	Faults    []consoleFault
	Specs     string // the faults, a line each, as ParseFault reads them
	Kinds     []string
	Decision  string // as shown
	Selected  string // the option the form shows selected
	Decisions []string
}

// consoleFault is a fault set, with how many requests it hit.
type consoleFault struct {
	Spec  string
	Fired int
}

// data is what the console shows now, for the view v.
func (c *console) data(v consoleView) consoleData {
	snap := c.s.records.consoleSnapshot(v.Open)
	if snap.open == nil {
		v.Open = ""
	}
	scheme := "x-data-integrity (HMAC-SHA512, as the live service signs)"
	if c.s.cfg.standardWebhooks {
		scheme = "Standard Webhooks (webhook-signature)"
	}
	return consoleData{
		View: v, Version: snap.version, Service: c.s.URL, Scheme: scheme,
		List: snap.list(v), Detail: snap.detail(v, scheme), Settings: c.settings(),
	}
}

// settings are the faults and the decision now.
func (c *console) settings() consoleSettings {
	st := consoleSettings{Kinds: faultKindNames(), Decision: "approve (the default: WithApproval's, else approval)",
		Selected: string(DecisionApprove), Decisions: []string{string(DecisionApprove), string(DecisionReject), string(DecisionNone)}}
	if d := c.s.decision.Load(); d != nil {
		st.Decision, st.Selected = string(*d), string(*d)
	}
	fs := c.s.faults
	fs.mu.Lock()
	st.Off = fs.off
	specs := make([]string, len(fs.slots))
	for i, slot := range fs.slots {
		specs[i] = slot.spec()
		st.Faults = append(st.Faults, consoleFault{Spec: specs[i], Fired: slot.fired})
	}
	fs.mu.Unlock()
	st.Specs = strings.Join(specs, "\n")
	return st
}

// servePage serves the whole page.
func (c *console) servePage(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := consolePage.ExecuteTemplate(&buf, "page", c.data(viewOf(r))); err != nil {
		http.Error(w, "rendering the console: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// liveParts are the parts of the page that GET /console/live renders, by
// the id of the element each fills.
var liveParts = []string{"list", "detail", "settings", "controls"}

// serveLive serves the live parts of the page, rendered, as JSON: the
// page's script swaps them in when the sandbox changes.
func (c *console) serveLive(w http.ResponseWriter, r *http.Request) {
	d := c.data(viewOf(r))
	out := map[string]any{"version": d.Version}
	for _, part := range liveParts {
		var buf bytes.Buffer
		if err := consolePage.ExecuteTemplate(&buf, part, d); err != nil {
			http.Error(w, "rendering the console: "+err.Error(), http.StatusInternalServerError)
			return
		}
		out[part] = buf.String()
	}
	body, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// serveEvents streams server-sent events: one, with the records' version,
// whenever what the console shows changes (at most one per
// consoleEventGap), and a comment every 15 seconds to keep the stream
// open. It ends with the request or the server.
func (c *console) serveEvents(w http.ResponseWriter, r *http.Request) {
	select {
	case c.streams <- struct{}{}:
		defer func() { <-c.streams }()
	default:
		http.Error(w, "too many console pages open", http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	write := func(s string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprint(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write("retry: 2000\n\n") {
		return
	}
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	sent := ^uint64(0)
	for {
		v, changed := c.s.records.watch()
		if v != sent {
			if !write(fmt.Sprintf("data: %d\n\n", v)) || !c.s.pause(r.Context(), consoleEventGap) {
				return
			}
			sent = v
			continue
		}
		select {
		case <-changed:
		case <-keepAlive.C:
			if !write(": still here\n\n") {
				return
			}
		case <-r.Context().Done():
			return
		case <-c.s.ctx.Done():
			return
		}
	}
}

// serveDecide is POST /console/transfers/{id}/decision, decision=approve
// or reject: the sandbox, as the beneficiary's VASP, decides the transfer
// that waits for its decision, and sends the callbacks that announce it.
func (c *console) serveDecide(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var approved bool
	switch r.PostFormValue("decision") {
	case "approve":
		approved = true
	case "reject":
	default:
		http.Error(w, `decision must be "approve" or "reject"`, http.StatusBadRequest)
		return
	}
	found, decided := c.s.records.decideNow(id, approved, c.s.resolutionEvents)
	switch {
	case !found:
		http.Error(w, "no transfer with this id is kept (the record limit keeps the newest: see WithRecordLimit)", http.StatusNotFound)
	case !decided:
		http.Error(w, "this transfer does not wait for the counterparty's decision (decided already, or yours to resolve)", http.StatusConflict)
	case approved:
		c.done(w, r, "approved: the INQUIRY_RESOLUTION and TRANSFER_RESOLUTION callbacks follow")
	case c.s.cfg.rejectionResolution:
		c.done(w, r, "rejected: the INQUIRY_RESOLUTION and TRANSFER_RESOLUTION callbacks follow")
	default:
		c.done(w, r, "rejected: the INQUIRY_RESOLUTION callback follows")
	}
}

// maxConsoleFaults bounds the faults the console sets, as the control
// plane's.
const maxConsoleFaults = maxControlFaults

// serveSetFaults is POST /console/faults, faults=<one a line, as
// ParseFault reads them>: it replaces the faults, as SetFaults does.
func (c *console) serveSetFaults(w http.ResponseWriter, r *http.Request) {
	lines := strings.Split(strings.ReplaceAll(r.PostFormValue("faults"), "\r\n", "\n"), "\n")
	var set []Fault
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f, err := ParseFault(line)
		if err != nil {
			http.Error(w, fmt.Sprintf("line %d: %s", i+1, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "travelruletest: ParseFault: "), "travelruletest: Fault: ")), http.StatusBadRequest)
			return
		}
		set = append(set, f)
	}
	if len(set) > maxConsoleFaults {
		http.Error(w, fmt.Sprintf("at most %d faults", maxConsoleFaults), http.StatusBadRequest)
		return
	}
	c.s.SetFaults(set...)
	c.done(w, r, fmt.Sprintf("%d faults set", len(set)))
}

// serveSwitch is POST /console/faults/switch, on=1 or 0: it turns the
// injection of the faults set on or off, keeping them.
func (c *console) serveSwitch(w http.ResponseWriter, r *http.Request) {
	on := r.PostFormValue("on")
	if on != "1" && on != "0" {
		http.Error(w, "on must be 1 or 0", http.StatusBadRequest)
		return
	}
	c.s.switchFaults(on == "1")
	c.done(w, r, "fault injection "+map[bool]string{true: "on", false: "off"}[on == "1"])
}

// serveSetDecision is POST /console/decision, decision=approve, reject or
// none: the decision on the transfers initiated from now on, as
// SetDecision sets it.
func (c *console) serveSetDecision(w http.ResponseWriter, r *http.Request) {
	d := Decision(r.PostFormValue("decision"))
	if d == "" || d.check() != nil {
		http.Error(w, `decision must be "approve", "reject" or "none"`, http.StatusBadRequest)
		return
	}
	c.s.SetDecision(d)
	c.done(w, r, "the sandbox now decides "+string(d)+" on the transfers initiated")
}

// done answers an action that succeeded: the page's script, which asks
// for text, gets msg; a form sent without script is sent back to the page
// it came from.
func (c *console) done(w http.ResponseWriter, r *http.Request, msg string) {
	if strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, msg)
		return
	}
	v := consoleView{Open: r.PostFormValue("transfer"), Reveal: r.PostFormValue("reveal") == "1"}
	if _, ok := c.s.Transfer(v.Open); !ok {
		v.Open = ""
	}
	http.Redirect(w, r, v.Link(v.Open), http.StatusSeeOther)
}
