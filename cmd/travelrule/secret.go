package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"

	"github.com/vaspkit/travelrule/internal/oneline"
)

// Where the command's secrets come from: an environment variable X or the
// file that X_FILE names, never a flag (a flag's value shows in process
// lists, /proc/PID/cmdline, and shell histories).

// secret returns the secret of the environment variable name, or of the
// file that name+"_FILE" names (one trailing newline removed), and where
// it came from: name, name+"_FILE", or "" when neither is set. Setting
// both is an error, as is a secret that cannot be one line of a header:
// none in the file, a line break or a control character, white space
// around it. what names the secret in errors ("token", "client secret"),
// which name the character that cannot be there and where it is; no error
// quotes the secret.
func (c *cli) secret(name, what string) (value, source string, err error) {
	fileVar := name + "_FILE"
	file := c.getenv(fileVar)
	value = c.getenv(name)
	switch {
	case file != "" && value != "":
		return "", "", fmt.Errorf("both %s and %s are set: set one", name, fileVar)
	case file != "":
		return c.secretFile(file, fileVar, what)
	case value == "":
		return "", "", nil
	}
	if err := checkSecret(value, name, what, false); err != nil {
		return "", "", err
	}
	return value, name, nil
}

// secretFile returns the secret in file, which source (a flag or an
// environment variable) names, as secret does.
func (c *cli) secretFile(file, source, what string) (value, from string, err error) {
	value, err = c.readSecretFile(file, what)
	if err != nil {
		return "", "", fmt.Errorf("the %s file of %s: %w", what, source, err)
	}
	if err := checkSecret(value, "the "+what+" file of "+source, what, true); err != nil {
		return "", "", err
	}
	return value, source, nil
}

// maxSecretFile bounds the size of a secret's file: a secret is a line.
const maxSecretFile = 4 << 10

// readSecretFile reads the secret (what: "API key", "signing secret") in
// the file name, with one trailing newline ("\n" or "\r\n") removed. It
// warns on stderr when the file is open to group or others: such a file is
// refused by nothing else (a Kubernetes secret volume is 0644 unless told
// otherwise), so it is not refused here.
//
// An error never names the file: a secret set by mistake where its file's
// name belongs would be printed. (The warning on a file open to others
// names it: such a file exists, so its name is a name.) The file is checked to be a regular one
// before it is opened, so that a FIFO or a device cannot hold the command.
func (c *cli) readSecretFile(name, what string) (string, error) {
	if st, err := os.Stat(name); err != nil {
		return "", fileFault(err)
	} else if !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	f, err := os.Open(name)
	if err != nil {
		return "", fileFault(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fileFault(err)
	}
	if !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		fmt.Fprintf(c.stderr, "warning: the %s file %s is open to group or others (mode %04o): chmod 600 %s\n", what, name, perm, name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fileFault(err)
	}
	if len(data) > maxSecretFile {
		return "", fmt.Errorf("larger than %d bytes: not one %s", maxSecretFile, what)
	}
	key := strings.TrimSuffix(string(data), "\n")
	if len(key) < len(data) {
		key = strings.TrimSuffix(key, "\r")
	}
	return key, nil
}

// checkSecret says what makes secret (what: "API key") unusable, naming
// where it came from and the character that cannot be in it (its class,
// code point and place), never quoting it. fromFile says that the secret
// is a file's, whose one trailing newline was removed.
func checkSecret(secret, source, what string, fromFile bool) error {
	if secret == "" {
		return fmt.Errorf("%s holds no %s", source, what)
	}
	f, ok := oneline.Find(secret, oneline.Secret)
	switch {
	case !ok:
		return nil
	case fromFile && f.Trailing():
		return fmt.Errorf("%s: the %s has %s (only the file's one trailing newline is removed)", source, what, f)
	}
	return fmt.Errorf("%s: the %s has %s", source, what, f)
}

// refusedFlag is the value of a flag that once took a secret on the
// command line: the environment variable that takes the secret instead.
// It keeps no value; parse refuses the flag.
type refusedFlag string

func (refusedFlag) String() string   { return "" }
func (refusedFlag) Set(string) error { return nil }

// refuseSecretFlag defines the flag name, which once took the secret of
// the environment variable env: parse refuses it with a usage error that
// names env and env_FILE, so that a script that used it learns what to
// do instead.
func refuseSecretFlag(fs *flag.FlagSet, name, env string) {
	fs.Var(refusedFlag(env), name, "refused: a `secret` on the command line shows in process lists; set "+env+" or "+env+"_FILE")
}

// refusedSecretFlag returns the usage error of the first refused flag set
// on fs, or nil. It never holds the flag's value.
func refusedSecretFlag(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if env, ok := f.Value.(refusedFlag); ok && err == nil {
			err = fmt.Errorf("--%s is refused: a secret on the command line shows in process lists (/proc/PID/cmdline) and shell histories; set %s, or %s_FILE to a file that holds it", f.Name, string(env), string(env))
		}
	})
	return err
}

// fileFault says why a secret's file could not be read, without its name
// (see readSecretFile).
func fileFault(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot read it: %w", pe.Err)
	}
	return errors.New("cannot read it")
}
