package travelruletest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// callbackWorkers is how many callbacks are sent at once, at most.
const callbackWorkers = 32

// callbackTimeout bounds one attempt of the default callback client.
const callbackTimeout = 10 * time.Second

// event is one callback to send.
type event struct {
	id         string
	transferID string
	status     State
	url        string
	txID       string
	advance    bool   // set the transfer's state to status when the event is taken up
	body       []byte // made when the event is taken up, unless set
}

// lane holds the pending callbacks of one transfer, sent one after the
// other by at most one worker at a time.
type lane struct {
	key     string
	events  []*event
	running bool
}

// statusBody is the body of a status callback.
type statusBody struct {
	TransferID string `json:"transferId"`
	Status     State  `json:"status"`
	TxID       string `json:"txId,omitempty"`
	Timestamp  string `json:"timestamp"`
}

// enqueue queues callbacks of the transfer id, to be sent in order after
// any queued before them.
func (s *Server) enqueue(id string, evs ...*event) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if s.dclosed {
		return
	}
	l := s.lanes[id]
	if l == nil {
		l = &lane{key: id}
		s.lanes[id] = l
	}
	l.events = append(l.events, evs...)
	if !l.running {
		l.running = true
		s.ready = append(s.ready, l)
		s.dcond.Signal()
	}
}

// holdLane reserves the lane of the transfer id, so that callbacks enqueued
// for it wait until release is called. StartInquiry delivers the inquiry
// itself (it waits for the outcome) and holds the lane meanwhile, so that a
// resolution made while the inquiry is still being delivered cannot have
// its callback overtake the inquiry.
func (s *Server) holdLane(id string) (release func()) {
	s.dmu.Lock()
	l := s.lanes[id]
	if l == nil {
		l = &lane{key: id}
		s.lanes[id] = l
	}
	l.running = true
	s.dmu.Unlock()
	return func() {
		s.dmu.Lock()
		defer s.dmu.Unlock()
		switch {
		case s.dclosed:
			l.running = false
		case len(l.events) > 0:
			s.ready = append(s.ready, l)
			s.dcond.Signal()
		default:
			l.running = false
			delete(s.lanes, id)
		}
	}
}

// worker sends the callbacks of ready lanes until the server closes.
func (s *Server) worker() {
	defer s.workers.Done()
	for {
		s.dmu.Lock()
		for len(s.ready) == 0 && !s.dclosed {
			s.dcond.Wait()
		}
		if s.dclosed {
			s.dmu.Unlock()
			return
		}
		l := s.ready[0]
		s.ready[0] = nil
		s.ready = s.ready[1:]
		s.dmu.Unlock()
		s.runLane(l)
	}
}

func (s *Server) runLane(l *lane) {
	for {
		s.dmu.Lock()
		if len(l.events) == 0 || s.dclosed {
			l.running = false
			if len(l.events) == 0 {
				delete(s.lanes, l.key)
			}
			s.dmu.Unlock()
			return
		}
		ev := l.events[0]
		s.dmu.Unlock()

		s.takeUp(ev)
		if s.cfg.noCallbacks {
			s.finish(Delivery{ID: ev.id, TransferID: ev.transferID, Status: ev.status, URL: ev.url, Body: ev.body}, true)
		} else {
			s.finish(s.deliver(s.ctx, ev), true)
		}

		s.dmu.Lock()
		l.events[0] = nil
		l.events = l.events[1:]
		s.dmu.Unlock()
	}
}

// takeUp moves the transfer to the event's state and makes the body.
func (s *Server) takeUp(ev *event) {
	now := time.Now()
	if ev.advance {
		s.mu.Lock()
		if t := s.transfers[ev.transferID]; t != nil {
			t.State, t.Updated = ev.status, now
		}
		s.mu.Unlock()
	}
	if ev.body == nil {
		ev.body, _ = json.Marshal(statusBody{
			TransferID: ev.transferID,
			Status:     ev.status,
			TxID:       ev.txID,
			Timestamp:  now.UTC().Format(time.RFC3339Nano),
		})
	}
}

// deliver sends ev until an attempt is answered 2xx, the attempts run out or
// ctx ends, waiting with exponential backoff between attempts.
func (s *Server) deliver(ctx context.Context, ev *event) Delivery {
	d := Delivery{ID: ev.id, TransferID: ev.transferID, Status: ev.status, URL: ev.url, Body: ev.body}
	wait := s.cfg.cbBackoffMin
	for i := 0; i < s.cfg.cbAttempts; i++ {
		if i > 0 {
			if !s.pause(ctx, wait) {
				break
			}
			wait = min(2*wait, s.cfg.cbBackoffMax)
		}
		at := Attempt{Time: time.Now()}
		code, retryAfter, err := s.post(ctx, ev)
		at.StatusCode = code
		if err != nil {
			at.Err = err.Error()
		}
		d.Attempts = append(d.Attempts, at)
		s.mu.Lock()
		s.stats.CallbackAttempts++
		s.mu.Unlock()
		s.log(ctx, "travelruletest: callback attempt",
			slog.String("transferId", ev.transferID), slog.String("status", string(ev.status)),
			slog.Int("attempt", i+1), slog.Int("answer", code))
		if code >= 200 && code <= 299 {
			d.Delivered = true
			break
		}
		if ctx.Err() != nil {
			break
		}
		// A receiver that asks for a longer wait gets it, within the
		// backoff's bound.
		if retryAfter > wait {
			wait = min(retryAfter, s.cfg.cbBackoffMax)
		}
	}
	return d
}

