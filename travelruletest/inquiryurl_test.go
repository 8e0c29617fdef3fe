package travelruletest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// vasp is one side of a transfer, as an integrator runs it: the SDK's
// callback handler, verifying x-data-integrity under the sandbox's
// default secret, mounted in a mux at a path prefix, passing on each
// callback it accepts with the path it came to.
type vasp struct {
	*httptest.Server
	got chan received
}

// pathKey is the context key of the path a callback came to.
type pathKey struct{}

type received struct {
	path string
	cb   *travelrule.Callback
}

func newVASP(t *testing.T, mount string) *vasp {
	t.Helper()
	v := &vasp{got: make(chan received, 16)}
	verifier, err := callback.NewDataIntegrityVerifier(travelruletest.DefaultSigningSecret)
	require.NoError(t, err)
	h := callback.NewHandler(func(ctx context.Context, cb *travelrule.Callback) error {
		v.got <- received{ctx.Value(pathKey{}).(string), cb}
		return nil
	}, callback.WithVerifier(verifier))
	require.NoError(t, h.Err())
	mux := http.NewServeMux()
	mux.Handle(mount, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pathKey{}, r.URL.Path)))
	}))
	v.Server = httptest.NewServer(mux)
	t.Cleanup(v.Close)
	return v
}

// next returns the next callback v accepted; the bound only ends a test
// whose callback never comes.
func (v *vasp) next(t *testing.T) received {
	t.Helper()
	select {
	case r := <-v.got:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no callback came")
		return received{}
	}
}

// TestInquiryToTheIntegrator: with WithInquiryURL, an initiation to a
// travel address the sandbox generated goes, as an INQUIRY, to the
// integrator's inbound path; the integrator's resolution sends the
// originator its INQUIRY_RESOLUTION (and, for an approval, or a rejection
// WithRejectionResolution, a TRANSFER_RESOLUTION), and the txId a
// TRANSFER_CONFIRMATION to the callback of an approval.
func TestInquiryToTheIntegrator(t *testing.T) {
	const wallet = "0x742d35cc6634c0532925a3b844bc454e4438f44e"
	const hash = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"
	for _, tt := range []struct {
		name                string
		approve             bool
		txIDFirst           bool // the txId is submitted before the resolution
		rejectionResolution bool
		confirmation        bool // the beneficiary gets a TRANSFER_CONFIRMATION
		state               travelruletest.State
	}{
		{"approved", true, false, false, true, travelruletest.StateCompleted},
		{"approved after the txId", true, true, false, true, travelruletest.StateCompleted},
		{"rejected", false, false, false, false, travelruletest.StateRejected},
		{"rejected, WithRejectionResolution", false, false, true, false, travelruletest.StateRejected},
	} {
		t.Run(tt.name, func(t *testing.T) {
			beneficiary := newVASP(t, "/vasp/")
			originator := newVASP(t, "/originator/")
			opts := []travelruletest.Option{travelruletest.WithInquiryURL(beneficiary.URL + "/vasp/")}
			if tt.rejectionResolution {
				opts = append(opts, travelruletest.WithRejectionResolution())
			}
			srv := newServer(t, opts...)
			final := tt.approve || tt.rejectionResolution // a TRANSFER_RESOLUTION follows
			c := newClient(t, srv)
			ctx := context.Background()

			ta, err := c.GenerateTravelAddress(ctx, &travelrule.TravelAddressRequest{
				PersonType: "natural", FirstName: "Alan", LastName: "Turing", WalletAddress: wallet})
			require.NoError(t, err)
			req := validRequest(originator.URL + "/originator/cb")
			req.TravelAddress, req.Beneficiary.WalletAddress, req.TxID = ta.TravelAddress, "", ""
			res, err := c.InitiateTransfer(ctx, req)
			require.NoError(t, err)
			id := res.TransferID
			tr, _ := srv.Transfer(id)
			require.NotEmpty(t, tr.BeneficiaryID)
			assert.False(t, tr.Inquiry, "initiated by the integrator")

			// The INQUIRY, at the path the travel address names.
			in := beneficiary.next(t)
			assert.Equal(t, "/vasp/transfers/inquiry/"+tr.BeneficiaryID, in.path)
			assert.Equal(t, travelrule.KindInquiry, in.cb.Kind)
			assert.Equal(t, id, in.cb.TransferID)
			require.NotNil(t, in.cb.Inquiry)
			assert.Equal(t, srv.URL+"/transfers/inquiryResolution?q="+id, in.cb.Inquiry.Callback)
			assert.Equal(t, "BTC", in.cb.Inquiry.Asset)
			assert.Equal(t, "0.25", in.cb.Inquiry.Amount)
			require.NotNil(t, in.cb.IVMS101, "the parties as IVMS101")
			require.NoError(t, in.cb.IVMS101.Validate(), "valid IVMS101")
			o, _, _ := travelrule.PartiesFromIVMS101(in.cb.IVMS101)
			assert.Equal(t, "Lovelace", o.LastName)
			assert.Empty(t, o.DateOfBirth, "no date of birth without a place of birth")
			tr, _ = srv.Transfer(id)
			assert.Equal(t, travelruletest.StateInquiry, tr.State, "waits for the integrator")

			if tt.txIDFirst {
				_, err := c.SubmitTxID(ctx, id, hash)
				require.NoError(t, err)
			}
			approved := map[bool]string{true: "true", false: "false"}[tt.approve]
			r, err := c.ResolveInquiry(ctx, in.cb.TransferID, &travelrule.InquiryResolution{Approved: approved, Callback: beneficiary.URL + "/vasp/confirm"})
			require.NoError(t, err)
			assert.True(t, r.Status)

			// The originator hears the decision.
			ir := originator.next(t)
			assert.Equal(t, "/originator/cb", ir.path)
			assert.Equal(t, travelrule.KindInquiryResolution, ir.cb.Kind)
			decision, status := travelrule.Rejected, "REJECTED"
			if tt.approve {
				decision, status = travelrule.Approved, "APPROVED"
				assert.Equal(t, wallet, ir.cb.Address, "the beneficiary's wallet, from its travel address")
				assert.Equal(t, srv.URL+"/transfers/txId?q="+id, ir.cb.ApprovedCallback)
			}
			assert.Equal(t, decision, ir.cb.Decision())
			if final {
				tres := originator.next(t)
				assert.Equal(t, "/originator/cb", tres.path)
				assert.Equal(t, id, tres.cb.TransferID)
				assert.Equal(t, travelrule.KindTransferResolution, tres.cb.Kind)
				assert.Equal(t, decision, tres.cb.Decision())
				assert.Equal(t, status, tres.cb.Status)
				assert.NotEmpty(t, tres.cb.StatusComment)
			}

			if !tt.txIDFirst {
				_, err := c.SubmitTxID(ctx, id, hash)
				if tt.approve {
					require.NoError(t, err)
				} else {
					var apiErr *travelrule.APIError
					require.ErrorAs(t, err, &apiErr, "a rejected transfer is not to be broadcast")
					assert.Equal(t, 400, apiErr.StatusCode)
					assert.ErrorIs(t, err, travelrule.CodeValidationError)
				}
			}
			want := "INQUIRY,INQUIRY_RESOLUTION"
			if final {
				want += ",TRANSFER_RESOLUTION"
			}
			if tt.confirmation {
				conf := beneficiary.next(t)
				assert.Equal(t, "/vasp/confirm", conf.path)
				assert.Equal(t, travelrule.KindTransferConfirmation, conf.cb.Kind)
				assert.Equal(t, hash, conf.cb.TxID)
				want += ",TRANSFER_CONFIRMATION"
			}
			ds := waitCallbacks(t, srv, strings.Count(want, ",")+1)
			assert.Equal(t, want, kinds(ds), "in order, in the transfer's lane")
			assert.Equal(t, beneficiary.URL+"/vasp/transfers/inquiry/"+tr.BeneficiaryID, ds[0].URL)
			tr, _ = srv.Transfer(id)
			assert.Equal(t, tt.state, tr.State)
			if tt.approve {
				assert.True(t, tr.Confirmed)
				assert.Equal(t, hash, tr.TxID)
			} else {
				assert.False(t, tr.Confirmed)
				assert.Empty(t, tr.TxID)
			}
			assert.Equal(t, 1, srv.Stats().Resolutions)
		})
	}
}

