package travelruletest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vaspkit/travelrule"
)

// ControlClient calls the control plane of a sandbox in another process
// ("travelrule sandbox", or a [Server] of another test binary or
// container): it does over HTTP what [Server.SetFaults],
// [Server.SetDecision], [Server.StartInquiry] and [Server.Transfer] do
// in-process (see "Control plane" in the package documentation). It logs
// in with the sandbox's API key (POST {URL}/auth/token) on first use and
// again when its token is refused. Its methods are safe for concurrent
// use. Errors from the sandbox are *travelrule.APIError, matched by
// errors.Is as the SDK's are (travelrule.ErrNotFound, ErrBadRequest, ...).
type ControlClient struct {
	base   string
	apiKey string
	hc     *http.Client

	login chan struct{} // held (one slot) while logging in: guards token
	token string        // the bearer token, "" before the login
}

// ControlOption configures a [ControlClient].
type ControlOption func(*ControlClient)

// WithControlAPIKey sets the API key the client logs in with (default
// [DefaultAPIKey]).
func WithControlAPIKey(key string) ControlOption {
	return func(c *ControlClient) { c.apiKey = key }
}

// WithControlHTTPClient sets the HTTP client of the requests (default one
// with a time-out of 30 seconds), such as one that trusts the certificate
// of "travelrule sandbox --tls". The client follows no redirect whatever
// hc's CheckRedirect says: its API key and token go to the sandbox alone.
func WithControlHTTPClient(hc *http.Client) ControlOption {
	return func(c *ControlClient) {
		if hc != nil {
			copied := *hc
			copied.CheckRedirect = noRedirect
			c.hc = &copied
		}
	}
}

// noRedirect is the control client's CheckRedirect: net/http drops
// Authorization on a redirect to another host, but not x-api-key.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// NewControlClient returns a client of the control plane of the sandbox at
// baseURL, its base URL with the path prefix (what "travelrule sandbox"
// prints as TRAVELRULE_BASE_URL, or [Server.URL]).
func NewControlClient(baseURL string, opts ...ControlOption) *ControlClient {
	c := &ControlClient{base: strings.TrimSuffix(baseURL, "/"), apiKey: DefaultAPIKey,
		hc: &http.Client{Timeout: 30 * time.Second, CheckRedirect: noRedirect}, login: make(chan struct{}, 1)}
	for _, opt := range opts {
		if opt != nil {
			opt(c)
		}
	}
	return c
}

// SetFaults replaces the faults the sandbox injects with faults, and resets
// their Times counts, as [Server.SetFaults] does; none turns injection off.
// A fault the sandbox refuses is an error matching travelrule.ErrBadRequest.
func (c *ControlClient) SetFaults(ctx context.Context, faults ...Fault) error {
	body := wireFaults{Faults: make([]wireFault, len(faults))}
	for i, f := range faults {
		if err := f.check(); err != nil {
			return err
		}
		body.Faults[i] = f.toWire()
	}
	return c.call(ctx, "SetFaults", http.MethodPost, faultsPath, body, nil)
}

// SetDecision sets the sandbox's decision on the transfers initiated from
// now on, as [Server.SetDecision] does; the zero Decision gives the
// decision back to the sandbox's own (approval, or what its WithApproval
// decides).
func (c *ControlClient) SetDecision(ctx context.Context, d Decision) error {
	if err := d.check(); err != nil {
		return err
	}
	return c.call(ctx, "SetDecision", http.MethodPost, decisionPath, wireDecision{Decision: &d}, nil)
}

// StartInquiry makes the sandbox play the counterparty VASP: it stores a
// new transfer in state inquiry and sends callbackURL an INQUIRY about it,
// as [Server.StartInquiry] does, and returns the transfer's id once the
// delivery has begun (unlike Server.StartInquiry, it does not wait for
// the delivery: watch it with [ControlClient.Transfer]). req gives the
// transfer's fields; nil takes the sandbox's sample transfer (see
// "Control plane" in the package documentation). req.Callback is not sent:
// the inquiry's callback is callbackURL.
func (c *ControlClient) StartInquiry(ctx context.Context, callbackURL string, req *travelrule.TransferRequest) (string, error) {
	var body any = map[string]string{"callback": callbackURL}
	if req != nil {
		r := *req
		r.Callback = callbackURL
		body = &r
	}
	var out struct {
		TransferID string `json:"transferId"`
	}
	if err := c.call(ctx, "StartInquiry", http.MethodPost, inquiriesPath, body, &out); err != nil {
		return "", err
	}
	return out.TransferID, nil
}

