package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecret: every secret comes from its variable X or the file X_FILE
// names, not both, and is one line; no error quotes it.
func TestSecret(t *testing.T) {
	const planted = "PLANTED-secret-0123456789"
	file := func(content string) string {
		p := writeFile(t, "secret", content)
		require.NoError(t, os.Chmod(p, 0o600))
		return p
	}
	good, crlf, empty, twoLines := file(planted+"\n"), file(planted+"\r\n"), file("\n"), file(planted+"\nmore\n")
	twoNewlines, spaced, bom := file(planted+"\n\n"), file(planted+" \n"), file("\ufeff"+planted+"\n")
	tests := []struct {
		name       string
		env        map[string]string
		value, src string
		wantErr    string
	}{
		{"unset", nil, "", "", ""},
		{"the variable", map[string]string{"X_TOKEN": planted}, planted, "X_TOKEN", ""},
		{"the file", map[string]string{"X_TOKEN_FILE": good}, planted, "X_TOKEN_FILE", ""},
		{"a file with CRLF", map[string]string{"X_TOKEN_FILE": crlf}, planted, "X_TOKEN_FILE", ""},
		{"both", map[string]string{"X_TOKEN": planted, "X_TOKEN_FILE": good}, "", "", "both X_TOKEN and X_TOKEN_FILE are set: set one"},
		{"an empty file", map[string]string{"X_TOKEN_FILE": empty}, "", "", "the token file of X_TOKEN_FILE holds no token"},
		{"a file of two lines", map[string]string{"X_TOKEN_FILE": twoLines}, "", "", "the token file of X_TOKEN_FILE: the token has a newline (U+000A) at byte offset 25"},
		{"a file with two trailing newlines", map[string]string{"X_TOKEN_FILE": twoNewlines}, "", "",
			"the token file of X_TOKEN_FILE: the token has a newline (U+000A) at the end (only the file's one trailing newline is removed)"},
		{"a file with a space at the end", map[string]string{"X_TOKEN_FILE": spaced}, "", "", "the token file of X_TOKEN_FILE: the token has a space (U+0020) at the end"},
		{"a file with a byte order mark", map[string]string{"X_TOKEN_FILE": bom}, "", "", "the token file of X_TOKEN_FILE: the token has a byte order mark (U+FEFF) at the start"},
		{"a missing file", map[string]string{"X_TOKEN_FILE": "/nonexistent/token"}, "", "", "the token file of X_TOKEN_FILE: no such file"},
		// The secret itself set where its file's name belongs: not echoed.
		{"the secret in the file variable", map[string]string{"X_TOKEN_FILE": "eyJhbGciOiJFZERTQSJ9.SECRETTOKEN"}, "", "", "the token file of X_TOKEN_FILE: no such file"},
		{"a line break", map[string]string{"X_TOKEN": planted + "\n"}, "", "", "X_TOKEN: the token has a newline (U+000A) at the end"},
		{"a tab inside", map[string]string{"X_TOKEN": "PLANTED\tsecret"}, "", "", "X_TOKEN: the token has a tab (U+0009) at byte offset 7"},
		{"white space", map[string]string{"X_TOKEN": " " + planted}, "", "", "X_TOKEN: the token has a space (U+0020) at the start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errOut bytes.Buffer
			c := &cli{stderr: &errOut, getenv: func(k string) string { return tt.env[k] }}
			value, src, err := c.secret("X_TOKEN", "token")
			assert.Equal(t, tt.value, value)
			assert.Equal(t, tt.src, src)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				if !strings.Contains(tt.wantErr, "trailing newline") {
					assert.NotContains(t, err.Error(), "trailing newline", "the hint fits a file's trailing line break only")
				}
				assert.NotContains(t, err.Error(), "PLANTED")
				assert.NotContains(t, err.Error(), "SECRETTOKEN")
			}
			assert.Empty(t, errOut.String())
		})
	}
}

// TestSecretFlagsRefused: a flag that took a secret is a usage error that
// names the variables to use instead, and never shows the value.
func TestSecretFlagsRefused(t *testing.T) {
	const planted = "PLANTED-secret-0123456789"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"initiate", "--token", planted}, "--token is refused: a secret on the command line shows in process lists (/proc/PID/cmdline) and shell histories; set TRAVELRULE_TOKEN, or TRAVELRULE_TOKEN_FILE to a file that holds it"},
		{[]string{"txid", "--transfer", "t-1", "--txid", "0xabc", "--token=" + planted}, "--token is refused"},
		{[]string{"resolve", "--token", planted, "--transfer", "t-1", "--approved", "true"}, "--token is refused"},
		{[]string{"discover", "--token", planted, "--domain", "d"}, "--token is refused"},
		{[]string{"address", "lookup", "--token", planted, uncheckedTA}, "--token is refused"},
		{[]string{"listen", "--secret", planted}, "--secret is refused: a secret on the command line shows in process lists (/proc/PID/cmdline) and shell histories; set TRAVELRULE_WEBHOOK_SECRET, or TRAVELRULE_WEBHOOK_SECRET_FILE"},
		{[]string{"listen", "--capability-key", planted}, "--capability-key is refused: a secret on the command line shows in process lists (/proc/PID/cmdline) and shell histories; set TRAVELRULE_CALLBACK_KEY, or TRAVELRULE_CALLBACK_KEY_FILE"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:2], " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", map[string]string{"TRAVELRULE_BASE_URL": "http://127.0.0.1:1"}, tt.args...)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Contains(t, errOut, tt.want)
			assert.Contains(t, errOut, "Usage: travelrule")
			assert.Empty(t, out)
			assert.NotContains(t, out+errOut, "PLANTED")
		})
	}
}
