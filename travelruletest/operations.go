package travelruletest

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/vaspkit/travelrule"
)

// maxBody is the largest request body the server reads; a larger one is
// answered 413.
const maxBody = 1 << 20

// serveOp serves one of the operations: method, authentication, body,
// faults, idempotency, then the operation itself.
func (s *Server) serveOp(r *http.Request, st stream, op Operation, rec *Request) *answer {
	body, a := s.admit(r)
	if a != nil {
		return a
	}
	plan := s.faults.draw(op)
	rec.Faults = plan.fired
	// refund gives back the fault after acting, which the answer a does
	// not get.
	refund := func(a *answer) *answer {
		s.faults.refund(&plan)
		rec.Faults = plan.fired
		return a
	}
	if plan.latency > 0 && !s.hold(r, plan.latency) {
		return refund(&answer{abandon: true})
	}
	if plan.pre != nil {
		return beforeActing(plan.pre)
	}
	if plan.post != nil && plan.post.Kind == FaultGoAway {
		// The connection shuts down as this request arrives: whether the
		// request is then acted on is the GOAWAY's to say (take, below).
		plan.post = nil // it fired, and is not applied to the answer
		if st.conn == nil {
			return &answer{drop: true} // HTTP/1: closed before acting
		}
		st.conn.goAway()
	}
	if !st.take() {
		// A GOAWAY declared the stream unprocessed: it is recorded, not
		// acted on, and gets no answer.
		return refund(&answer{abandon: true})
	}
	a = s.idempotent(r, op, body)
	if a.status/100 != 2 || a.abandon {
		return refund(a)
	}
	if plan.post != nil {
		return afterActing(plan.post, a)
	}
	return a
}

// admit checks the method, the token and the Content-Type of a request to
// an operation (or to the control plane's POST), in that order, and reads
// its body; it returns the body, or the answer that refuses the request.
func (s *Server) admit(r *http.Request) ([]byte, *answer) {
	if r.Method != http.MethodPost {
		return nil, methodNotAllowed(http.MethodPost)
	}
	if a := s.authenticate(r); a != nil {
		return nil, a
	}
	if a := requireJSON(r); a != nil {
		return nil, a
	}
	return readBody(r)
}

// readBody reads the body of r, or returns the answer that refuses it: 400
// if it cannot be read, 413 if larger than maxBody. Its buffer is sized by
// the Content-Length, if declared.
func readBody(r *http.Request) ([]byte, *answer) {
	size := 512
	if n := r.ContentLength; n >= 0 && n < maxBody {
		size = int(n) + 1 // room to read the end without growing
	}
	body := make([]byte, 0, size)
	lr := io.LimitedReader{R: r.Body, N: maxBody + 1}
	for {
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)]
		}
		n, err := lr.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		switch {
		case err == io.EOF && len(body) > maxBody:
			return nil, errorAnswer(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "body larger than 1 MiB")
		case err == io.EOF:
			return body, nil
		case err != nil:
			// A malformed body (a bad chunk) or a client that left
			// mid-body; the answer reaches only the first.
			return nil, errorAnswer(http.StatusBadRequest, codeInvalidRequest, "request body could not be read")
		}
	}
}

// run acts on a request to op; key is its Idempotency-Key, if any.
func (s *Server) run(r *http.Request, op Operation, body []byte, key string) *answer {
	switch op {
	case OpInitiate:
		return s.initiate(body, key)
	case OpResolve:
		return s.resolve(r.URL.Query().Get("q"), body)
	case OpGenerateTravelAddress:
		return s.generateTravelAddress(body)
	case OpDecodeTravelAddress:
		return s.decodeTravelAddress(body)
	default:
		return s.submitTxID(r.URL.Query().Get("q"), body)
	}
}