// Transfer returns the state of the transfer id the sandbox keeps and its
// finished callbacks (delivered or given up), in the order they were
// sent, as the control plane shows them: the transfer carries only its ID,
// State, Inquiry, Created and Updated (no request, no personal data), and
// each callback only its ID, Kind, TransferID, Status, URL (scheme, host
// and path), Attempts and Delivered, without its body. A transfer the
// sandbox does not keep is an error matching travelrule.ErrNotFound.
func (c *ControlClient) Transfer(ctx context.Context, id string) (Transfer, []Delivery, error) {
	var st transferState
	if err := c.call(ctx, "Transfer", http.MethodGet, transfersPath+url.PathEscape(id), nil, &st); err != nil {
		return Transfer{}, nil, err
	}
	t := Transfer{ID: st.TransferID, State: st.State, Inquiry: st.Inquiry}
	t.Created, _ = time.Parse(time.RFC3339Nano, st.Created)
	t.Updated, _ = time.Parse(time.RFC3339Nano, st.Updated)
	var ds []Delivery
	for _, cb := range st.Callbacks {
		if cb.Pending {
			continue
		}
		d := Delivery{ID: cb.WebhookID, Kind: cb.Kind, TransferID: t.ID, Status: cb.Status, URL: cb.URL, Delivered: cb.Delivered,
			Attempts: make([]Attempt, len(cb.Attempts))}
		for i, a := range cb.Attempts {
			d.Attempts[i] = Attempt{StatusCode: a.StatusCode, Err: a.Error}
			d.Attempts[i].Time, _ = time.Parse(time.RFC3339Nano, a.Time)
		}
		ds = append(ds, d)
	}
	return t, ds, nil
}

// call sends a request to the control plane's path (after /sandbox/) with
// the JSON of in as its body (none if nil), and decodes a 2xx answer into
// out (if not nil). A refused token is renewed once.
func (c *ControlClient) call(ctx context.Context, op, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	for renewed := false; ; renewed = true {
		token, err := c.bearer(ctx, renewed)
		if err != nil {
			return err
		}
		status, h, data, err := c.do(ctx, method, c.base+controlPrefix+path, body, "Authorization", "Bearer "+token)
		if err != nil {
			return fmt.Errorf("travelruletest: ControlClient.%s: %w", op, err)
		}
		if (status == http.StatusUnauthorized || status == http.StatusForbidden) && !renewed {
			continue
		}
		if status/100 != 2 {
			return controlError("ControlClient."+op, status, h, data)
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("travelruletest: ControlClient.%s: reading the answer: %w", op, err)
		}
		return nil
	}
}

// bearer returns the client's token, logging in first if it has none or
// renew is set.
func (c *ControlClient) bearer(ctx context.Context, renew bool) (string, error) {
	// One login at a time; a caller waiting for another's ends with its
	// own context.
	select {
	case c.login <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("travelruletest: ControlClient: logging in: %w", ctx.Err())
	}
	defer func() { <-c.login }()
	if c.token != "" && !renew {
		return c.token, nil
	}
	status, h, data, err := c.do(ctx, http.MethodPost, c.base+loginPath, nil, "x-api-key", c.apiKey)
	if err != nil {
		return "", fmt.Errorf("travelruletest: ControlClient: logging in: %w", err)
	}
	if status != http.StatusOK {
		return "", controlError("ControlClient.login", status, h, data)
	}
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.AccessToken == "" {
		return "", errors.New("travelruletest: ControlClient: logging in: an answer without accessToken")
	}
	c.token = tok.AccessToken
	return c.token, nil
}

// maxControlAnswer bounds the answers the client reads.
const maxControlAnswer = 4 << 20

// do sends one request with the header name: value, and returns the
// answer's status, headers and body.
func (c *ControlClient) do(ctx context.Context, method, u string, body []byte, name, value string) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set(name, value)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxControlAnswer))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, data, nil
}

// controlError is the *travelrule.APIError of a refused request to the
// control plane or the login.
func controlError(op string, status int, h http.Header, body []byte) error {
	e := &travelrule.APIError{Op: op, StatusCode: status, Body: body, Header: h, RequestID: h.Get("X-Request-Id")}
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil {
		for _, entry := range eb.Errors {
			e.Codes = append(e.Codes, entry.Code)
			if entry.Field != "" {
				e.Fields = append(e.Fields, travelrule.FieldError{Field: entry.Field})
			}
		}
		if len(eb.Errors) > 0 {
			e.Code = eb.Errors[0].Code
		}
	}
	return e
}
