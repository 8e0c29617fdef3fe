package main

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestCallbackServerDemo runs the example's demo against the embedded
// sandbox: the callbacks of one transfer arrive, matched to the payment.
func TestCallbackServerDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, "127.0.0.1:0", []byte("0123456789abcdef0123"), travelruletest.DefaultSigningSecret, true, callback.NewMemoryStore(0), &out))
	assert.Contains(t, out.String(), "callback for payment payment-1001: inquiry approved\n")
	assert.Regexp(t, `callback for payment payment-1001: transfer [0-9a-f-]{36} approved\n`, out.String())
	assert.Contains(t, out.String(), "payment payment-1001 resolved: approved")
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
