package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vaspkit/travelrule"
)

// The doctor logs in to a deployment with an API key and makes the travel
// address of a fixed, obviously fake beneficiary, through the SDK, so that
// "understood" means the SDK itself understood each answer. A recording
// transport keeps every answer; the doctor then says which documented
// shape each matched (doctorshape.go) and every field it did not expect,
// by name only: it never prints the key, the token, the travel address or
// any value of an answer.

// doctorBeneficiary is the test beneficiary the doctor makes a travel
// address for. The service upserts beneficiaries, so every run finds the
// same one again by its external id.
func doctorBeneficiary() *travelrule.TravelAddressRequest {
	return &travelrule.TravelAddressRequest{
		PersonType:    "natural",
		FirstName:     "Doctor",
		LastName:      "Probe",
		WalletAddress: "0x0000000000000000000000000000000000000001",
		ExternalID:    "travelrule-doctor",
	}
}

// placeholderTravelAddress is the documentation's example answer, which is
// no address at all: a deployment that answers it is a stub.
const placeholderTravelAddress = "ta1qexamplebeneficiaryvasp1ahjk23"

// doctor checks a deployment: login, one travel address, every answer's
// shape. Exit 0 only when every answer was understood and has a documented
// shape.
func (c *cli) doctor(ctx context.Context, args []string) int {
	fs := c.newFlagSet("doctor", "[--base-url URL] [--api-key-file PATH] [--json] [--strict] [--timeout 30s]")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), `
The doctor logs in with the API key (env TRAVELRULE_API_KEY, or the file
TRAVELRULE_API_KEY_FILE or --api-key-file names; never a flag) and makes the
travel address of a fake beneficiary (natural person "Doctor Probe", wallet
0x0000000000000000000000000000000000000001, externalId "travelrule-doctor"),
which the service creates once and finds again afterwards. For each answer
it prints the documented shape it matched and every field it did not expect,
by name, and the travel address's form; never the key, the token, the
address or any value of an answer.
`)
	}
	s := &settings{}
	fs.StringVar(&s.baseURL, "base-url", c.getenv("TRAVELRULE_BASE_URL"), "the deployment's base URL (env TRAVELRULE_BASE_URL)")
	c.addAPIKeyFile(fs, s)
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	strict := fs.Bool("strict", false, "count unexpected and missing fields as problems too")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long")
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	if s.baseURL == "" {
		return c.usageError(fs, "no base URL: set --base-url or TRAVELRULE_BASE_URL")
	}
	key, err := c.apiKey(s)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	if key == "" {
		return c.usageError(fs, "no API key: the doctor logs in with one: set TRAVELRULE_API_KEY, or TRAVELRULE_API_KEY_FILE or --api-key-file")
	}
	rec := &recorder{next: doctorTransport()}
	client, err := travelrule.NewClient(s.baseURL,
		travelrule.WithAPIKey(key),
		travelrule.WithHTTPClient(&http.Client{Transport: rec}),
		travelrule.WithUserAgent("travelrule-doctor"),
		travelrule.WithRetryMax(0), // one answer per call: each is judged as it came
	)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	res, callErr := client.GenerateTravelAddress(ctx, doctorBeneficiary())
	rep := diagnose(s.baseURL, rec.exchanges(), res, callErr, key, *strict)
	var code int
	if *asJSON {
		code = c.printJSON(rep)
	} else {
		code = c.printReport(rep)
	}
	if code != exitOK || !rep.OK {
		return exitFailed
	}
	return exitOK
}

// doctorTransport is the transport under the recorder: the standard
// library's, with TLS 1.2 at least and at most 64 KiB of headers, as the
// SDK's own.
func doctorTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	t.MaxResponseHeaderBytes = 64 << 10
	return t
}

// Bounds of what the recorder keeps.
const (
	maxRecordedBody      = 256 << 10 // bytes of each answer's body
	maxRecordedExchanges = 32        // exchanges; later ones pass unrecorded
)

// exchange is one request and what came back, as the recorder kept it.
type exchange struct {
	method, path string
	status       int         // 0: no answer
	header       http.Header // the answer's
	body         []byte      // at most maxRecordedBody bytes of it
	truncated    bool        // the body was longer
	failed       bool        // no answer came, or its body could not be read whole
}

