package main

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPIKeySources: the API key comes from TRAVELRULE_API_KEY or a file
// (TRAVELRULE_API_KEY_FILE, --api-key-file), never from a flag, and wins
// over a token; no output ever holds it.
func TestAPIKeySources(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/transfers/txId": {200, `{"status":true}`}})
	keyFile := func(content string, mode os.FileMode) string {
		p := writeFile(t, "key", content)
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	private := keyFile(liveAPIKey+"\n", 0o600)
	crlf := keyFile(liveAPIKey+"\r\n", 0o600)
	bare := keyFile(liveAPIKey, 0o400)
	shared := keyFile(liveAPIKey+"\n", 0o644)
	twoLines := keyFile(liveAPIKey+"\n\n", 0o600)
	spaced := keyFile(" "+liveAPIKey+"\n", 0o600)
	empty := keyFile("\n", 0o600)
	base := map[string]string{"TRAVELRULE_BASE_URL": ls.URL}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"TRAVELRULE_BASE_URL": ls.URL}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		code    int
		wantErr string
	}{
		{"environment", with("TRAVELRULE_API_KEY", liveAPIKey), nil, exitOK, ""},
		{"the key wins over a token", with("TRAVELRULE_API_KEY", liveAPIKey, "TRAVELRULE_TOKEN", "not.the.token"), nil, exitOK, ""},
		{"the key wins over client credentials", with("TRAVELRULE_API_KEY", liveAPIKey, "TRAVELRULE_TOKEN_URL", ls.URL+"/oauth/token", "TRAVELRULE_CLIENT_ID", "id"), nil, exitOK, ""},
		{"a file from the environment", with("TRAVELRULE_API_KEY_FILE", private), nil, exitOK, ""},
		{"a file from the flag", base, []string{"--api-key-file", private}, exitOK, ""},
		{"the flag wins over the environment", with("TRAVELRULE_API_KEY", "trk_PLANTED_other", "TRAVELRULE_API_KEY_FILE", "/nonexistent"), []string{"--api-key-file", private}, exitOK, ""},
		{"a file with CRLF", base, []string{"--api-key-file", crlf}, exitOK, ""},
		{"a file without newline", base, []string{"--api-key-file", bare}, exitOK, ""},
		{"a file open to others", base, []string{"--api-key-file", shared}, exitOK, "warning: the API key file " + shared + " is open to group or others (mode 0644): chmod 600 " + shared},
		{"a file of two lines", base, []string{"--api-key-file", twoLines}, exitUsage, "the API key has a line break or a control character"},
		{"a file with spaces", base, []string{"--api-key-file", spaced}, exitUsage, "the API key has white space around it"},
		{"an empty file", base, []string{"--api-key-file", empty}, exitUsage, "the API key file " + empty + " holds no API key"},
		{"a missing file", base, []string{"--api-key-file", "/nonexistent/key"}, exitUsage, "the API key file of --api-key-file: open /nonexistent/key: no such file or directory"},
		{"a directory", base, []string{"--api-key-file", t.TempDir()}, exitUsage, "is not a regular file"},
		{"both variables", with("TRAVELRULE_API_KEY", liveAPIKey, "TRAVELRULE_API_KEY_FILE", private), nil, exitUsage, "both TRAVELRULE_API_KEY and TRAVELRULE_API_KEY_FILE are set"},
		{"a key with a line break", with("TRAVELRULE_API_KEY", liveAPIKey+"\nX"), nil, exitUsage, "TRAVELRULE_API_KEY: the API key has a line break"},
		{"no key flag", base, []string{"--api-key", liveAPIKey}, exitUsage, "flag provided but not defined: -api-key"},
		{"no credentials", base, nil, exitUsage, "no credentials: set TRAVELRULE_API_KEY (or TRAVELRULE_API_KEY_FILE, or --api-key-file), or TRAVELRULE_TOKEN"},
		{"a refused key", with("TRAVELRULE_API_KEY", "trk_PLANTED_other"), nil, exitFailed, "the API key is missing or not recognised\n  the API key was refused: check it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "a file open to others" && runtime.GOOS == "windows" {
				t.Skip("no permission bits on Windows")
			}
			before := len(ls.received("/transfers/txId"))
			args := append([]string{"txid", "--transfer", "t-1", "--txid", "0xabc"}, tt.args...)
			code, out, errOut := runCLI(t, context.Background(), "", tt.env, args...)
			assert.Equal(t, tt.code, code, errOut)
			if tt.wantErr != "" {
				assert.Contains(t, errOut, tt.wantErr)
			} else {
				assert.Empty(t, errOut)
			}
			if tt.code == exitOK {
				assert.Len(t, ls.received("/transfers/txId"), before+1)
				logins := ls.received("/auth/token")
				assert.Equal(t, liveAPIKey, logins[len(logins)-1].header.Get("X-Api-Key"))
			}
			assertNoSecrets(t, out+errOut, "trk_PLANTED_other")
		})
	}
}
