package journal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Settlement is what an operator found out, from the service, about an
// outbound entry's initiations whose outcome was unknown.
type Settlement struct {
	// Stored says the service holds the transfer. When false, it holds
	// none, and the reference may be used again.
	Stored bool
	// TransferID is the stored transfer's id ("" when not stored).
	TransferID string
	// Reason says how the operator knows (a support ticket, a check in
	// the service's dashboard): 1 to 200 characters, no line breaks. It is
	// kept with the entry, so it must hold no personal data.
	Reason string
	// At is when the settlement was recorded; Settle sets it.
	At time.Time
}

// Errors of [Journal.Settle].
var (
	// ErrNothingToSettle: the entry is not outbound, or has no initiation
	// whose outcome is unknown.
	ErrNothingToSettle = errors.New("journal: no initiation of the entry has an unknown outcome")
	// ErrInvalidSettlement: the settlement says too little or too much
	// (wrapped, with what).
	ErrInvalidSettlement = errors.New("journal: invalid settlement")
)

// maxReason is the longest reason a settlement keeps, in bytes.
const maxReason = 200

// Settle records an operator's settlement of the entry that id names (as
// for [Journal.Entry]): its initiations whose outcome was unknown are, from
// then on, stored as s.TransferID or not stored, so that a resend under
// the reference is allowed. Only an outcome unknown for longer than
// [DefaultOutcomeUnknown] is settled (a call may still be running before).
// The settlement is a record of its own: the history stays, and a later
// callback that contradicts it is reported ([RuleContradicted]). Of two
// settlements at once, one is recorded; the other fails.
func (j *Journal) Settle(ctx context.Context, id string, s Settlement) error {
	if err := s.check(); err != nil {
		return err
	}
	e, err := j.Entry(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("journal: Settle: reading the entry: %w", err)
	case e == nil || e.Direction != Outbound || e.Initiation != InitiationSent && e.Initiation != InitiationUnknown:
		return ErrNothingToSettle
	case j.now().Sub(e.SentAt) < DefaultOutcomeUnknown:
		return fmt.Errorf("%w: it was sent less than %v ago, and its call may still be running", ErrNothingToSettle, DefaultOutcomeUnknown)
	}
	r := record{Kind: kindSettled, At: j.now(), Settled: kindNotStored, Reason: s.Reason}
	if s.Stored {
		if owner, err := j.store.Lookup(ctx, transferName+s.TransferID); err != nil {
			return fmt.Errorf("journal: Settle: %w", err)
		} else if owner != "" && owner != e.Key {
			return fmt.Errorf("%w: the transfer id names another entry", ErrInvalidSettlement)
		}
		r.Settled, r.TransferID = kindStored, s.TransferID
	}
	// One record id for what is settled (the entry as both read it): of
	// two settlements at once, the store keeps the first, and the second
	// reads it back.
	rid := "settle:" + e.SentAt.UTC().Format(time.RFC3339Nano) + "/" + strconv.Itoa(e.Initiations)
	if err := j.append(ctx, e.Key, rid, &r); err != nil {
		return fmt.Errorf("journal: Settle: %w", err)
	}
	back, err := j.Entry(ctx, e.Key)
	if err != nil {
		return fmt.Errorf("journal: Settle: reading it back: %w", err)
	}
	if got := back.Settlement; got == nil || !got.At.Equal(r.At) || got.Stored != s.Stored || got.TransferID != s.TransferID || got.Reason != s.Reason {
		return fmt.Errorf("%w: another settlement was recorded first", ErrNothingToSettle)
	}
	if !s.Stored {
		return nil
	}
	// The record is there: writing it again writes only the name, and
	// peeks at callbacks that came under the transfer id alone.
	from := unattachedPrefix + s.TransferID
	w, err := j.write(ctx, Step{Key: e.Key, ID: rid, Names: []string{transferName + s.TransferID}, Peek: from}, &r)
	if err != nil {
		return fmt.Errorf("journal: Settle: naming the transfer: %w", err)
	}
	if len(w.Peeked) == 0 {
		return nil
	}
	return j.join(ctx, e.Key, from, w.Peeked)
}

// check reports what is wrong with a settlement, never quoting it.
func (s Settlement) check() error {
	switch {
	case s.Stored && !isID(s.TransferID):
		return fmt.Errorf("%w: a stored settlement needs the transfer id (1 to 128 characters from A-Z a-z 0-9 -_.:~)", ErrInvalidSettlement)
	case !s.Stored && s.TransferID != "":
		return fmt.Errorf("%w: a transfer id names a stored transfer: set Stored", ErrInvalidSettlement)
	case s.Reason == "" || len(s.Reason) > maxReason || !utf8.ValidString(s.Reason):
		return fmt.Errorf("%w: the reason must be 1 to 200 bytes of UTF-8", ErrInvalidSettlement)
	}
	for _, c := range s.Reason {
		if unicode.In(c, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Errorf("%w: the reason must be one line, without control or format characters", ErrInvalidSettlement)
		}
	}
	return nil
}