// recorder is an http.RoundTripper that keeps each answer's status, headers
// and body (bounded) and hands the SDK the answer unchanged.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	list []exchange
}

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := exchange{method: req.Method, path: req.URL.Path}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		ex.failed = true
		r.add(ex)
		return nil, err
	}
	ex.status, ex.header = resp.StatusCode, resp.Header.Clone()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody+1))
	ex.body, ex.truncated, ex.failed = body, len(body) > maxRecordedBody, readErr != nil
	if ex.truncated {
		ex.body = body[:maxRecordedBody:maxRecordedBody]
	}
	r.add(ex)
	rest := resp.Body
	if readErr != nil {
		rest = io.NopCloser(errReader{readErr})
	}
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), rest), resp.Body}
	return resp, nil
}

func (r *recorder) add(ex exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.list) < maxRecordedExchanges {
		r.list = append(r.list, ex)
	}
}

// exchanges returns what was recorded, in order.
func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// errReader fails every read with its error.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// doctorReport is what the doctor found. It holds no value of any answer:
// shapes, field names, statuses, header names, and the SDK's error texts,
// which never show the key, the token or the service's text.
type doctorReport struct {
	BaseURL string         `json:"baseUrl"`
	OK      bool           `json:"ok"`
	Answers []answerReport `json:"answers"`
	// TravelAddressForm is the made address's form: "checksummed",
	// "unchecked", "opaque" or "invalid"; "" when none was made.
	TravelAddressForm string   `json:"travelAddressForm,omitempty"`
	Problems          []string `json:"problems"`
	Notes             []string `json:"notes"`
}

// answerReport is what the doctor found of one answer.
type answerReport struct {
	Step   string `json:"step"` // "login", "generate", or "other"
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"` // 0: no answer came
	// ContentType is the answer's media type, such as "application/json".
	ContentType string `json:"contentType,omitempty"`
	// Headers are the names of the answer's headers, sorted.
	Headers []string `json:"headers"`
	// Understood says whether the SDK took the answer as the success it
	// should be.
	Understood bool `json:"understood"`
	shapeReport
}

// diagnose makes the report of a run: each recorded answer classified and
// judged, the travel address's form, and every problem. key and the
// tokens and the address of the answers never reach its text.
func diagnose(baseURL string, exs []exchange, res *travelrule.TravelAddressResult, callErr error, key string, strict bool) *doctorReport {
	d := &diagnosis{
		rep:     &doctorReport{BaseURL: baseURL, Answers: []answerReport{}, Problems: []string{}, Notes: []string{}},
		secrets: reportSecrets(key, exs, res),
	}
	seen := d.answers(exs, understood(exs, callErr), strict)
	d.outcome(callErr, seen)
	if res != nil {
		d.travelAddress(res)
	}
	d.rep.OK = len(d.rep.Problems) == 0
	return d.rep
}

// diagnosis is a report being made, and the secrets its text never holds.
type diagnosis struct {
	rep     *doctorReport
	secrets []string
}

// reportSecrets are the values a report never shows: the API key, the
// tokens and other secret values of the answers, and the travel address.
func reportSecrets(key string, exs []exchange, res *travelrule.TravelAddressResult) []string {
	secrets := []string{key}
	for _, ex := range exs {
		secrets = append(secrets, secretValues(ex.body)...)
	}
	if res != nil {
		secrets = append(secrets, res.TravelAddress)
	}
	return secrets
}

func (d *diagnosis) problem(format string, a ...any) {
	d.rep.Problems = append(d.rep.Problems, scrub(fmt.Sprintf(format, a...), d.secrets))
}

func (d *diagnosis) note(format string, a ...any) {
	d.rep.Notes = append(d.rep.Notes, scrub(fmt.Sprintf(format, a...), d.secrets))
}

// succeeded reports whether the answer is a 2xx that came whole.
func (ex exchange) succeeded() bool { return ex.status >= 200 && ex.status <= 299 && !ex.failed }

