package main

import (
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/internal/livedocs"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestCallbackServerDemo runs the example's demo against the embedded
// sandbox: the first decision of the transfer is acted on, matched to the
// payment.
func TestCallbackServerDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out lockedBuffer
	require.NoError(t, run(ctx, "127.0.0.1:0", []byte("0123456789abcdef0123"), travelruletest.DefaultSigningSecret, true, callback.NewMemoryStore(0), &out))
	assert.Contains(t, out.String(), "callback for payment payment-1001: inquiry_resolution, decision \"approved\"\n")
	assert.Contains(t, out.String(), "payment payment-1001 approved: broadcast queued\n")
	assert.Contains(t, out.String(), "payment payment-1001 resolved: approved")
}

// TestCallbackServerActsOnTheFirstDecision: the example's handler, sent a
// transfer's callbacks by the sandbox or by a server written from the live
// docs alone (a rejection is an INQUIRY_RESOLUTION and nothing more), acts
// on the first decision that arrives, whichever message carries it, and
// once: an approval's two messages broadcast once.
func TestCallbackServerActsOnTheFirstDecision(t *testing.T) {
	for _, tt := range []struct {
		name    string
		live    bool
		approve bool
		acted   string
	}{
		{"sandbox, approved", false, true, "payment pay-7 approved: broadcast queued\n"},
		{"sandbox, rejected", false, false, "payment pay-7 rejected: cancelled\n"},
		{"live docs, approved", true, true, "payment pay-7 approved: broadcast queued\n"},
		{"live docs, rejected", true, false, "payment pay-7 rejected: cancelled\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			key := []byte("0123456789abcdef0123")
			baseURL, apiKey, secret := "", travelruletest.DefaultAPIKey, travelruletest.DefaultSigningSecret
			var live *livedocs.Server
			var sandbox *travelruletest.Server
			if tt.live {
				live = livedocs.New(tt.approve)
				defer live.Close()
				baseURL, apiKey, secret = live.URL, livedocs.APIKey, livedocs.SigningSecret
			} else {
				sandbox = travelruletest.NewServer(travelruletest.WithCallbackTimeScale(10*time.Millisecond),
					travelruletest.WithApproval(func(travelrule.TransferRequest) bool { return tt.approve }))
				defer sandbox.Close()
				baseURL = sandbox.URL
			}
			var out lockedBuffer
			h, err := newHandler(key, secret, callback.NewMemoryStore(0), &out, make(chan travelrule.Decision, 1))
			require.NoError(t, err)
			receiver := httptest.NewServer(h)
			client, err := travelrule.NewClient(baseURL, travelrule.WithAPIKey(apiKey))
			require.NoError(t, err)
			cbURL, err := travelrule.NewCallbackURL(receiver.URL+"/travelrule/callback", "pay-7", key)
			require.NoError(t, err)
			_, err = client.InitiateTransfer(ctx, &travelrule.TransferRequest{
				Asset: "BTC", Amount: "0.1", Callback: cbURL, TravelAddress: livedocs.TravelAddress,
				Originator:  travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
				Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"},
			})
			require.NoError(t, err)
			messages := 2 // an approval's
			if !tt.approve {
				messages = 1 // a rejection's INQUIRY_RESOLUTION: all the live docs promise
			}
			if tt.live {
				assert.Len(t, live.Wait(), messages)
			} else {
				_, err := sandbox.WaitCallbacks(ctx, messages)
				require.NoError(t, err)
				sandbox.Close() // a rejection's TRANSFER_RESOLUTION, if it sends one, is over
			}
			receiver.Close()
			s := out.String()
			assert.Equal(t, 1, strings.Count(s, tt.acted), s)
			assert.Equal(t, 1, strings.Count(s, ": broadcast queued")+strings.Count(s, ": cancelled"), "acted on once: %s", s)
			if tt.approve {
				assert.Equal(t, 1, strings.Count(s, "payment pay-7: decided already, nothing to do\n"), "the approval's other message: %s", s)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer that the handler's goroutines may write
// to at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestCallbackServerNeedsTheSigningSecret: callbacks are verified, never
// taken on trust.
func TestCallbackServerNeedsTheSigningSecret(t *testing.T) {
	err := run(context.Background(), "127.0.0.1:0", []byte("0123456789abcdef0123"), "", false, callback.NewMemoryStore(0), &bytes.Buffer{})
	require.ErrorContains(t, err, "TRAVELRULE_SIGNING_SECRET")
}

// TestSharedStore checks how the example picks its store from the
// environment; the stores themselves are tested against real servers in
// their packages.
func TestSharedStore(t *testing.T) {
	const password = "pw-0f9e8d7c"
	closed := closedPort(t)
	tests := []struct {
		name      string
		env       map[string]string
		wantWhere string
		wantErr   string
	}{
		{"neither", nil, "this process only (set TRAVELRULE_REDIS_URL or TRAVELRULE_DATABASE_URL to share it across replicas)", ""},
		{"both", map[string]string{envRedisURL: "redis://localhost", envDatabaseURL: "postgres://localhost/db"}, "", "are both set: set one"},
		{"redis URL that does not parse", map[string]string{envRedisURL: "redis://u:" + password + "@host:bad/0"}, "", "TRAVELRULE_REDIS_URL is not a redis:// or rediss:// URL"},
		{"redis that does not answer", map[string]string{envRedisURL: "redis://u:" + password + "@" + closed + "/0"}, "", "TRAVELRULE_REDIS_URL: cannot reach Redis at " + closed},
		{"database URL that does not parse", map[string]string{envDatabaseURL: "postgres://u:" + password + "@host:bad/db"}, "", "TRAVELRULE_DATABASE_URL: cannot parse"},
		{"database that does not answer", map[string]string{envDatabaseURL: "postgres://u:" + password + "@" + closed + "/db?connect_timeout=5"}, "", "TRAVELRULE_DATABASE_URL: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			store, where, closeStore, err := sharedStore(ctx, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), password)
				assert.Nil(t, store)
				return
			}
			require.NoError(t, err)
			defer closeStore()
			assert.IsType(t, &callback.MemoryStore{}, store, "the handler's default store")
			assert.Equal(t, tt.wantWhere, where)
		})
	}
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
