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

// TestCheckListenAddr: an --addr is HOST:PORT; a bare port or an empty
// host is refused with the form wanted, not guessed.
func TestCheckListenAddr(t *testing.T) {
	tests := []struct {
		addr, want string // want "": accepted
	}{
		{"127.0.0.1:8081", ""},
		{"127.0.0.1:0", ""},
		{"localhost:8081", ""},
		{"0.0.0.0:8081", ""},
		{"[::1]:8081", ""},
		{"vasp.example:65535", ""},
		{"8081", "--addr 8081: want HOST:PORT, e.g. 127.0.0.1:8081 (this machine only)"},
		{":8081", "--addr :8081: name the host: 127.0.0.1:8081 for this machine only, 0.0.0.0:8081 for every interface"},
		{"localhost", "--addr localhost: want HOST:PORT, e.g. 127.0.0.1:9999"},
		{"", "--addr : want HOST:PORT, e.g. 127.0.0.1:9999"},
		{"::1:8081", "--addr ::1:8081: want HOST:PORT, e.g. 127.0.0.1:9999"},
		{"127.0.0.1:http", "--addr 127.0.0.1:http: the port must be a number from 0 to 65535, e.g. 127.0.0.1:9999"},
		{"127.0.0.1:65536", "--addr 127.0.0.1:65536: the port must be a number from 0 to 65535, e.g. 127.0.0.1:9999"},
		{"127.0.0.1:", "--addr 127.0.0.1:: the port must be a number from 0 to 65535, e.g. 127.0.0.1:9999"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := checkListenAddr(tt.addr, "127.0.0.1:9999")
			if tt.want == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.want)
			}
		})
	}
}

// TestListenAddrUsage: listen refuses an --addr that is no HOST:PORT with
// a usage error, before listening.
func TestListenAddrUsage(t *testing.T) {
	for _, addr := range []string{"8081", ":8081", "localhost"} {
		t.Run(addr, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", nil, "listen", "--addr", addr)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, errOut, "travelrule listen: --addr "+addr+": ")
			assert.Contains(t, errOut, "Usage: travelrule listen")
			assert.Empty(t, out)
		})
	}
}