// understood says of each answer whether the SDK took it as the success it
// should be: a 2xx login, but the last one when the login failed; the last
// generate, a 2xx, when the call succeeded; no answer of another step.
func understood(exs []exchange, callErr error) []bool {
	var loginErr *travelrule.LoginError
	loginFailed := errors.As(callErr, &loginErr)
	lastLogin, lastGenerate := -1, -1
	for i, ex := range exs {
		switch stepOf(ex.path) {
		case "login":
			lastLogin = i
		case "generate":
			lastGenerate = i
		}
	}
	out := make([]bool, len(exs))
	for i, ex := range exs {
		switch stepOf(ex.path) {
		case "login":
			out[i] = ex.succeeded() && !(loginFailed && i == lastLogin)
		case "generate":
			out[i] = ex.succeeded() && callErr == nil && i == lastGenerate
		}
	}
	return out
}

// stepsSeen is what the answers showed of the doctor's two steps.
type stepsSeen struct {
	login, generate bool // an answer of the step was recorded
	loggedIn        bool // the last login's answer was understood
}

// answers reports each answer, judged (ok says which the SDK understood),
// and returns the steps they showed.
func (d *diagnosis) answers(exs []exchange, ok []bool, strict bool) stepsSeen {
	var seen stepsSeen
	for i, ex := range exs {
		a := d.answerOf(ex)
		a.Understood = ok[i]
		switch a.Step {
		case "login":
			seen.login, seen.loggedIn = true, a.Understood
		case "generate":
			seen.generate = true
		}
		d.judge(ex, &a, strict)
		d.rep.Answers = append(d.rep.Answers, a)
	}
	return seen
}

// answerOf reports an answer: its step, headers, media type and shape, and
// the problem of an answer that did not come, was too large to classify,
// or has no documented shape.
func (d *diagnosis) answerOf(ex exchange) answerReport {
	a := answerReport{Step: stepOf(ex.path), Method: ex.method, Path: ex.path, Status: ex.status, Headers: headerNames(ex.header, d.secrets)}
	if mt, _, err := mime.ParseMediaType(ex.header.Get("Content-Type")); err == nil {
		a.ContentType = mt
		if holdsSecretPart(mt, d.secrets) {
			a.ContentType = "[redacted]"
		}
	}
	switch {
	case ex.status == 0:
		a.shapeReport = shapeReport{Shape: "no answer", Unexpected: []string{}, Missing: []string{}}
		d.problem("%s: %s %s: no answer came", a.Step, ex.method, ex.path)
	case ex.truncated:
		a.shapeReport = shapeReport{Shape: fmt.Sprintf("larger than %d bytes: not classified", maxRecordedBody), Unexpected: []string{}, Missing: []string{}}
		d.problem("%s: %s %s: the answer is larger than %d bytes", a.Step, ex.method, ex.path, maxRecordedBody)
	default:
		a.shapeReport = classify(a.Step, ex.status, ex.body, d.secrets)
		if !a.Documented {
			d.problem("%s: %s %s: %d answer in no documented shape (%s)", a.Step, ex.method, ex.path, ex.status, a.Shape)
		}
	}
	return a
}

// judge adds what else the answer a of ex shows: a success the SDK did
// not understand, a Content-Type other than JSON, the fields unexpected
// or missing (problems under strict), the shape's notes, a path not called.
func (d *diagnosis) judge(ex exchange, a *answerReport, strict bool) {
	if ex.succeeded() && !a.Understood && a.Step != "other" {
		d.problem("%s: %s %s: the SDK did not understand the answer", a.Step, ex.method, ex.path)
	}
	if a.ContentType != "application/json" && ex.status != 0 && len(bytes.TrimSpace(ex.body)) > 0 {
		d.note("%s: the answer's Content-Type is %q, not application/json", a.Step, a.ContentType)
	}
	if strict {
		for _, n := range a.Unexpected {
			d.problem("%s: unexpected field %s", a.Step, n)
		}
		for _, n := range a.Missing {
			d.problem("%s: missing field %s", a.Step, n)
		}
	}
	for _, n := range a.notes {
		d.note("%s: %s", a.Step, n)
	}
	if a.Step == "other" {
		d.note("an answer from a path the doctor did not call: %s %s", ex.method, ex.path)
	}
}