// TestInquiryURLOnlyForTheSandboxsAddresses: a transfer to another travel
// address, or to none, is decided by the sandbox even with WithInquiryURL;
// the INQUIRY to the integrator goes even WithoutCallbacks.
func TestInquiryURLOnlyForTheSandboxsAddresses(t *testing.T) {
	beneficiary := newVASP(t, "/")
	rc := newReceiver(t, nil)
	srv := newServer(t, travelruletest.WithInquiryURL(beneficiary.URL))
	c := newClient(t, srv)
	for _, ta := range []string{travelruletest.KnownTravelAddress, ""} {
		req := validRequest(rc.URL)
		req.TravelAddress = ta
		_, err := c.InitiateTransfer(context.Background(), req)
		require.NoError(t, err)
	}
	ds := waitCallbacks(t, srv, 4)
	for _, g := range byTransfer(ds) {
		assert.Equal(t, resolutionKinds, kinds(g))
	}

	quiet := newServer(t, travelruletest.WithInquiryURL(beneficiary.URL), travelruletest.WithoutCallbacks())
	c = newClient(t, quiet)
	ta, err := c.GenerateTravelAddress(context.Background(), &travelrule.TravelAddressRequest{
		PersonType: "natural", FirstName: "Alan", LastName: "Turing", WalletAddress: "0x1"})
	require.NoError(t, err)
	req := validRequest("http://127.0.0.1:1/cb")
	req.TravelAddress = ta.TravelAddress
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	in := beneficiary.next(t)
	assert.Equal(t, travelrule.KindInquiry, in.cb.Kind)
	assert.Equal(t, res.TransferID, in.cb.TransferID)
	_, err = c.ResolveInquiry(context.Background(), res.TransferID, &travelrule.InquiryResolution{Approved: "true"})
	require.NoError(t, err)
	ds = waitCallbacks(t, quiet, 3)
	assert.True(t, ds[0].Delivered, "the INQUIRY was sent")
	assert.False(t, ds[1].Delivered, "the originator's callbacks were not")
	assert.Empty(t, ds[1].Attempts)
	tr, _ := quiet.Transfer(res.TransferID)
	assert.Equal(t, travelruletest.StateCompleted, tr.State)

	for _, bad := range []string{"", "/relative", "ftp://vasp.example", "https://vasp.example/?x=1", "https://vasp.example/#f"} {
		assert.Panics(t, func() { travelruletest.NewServer(travelruletest.WithInquiryURL(bad)) }, bad)
	}
}
