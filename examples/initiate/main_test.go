package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInitiate runs the example against the embedded sandbox.
func TestInitiate(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), func(string) string { return "" }, &out))
	assert.Regexp(t, `^status "true", transfer "[0-9a-f-]{36}", 1 attempt\(s\)\n$`, out.String())
}
