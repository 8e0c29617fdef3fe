package main

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBusyAddress: a command that cannot listen because the address is in
// use says so and names the flag that chooses another.
func TestBusyAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	addr := busy.Addr().String()
	for _, cmd := range []string{"listen", "sandbox"} {
		t.Run(cmd, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", nil, cmd, "--addr", addr)
			assert.Equal(t, exitFailed, code)
			assert.Contains(t, errOut, cmd+": "+addr+" is already in use (another sandbox or listen?): choose another with --addr HOST:PORT")
			assert.Empty(t, out)
		})
	}
}
