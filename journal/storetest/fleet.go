package storetest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/journal"
)

// The secrets of the fleet test's VASP.
const (
	signingSecret = "fleet-signing-secret-0123456789"
	capKey        = "fleet-capability-key-0123456789"
)

// The personal values of the fleet test's transfers: none may reach the
// store.
var personal = []string{
	"Wilhelmina", "Oyelaran-Baptiste", "1984-03-17", "NID-77K-4412-Q", "Rue des Glycines 58",
	"Cornelius", "Vandermeulen", "1979-11-02", "bc1qfleetwallet9x8c7v6b5n4m3l2k1j0h",
	"fleet-signing-secret", "fleet-capability-key", "fleet-bearer-token",
}

// liveService is a server written from live-service.md: initiations are
// answered {"status":true,"data":{"transferId":…}}, except one whose
// connection it drops after reading the whole request (the service may
// have stored it); resolutions and txIds {"status":true}.
type liveService struct {
	*httptest.Server
	n    atomic.Int64 // initiations stored
	reqs atomic.Int64 // requests received, of every operation
	drop atomic.Value // the callback ref whose initiation's answer is lost
}

func newLiveService(t *testing.T) *liveService {
	s := &liveService{}
	s.drop.Store("")
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reqs.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/transfers/initiate":
			var req struct{ Callback string }
			_ = json.Unmarshal(body, &req)
			if ref := travelrule.CallbackRef(req.Callback); ref != "" && ref == s.drop.Load() {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close() // the request was read whole; its answer is lost
				}
				return
			}
			fmt.Fprintf(w, `{"status":true,"data":{"transferId":"tr-%d"}}`, s.n.Add(1))
		default:
			io.WriteString(w, `{"status":true}`)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// deliver posts a callback body to h at url, signed as the live service
// signs: x-data-integrity, the hex of HMAC-SHA512 over the body's base64.
func deliver(t *testing.T, h http.Handler, url, body string) {
	t.Helper()
	m := hmac.New(sha512.New, []byte(signingSecret))
	m.Write([]byte(base64.StdEncoding.EncodeToString([]byte(body))))
	req := httptest.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("x-data-integrity", hex.EncodeToString(m.Sum(nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNoContent, rec.Code, "delivery answered %d: %s", rec.Code, rec.Body)
}

// vasp is a VASP of the fleet tests, against a live service: a client
// observed by one journal, and handlers of callbacks, one signed and one
// unauthenticated, observed by another (or the same).
type vasp struct {
	svc              *liveService
	client           *travelrule.Client
	signed, unsigned http.Handler
}

func newVASP(t *testing.T, sender, receiver *journal.Journal) *vasp {
	v := &vasp{svc: newLiveService(t)}
	var err error
	v.client, err = travelrule.NewClient(v.svc.URL, travelrule.WithTokenSource(travelrule.StaticToken("fleet-bearer-token-1")),
		travelrule.WithObserver(sender), travelrule.WithRetryMax(0))
	require.NoError(t, err)
	verifier, err := callback.NewDataIntegrityVerifier(signingSecret)
	require.NoError(t, err)
	signed := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(verifier), callback.WithCapabilityKey([]byte(capKey)), callback.WithObserver(receiver))
	require.NoError(t, signed.Err())
	unsigned := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithoutAuthentication(), callback.WithObserver(receiver))
	require.NoError(t, unsigned.Err())
	v.signed, v.unsigned = signed, unsigned
	return v
}

// url is the capability callback URL of ref.
func url(t *testing.T, ref string) string {
	u, err := travelrule.NewCallbackURL("https://vasp.example/cb", ref, []byte(capKey))
	require.NoError(t, err)
	return u
}

