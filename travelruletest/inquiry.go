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
	release := s.queue.hold(id)
	defer release()
	now := time.Now()
	s.records.add(&transferRec{Transfer: Transfer{ID: id, Request: *req, State: StateInquiry, Inquiry: true, Created: now, Updated: now}})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	d := s.deliver(ctx, &event{id: newEventID(), transferID: id, status: StateInquiry, url: callbackURL, body: body})
	s.records.finish(d, false)
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