// outcome adds the problems of the call's error, and of a step that
// recorded no answer.
func (d *diagnosis) outcome(callErr error, seen stepsSeen) {
	if callErr != nil {
		d.problem("%v", callErr)
		if errors.Is(callErr, travelrule.ErrAPIKeyRefused) {
			d.problem("the API key was refused: check it, and that it is active and not expired, in the service's dashboard")
		}
	}
	switch {
	case !seen.login:
		d.problem("login: no answer was recorded")
	case !seen.generate && seen.loggedIn:
		d.problem("generate: no answer was recorded")
	}
}

// travelAddress reports the form of the address made, and the problem of
// one in no form or the documentation's placeholder.
func (d *diagnosis) travelAddress(res *travelrule.TravelAddressResult) {
	d.rep.TravelAddressForm = res.Form.String()
	switch res.Form {
	case travelrule.TravelAddressInvalid:
		d.problem("travel address: in no form the service or TRP makes (invalid)")
	case travelrule.TravelAddressOpaque:
		d.note("travel address: opaque: its URI cannot be read here; the service judges it")
	case travelrule.TravelAddressChecksummed:
		d.note("travel address: checksummed (TRP's form), not the unchecked form of the service's examples")
	}
	if res.TravelAddress == placeholderTravelAddress {
		d.problem("travel address: the documentation's placeholder example, not an address the service made: is this a stub?")
	}
}

// stepOf names the step of a request by its path.
func stepOf(path string) string {
	switch {
	case strings.HasSuffix(path, "/auth/token"):
		return "login"
	case strings.HasSuffix(path, "/travel-address/generate"):
		return "generate"
	}
	return "other"
}

// headerNames returns the names of h, sorted, each shown as fieldName
// shows a field's name.
func headerNames(h http.Header, secrets []string) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, fieldName(k, secrets))
	}
	slices.Sort(names)
	return names
}

// scrub replaces every secret of at least 4 bytes in s with "[redacted]":
// the SDK's texts never carry one, and this makes sure.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// printReport prints the report as lines: one block per answer, the travel
// address's form, then each note and problem, and a last line that says
// whether all is well.
func (c *cli) printReport(rep *doctorReport) int {
	var b strings.Builder
	fmt.Fprintf(&b, "doctor: %s\n", rep.BaseURL)
	for _, a := range rep.Answers {
		fmt.Fprintf(&b, "%-9s %s %s -> ", a.Step, a.Method, a.Path)
		if a.Status == 0 {
			b.WriteString("no answer\n")
			continue
		}
		ct := a.ContentType
		if ct == "" {
			ct = "no Content-Type"
		}
		understood := "understood by the SDK"
		if !a.Understood {
			understood = "not understood as a success"
		}
		fmt.Fprintf(&b, "%d, %s: %s\n", a.Status, ct, understood)
		documented := "documented"
		if !a.Documented {
			documented = "NOT documented"
		}
		fmt.Fprintf(&b, "          shape: %s (%s)\n", a.Shape, documented)
		for _, n := range a.Unexpected {
			fmt.Fprintf(&b, "          unexpected field: %s\n", n)
		}
		for _, n := range a.Missing {
			fmt.Fprintf(&b, "          missing field: %s\n", n)
		}
		if len(a.Headers) > 0 {
			fmt.Fprintf(&b, "          headers: %s\n", strings.Join(a.Headers, ", "))
		}
	}
	if rep.TravelAddressForm != "" {
		fmt.Fprintf(&b, "travel address: form %s\n", rep.TravelAddressForm)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	if rep.OK {
		b.WriteString("ok: every answer was understood and has a documented shape\n")
	} else {
		fmt.Fprintf(&b, "FAILED: %d problem(s)\n", len(rep.Problems))
	}
	if _, err := io.WriteString(c.stdout, b.String()); err != nil {
		fmt.Fprintf(c.stderr, "writing output: %v\n", err)
		return exitFailed
	}
	return exitOK
}
