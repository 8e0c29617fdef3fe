package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolve runs the example against the embedded sandbox: the inquiry
// arrives verified at the path the travel address encodes (the sandbox's
// C5), its originator is read
// from the IVMS101 payload, the resolution is accepted and the
// confirmation follows.
func TestResolve(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, func(string) string { return "" }, nil, &out))
	assert.Regexp(t, `^inquiry [0-9a-f-]{36}: 2 ETH from a natural person in US, 0 IVMS101 field\(s\) not in the flat party
resolved with approved=true: status true
transaction confirmed for payment-in-7
$`, out.String())
	for _, pii := range []string{"Grace", "Hopper", "1906", "0x742d"} {
		assert.NotContains(t, out.String(), pii)
	}
}

func TestResolveNeedsATransferID(t *testing.T) {
	err := run(context.Background(), func(k string) string {
		return map[string]string{"TRAVELRULE_BASE_URL": "https://trp.example"}[k]
	}, nil, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "transfer id")
}
