package journal

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"
)

// Settlement is what an operator found out, from the service, about an
// outbound entry's initiations whose outcome was unknown.
type Settlement struct {
	// Stored says the service holds the transfer; TransferID is then its
	// id. When false, the service holds none, and the reference may be
	// used again.
	Stored     bool
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
// the reference is allowed. The settlement is a record of its own: the
// history stays, and a later callback that contradicts it is reported
// ([RuleContradicted]).
func (j *Journal) Settle(ctx context.Context, id string, s Settlement) error {
	if err := s.check(); err != nil {
		return err
	}
	e, err := j.Entry(ctx, id)
	if err != nil {
		return fmt.Errorf("journal: Settle: reading the entry: %w", err)
	}
	if e == nil || e.Direction != Outbound || (e.Initiation != InitiationSent && e.Initiation != InitiationUnknown) {
		return ErrNothingToSettle
	}
	r := record{Kind: kindSettled, At: j.now(), Settled: kindNotStored, Reason: s.Reason}
	var names []string
	if s.Stored {
		r.Settled, r.TransferID = kindStored, s.TransferID
		names = append(names, transferName+s.TransferID)
	}
	if err := j.append(ctx, e.Key, "settle:"+newID(), &r, names...); err != nil {
		return fmt.Errorf("journal: Settle: %w", err)
	}
	if s.Stored {
		return j.joinIfAny(ctx, e.Key, s.TransferID)
	}
	return nil
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
		if unicode.IsControl(c) {
			return fmt.Errorf("%w: the reason must be one line, without control characters", ErrInvalidSettlement)
		}
	}
	return nil
}
