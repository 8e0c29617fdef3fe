package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInitiateStdin: without -f, initiate reads standard input unless it is
// a terminal; -f - always reads it.
func TestInitiateStdin(t *testing.T) {
	env, srv := sandboxEnv(t)
	tty, err := os.Open(os.DevNull) // a character device, as a terminal is
	require.NoError(t, err)
	defer tty.Close()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	go func() {
		_, _ = io.WriteString(pw, validTransfer)
		pw.Close()
	}()
	tests := []struct {
		name  string
		stdin io.Reader
		args  []string
		code  int
		want  string
		sent  int
	}{
		{"terminal", tty, nil, exitUsage, "initiate: name the transfer with -f FILE, or -f - to read standard input", 0},
		{"terminal with -f -", tty, []string{"-f", "-"}, exitFailed, "not a transfer request", 0},
		{"pipe", pr, nil, exitOK, "", 1},
		{"reader", strings.NewReader(validTransfer), nil, exitOK, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Transfers())
			code, _, errOut := runCLIWith(t, context.Background(), tt.stdin, env, append([]string{"initiate"}, tt.args...)...)
			assert.Equal(t, tt.code, code, errOut)
			assert.Contains(t, errOut, tt.want)
			assert.Len(t, srv.Transfers(), before+tt.sent)
		})
	}
}
