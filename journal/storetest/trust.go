package storetest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/journal"
)

// TestTrust checks that the journal believes only what could be true: a
// signed callback of a kind that cannot arrive at an entry's side is
// recorded as refused and moves nothing (a captured TRANSFER_CONFIRMATION
// replayed to an initiation's URL does not reconcile it), an
// unauthenticated delivery reconciles nothing, and a reference serves one
// transfer in one direction.
func TestTrust(t *testing.T, open Open) {
	j, err := journal.New(open(t, Config{Retention: long}))
	require.NoError(t, err)
	v := newVASP(t, j, j)
	lost := trustReplay(t, v, j)
	confRef := trustInbound(t, v, j)

	// A reference serves one transfer, in one direction.
	sent := v.svc.reqs.Load()
	_, err = v.initiate(t, confRef)
	assert.ErrorIs(t, err, journal.ErrRefInUse, "an inbound transfer's reference is refused for an initiation")
	_, err = v.client.ResolveInquiry(context.Background(), unique("in-"), travelrule.Approve(url(t, lost)))
	assert.ErrorIs(t, err, journal.ErrRefInUse, "an outbound transfer's reference is refused for a resolution")
	assert.Equal(t, sent, v.svc.reqs.Load(), "nothing was sent")
}

// trustReplay: a captured confirmation, signed, replayed to an unknown
// initiation reconciles nothing; nor does an unauthenticated delivery. It
// returns the initiation's reference.
func trustReplay(t *testing.T, v *vasp, j *journal.Journal) string {
	ctx := context.Background()
	lost := unique("lost-")
	v.svc.drop.Store(lost)
	_, err := v.initiate(t, lost)
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	deliver(t, v.signed, url(t, lost), `{"txid":"0xfeedbeef"}`)
	e, err := j.Entry(ctx, lost)
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation, "a confirmation is no evidence of an outbound initiation")
	assert.False(t, e.Reconciled)
	assert.Equal(t, journal.StageNone, e.Stage)
	found, err := j.Stuck(ctx, journal.Thresholds{OutcomeUnknown: time.Nanosecond})
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(found, func(f journal.Finding) bool { return f.Entry.Key == e.Key }), "Stuck still lists it")
	assert.Contains(t, whats(e), "callback refused: a transfer_confirmation cannot arrive at the originator")

	// The same entry, told by an unauthenticated handler that it was stored.
	deliverTo(t, v.unsigned, url(t, lost), fmt.Sprintf(`{"transferId":"tr-forged","status":"APPROVED","callback":%q}`, url(t, lost)))
	e, err = j.Entry(ctx, lost)
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation, "an unauthenticated delivery reconciles nothing")
	assert.Empty(t, e.TransferID)
	forged, err := j.Entry(ctx, "tr-forged")
	require.NoError(t, err)
	assert.Nil(t, forged, "nor opens an entry")
	return lost
}

// trustInbound: an inbound transfer's resolution's reference takes its
// confirmation, never an originator's message. It returns the reference.
func trustInbound(t *testing.T, v *vasp, j *journal.Journal) string {
	ctx := context.Background()
	inbound, confRef := unique("in-"), unique("conf-")
	inq := fmt.Sprintf(`{"asset":"BTC","amount":"0.25","callback":"https://trp.example/transfers/inquiryResolution?q=%s","IVMS101":{}}`, inbound)
	deliver(t, v.signed, url(t, unique("inq-")), inq)
	_, err := v.client.ResolveInquiry(ctx, inbound, travelrule.Approve(url(t, confRef)))
	require.NoError(t, err)
	deliver(t, v.signed, url(t, confRef), `{"approved":true,"callback":"https://trp.example/x"}`)
	e, err := j.Entry(ctx, confRef)
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, journal.Inbound, e.Direction)
	assert.Equal(t, journal.StageInquiryAnswered, e.Stage, "an INQUIRY_RESOLUTION cannot arrive at the beneficiary")
	assert.Contains(t, whats(e), "callback refused: a inquiry_resolution cannot arrive at the beneficiary")
	return confRef
}

// whats is the entry's timeline, one record a line.
func whats(e *journal.Entry) string {
	var b strings.Builder
	for _, ev := range e.Timeline {
		b.WriteString(ev.What + "\n")
	}
	return b.String()
}

// deliverTo posts an unsigned body to h at url.
func deliverTo(t *testing.T, h http.Handler, url, body string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, url, strings.NewReader(body)))
	require.Equal(t, http.StatusNoContent, rec.Code)
}
