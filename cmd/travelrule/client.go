package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
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
	apiKeyFile   string
	idempotency  bool
	strict       bool
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
	fs.StringVar(&s.token, "token", "", "a bearer JWT (default: env TRAVELRULE_TOKEN; prefer the environment, flags show in process lists)")
	fs.StringVar(&s.tokenURL, "token-url", c.getenv("TRAVELRULE_TOKEN_URL"), "OAuth2 token endpoint for client credentials (env TRAVELRULE_TOKEN_URL)")
	fs.StringVar(&s.clientID, "client-id", c.getenv("TRAVELRULE_CLIENT_ID"), "OAuth2 client id (env TRAVELRULE_CLIENT_ID)")
	fs.StringVar(&s.scopes, "scopes", c.getenv("TRAVELRULE_SCOPES"), "OAuth2 scopes, comma-separated (env TRAVELRULE_SCOPES)")
	s.clientSecret = c.getenv("TRAVELRULE_CLIENT_SECRET") // environment only: never a flag
	return s
}

// addAPIKeyFile adds --api-key-file to fs. The key itself has no flag: a
// flag's value shows in process lists and shell histories.
func (c *cli) addAPIKeyFile(fs *flag.FlagSet, s *settings) {
	fs.StringVar(&s.apiKeyFile, "api-key-file", "", "read the API key from this file, one trailing newline removed (default: env TRAVELRULE_API_KEY_FILE, or the key itself in env TRAVELRULE_API_KEY; never a flag)")
}

// client makes the SDK client the settings describe. An API key wins over
// a token, which wins over client credentials.
func (c *cli) client(s *settings) (*travelrule.Client, error) {
	if s.token == "" {
		s.token = c.getenv("TRAVELRULE_TOKEN")
	}
	if s.baseURL == "" {
		return nil, errors.New("no base URL: set --base-url or TRAVELRULE_BASE_URL")
	}
	key, err := c.apiKey(s)
	if err != nil {
		return nil, err
	}
	opts := []travelrule.Option{travelrule.WithUserAgent("travelrule-cli")}
	switch {
	case key != "":
		opts = append(opts, travelrule.WithAPIKey(key))
	case s.token != "":
		opts = append(opts, travelrule.WithTokenSource(travelrule.StaticToken(s.token)))
	case s.tokenURL != "" && s.clientID != "":
		cfg := &clientcredentials.Config{ClientID: s.clientID, ClientSecret: s.clientSecret, TokenURL: s.tokenURL}
		if s.scopes != "" {
			cfg.Scopes = strings.Split(s.scopes, ",")
		}
		opts = append(opts, travelrule.WithClientCredentials(cfg))
	default:
		return nil, errors.New("no credentials: set TRAVELRULE_API_KEY (or TRAVELRULE_API_KEY_FILE, or --api-key-file), " +
			"or TRAVELRULE_TOKEN, or TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID and TRAVELRULE_CLIENT_SECRET")
	}
	if s.idempotency {
		opts = append(opts, travelrule.WithIdempotency())
	}
	if s.strict {
		opts = append(opts, travelrule.WithStrictValidation())
	}
	return travelrule.NewClient(s.baseURL, opts...)
}

// maxAPIKeyFile bounds the size of an API key (or signing secret) file: a
// key is a line.
const maxAPIKeyFile = 4 << 10

// apiKey returns the API key of the settings, or "" when none is set:
// from --api-key-file, else from the file TRAVELRULE_API_KEY_FILE names,
// else TRAVELRULE_API_KEY. Setting both variables is an error, as is a key
// that cannot go in a header. No error quotes the key.
func (c *cli) apiKey(s *settings) (string, error) {
	file, source := s.apiKeyFile, "--api-key-file"
	if file == "" {
		file, source = c.getenv("TRAVELRULE_API_KEY_FILE"), "TRAVELRULE_API_KEY_FILE"
		if file != "" && c.getenv("TRAVELRULE_API_KEY") != "" {
			return "", errors.New("both TRAVELRULE_API_KEY and TRAVELRULE_API_KEY_FILE are set: set one")
		}
	}
	if file == "" {
		key := c.getenv("TRAVELRULE_API_KEY")
		if key == "" {
			return "", nil
		}
		return key, checkAPIKey(key, "TRAVELRULE_API_KEY")
	}
	key, err := c.readAPIKeyFile(file)
	if err != nil {
		return "", fmt.Errorf("the API key file of %s: %w", source, err)
	}
	return key, checkAPIKey(key, "the API key file "+file)
}

// readAPIKeyFile reads the key in the file name, with one trailing newline
// ("\n" or "\r\n") removed; see readSecretFile.
func (c *cli) readAPIKeyFile(name string) (string, error) {
	return c.readSecretFile(name, "API key")
}

// readSecretFile reads the secret (what: "API key", "signing secret") in
// the file name, with one trailing newline ("\n" or "\r\n") removed. It
// warns on stderr when the file is open to group or others: such a file is
// refused by nothing else (a Kubernetes secret volume is 0644 unless told
// otherwise), so it is not refused here.
func (c *cli) readSecretFile(name, what string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", name)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		fmt.Fprintf(c.stderr, "warning: the %s file %s is open to group or others (mode %04o): chmod 600 %s\n", what, name, perm, name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxAPIKeyFile+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxAPIKeyFile {
		return "", fmt.Errorf("%s is larger than %d bytes: not one %s", name, maxAPIKeyFile, what)
	}
	key := strings.TrimSuffix(string(data), "\n")
	if len(key) < len(data) {
		key = strings.TrimSuffix(key, "\r")
	}
	return key, nil
}

// checkAPIKey says what makes key unusable, naming where it came from and
// never quoting it.
func checkAPIKey(key, source string) error {
	switch {
	case key == "":
		return fmt.Errorf("%s holds no API key", source)
	case strings.ContainsFunc(key, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("%s: the API key has a line break or a control character (a key is one line; one trailing newline is removed)", source)
	case strings.TrimSpace(key) != key:
		return fmt.Errorf("%s: the API key has white space around it", source)
	}
	return nil
}
