package travelruletest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/vaspkit/travelrule"
)

// StartInquiry plays the counterparty VASP, the originator: it stores a
// new transfer in state inquiry, then sends callbackURL an INQUIRY about
// it, as the live service does, {"asset","amount","callback","IVMS101"}:
// req's asset and amount, the parties as an IVMS101 payload, and, as
// callback, <URL>/transfers/inquiryResolution?q=<transferId> (the id
// travels in q; the body has no transferId). It is signed and retried as
// every callback is, and StartInquiry waits for it to be delivered or
// given up (or for ctx or the server to end: on the live schedule a
// receiver that never acknowledges holds it about 47 hours, so give ctx a
// deadline, or the server [WithCallbackTimeScale]). The integrator answers
// with ResolveInquiry on the returned id; an approval with a callback URL
// gets a TRANSFER_CONFIRMATION there, as the originator's broadcast would
// (see [KindTransferConfirmation]). POST {URL}/sandbox/inquiries does the
// same over HTTP, without waiting.
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
	id, done := s.beginInquiry(ctx, callbackURL, req, nil)
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
func (s *Server) beginInquiry(ctx context.Context, callbackURL string, req *travelrule.TransferRequest, after func()) (string, <-chan inquiryOutcome) {
	id := newTransferID()
	ev := s.inquiryEvent(id, callbackURL, req)
	release := s.queue.hold(id)
	now := time.Now()
	s.records.add(&transferRec{Transfer: Transfer{ID: id, Request: *req, State: StateInquiry, Inquiry: true, Flow: FlowOpenVASP, TxID: req.TxID, Created: now, Updated: now},
		resolvable: true, wallet: req.Beneficiary.WalletAddress})

	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
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
	return id, done
}
