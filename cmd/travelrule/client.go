package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
)

// settings are the connection settings shared by the commands that call the
// service. Each flag defaults to its environment variable; the secrets
// (token, client secret) have no flag and are read by client.
type settings struct {
	baseURL     string
	tokenURL    string
	clientID    string
	scopes      string
	apiKeyFile  string
	idempotency bool
	strict      bool
}

// addSettings adds the connection flags and those of the transfer
// operations (--idempotency, --strict) to fs.
func (c *cli) addSettings(fs *flag.FlagSet) *settings {
	s := c.addConnection(fs)
	fs.BoolVar(&s.idempotency, "idempotency", false, "send an Idempotency-Key and retry ambiguous failures (only for a service that honours it)")
	fs.BoolVar(&s.strict, "strict", false, "apply IVMS101 checks on top of the description's")
	return s
}

// addConnection adds the flags that say where the service is and how to
// authenticate to fs.
func (c *cli) addConnection(fs *flag.FlagSet) *settings {
	s := &settings{}
	fs.StringVar(&s.baseURL, "base-url", c.getenv("TRAVELRULE_BASE_URL"), "the service's base URL (env TRAVELRULE_BASE_URL)")
	c.addAPIKeyFile(fs, s)
	refuseSecretFlag(fs, "token", "TRAVELRULE_TOKEN")
	fs.StringVar(&s.tokenURL, "token-url", c.getenv("TRAVELRULE_TOKEN_URL"), "OAuth2 token endpoint for client credentials (env TRAVELRULE_TOKEN_URL); the client secret is in env TRAVELRULE_CLIENT_SECRET or TRAVELRULE_CLIENT_SECRET_FILE, never a flag")
	fs.StringVar(&s.clientID, "client-id", c.getenv("TRAVELRULE_CLIENT_ID"), "OAuth2 client id (env TRAVELRULE_CLIENT_ID)")
	fs.StringVar(&s.scopes, "scopes", c.getenv("TRAVELRULE_SCOPES"), "OAuth2 scopes, comma-separated (env TRAVELRULE_SCOPES)")
	return s
}

// addAPIKeyFile adds --api-key-file to fs. The key itself has no flag: a
// flag's value shows in process lists and shell histories.
func (c *cli) addAPIKeyFile(fs *flag.FlagSet, s *settings) {
	fs.StringVar(&s.apiKeyFile, "api-key-file", "", "read the API key from this file, one trailing newline removed (default: env TRAVELRULE_API_KEY_FILE, or the key itself in env TRAVELRULE_API_KEY; never a flag)")
}

// client makes the SDK client the settings and the environment describe,
// with credentials of one kind (chooseCredentials), and names on stderr
// where they came from, never their values.
func (c *cli) client(s *settings) (*travelrule.Client, error) {
	if s.baseURL == "" {
		return nil, errors.New("no base URL: set --base-url or TRAVELRULE_BASE_URL")
	}
	cr, err := c.credentials(s)
	if err != nil {
		return nil, err
	}
	kind, err := chooseCredentials(cr)
	if err != nil {
		return nil, err
	}
	opts := []travelrule.Option{travelrule.WithUserAgent("travelrule-cli")}
	switch kind {
	case credAPIKey:
		opts = append(opts, travelrule.WithAPIKey(cr.apiKey.value))
	case credToken:
		opts = append(opts, travelrule.WithTokenSource(travelrule.StaticToken(cr.token.value)))
	case credClient:
		cfg := &clientcredentials.Config{ClientID: cr.clientID.value, ClientSecret: cr.clientSecret.value, TokenURL: cr.tokenURL.value}
		if cr.scopes.value != "" {
			cfg.Scopes = strings.Split(cr.scopes.value, ",")
		}
		opts = append(opts, travelrule.WithClientCredentials(cfg))
	}
	if s.idempotency {
		opts = append(opts, travelrule.WithIdempotency())
	}
	if s.strict {
		opts = append(opts, travelrule.WithStrictValidation())
	}
	client, err := travelrule.NewClient(s.baseURL, opts...)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.stderr, "%s: credentials: %s\n", programName, cr.describe(kind))
	return client, nil
}

// credentials reads every credential setting, the secrets from the
// environment (secret), the others from the settings, each with where it
// came from.
func (c *cli) credentials(s *settings) (credentials, error) {
	var cr credentials
	var err error
	if cr.apiKey.value, cr.apiKey.source, err = c.apiKeySource(s); err != nil {
		return cr, err
	}
	if cr.token.value, cr.token.source, err = c.secret("TRAVELRULE_TOKEN", "token"); err != nil {
		return cr, err
	}
	if cr.clientSecret.value, cr.clientSecret.source, err = c.secret("TRAVELRULE_CLIENT_SECRET", "client secret"); err != nil {
		return cr, err
	}
	cr.tokenURL = c.setting(s.tokenURL, "TRAVELRULE_TOKEN_URL", "--token-url")
	cr.clientID = c.setting(s.clientID, "TRAVELRULE_CLIENT_ID", "--client-id")
	cr.scopes = c.setting(s.scopes, "TRAVELRULE_SCOPES", "--scopes")
	return cr, nil
}

// setting is value with where it came from: the environment variable env
// when it holds value, else the flag; "" when value is.
func (c *cli) setting(value, env, flagName string) setting {
	switch value {
	case "":
		return setting{}
	case c.getenv(env):
		return setting{value, env}
	}
	return setting{value, flagName}
}

// apiKey returns the API key of the settings, or "" when none is set: from
// --api-key-file, else from the environment (TRAVELRULE_API_KEY or the
// file TRAVELRULE_API_KEY_FILE names; setting both is an error). A key that
// cannot go in a header is an error. No error quotes the key.
func (c *cli) apiKey(s *settings) (string, error) {
	key, _, err := c.apiKeySource(s)
	return key, err
}

// apiKeySource is apiKey, with where the key came from.
func (c *cli) apiKeySource(s *settings) (key, source string, err error) {
	if s.apiKeyFile != "" {
		return c.secretFile(s.apiKeyFile, "--api-key-file", "API key")
	}
	return c.secret("TRAVELRULE_API_KEY", "API key")
}