// initiate is the transfer initiation.
func (s *Server) initiate(body []byte, key string) *answer {
	t := new(transferRec)
	req := &t.Request
	faults, err := decodeTransfer(body, req)
	var unknown *answer // a travelAddress that resolves to no VASP
	if err == nil {
		faults, unknown = s.cfg.travelAddresses.judge(req.TravelAddress, faults)
		if s.cfg.reachRequired {
			faults = reachFaults(req, faults)
		}
	}
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	if unknown != nil {
		return unknown
	}
	id, now := newTransferID(), time.Now()
	t.ID, t.State, t.IdempotencyKey, t.TxID, t.Created, t.Updated = id, StateReceived, key, req.TxID, now, now
	t.wallet = req.Beneficiary.WalletAddress
	t.Flow = flowOf(req)
	if t.Flow == FlowEmail {
		// The sandbox sends no mail: its mail provider acknowledges at once.
		t.EmailDelivered = true
	} else if b, ok := s.beneficiaries.lookup(req.TravelAddress); ok && req.TravelAddress != "" {
		t.BeneficiaryID = b.id
		if t.wallet == "" {
			t.wallet = b.req.WalletAddress
		}
	}
	var evs []*event
	if t.BeneficiaryID != "" && s.cfg.inquiryURL != "" {
		// The integrator is the beneficiary's VASP: it decides.
		t.State, t.resolvable = StateInquiry, true
		ev := s.inquiryEvent(id, s.cfg.inquiryURL+inquiryPath+t.BeneficiaryID, req)
		ev.force = true
		evs = []*event{ev}
	} else {
		// The sandbox decides now; the state follows as the callbacks go.
		evs = s.decide(t)
	}
	s.records.add(t, evs...)
	a := s.initiationAnswer(id)
	a.transferID = id
	return a
}

// reachFaults appends to faults the fault of an initiation that names no
// way to reach the beneficiary, in the words of the client's
// ValidateStrict (WithTravelAddressRequired).
func reachFaults(req *travelrule.TransferRequest, faults []travelrule.FieldError) []travelrule.FieldError {
	if req.TravelAddress != "" || req.Email != "" || req.Beneficiary.Email != "" {
		return faults
	}
	return append(faults, travelrule.FieldError{Field: "travelAddress",
		Reason: "a travelAddress, an email or a beneficiary.email is required to reach the beneficiary"})
}

// initiationAnswer is the body of a successful initiation of the transfer
// id: the live service's envelope, or the excerpt's (WithExcerptAnswers),
// with the id or without (WithTransferIDInAnswer).
func (s *Server) initiationAnswer(id string) *answer {
	switch {
	case s.cfg.excerptAnswers && s.cfg.transferIDInAnswer:
		return &answer{status: http.StatusOK, body: []byte(`{"status":"succes","transferId":"` + id + `"}`)}
	case s.cfg.excerptAnswers:
		return &answer{status: http.StatusOK, body: []byte(`{"status":"succes"}`)}
	case s.cfg.transferIDInAnswer:
		return &answer{status: http.StatusOK, body: []byte(`{"status":true,"data":{"transferId":"` + id + `"}}`)}
	}
	return &answer{status: http.StatusOK, body: []byte(`{"status":true,"data":{}}`)}
}

// resolve is the inquiry resolution.
func (s *Server) resolve(q string, body []byte) *answer {
	req, faults, err := decodeResolution(q, body)
	if err != nil || len(faults) > 0 {
		return badRequest(err, faults)
	}
	decision := StateRejected
	if req.Approved == "true" {
		decision = StateApproved
	}
	res := s.records.resolve(q, decision, req.Callback, s.afterResolution)
	if !res.found {
		return errorAnswer(http.StatusNotFound, codeTransferNotFound, "no inquiry with this transfer id")
	}
	return &answer{status: http.StatusOK, body: []byte(`{"status":` + strconv.FormatBool(res.ok) + `}`), transferID: q}
}

// afterResolution returns the callbacks that follow the first resolution
// of t, whose decision is recorded, made with the callback URL cbURL
// (possibly ""). It runs under the records' lock.
//
// For an initiation sent to the integrator's inquiry URL, the originator
// (the integrator too) hears the decision at its callback URL; an approval
// with a callback URL names where the TRANSFER_CONFIRMATION goes once the
// txId is submitted, at once if it already was. For an inquiry the sandbox
// started, the sandbox is the originator: once approved with a callback
// URL, it broadcasts the transaction and sends the TRANSFER_CONFIRMATION
// there itself, with the request's txId or a made-up hash.
func (s *Server) afterResolution(t *transferRec, cbURL string) []*event {
	approved := t.decision == StateApproved
	if t.Inquiry {
		if !approved || cbURL == "" {
			return nil
		}
		if t.TxID == "" {
			t.TxID = madeUpTxHash()
		}
		t.confirmURL = cbURL
		return []*event{confirmationEvent(t, cbURL)}
	}
	evs := s.resolutionEvents(t, approved)
	if approved && cbURL != "" {
		t.confirmURL = cbURL
		if t.Confirmed {
			evs = append(evs, confirmationEvent(t, cbURL))
		}
	}
	return evs
}

// newTransferID returns a version 4 UUID, made as the SDK makes its
// idempotency keys.
func newTransferID() string { return travelrule.NewIdempotencyKey() }

// newEventID returns a webhook-id: "msg_" and 32 hex digits.
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}
