package main

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/travelruletest"
)

// TestAPIKeySources: the API key comes from TRAVELRULE_API_KEY or a file
// (TRAVELRULE_API_KEY_FILE, --api-key-file), never from a flag; stderr
// names where it came from; no output ever holds it.
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
	const (
		fromEnv  = "travelrule: credentials: API key from TRAVELRULE_API_KEY\n"
		fromFlag = "travelrule: credentials: API key from --api-key-file\n"
	)
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		code    int
		wantErr string // on stderr; all of it on success
	}{
		{"environment", with("TRAVELRULE_API_KEY", liveAPIKey), nil, exitOK, fromEnv},
		{"a key and a token", with("TRAVELRULE_API_KEY", liveAPIKey, "TRAVELRULE_TOKEN", "not.the.token"), nil, exitUsage,
			"credentials of more than one kind are set, an API key (TRAVELRULE_API_KEY) and a token (TRAVELRULE_TOKEN): set one kind"},
		{"a key and client credentials", with("TRAVELRULE_API_KEY", liveAPIKey, "TRAVELRULE_TOKEN_URL", ls.URL+"/oauth/token", "TRAVELRULE_CLIENT_ID", "id"), nil, exitUsage,
			"credentials of more than one kind are set, an API key (TRAVELRULE_API_KEY) and client credentials (TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID): set one kind"},
		{"a file from the environment", with("TRAVELRULE_API_KEY_FILE", private), nil, exitOK, "travelrule: credentials: API key from TRAVELRULE_API_KEY_FILE\n"},
		{"a file from the flag", base, []string{"--api-key-file", private}, exitOK, fromFlag},
		{"the flag wins over the environment", with("TRAVELRULE_API_KEY", "trk_PLANTED_other", "TRAVELRULE_API_KEY_FILE", "/nonexistent"), []string{"--api-key-file", private}, exitOK, fromFlag},
		{"a file with CRLF", base, []string{"--api-key-file", crlf}, exitOK, fromFlag},
		{"a file without newline", base, []string{"--api-key-file", bare}, exitOK, fromFlag},
		{"a file open to others", base, []string{"--api-key-file", shared}, exitOK, "warning: the API key file " + shared + " is open to group or others (mode 0644): chmod 600 " + shared + "\n" + fromFlag},
		{"a file of two lines", base, []string{"--api-key-file", twoLines}, exitUsage, "the API key file of --api-key-file: the API key has a newline (U+000A) at the end (only the file's one trailing newline is removed)"},
		{"a file with spaces", base, []string{"--api-key-file", spaced}, exitUsage, "the API key file of --api-key-file: the API key has a space (U+0020) at the start"},
		{"an empty file", base, []string{"--api-key-file", empty}, exitUsage, "the API key file of --api-key-file holds no API key"},
		{"a missing file", base, []string{"--api-key-file", "/nonexistent/key"}, exitUsage, "the API key file of --api-key-file: no such file"},
		{"a directory", base, []string{"--api-key-file", t.TempDir()}, exitUsage, "the API key file of --api-key-file: not a regular file"},
		{"both variables", with("TRAVELRULE_API_KEY", liveAPIKey, "TRAVELRULE_API_KEY_FILE", private), nil, exitUsage, "both TRAVELRULE_API_KEY and TRAVELRULE_API_KEY_FILE are set"},
		{"a key with a line break", with("TRAVELRULE_API_KEY", liveAPIKey+"\nX"), nil, exitUsage, "TRAVELRULE_API_KEY: the API key has a newline (U+000A) at byte offset " + strconv.Itoa(len(liveAPIKey))},
		{"a key with its file's newline", with("TRAVELRULE_API_KEY", liveAPIKey+"\n"), nil, exitUsage, "TRAVELRULE_API_KEY: the API key has a newline (U+000A) at the end"},
		{"a base URL with a newline", map[string]string{"TRAVELRULE_BASE_URL": ls.URL + "\n", "TRAVELRULE_API_KEY": liveAPIKey}, nil, exitUsage,
			"base URL has a newline (U+000A) at the end: a base URL is one line, without spaces or quotes"},
		{"an operation's URL as the base URL", map[string]string{"TRAVELRULE_BASE_URL": ls.URL + "/transfers/txId", "TRAVELRULE_API_KEY": liveAPIKey}, nil, exitUsage,
			"base URL is an operation's URL: did you mean " + ls.URL + "?"},
		{"no key flag", base, []string{"--api-key", liveAPIKey}, exitUsage, "flag provided but not defined: -api-key"},
		{"no credentials", base, nil, exitUsage, "no credentials: set an API key (TRAVELRULE_API_KEY, or TRAVELRULE_API_KEY_FILE, or --api-key-file), or a token"},
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
			switch tt.code {
			case exitOK:
				assert.Equal(t, tt.wantErr, errOut)
			case exitFailed: // sent: the source is named first
				assert.True(t, strings.HasPrefix(errOut, fromEnv), errOut)
				assert.Contains(t, errOut, tt.wantErr)
			default:
				assert.Contains(t, errOut, tt.wantErr)
				assert.NotContains(t, errOut, "credentials: API key from")
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

// TestCredentialSources: a token and a client secret come from their
// variable or its _FILE form; one kind of credentials is set, client
// credentials whole, else nothing is sent and the exit status is 2;
// stderr names where the credentials came from, never their values.
func TestCredentialSources(t *testing.T) {
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	tok, err := srv.TokenSource().Token()
	require.NoError(t, err)
	tokenFile := writeFile(t, "token", tok.AccessToken+"\n")
	secretFile := writeFile(t, "secret", travelruletest.DefaultClientSecret+"\n")
	with := func(kv ...string) map[string]string {
		m := map[string]string{"TRAVELRULE_BASE_URL": srv.URL}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	client := func(secretVar, secret string, kv ...string) map[string]string {
		return with(append([]string{"TRAVELRULE_TOKEN_URL", srv.TokenURL(), "TRAVELRULE_CLIENT_ID", travelruletest.DefaultClientID, secretVar, secret}, kv...)...)
	}
	const clientFrom = "travelrule: credentials: client credentials: token URL from TRAVELRULE_TOKEN_URL, client id from TRAVELRULE_CLIENT_ID, client secret from "
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stderr string // all of it on success, a part on failure
	}{
		{"a token", with("TRAVELRULE_TOKEN", tok.AccessToken), nil, exitOK, "travelrule: credentials: token from TRAVELRULE_TOKEN\n"},
		{"a token file", with("TRAVELRULE_TOKEN_FILE", tokenFile), nil, exitOK, "travelrule: credentials: token from TRAVELRULE_TOKEN_FILE\n"},
		{"client credentials", client("TRAVELRULE_CLIENT_SECRET", travelruletest.DefaultClientSecret), nil, exitOK, clientFrom + "TRAVELRULE_CLIENT_SECRET\n"},
		{"a client secret file", client("TRAVELRULE_CLIENT_SECRET_FILE", secretFile), nil, exitOK, clientFrom + "TRAVELRULE_CLIENT_SECRET_FILE\n"},
		{"client credentials by flags", with("TRAVELRULE_CLIENT_SECRET", travelruletest.DefaultClientSecret),
			[]string{"--token-url", srv.TokenURL(), "--client-id", travelruletest.DefaultClientID}, exitOK,
			"travelrule: credentials: client credentials: token URL from --token-url, client id from --client-id, client secret from TRAVELRULE_CLIENT_SECRET\n"},
		{"a token and its file", with("TRAVELRULE_TOKEN", tok.AccessToken, "TRAVELRULE_TOKEN_FILE", tokenFile), nil, exitUsage,
			"both TRAVELRULE_TOKEN and TRAVELRULE_TOKEN_FILE are set: set one"},
		{"a client secret and its file", client("TRAVELRULE_CLIENT_SECRET", travelruletest.DefaultClientSecret, "TRAVELRULE_CLIENT_SECRET_FILE", secretFile), nil, exitUsage,
			"both TRAVELRULE_CLIENT_SECRET and TRAVELRULE_CLIENT_SECRET_FILE are set: set one"},
		{"a token and client credentials", client("TRAVELRULE_CLIENT_SECRET", travelruletest.DefaultClientSecret, "TRAVELRULE_TOKEN_FILE", tokenFile), nil, exitUsage,
			"credentials of more than one kind are set, a token (TRAVELRULE_TOKEN_FILE) and client credentials (TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID, TRAVELRULE_CLIENT_SECRET): set one kind"},
		{"no client secret", with("TRAVELRULE_TOKEN_URL", srv.TokenURL(), "TRAVELRULE_CLIENT_ID", travelruletest.DefaultClientID), nil, exitUsage,
			"incomplete client credentials (TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID): the client secret (TRAVELRULE_CLIENT_SECRET or TRAVELRULE_CLIENT_SECRET_FILE) is missing"},
		{"no token URL", with("TRAVELRULE_CLIENT_ID", travelruletest.DefaultClientID, "TRAVELRULE_CLIENT_SECRET_FILE", secretFile), nil, exitUsage,
			"incomplete client credentials (TRAVELRULE_CLIENT_ID, TRAVELRULE_CLIENT_SECRET_FILE): the token URL (--token-url or TRAVELRULE_TOKEN_URL) is missing"},
		{"an empty token file", with("TRAVELRULE_TOKEN_FILE", writeFile(t, "empty", "")), nil, exitUsage, "holds no token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := len(srv.Requests())
			args := append([]string{"discover", "--domain", "example"}, tt.args...)
			code, out, errOut := runCLI(t, context.Background(), "", tt.env, args...)
			assert.Equal(t, tt.code, code, errOut)
			if tt.code == exitOK {
				assert.Equal(t, tt.stderr, errOut)
			} else {
				assert.Contains(t, errOut, tt.stderr)
				assert.Empty(t, out)
				assert.Equal(t, sent, len(srv.Requests()), "nothing sent")
			}
			for _, never := range []string{tok.AccessToken, travelruletest.DefaultClientSecret} {
				assert.NotContains(t, out+errOut, never)
			}
		})
	}
}
