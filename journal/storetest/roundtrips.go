package storetest

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/journal"
)

// counting is a store that counts the calls made of the store it wraps:
// each is one round trip to its backend, by the Store contract.
type counting struct {
	journal.Store
	n atomic.Int64
}

func (c *counting) Write(ctx context.Context, s journal.Step) (journal.Written, error) {
	c.n.Add(1)
	return c.Store.Write(ctx, s)
}

func (c *counting) Records(ctx context.Context, key string) ([][]byte, error) {
	c.n.Add(1)
	return c.Store.Records(ctx, key)
}

func (c *counting) Lookup(ctx context.Context, name string) (string, error) {
	c.n.Add(1)
	return c.Store.Lookup(ctx, name)
}

func (c *counting) Entries(ctx context.Context, q journal.Query) iter.Seq2[journal.Stored, error] {
	c.n.Add(1)
	return c.Store.Entries(ctx, q)
}

func (c *counting) Close(ctx context.Context, key string, n int) error {
	c.n.Add(1)
	return c.Store.Close(ctx, key, n)
}

// TestRoundTrips checks that a journaled initiation costs two round trips
// to the store (the write-ahead record, which checks the reference, and
// the outcome), whether it has a capability callback URL or a plain one,
// and whether its outcome is known or not; and three when a callback
// naming its transfer id came before its outcome (the join).
func TestRoundTrips(t *testing.T, open Open) {
	store := &counting{Store: open(t, Config{Retention: long})}
	j, err := journal.New(store)
	require.NoError(t, err)
	svc := newLiveService(t)
	client, err := travelrule.NewClient(svc.URL, travelrule.WithTokenSource(travelrule.StaticToken("fleet-bearer-token-1")),
		travelrule.WithObserver(j), travelrule.WithRetryMax(0))
	require.NoError(t, err)
	lost := unique("lost-")
	svc.drop.Store(lost)
	for _, ref := range []string{unique("ok-"), "", lost} {
		req := transferTo(t, ref)
		before := store.n.Load()
		_, err := client.InitiateTransfer(context.Background(), &req)
		if ref == lost {
			require.ErrorIs(t, err, travelrule.ErrOutcomeUnknown)
		} else {
			require.NoError(t, err)
		}
		assert.LessOrEqual(t, store.n.Load()-before, int64(2), "round trips of an initiation with reference %q", ref)
	}
	// A callback naming the next transfer id before its initiation's
	// answer: the outcome's Step finds it, and one more joins it.
	early, err := travelrule.ParseCallback([]byte(fmt.Sprintf(`{"transferId":"tr-%d","approved":true}`, svc.n.Load()+1)))
	require.NoError(t, err)
	require.NoError(t, j.Delivered(context.Background(), &callback.Delivery{Authenticated: true, ID: unique("d-"), Callback: early}))
	ref := unique("early-")
	req := transferTo(t, ref)
	before := store.n.Load()
	_, err = client.InitiateTransfer(context.Background(), &req)
	require.NoError(t, err)
	assert.Equal(t, int64(3), store.n.Load()-before, "round trips of an initiation an early callback preceded")
	e, err := j.Entry(context.Background(), ref)
	require.NoError(t, err)
	assert.Equal(t, travelrule.Approved, e.Decision, "the early callback joined")
	assert.Zero(t, j.Lost())
}

// transferTo is a transfer whose capability callback URL has the
// reference ref ("" for a plain callback URL).
func transferTo(t *testing.T, ref string) travelrule.TransferRequest {
	req := travelrule.TransferRequest{
		TravelAddress: "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN",
		Asset:         "BTC", Amount: "0.25",
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Wilhelmina", LastName: "Oyelaran-Baptiste", DateOfBirth: "1984-03-17"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Cornelius", LastName: "Vandermeulen", DateOfBirth: "1979-11-02"},
		Callback:    "https://vasp.example/cb",
	}
	if ref != "" {
		u, err := travelrule.NewCallbackURL("https://vasp.example/cb", ref, []byte(capKey))
		require.NoError(t, err)
		req.Callback = u
	}
	return req
}
