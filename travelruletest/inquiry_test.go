package travelruletest_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/ivms101"
	"github.com/vaspkit/travelrule/travelruletest"
)

func TestStartInquiry(t *testing.T) {
	secret := []byte("inquiry-signing-secret")
	rc := newReceiver(t, nil)
	srv := newServer(t, travelruletest.WithCallbackSecret(secret))
	req := validRequest("https://counterparty.example/cb")
	req.TravelAddress = travelruletest.KnownTravelAddress

	id, err := srv.StartInquiry(context.Background(), rc.URL+"/inbound?x=1", req)
	require.NoError(t, err)
	assert.Regexp(t, uuidV4, id)

	hits := rc.Hits()
	require.Len(t, hits, 1)
	assert.Equal(t, "/inbound", hits[0].Path)
	assert.Equal(t, "x=1", hits[0].Query)
	assert.Equal(t, dataIntegrity(secret, hits[0].Body), hits[0].Header.Get(callback.HeaderDataIntegrity))
	assert.Empty(t, hits[0].Header.Get(callback.HeaderID))

	// The live INQUIRY: {asset, amount, callback, IVMS101}, the id in the
	// callback's q.
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(hits[0].Body, &m))
	assert.ElementsMatch(t, []string{"asset", "amount", "callback", "IVMS101"}, slices.Collect(maps.Keys(m)))
	body := hits[0].callback(t)
	assert.Equal(t, "BTC", body.Asset)
	assert.Equal(t, "0.25", body.Amount)
	assert.Equal(t, srv.URL+"/transfers/inquiryResolution?q="+id, body.Callback)
	assert.Equal(t, id, q(t, body.Callback))
	assertIVMS101(t, body.IVMS101, req)

	cb, err := travelrule.ParseCallback(hits[0].Body)
	require.NoError(t, err)
	assert.Equal(t, travelrule.KindInquiry, cb.Kind)
	assert.Equal(t, id, cb.TransferID, "read from the callback's q")
	require.NotNil(t, cb.Inquiry)
	assert.Equal(t, "BTC", cb.Inquiry.Asset)
	assert.Equal(t, "Lovelace", cb.Inquiry.Originator.LastName)
	assert.Equal(t, "Turing", cb.Inquiry.Beneficiary.LastName)
	assert.NotNil(t, cb.IVMS101)

	tr, ok := srv.Transfer(id)
	require.True(t, ok)
	assert.True(t, tr.Inquiry)
	assert.Equal(t, travelruletest.StateInquiry, tr.State)
	assert.Equal(t, *req, tr.Request)

	ds := srv.Callbacks()
	require.Len(t, ds, 1)
	assert.Equal(t, travelruletest.KindInquiry, ds[0].Kind)
	assert.Equal(t, travelruletest.StateInquiry, ds[0].Status)
	assert.True(t, ds[0].Delivered)
	assert.Equal(t, 1, srv.Stats().Inquiries)
}

// assertIVMS101 checks that raw, the IVMS101 member of an INQUIRY, is a
// valid payload of req's parties (validRequest's values).
func assertIVMS101(t *testing.T, raw json.RawMessage, req *travelrule.TransferRequest) {
	t.Helper()
	p, err := ivms101.Parse(raw)
	require.NoError(t, err, "the IVMS101 member decodes")
	require.NoError(t, p.Validate(), "the IVMS101 member is valid IVMS101")
	require.NotNil(t, p.Originator)
	require.Len(t, p.Originator.Persons, 1)
	np := p.Originator.Persons[0].NaturalPerson
	require.NotNil(t, np)
	require.NotNil(t, np.Name)
	require.Len(t, np.Name.NameIdentifiers, 1)
	assert.Equal(t, req.Originator.LastName, np.Name.NameIdentifiers[0].PrimaryIdentifier)
	assert.Equal(t, req.Originator.FirstName, np.Name.NameIdentifiers[0].SecondaryIdentifier)
	require.NotNil(t, p.Beneficiary)
	assert.Equal(t, []string{req.Beneficiary.WalletAddress}, p.Beneficiary.AccountNumbers)
	o, b, _ := travelrule.PartiesFromIVMS101(p)
	assert.Empty(t, o.DateOfBirth, "no date of birth without a place of birth")
	assert.Equal(t, req.Originator.TownName, o.TownName)
	assert.Equal(t, req.Beneficiary.NationalID, b.NationalID)
}