// initiate sends a transfer of the personal values under ref.
func (v *vasp) initiate(t *testing.T, ref string) (*travelrule.TransferResult, error) {
	return v.client.InitiateTransfer(context.Background(), &travelrule.TransferRequest{
		TravelAddress: "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN",
		Asset:         "BTC", Amount: "0.25", Callback: url(t, ref),
		Originator: travelrule.Party{PersonType: "natural", FirstName: "Wilhelmina", LastName: "Oyelaran-Baptiste",
			DateOfBirth: "1984-03-17", NationalID: "NID-77K-4412-Q", NationalIDType: "NATIONAL_ID", StreetName: "Rue des Glycines 58", Country: "BE",
			WalletAddress: "bc1qfleetwallet9x8c7v6b5n4m3l2k1j0h"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Cornelius", LastName: "Vandermeulen", DateOfBirth: "1979-11-02"},
	})
}

// TestFleet runs a VASP of two replicas on one backend: replica A
// initiates, resolves and submits, replica B receives every callback.
// A's journal records each initiation before it is sent; B's callbacks
// move the transfers on, reconcile the initiation whose answer was lost
// to its transfer id, and start and finish an inbound transfer. Nothing
// personal reaches the store.
func TestFleet(t *testing.T, open Open) {
	cfg := Config{Retention: long}
	storeA, storeB := open(t, cfg), open(t, cfg)
	jA, err := journal.New(storeA)
	require.NoError(t, err)
	jB, err := journal.New(storeB)
	require.NoError(t, err)
	v := newVASP(t, jA, jB)
	keys := fleetStored(t, v, jB)
	keys = append(keys, fleetLost(t, v, jA), fleetInbound(t, v, jA, jB))
	assert.Zero(t, jA.Lost()+jB.Lost())

	// Nothing personal is in the store, whatever shape it is kept in.
	ctx := context.Background()
	var stored bytes.Buffer
	for _, key := range keys {
		e, err := jB.Entry(ctx, key)
		require.NoError(t, err)
		require.NotNil(t, e, key)
		recs, err := storeB.Records(ctx, e.Key)
		require.NoError(t, err)
		for _, r := range recs {
			stored.Write(r)
		}
	}
	require.NotZero(t, stored.Len())
	for _, p := range personal {
		assert.NotContains(t, stored.String(), p, "a personal value or secret reached the store")
	}
}

// fleetStored: a stored initiation, moved on by B's callbacks. It returns
// its reference and its transfer id.
func fleetStored(t *testing.T, v *vasp, jB *journal.Journal) []string {
	ctx := context.Background()
	ok := unique("ok-")
	res, err := v.initiate(t, ok)
	require.NoError(t, err)
	e, err := jB.Entry(ctx, ok)
	require.NoError(t, err)
	require.NotNil(t, e, "B sees A's entry")
	assert.Equal(t, journal.InitiationStored, e.Initiation)
	assert.Equal(t, res.TransferID, e.TransferID)
	assert.Equal(t, journal.StageInitiated, e.Stage)

	deliver(t, v.signed, url(t, ok), `{"approved":{"address":"bc1qfleetwallet9x8c7v6b5n4m3l2k1j0h","callback":"https://peer.example/x"}}`)
	deliver(t, v.signed, url(t, ok), fmt.Sprintf(`{"transferId":%q,"status":"APPROVED","statusComment":"ok Cornelius","callback":%q}`, res.TransferID, url(t, ok)))
	_, err = v.client.SubmitTxID(ctx, res.TransferID, "0xfeedbeef")
	require.NoError(t, err)
	e, err = jB.Entry(ctx, res.TransferID)
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, journal.StageTxIDSubmitted, e.Stage)
	assert.Equal(t, travelrule.Approved, e.Decision)
	return []string{ok, res.TransferID}
}

// fleetLost: an initiation whose answer was lost is outcome unknown,
// until B's signed TRANSFER_RESOLUTION names it. It returns its reference.
func fleetLost(t *testing.T, v *vasp, jA *journal.Journal) string {
	ctx := context.Background()
	lost := unique("lost-")
	v.svc.drop.Store(lost)
	_, err := v.initiate(t, lost)
	require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
	e, err := jA.Entry(ctx, lost)
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, journal.InitiationUnknown, e.Initiation)
	assert.Empty(t, e.TransferID)
	deliver(t, v.signed, url(t, lost), fmt.Sprintf(`{"transferId":"tr-lost-7","status":"REJECTED","statusComment":"no","callback":%q}`, url(t, lost)))
	e, err = jA.Entry(ctx, lost)
	require.NoError(t, err)
	assert.Equal(t, journal.InitiationStored, e.Initiation, "a signed callback is evidence the service stored it")
	assert.True(t, e.Reconciled)
	assert.Equal(t, "tr-lost-7", e.TransferID)
	assert.Equal(t, travelrule.Rejected, e.Decision)
	byID, err := jA.Entry(ctx, "tr-lost-7")
	require.NoError(t, err)
	require.NotNil(t, byID)
	assert.Equal(t, e.Key, byID.Key, "the transfer id names the reconciled entry")
	return lost
}

// fleetInbound: B receives an inquiry, A answers it, B receives the
// confirmation at the resolution's callback URL. It returns the inbound
// transfer's id.
func fleetInbound(t *testing.T, v *vasp, jA, jB *journal.Journal) string {
	ctx := context.Background()
	inbound := unique("in-")
	inqBody := fmt.Sprintf(`{"asset":"BTC","amount":"0.25","callback":"https://trp.example/transfers/inquiryResolution?q=%s","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Oyelaran-Baptiste","secondaryIdentifier":"Wilhelmina"}]}}}]}}}`, inbound)
	deliver(t, v.signed, url(t, unique("inq-")), inqBody)
	e, err := jA.Entry(ctx, inbound)
	require.NoError(t, err)
	require.NotNil(t, e, "the inquiry started an inbound entry")
	assert.Equal(t, journal.Inbound, e.Direction)
	assert.Equal(t, journal.StageInitiated, e.Stage)

	confURL := url(t, unique("conf-"))
	_, err = v.client.ResolveInquiry(ctx, inbound, travelrule.Approve(confURL))
	require.NoError(t, err)
	deliver(t, v.signed, confURL, `{"txid":"0xfeedbeef"}`)
	e, err = jB.Entry(ctx, inbound)
	require.NoError(t, err)
	assert.Equal(t, journal.StageConfirmed, e.Stage)
	assert.Equal(t, travelrule.Approved, e.Decision)
	return inbound
}
