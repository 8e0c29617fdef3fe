package travelruletest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/vaspkit/travelrule"
)

// StartInquiry plays the counterparty VASP: it stores a new transfer in
// state inquiry, then sends callbackURL an inbound inquiry about it, the
// body {"transferId":"<id>","status":"inquiry", ...} carrying every field of
// req as on the wire, with the headers, signing and retries of a status
// callback, and waits for it to be delivered or given up (or for ctx or the
// server to end). The integrator answers with ResolveInquiry on the
// returned id (the package documentation says what resolution does).
// POST {URL}/sandbox/inquiries does the same over HTTP, without waiting.
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
	id, done, err := s.beginInquiry(ctx, callbackURL, req, nil)
	if err != nil {
		return "", fmt.Errorf("travelruletest: StartInquiry: %w", err)
	}
	out := <-done
	if d := out.delivery; !d.Delivered {
		last := "no attempt"
		if n := len(d.Attempts); n > 0 {
			if a := d.Attempts[n-1]; a.StatusCode != 0 {
				last = "last answer " + strconv.Itoa(a.StatusCode)
			} else {
				last = "last attempt got no answer"
			}
		}
		if out.err != nil {
			return id, fmt.Errorf("travelruletest: StartInquiry: inquiry not delivered after %d attempt(s), %s: %w", len(d.Attempts), last, out.err)
		}
		return id, fmt.Errorf("travelruletest: StartInquiry: inquiry not delivered after %d attempt(s), %s", len(d.Attempts), last)
	}
	return id, nil
}

// inquiryOutcome is how the delivery of an inquiry ended: its record, and
// the error of the context it was delivered under (nil if that did not end).
type inquiryOutcome struct {
	delivery Delivery
	err      error
}

// beginInquiry is what StartInquiry and the control plane share: it stores
// a new transfer in state inquiry with the request req, and starts sending
// callbackURL the inquiry about it, on a goroutine of its own that ends
// when the inquiry is delivered or given up, or ctx or the server ends
// (Close waits for it). It returns the transfer's id at once, and a channel
// that gets the outcome when the delivery has finished and been recorded.
//
// The transfer's callback lane is held meanwhile, so that a status
// callback of a resolution made while the inquiry is still being delivered
// cannot overtake it.
func (s *Server) beginInquiry(ctx context.Context, callbackURL string, req *travelrule.TransferRequest, after func()) (string, <-chan inquiryOutcome, error) {
	id := newTransferID()
	body, err := inquiryBody(id, req)
	if err != nil {
		if after != nil {
			after()
		}
		return "", nil, fmt.Errorf("encoding the inquiry: %w", err)
	}
	release := s.queue.hold(id)
	now := time.Now()
	s.records.add(&transferRec{Transfer: Transfer{ID: id, Request: *req, State: StateInquiry, Inquiry: true, Flow: FlowOpenVASP, TxID: req.TxID, Created: now, Updated: now}})

	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	ev := &event{id: newEventID(), transferID: id, status: StateInquiry, url: callbackURL, body: body}
	done := make(chan inquiryOutcome, 1)
	send := func() {
		if after != nil {
			defer after()
		}
		defer release()
		defer cancel()
		defer stop()
		d := s.deliver(ctx, ev)
		s.records.finish(d, false)
		done <- inquiryOutcome{delivery: d, err: ctx.Err()}
	}
	if !s.queue.spawn(send) {
		// The server closed since the transfer was stored: the delivery
		// makes no attempt, and is recorded so.
		cancel()
		send()
	}
	return id, done, nil
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
