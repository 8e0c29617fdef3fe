package storetest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/journal"
)

// TestTrust checks that the journal believes only what could be true: a
// signed callback of a kind that cannot arrive at an entry's side is
// recorded as refused and moves nothing (a captured TRANSFER_CONFIRMATION
// replayed to an initiation's URL does not reconcile it), an
// unauthenticated delivery reconciles nothing, and a reference serves one
// transfer in one direction.
func TestTrust(t *testing.T, open Open) {
	ctx := context.Background()
	store := open(t, Config{Retention: long})
	j, err := journal.New(store)
	require.NoError(t, err)
	svc := newLiveService(t)
	client, err := travelrule.NewClient(svc.URL, travelrule.WithTokenSource(travelrule.StaticToken("fleet-bearer-token-1")),
		travelrule.WithObserver(j), travelrule.WithRetryMax(0))
	require.NoError(t, err)
	verifier, err := callback.NewDataIntegrityVerifier(signingSecret)
	require.NoError(t, err)
	signed := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(verifier), callback.WithCapabilityKey([]byte(capKey)), callback.WithObserver(j))
	require.NoError(t, signed.Err())
	unsigned := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithoutAuthentication(), callback.WithObserver(j))
	require.NoError(t, unsigned.Err())
	url := func(ref string) string {
		u, err := travelrule.NewCallbackURL("https://vasp.example/cb", ref, []byte(capKey))
		require.NoError(t, err)
		return u
	}
	initiate := func(ref string) error {
		_, err := client.InitiateTransfer(ctx, &travelrule.TransferRequest{
			TravelAddress: "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN",
			Asset:         "BTC", Amount: "0.25", Callback: url(ref),
			Originator:  travelrule.Party{PersonType: "natural", FirstName: "Wilhelmina", LastName: "Oyelaran-Baptiste", DateOfBirth: "1984-03-17"},
			Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Cornelius", LastName: "Vandermeulen", DateOfBirth: "1979-11-02"},
		})
		return err
	}
	stuck := func(key string) bool {
		found, err := j.Stuck(ctx, journal.Thresholds{OutcomeUnknown: time.Nanosecond})
		require.NoError(t, err)
		for _, f := range found {
			if f.Entry.Key == key {
				return true
			}
		}
		return false
	}

	// A captured confirmation, signed, replayed to an unknown initiation.
	lost := unique("lost-")
	svc.drop.Store(lost)
	require.ErrorIs(t, initiate(lost), travelrule.ErrOutcomeUnknown)
	deliver(t, signed, url(lost), `{"txid":"0xfeedbeef"}`)
	e, err := j.Entry(ctx, lost)
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation, "a confirmation is no evidence of an outbound initiation")
	assert.False(t, e.Reconciled)
	assert.Equal(t, journal.StageNone, e.Stage)
	assert.True(t, stuck(e.Key), "Stuck still lists it")
	assert.Contains(t, whats(e), "callback refused: a transfer_confirmation cannot arrive at the originator")

	// The same entry, told by an unauthenticated handler that it was stored.
	deliverTo(t, unsigned, url(lost), fmt.Sprintf(`{"transferId":"tr-forged","status":"APPROVED","callback":%q}`, url(lost)))
	e, err = j.Entry(ctx, lost)
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation, "an unauthenticated delivery reconciles nothing")
	assert.Empty(t, e.TransferID)
	forged, err := j.Entry(ctx, "tr-forged")
	require.NoError(t, err)
	assert.Nil(t, forged, "nor opens an entry")

	// An inbound transfer: its resolution's reference takes its
	// confirmation, never an originator's message.
	inbound, confRef := unique("in-"), unique("conf-")
	inq := fmt.Sprintf(`{"asset":"BTC","amount":"0.25","callback":"https://trp.example/transfers/inquiryResolution?q=%s","IVMS101":{}}`, inbound)
	deliver(t, signed, url(unique("inq-")), inq)
	_, err = client.ResolveInquiry(ctx, inbound, travelrule.Approve(url(confRef)))
	require.NoError(t, err)
	deliver(t, signed, url(confRef), `{"approved":true,"callback":"https://trp.example/x"}`)
	e, err = j.Entry(ctx, confRef)
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, journal.Inbound, e.Direction)
	assert.Equal(t, journal.StageInquiryAnswered, e.Stage, "an INQUIRY_RESOLUTION cannot arrive at the beneficiary")
	assert.Contains(t, whats(e), "callback refused: a inquiry_resolution cannot arrive at the beneficiary")

	// A reference serves one transfer, in one direction.
	sent := svc.reqs.Load()
	assert.ErrorIs(t, initiate(confRef), journal.ErrRefInUse, "an inbound transfer's reference is refused for an initiation")
	_, err = client.ResolveInquiry(ctx, unique("in-"), travelrule.Approve(url(lost)))
	assert.ErrorIs(t, err, journal.ErrRefInUse, "an outbound transfer's reference is refused for a resolution")
	assert.Equal(t, sent, svc.reqs.Load(), "nothing was sent")
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
