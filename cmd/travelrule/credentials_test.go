package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChooseCredentials: one kind of credentials, client credentials
// whole; the errors name settings by where they came from, never by value.
func TestChooseCredentials(t *testing.T) {
	key := setting{"PLANTED-key", "TRAVELRULE_API_KEY_FILE"}
	token := setting{"PLANTED-token", "TRAVELRULE_TOKEN"}
	url := setting{"https://idp.example/token", "--token-url"}
	id := setting{"client-1", "TRAVELRULE_CLIENT_ID"}
	secret := setting{"PLANTED-secret", "TRAVELRULE_CLIENT_SECRET_FILE"}
	scopes := setting{"transfers", "TRAVELRULE_SCOPES"}
	const (
		missingURL    = "the token URL (--token-url or TRAVELRULE_TOKEN_URL)"
		missingID     = "the client id (--client-id or TRAVELRULE_CLIENT_ID)"
		missingSecret = "the client secret (TRAVELRULE_CLIENT_SECRET or TRAVELRULE_CLIENT_SECRET_FILE)"
	)
	tests := []struct {
		name     string
		cr       credentials
		kind     credentialKind
		describe string
		wantErr  string
	}{
		{"an API key", credentials{apiKey: key}, credAPIKey, "API key from TRAVELRULE_API_KEY_FILE", ""},
		{"a token", credentials{token: token}, credToken, "token from TRAVELRULE_TOKEN", ""},
		{"client credentials", credentials{tokenURL: url, clientID: id, clientSecret: secret}, credClient,
			"client credentials: token URL from --token-url, client id from TRAVELRULE_CLIENT_ID, client secret from TRAVELRULE_CLIENT_SECRET_FILE", ""},
		{"client credentials with scopes", credentials{tokenURL: url, clientID: id, clientSecret: secret, scopes: scopes}, credClient,
			"client credentials: token URL from --token-url, client id from TRAVELRULE_CLIENT_ID, client secret from TRAVELRULE_CLIENT_SECRET_FILE", ""},
		{"none", credentials{}, 0, "", "no credentials: set an API key (TRAVELRULE_API_KEY, or TRAVELRULE_API_KEY_FILE, or --api-key-file), or a token (TRAVELRULE_TOKEN or TRAVELRULE_TOKEN_FILE), or client credentials (TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID, and TRAVELRULE_CLIENT_SECRET or TRAVELRULE_CLIENT_SECRET_FILE)"},
		{"a key and a token", credentials{apiKey: key, token: token}, 0, "",
			"credentials of more than one kind are set, an API key (TRAVELRULE_API_KEY_FILE) and a token (TRAVELRULE_TOKEN): set one kind"},
		{"a token and client credentials", credentials{token: token, tokenURL: url, clientID: id, clientSecret: secret}, 0, "",
			"credentials of more than one kind are set, a token (TRAVELRULE_TOKEN) and client credentials (--token-url, TRAVELRULE_CLIENT_ID, TRAVELRULE_CLIENT_SECRET_FILE): set one kind"},
		{"all three", credentials{apiKey: key, token: token, clientSecret: secret}, 0, "",
			"credentials of more than one kind are set, an API key (TRAVELRULE_API_KEY_FILE), a token (TRAVELRULE_TOKEN) and client credentials (TRAVELRULE_CLIENT_SECRET_FILE): set one kind"},
		{"a key and scopes", credentials{apiKey: key, scopes: scopes}, 0, "",
			"credentials of more than one kind are set, an API key (TRAVELRULE_API_KEY_FILE) and client credentials (TRAVELRULE_SCOPES): set one kind"},
		{"no client secret", credentials{tokenURL: url, clientID: id}, 0, "",
			"incomplete client credentials (--token-url, TRAVELRULE_CLIENT_ID): " + missingSecret + " is missing"},
		{"no client id", credentials{tokenURL: url, clientSecret: secret}, 0, "",
			"incomplete client credentials (--token-url, TRAVELRULE_CLIENT_SECRET_FILE): " + missingID + " is missing"},
		{"a token URL alone", credentials{tokenURL: url}, 0, "",
			"incomplete client credentials (--token-url): " + missingID + " and " + missingSecret + " are missing"},
		{"a client id alone", credentials{clientID: id}, 0, "",
			"incomplete client credentials (TRAVELRULE_CLIENT_ID): " + missingURL + " and " + missingSecret + " are missing"},
		{"scopes alone", credentials{scopes: scopes}, 0, "",
			"incomplete client credentials (TRAVELRULE_SCOPES): " + missingURL + ", " + missingID + " and " + missingSecret + " are missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, err := chooseCredentials(tt.cr)
			assert.Equal(t, tt.kind, kind)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				assert.NotContains(t, err.Error(), "PLANTED")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.describe, tt.cr.describe(kind))
		})
	}
}