func TestResolveInquiry(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()

	approvedID, err := srv.StartInquiry(ctx, rc.URL, validRequest("https://counterparty.example/cb"))
	require.NoError(t, err)
	rejectedID, err := srv.StartInquiry(ctx, rc.URL, validRequest("https://counterparty.example/cb"))
	require.NoError(t, err)

	steps := []struct {
		name     string
		id       string
		approved string
		callback string
		status   bool
		state    travelruletest.State
	}{
		{"approve with callback", approvedID, "true", rc.URL + "/resolved", true, travelruletest.StateApproved},
		{"approve again", approvedID, "true", rc.URL + "/resolved", true, travelruletest.StateApproved},
		{"reject after approval", approvedID, "false", "", false, travelruletest.StateApproved},
		{"reject with callback", rejectedID, "false", rc.URL + "/resolved", true, travelruletest.StateRejected},
		{"approve after rejection", rejectedID, "true", rc.URL + "/resolved", false, travelruletest.StateRejected},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			res, err := c.ResolveInquiry(ctx, st.id, &travelrule.InquiryResolution{Approved: st.approved, Callback: st.callback})
			if st.status {
				require.NoError(t, err)
				assert.JSONEq(t, `{"status":true}`, string(res.Raw))
			} else {
				// The other decision is not applied: an error the caller
				// cannot miss (A3).
				require.ErrorIs(t, err, travelrule.ErrNotApplied)
				var apiErr *travelrule.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.JSONEq(t, `{"status":false}`, string(apiErr.Body))
			}
			tr, _ := srv.Transfer(st.id)
			assert.Equal(t, st.state, tr.State)
		})
	}
	// Two inquiries, then one TRANSFER_CONFIRMATION: only the first
	// resolution of an inquiry, an approval with a callback URL, sends
	// one.
	waitCallbacks(t, srv, 3)
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	ds, err := srv.WaitCallbacks(wctx, 4)
	require.ErrorIs(t, err, context.DeadlineExceeded, "no fourth callback")
	require.Len(t, ds, 3)
	assert.Equal(t, travelruletest.KindTransferConfirmation, ds[2].Kind)
	assert.Equal(t, travelruletest.StateApproved, ds[2].Status)
	assert.Equal(t, approvedID, ds[2].TransferID)
	assert.Equal(t, rc.URL+"/resolved", ds[2].URL)
	assert.JSONEq(t, `{"txid":"0xabc123"}`, string(ds[2].Body), "the inquiry's own txId")
	assert.Equal(t, 2, srv.Stats().Resolutions)
}

// TestInquiryConfirmation: once the integrator approves an inquiry the
// sandbox started with a callback URL, the sandbox, as the originator,
// confirms the transaction there: the request's txId, or a made-up hash.
func TestInquiryConfirmation(t *testing.T) {
	verifier, err := callback.NewDataIntegrityVerifier(travelruletest.DefaultSigningSecret)
	require.NoError(t, err)
	got := make(chan *travelrule.Callback, 4)
	h := callback.NewHandler(func(_ context.Context, cb *travelrule.Callback) error {
		got <- cb
		return nil
	}, callback.WithVerifier(verifier))
	require.NoError(t, h.Err())
	rc := httptest.NewServer(h)
	t.Cleanup(rc.Close)
	for _, tt := range []struct {
		name, txID string
	}{
		{"the request's txId", "0xabc123"},
		{"a made-up hash", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			req := validRequest("https://counterparty.example/cb")
			req.TxID = tt.txID
			id, err := srv.StartInquiry(context.Background(), rc.URL+"/inbound", req)
			require.NoError(t, err)
			inquiry := <-got
			assert.Equal(t, travelrule.KindInquiry, inquiry.Kind)
			assert.Equal(t, id, inquiry.TransferID)

			_, err = newClient(t, srv).ResolveInquiry(context.Background(), id,
				&travelrule.InquiryResolution{Approved: "true", Callback: rc.URL + "/confirm"})
			require.NoError(t, err)
			confirmation := <-got
			assert.Equal(t, travelrule.KindTransferConfirmation, confirmation.Kind)
			tr, _ := srv.Transfer(id)
			if tt.txID != "" {
				assert.Equal(t, tt.txID, confirmation.TxID)
			} else {
				assert.Regexp(t, `^0x[0-9a-f]{64}$`, confirmation.TxID)
			}
			assert.Equal(t, confirmation.TxID, tr.TxID, "the transfer records the hash confirmed")
			ds := waitCallbacks(t, srv, 2)
			assert.Equal(t, "INQUIRY,TRANSFER_CONFIRMATION", kinds(ds))
			assert.Equal(t, rc.URL+"/confirm", ds[1].URL)
		})
	}
}

