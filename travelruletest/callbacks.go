package travelruletest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// callbackTimeout bounds one attempt of the default callback client.
const callbackTimeout = 10 * time.Second

// worker sends the callbacks of ready lanes until the server closes.
func (s *Server) worker() {
	defer s.queue.workers.Done()
	for l := s.queue.next(); l != nil; l = s.queue.next() {
		s.runLane(l)
	}
}

// runLane sends the callbacks of l, which the calling worker has, until
// none is left or the server closes.
func (s *Server) runLane(l *lane) {
	for ev := s.queue.head(l); ev != nil; ev = s.queue.head(l) {
		if ev.advance {
			s.records.advance(ev.transferID, ev.status, time.Now())
		}
		if s.cfg.noCallbacks && !ev.force {
			s.records.finish(deliveryOf(ev), true)
		} else {
			s.records.finish(s.deliver(s.ctx, ev), true)
		}
		s.queue.pop(l)
	}
}

// deliveryOf is the record of ev before any attempt.
func deliveryOf(ev *event) Delivery {
	return Delivery{ID: ev.id, Kind: ev.kind, TransferID: ev.transferID, Status: ev.status, URL: ev.url, Body: ev.body}
}

// deliver sends ev until an attempt is answered 2xx, the attempts of the
// schedule run out or ctx ends, waiting between attempts as the schedule
// says (see retryWait). It makes no attempt if ctx or the server has
// already ended. The records show the delivery, with its attempts so far,
// while it runs.
func (s *Server) deliver(ctx context.Context, ev *event) Delivery {
	d := deliveryOf(ev)
	if !s.pause(ctx, 0) {
		return d
	}
	s.records.progress(d, false, time.Time{})
	delays := s.cfg.cbDelays
	var wait time.Duration
	for i := 0; i <= len(delays); i++ {
		if i > 0 && !s.pause(ctx, wait) {
			break
		}
		at := Attempt{Time: time.Now()}
		code, retryAfter, err := s.post(ctx, ev)
		at.StatusCode, at.Latency = code, time.Since(at.Time)
		if err != nil {
			at.Err = attemptError(err)
		}
		d.Attempts = append(d.Attempts, at)
		ok := code >= 200 && code <= 299
		var next time.Time
		if !ok && i < len(delays) && ctx.Err() == nil {
			wait = retryWait(delays, i, retryAfter)
			next = time.Now().Add(wait)
			if dl, has := ctx.Deadline(); has && dl.Before(next) {
				next = time.Time{} // given up at the deadline, before it
			}
		}
		s.records.progress(d, true, next)
		s.log(ctx, "travelruletest: callback attempt",
			slog.String("transferId", ev.transferID), slog.String("kind", string(ev.kind)),
			slog.String("status", string(ev.status)), slog.Int("attempt", i+1), slog.Int("answer", code))
		if ok {
			d.Delivered = true
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	return d
}

// attemptError says why an attempt got no answer, without the URL that
// net/http's errors quote (its query may carry a capability; the Delivery
// holds the URL).
func attemptError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// post makes one attempt at sending ev.
func (s *Server) post(ctx context.Context, ev *event) (code int, retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ev.url, bytes.NewReader(ev.body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "travelruletest/"+travelrule.Version)
	if s.cfg.standardWebhooks {
		now := time.Now()
		req.Header.Set(callback.HeaderID, ev.id)
		req.Header.Set(callback.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		req.Header.Set(callback.HeaderSignature, callback.Sign(s.cfg.cbSecret, ev.id, now, ev.body))
	} else {
		// The live service's signature: no id, no time.
		req.Header.Set(callback.HeaderDataIntegrity, callback.SignDataIntegrity(s.cfg.cbSecret, ev.body))
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
