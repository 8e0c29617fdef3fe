package main

import (
	"errors"
	"flag"
	"strings"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/vaspkit/travelrule"
)

// settings are the connection settings shared by the commands that call the
// service. Each flag defaults to its environment variable.
type settings struct {
	baseURL      string
	token        string
	tokenURL     string
	clientID     string
	clientSecret string
	scopes       string
	idempotency  bool
	strict       bool
}

func (c *cli) addSettings(fs *flag.FlagSet) *settings {
	s := &settings{}
	fs.StringVar(&s.baseURL, "base-url", c.getenv("TRAVELRULE_BASE_URL"), "the service's base URL (env TRAVELRULE_BASE_URL)")
	fs.StringVar(&s.token, "token", "", "a bearer JWT (default: env TRAVELRULE_TOKEN; prefer the environment, flags show in process lists)")
	fs.StringVar(&s.tokenURL, "token-url", c.getenv("TRAVELRULE_TOKEN_URL"), "OAuth2 token endpoint for client credentials (env TRAVELRULE_TOKEN_URL)")
	fs.StringVar(&s.clientID, "client-id", c.getenv("TRAVELRULE_CLIENT_ID"), "OAuth2 client id (env TRAVELRULE_CLIENT_ID)")
	fs.StringVar(&s.scopes, "scopes", c.getenv("TRAVELRULE_SCOPES"), "OAuth2 scopes, comma-separated (env TRAVELRULE_SCOPES)")
	fs.BoolVar(&s.idempotency, "idempotency", false, "send an Idempotency-Key and retry ambiguous failures (only for a service that honours it)")
	fs.BoolVar(&s.strict, "strict", false, "apply IVMS101 checks on top of the description's")
	s.clientSecret = c.getenv("TRAVELRULE_CLIENT_SECRET") // environment only: never a flag
	return s
}

// client makes the SDK client the settings describe.
func (c *cli) client(s *settings) (*travelrule.Client, error) {
	if s.token == "" {
		s.token = c.getenv("TRAVELRULE_TOKEN")
	}
	if s.baseURL == "" {
		return nil, errors.New("no base URL: set --base-url or TRAVELRULE_BASE_URL")
	}
	opts := []travelrule.Option{travelrule.WithUserAgent("travelrule-cli")}
	switch {
	case s.token != "":
		opts = append(opts, travelrule.WithTokenSource(travelrule.StaticToken(s.token)))
	case s.tokenURL != "" && s.clientID != "":
		cfg := &clientcredentials.Config{ClientID: s.clientID, ClientSecret: s.clientSecret, TokenURL: s.tokenURL}
		if s.scopes != "" {
			cfg.Scopes = strings.Split(s.scopes, ",")
		}
		opts = append(opts, travelrule.WithClientCredentials(cfg))
	default:
		return nil, errors.New("no credentials: set TRAVELRULE_TOKEN, or TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID and TRAVELRULE_CLIENT_SECRET")
	}
	if s.idempotency {
		opts = append(opts, travelrule.WithIdempotency())
	}
	if s.strict {
		opts = append(opts, travelrule.WithStrictValidation())
	}
	return travelrule.NewClient(s.baseURL, opts...)
}