// pause waits for d or until ctx ends; it reports whether the wait passed.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// post makes one attempt at sending ev.
func (s *Server) post(ctx context.Context, ev *event) (code int, retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ev.url, bytes.NewReader(ev.body))
	if err != nil {
		return 0, 0, err
	}
	now := time.Now()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "travelruletest/"+travelrule.Version)
	req.Header.Set(callback.HeaderID, ev.id)
	req.Header.Set(callback.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	if s.cfg.cbSecret != nil {
		req.Header.Set(callback.HeaderSignature, callback.Sign(s.cfg.cbSecret, ev.id, now, ev.body))
	}
	resp, err := s.cbClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && secs > 0 {
		retryAfter = time.Duration(secs) * time.Second
	}
	return resp.StatusCode, retryAfter, nil
}

// newCallbackClient returns the client that sends callbacks: the given one
// or a default, never following redirects.
func newCallbackClient(hc *http.Client) (*http.Client, *http.Transport) {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if hc != nil {
		c := *hc
		c.CheckRedirect = noRedirect
		return &c, nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = callbackWorkers
	return &http.Client{Transport: t, Timeout: callbackTimeout, CheckRedirect: noRedirect}, t
}

// StartInquiry plays the counterparty VASP: it stores a new transfer in
// state inquiry, then sends callbackURL an inbound inquiry about it, the
// body {"transferId":"<id>","status":"inquiry", ...} carrying every field of
// req as on the wire, with the headers, signing and retries of a status
// callback, and waits for it to be delivered or given up (or for ctx or the
// server to end). The integrator answers with ResolveInquiry on the
// returned id (the package documentation says what resolution does).
//
// The transfer is stored before the inquiry is sent, so the receiver may
// resolve it at once. If the inquiry is not delivered, StartInquiry returns
// the transfer's id with the error; the transfer stays in state inquiry.
func (s *Server) StartInquiry(ctx context.Context, callbackURL string, req *travelrule.TransferRequest) (string, error) {
	if req == nil {
		return "", errors.New("travelruletest: StartInquiry: nil request")
	}
	if u, err := url.Parse(callbackURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("travelruletest: StartInquiry: callback URL must be an absolute http or https URL")
	}
	if s.ctx.Err() != nil {
		return "", errors.New("travelruletest: StartInquiry: server closed")
	}
	id := newTransferID()
	body, err := inquiryBody(id, req)
	if err != nil {
		return "", fmt.Errorf("travelruletest: StartInquiry: encoding the inquiry: %w", err)
	}
	release := s.holdLane(id)
	defer release()
	now := time.Now()
	s.mu.Lock()
	s.store(&transferRec{Transfer: Transfer{ID: id, Request: *req, State: StateInquiry, Inquiry: true, Created: now, Updated: now}})
	s.stats.Inquiries++
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	d := s.deliver(ctx, &event{id: newEventID(), transferID: id, status: StateInquiry, url: callbackURL, body: body})
	s.finish(d, false)
	if !d.Delivered {
		last := "no attempt"
		if n := len(d.Attempts); n > 0 {
			if a := d.Attempts[n-1]; a.StatusCode != 0 {
				last = "last answer " + strconv.Itoa(a.StatusCode)
			} else {
				last = "last attempt got no answer"
			}
		}
		if ctx.Err() != nil {
			return id, fmt.Errorf("travelruletest: StartInquiry: inquiry not delivered after %d attempt(s), %s: %w", len(d.Attempts), last, ctx.Err())
		}
		return id, fmt.Errorf("travelruletest: StartInquiry: inquiry not delivered after %d attempt(s), %s", len(d.Attempts), last)
	}
	return id, nil
}

// inquiryBody is req's wire form with transferId and status first.
func inquiryBody(id string, req *travelrule.TransferRequest) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil {
		return nil, err
	}
	fields := bytes.TrimSpace(buf.Bytes())
	head, _ := json.Marshal(struct {
		TransferID string `json:"transferId"`
		Status     State  `json:"status"`
	}{id, StateInquiry})
	out := make([]byte, 0, len(head)+len(fields))
	out = append(out, head[:len(head)-1]...)
	if len(fields) > 2 {
		out = append(out, ',')
		out = append(out, fields[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}