func TestResolveFromInsideTheInquiryHandler(t *testing.T) {
	// The transfer exists before the inquiry is sent: a receiver may
	// resolve it while handling the inquiry.
	srv := newServer(t)
	c := newClient(t, srv)
	var mu sync.Mutex
	var status bool
	var rerr error
	rc := newReceiver(t, func(_ *http.Request, body []byte, _ int) int {
		cb, err := travelrule.ParseCallback(body)
		if err != nil || cb.Kind != travelrule.KindInquiry {
			return http.StatusNoContent
		}
		res, err := c.ResolveInquiry(context.Background(), cb.TransferID, &travelrule.InquiryResolution{Approved: "true"})
		mu.Lock()
		defer mu.Unlock()
		rerr = err
		if err == nil {
			status = res.Status
		}
		return http.StatusNoContent
	})
	id, err := srv.StartInquiry(context.Background(), rc.URL, validRequest("https://counterparty.example/cb"))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.NoError(t, rerr)
	assert.True(t, status)
	tr, _ := srv.Transfer(id)
	assert.Equal(t, travelruletest.StateApproved, tr.State)
}

func TestStartInquiryFailures(t *testing.T) {
	srv := newServer(t, travelruletest.WithCallbackRetry(2, time.Millisecond, time.Millisecond))
	ctx := context.Background()

	_, err := srv.StartInquiry(ctx, "http://127.0.0.1/cb", nil)
	assert.Error(t, err)
	_, err = srv.StartInquiry(ctx, "/relative", validRequest("https://x.example/cb"))
	assert.Error(t, err)

	rc := newReceiver(t, func(*http.Request, []byte, int) int { return http.StatusInternalServerError })
	id, err := srv.StartInquiry(ctx, rc.URL, validRequest("https://x.example/cb"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 attempt(s)")
	assert.NotContains(t, err.Error(), "Lovelace")
	tr, ok := srv.Transfer(id)
	require.True(t, ok, "the transfer stays recorded")
	assert.Equal(t, travelruletest.StateInquiry, tr.State)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	id, err = srv.StartInquiry(cctx, rc.URL, validRequest("https://x.example/cb"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "0 attempt(s)", "no attempt once ctx has ended")
	ds := srv.Callbacks()
	require.NotEmpty(t, ds)
	assert.Equal(t, id, ds[len(ds)-1].TransferID, "recorded all the same")
	assert.Empty(t, ds[len(ds)-1].Attempts)

	srv.Close()
	_, err = srv.StartInquiry(ctx, rc.URL, validRequest("https://x.example/cb"))
	assert.Error(t, err)
}

// TestResolutionCallbackWaitsForTheInquiry: a receiver that resolves while
// handling the inquiry, then fails that delivery, gets the inquiry again
// before the resolution's TRANSFER_CONFIRMATION, which never overtakes it.
func TestResolutionCallbackWaitsForTheInquiry(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, srv)
	var once sync.Once
	var rc *receiver
	rc = newReceiver(t, func(_ *http.Request, body []byte, prior int) int {
		cb, err := travelrule.ParseCallback(body)
		if err != nil || cb.Kind != travelrule.KindInquiry {
			return http.StatusNoContent
		}
		once.Do(func() {
			_, err := c.ResolveInquiry(context.Background(), cb.TransferID, &travelrule.InquiryResolution{Approved: "true", Callback: rc.URL + "/confirm"})
			assert.NoError(t, err)
		})
		if prior == 0 {
			return http.StatusInternalServerError // the first delivery fails: the inquiry comes again
		}
		return http.StatusNoContent
	})
	req := validRequest(rc.URL)
	_, err := srv.StartInquiry(context.Background(), rc.URL, req)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = srv.WaitCallbacks(ctx, 2)
	require.NoError(t, err)

	var got []travelrule.CallbackKind
	for _, h := range rc.Hits() {
		cb, err := travelrule.ParseCallback(h.Body)
		require.NoError(t, err)
		got = append(got, cb.Kind)
	}
	assert.Equal(t, []travelrule.CallbackKind{travelrule.KindInquiry, travelrule.KindInquiry, travelrule.KindTransferConfirmation}, got)
	assert.Equal(t, "INQUIRY,TRANSFER_CONFIRMATION", kinds(srv.Callbacks()))
}
