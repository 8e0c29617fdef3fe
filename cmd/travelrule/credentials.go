package main

import (
	"errors"
	"fmt"
	"strings"
)

// setting is a setting's value and where it came from: an environment
// variable or a flag; both "" when it is not set.
type setting struct{ value, source string }

// credentials are every credential setting of the commands that call the
// service.
type credentials struct {
	apiKey, token                            setting
	tokenURL, clientID, clientSecret, scopes setting
}

// credentialKind is the kind of credentials a command logs in with.
type credentialKind int

const (
	credAPIKey credentialKind = iota + 1 // the live service's API key
	credToken                            // a bearer token
	credClient                           // OAuth2 client credentials
)

// errNoCredentials is the error of a command that calls the service with
// no credentials set.
var errNoCredentials = errors.New("no credentials: set an API key (TRAVELRULE_API_KEY, or TRAVELRULE_API_KEY_FILE, or --api-key-file), " +
	"or a token (TRAVELRULE_TOKEN or TRAVELRULE_TOKEN_FILE), " +
	"or client credentials (TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID, and TRAVELRULE_CLIENT_SECRET or TRAVELRULE_CLIENT_SECRET_FILE)")

// chooseCredentials decides which kind of credentials cr holds. Exactly
// one kind must be set, and client credentials whole (token URL, client
// id and secret; scopes are optional but count as client credentials): a
// setting that would be ignored, or a login bound to fail, is a usage
// error that names the settings by their source, never by their values.
func chooseCredentials(cr credentials) (credentialKind, error) {
	client := cr.clientSettings()
	var kinds []string
	var kind credentialKind
	if cr.apiKey.source != "" {
		kinds, kind = append(kinds, "an API key ("+cr.apiKey.source+")"), credAPIKey
	}
	if cr.token.source != "" {
		kinds, kind = append(kinds, "a token ("+cr.token.source+")"), credToken
	}
	if len(client) > 0 {
		var sources []string
		for _, s := range client {
			sources = append(sources, s.source)
		}
		kinds, kind = append(kinds, "client credentials ("+strings.Join(sources, ", ")+")"), credClient
	}
	switch {
	case len(kinds) == 0:
		return 0, errNoCredentials
	case len(kinds) > 1:
		return 0, fmt.Errorf("credentials of more than one kind are set, %s: set one kind", joinAnd(kinds))
	case kind == credClient:
		var missing []string
		for _, m := range []struct {
			s    setting
			what string
		}{
			{cr.tokenURL, "the token URL (--token-url or TRAVELRULE_TOKEN_URL)"},
			{cr.clientID, "the client id (--client-id or TRAVELRULE_CLIENT_ID)"},
			{cr.clientSecret, "the client secret (TRAVELRULE_CLIENT_SECRET or TRAVELRULE_CLIENT_SECRET_FILE)"},
		} {
			if m.s.source == "" {
				missing = append(missing, m.what)
			}
		}
		if len(missing) > 0 {
			verb := "is"
			if len(missing) > 1 {
				verb = "are"
			}
			return 0, fmt.Errorf("incomplete %s: %s %s missing", kinds[0], joinAnd(missing), verb)
		}
	}
	return kind, nil
}

// clientSettings are the client credentials' settings that are set.
func (cr credentials) clientSettings() []setting {
	var set []setting
	for _, s := range []setting{cr.tokenURL, cr.clientID, cr.clientSecret, cr.scopes} {
		if s.source != "" {
			set = append(set, s)
		}
	}
	return set
}

// describe says where the credentials of kind came from, never their
// values.
func (cr credentials) describe(kind credentialKind) string {
	switch kind {
	case credAPIKey:
		return "API key from " + cr.apiKey.source
	case credToken:
		return "token from " + cr.token.source
	}
	return fmt.Sprintf("client credentials: token URL from %s, client id from %s, client secret from %s",
		cr.tokenURL.source, cr.clientID.source, cr.clientSecret.source)
}

// joinAnd joins words as a sentence lists them: "a", "a and b", "a, b and
// c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
