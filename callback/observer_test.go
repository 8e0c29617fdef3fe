package callback_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// deliveries is an Observer that records the deliveries it sees, and
// fails while fail is set.
type deliveries struct {
	mu   sync.Mutex
	seen []callback.Delivery
	fail error
}

func (d *deliveries) Delivered(_ context.Context, del *callback.Delivery) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen = append(d.seen, *del)
	return d.fail
}

// TestObserverSeesAcceptedDeliveries checks that an observer sees each
// accepted delivery (its duplicates too, with one ID) before the
// function, with the verified reference, and never a refused one.
func TestObserverSeesAcceptedDeliveries(t *testing.T) {
	obs := &deliveries{}
	rc := &recorder{}
	srv, _ := serve(t, rc.fn, callback.WithCapabilityKey(capKey), callback.WithObserver(obs))
	url, err := travelrule.NewCallbackURL(srv.URL+"/cb", "pay-7", capKey)
	require.NoError(t, err)

	assert.Equal(t, 204, post(t, url, statusBody).code)
	assert.Equal(t, 204, post(t, url, statusBody).code, "a duplicate")
	assert.Equal(t, 401, post(t, srv.URL+"/cb?tr_ref=pay-7&tr_tag=forged", statusBody).code)
	assert.Equal(t, 400, post(t, url, `not json`).code)

	require.Len(t, obs.seen, 2, "both deliveries, and neither refused request")
	assert.Equal(t, obs.seen[0].ID, obs.seen[1].ID, "a duplicate has the delivery's ID")
	assert.Len(t, obs.seen[0].ID, 69)
	assert.Equal(t, "pay-7", obs.seen[0].Callback.Ref)
	assert.Equal(t, "tr-1", obs.seen[0].Callback.TransferID)
	assert.Equal(t, 1, rc.count(), "the function ran once")
}

// TestObserverFailureAsksForRedelivery checks that an observer's error
// answers 500 without calling the function, and that the redelivery,
// once the observer recovers, is processed.
func TestObserverFailureAsksForRedelivery(t *testing.T) {
	obs := &deliveries{fail: errors.New("journal store down")}
	rc := &recorder{}
	srv, _ := serve(t, rc.fn, callback.WithObserver(obs))
	assert.Equal(t, 500, post(t, srv.URL+"/cb", statusBody).code)
	assert.Zero(t, rc.count(), "the function is not called")

	obs.mu.Lock()
	obs.fail = nil
	obs.mu.Unlock()
	assert.Equal(t, 204, post(t, srv.URL+"/cb", statusBody).code)
	assert.Equal(t, 1, rc.count())
	assert.Len(t, obs.seen, 2)
}

// TestObserverNil checks that a nil observer is a misconfiguration.
func TestObserverNil(t *testing.T) {
	h := callback.NewHandler((&recorder{}).fn, callback.WithObserver(nil))
	assert.Error(t, h.Err())
}
