package travelruletest

import (
	"crypto/sha256"
	"net/http"
	"time"
)

// maxIdempotencyKey is the longest Idempotency-Key accepted.
const maxIdempotencyKey = 255

// idemEntry is the stored answer to an Idempotency-Key.
type idemEntry struct {
	key         string // in records.idem
	created     time.Time
	fingerprint [32]byte
	done        bool
	ans         *answer
}

// idempotent runs the operation, or replays the answer stored for the
// request's Idempotency-Key.
func (s *Server) idempotent(r *http.Request, op Operation, body []byte) *answer {
	key := r.Header.Get("Idempotency-Key")
	if key == "" || s.cfg.noIdempotency {
		return s.run(r, op, body, "")
	}
	if len(key) > maxIdempotencyKey {
		return errorAnswer(http.StatusBadRequest, codeInvalidRequest, "Idempotency-Key longer than 255 characters")
	}
	h := sha256.New()
	h.Write([]byte(r.URL.RawQuery))
	h.Write([]byte{0})
	h.Write(body)
	var fp [32]byte
	h.Sum(fp[:0])

	e, stored := s.records.claim(op.String()+"\x00"+key, fp, s.cfg.clock()())
	if stored != nil {
		return stored
	}
	a := s.run(r, op, body, key)
	s.records.settle(e, a)
	return a
}

// claim looks up the entry of mapKey. For a new key it stores an entry
// and returns it, to be settled with the answer; otherwise it returns the
// answer to give: the stored one, replayed, or the refusal of a key in use
// or reused with another request (fingerprint fp).
func (rs *records) claim(mapKey string, fp [32]byte, now time.Time) (*idemEntry, *answer) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	e := rs.idem[mapKey]
	switch {
	case e == nil:
		e = &idemEntry{key: mapKey, created: now, fingerprint: fp}
		rs.idem[mapKey] = e
		rs.idemOrder = append(rs.idemOrder, e)
		rs.evictIdempotency(now)
		return e, nil
	case e.fingerprint != fp:
		return nil, errorAnswer(http.StatusUnprocessableEntity, codeIdempotencyKeyReused,
			"Idempotency-Key was used with a different request")
	case !e.done:
		a := errorAnswer(http.StatusConflict, codeIdempotencyKeyInUse,
			"a request with this Idempotency-Key is being processed")
		a.header = []string{"Retry-After", "1"}
		return nil, a
	}
	stored := *e.ans
	stored.replayed = true
	return nil, &stored
}

// settle stores a, the answer to the request that claimed e.
func (rs *records) settle(e *idemEntry, a *answer) {
	rs.mu.Lock()
	e.ans, e.done = a, true
	rs.mu.Unlock()
}

// evictIdempotency forgets the oldest finished Idempotency-Key entries
// beyond the record limit that are older than the idempotency window.
// rs.mu is held.
func (rs *records) evictIdempotency(now time.Time) {
	for rs.limit > 0 && len(rs.idemOrder) > rs.limit {
		e := rs.idemOrder[0]
		if !e.done || now.Sub(e.created) < rs.window {
			return // the entries after it are younger
		}
		delete(rs.idem, e.key)
		rs.idemOrder[0] = nil
		rs.idemOrder = rs.idemOrder[1:]
	}
}
