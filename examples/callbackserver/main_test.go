package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCallbackServerDemo runs the example's demo against the embedded
// sandbox: the callbacks of one transfer arrive, matched to the payment.
func TestCallbackServerDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, "127.0.0.1:0", []byte("0123456789abcdef0123"), true, &out))
	assert.Contains(t, out.String(), "callback for payment payment-1001: status received")
	assert.Contains(t, out.String(), "payment payment-1001 completed")
}
