package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/travelruletest"
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
		"against the embedded sandbox", `← status "succes" (sic: the documented spelling), transferId`, "← received", "← approved", "← completed",
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

// TestQuickstartListenAddr: against a real service the callback listener
// listens on TRAVELRULE_LISTEN_ADDR, by default 127.0.0.1:8081, where it
// does not collide with "travelrule sandbox" on 127.0.0.1:8080.
func TestQuickstartListenAddr(t *testing.T) {
	sandbox := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	defer sandbox.Close()
	tok, err := sandbox.TokenSource().Token()
	require.NoError(t, err)
	tests := []struct {
		listenAddr string
		want       string
	}{
		{"", "127.0.0.1:8081"}, // named whether the listener started or found the port busy
		{"127.0.0.1:0", "serves /travelrule/callback on 127.0.0.1:"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			env := map[string]string{"TRAVELRULE_BASE_URL": sandbox.URL, "TRAVELRULE_TOKEN": tok.AccessToken, "TRAVELRULE_LISTEN_ADDR": tt.listenAddr}
			err := run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{})
			require.Error(t, err, "no TRAVELRULE_CALLBACK_URL")
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "127.0.0.1:8080")
		})
	}
}

// TestReadmeDescribesTheQuickstart: the README's environment table names
// every variable the quickstart reads, and its usage snippet handles
// NewCallbackURL's error.
func TestReadmeDescribesTheQuickstart(t *testing.T) {
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var table []string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `TRAVELRULE_") {
			table = append(table, line)
		}
	}
	rows := strings.Join(table, "\n")
	vars := regexp.MustCompile(`"(TRAVELRULE_[A-Z_]+)"`).FindAllStringSubmatch(string(src), -1)
	require.NotEmpty(t, vars)
	for _, m := range vars {
		assert.True(t, strings.Contains(rows, "`"+m[1]+"`"), "the README's environment table describes %s", m[1])
	}
	assert.True(t, strings.Contains(rows, "`TRAVELRULE_LISTEN_ADDR` | "), "TRAVELRULE_LISTEN_ADDR has a row of its own")
	assert.True(t, strings.Contains(rows, "(default `"+defaultListenAddr+"`"), "the README names the listener's default address")
	assert.False(t, strings.Contains(string(readme), "_ := travelrule.NewCallbackURL"), "the README handles NewCallbackURL's error")
}
