package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickstart runs the quickstart against the embedded sandbox, as
// "go run ./examples/quickstart" does, so that it cannot rot.
func TestQuickstart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, func(string) string { return "" }, &out))
	s := out.String()
	for _, want := range []string{
		"against the embedded sandbox", `← status "succes"`, "← received", "← approved", "← completed",
		"← inquiry", "→ ResolveInquiry approved=true ← status true", "Done in",
	} {
		assert.Contains(t, s, want)
	}
	assert.Less(t, strings.Index(s, "← received"), strings.Index(s, "← completed"), "callbacks in order")
	for _, pii := range []string{"Zoë", "Ødegård", "1984-02-29", "Straße", "123456789", "0x742d35", "美咲", "山田", "東京"} {
		assert.NotContains(t, s, pii, "no personal data in the transcript")
	}
}

func TestQuickstartNeedsCredentialsForARealService(t *testing.T) {
	env := map[string]string{"TRAVELRULE_BASE_URL": "https://travelrule.example/api"}
	err := run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TRAVELRULE_TOKEN")
}
