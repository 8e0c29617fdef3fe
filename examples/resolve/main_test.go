package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolve runs the example against the embedded sandbox.
func TestResolve(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), func(string) string { return "" }, nil, &out))
	assert.Regexp(t, `^inquiry [0-9a-f-]{36} resolved with approved=true: status true\n$`, out.String())
}
