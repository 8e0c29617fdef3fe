// Command travelrule sends Travel Rule transfers and inquiry resolutions
// from a shell, makes and reads travel addresses, submits transaction
// hashes, searches the VASP directory, checks transfer files before
// anything is sent, checks that a deployment answers as documented,
// receives callbacks, and runs the sandbox service for teams that
// integrate from other languages.
//
// Usage:
//
//	travelrule initiate -f transfer.json     validate and send a transfer, print the result as JSON
//	travelrule resolve --transfer ID --approved VALUE [--callback URL]
//	travelrule address generate --first-name F --last-name L [--wallet W] [--external-id ID]
//	travelrule address decode TA             the form of a travel address and its URI, read locally
//	travelrule address lookup TA             which beneficiary fields the service holds for TA
//	travelrule txid --transfer ID --txid HASH
//	travelrule discover --domain D [--name N]
//	travelrule doctor [--json]               log in, make a test travel address, check every answer's shape
//	travelrule validate transfer.json...     every fault by JSON path; exit 1 if any file fails
//	travelrule listen --addr 127.0.0.1:8081  print each callback as a JSON line
//	travelrule sandbox --addr 127.0.0.1:8080 run the sandbox service
//	travelrule transfers list [--stage S] [--since T] [--ref-prefix P]  the journaled transfers, newest first
//	travelrule transfers stuck [--exit-code]  the journaled transfers that need a person
//	travelrule transfers show REF            one journaled transfer's stages and timeline
//	travelrule transfers settle (--stored ID | --not-stored) --reason TEXT REF
//	                                         record what the service said of an unknown outcome
//	travelrule version
//
// The addresses shown are the defaults: a sandbox and a listener run side
// by side. "travelrule help", -h and --help (also after a command) print
// help on standard output.
//
// Settings come from flags or the environment. Secrets come only from the
// environment, never from a flag (a flag's value shows in process lists):
// each secret X is in the variable X or in the file that X_FILE names, one
// trailing newline removed, never both; a flag that once took a secret
// (--token, listen's --secret and --capability-key) is a usage error that
// names the variables. The commands that call the service take
// TRAVELRULE_BASE_URL and credentials of exactly one kind: the live
// service's API key, TRAVELRULE_API_KEY or TRAVELRULE_API_KEY_FILE (or
// --api-key-file); a bearer JWT, TRAVELRULE_TOKEN or TRAVELRULE_TOKEN_FILE;
// or client credentials, TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID,
// TRAVELRULE_CLIENT_SECRET or TRAVELRULE_CLIENT_SECRET_FILE, and
// TRAVELRULE_SCOPES. Credentials of two kinds, or client credentials with a
// part missing, are a usage error; stderr names the source of the
// credentials in use ("travelrule: credentials: API key from
// TRAVELRULE_API_KEY_FILE"), never their values. listen verifies callbacks
// with the live service's signing secret (its x-data-integrity header),
// TRAVELRULE_SIGNING_SECRET or TRAVELRULE_SIGNING_SECRET_FILE (or
// --signing-secret-file); or with TRAVELRULE_WEBHOOK_SECRET or
// TRAVELRULE_WEBHOOK_SECRET_FILE (Standard Webhooks signatures); and with
// TRAVELRULE_CALLBACK_KEY or TRAVELRULE_CALLBACK_KEY_FILE (capability
// callback URLs); it names what it verifies and from where, and warns when
// it verifies nothing. listen's --addr is HOST:PORT: 127.0.0.1:PORT for
// this machine only, 0.0.0.0:PORT for every interface; a bare port is
// refused. "listen --path /transfers/inquiry/" receives a beneficiary's
// inbound inquiries. sandbox signs its callbacks as the live service does,
// with the same signing secret (by default the sandbox's published one,
// which it prints), or, with --standard-webhooks or
// TRAVELRULE_WEBHOOK_SECRET (or TRAVELRULE_WEBHOOK_SECRET_FILE; never a
// flag: --callback-secret is refused), with Standard Webhooks headers, and
// says which secret it uses, never its value. It accepts the
// API key of TRAVELRULE_API_KEY (or TRAVELRULE_API_KEY_FILE, or
// --api-key-file) and the client credentials of TRAVELRULE_CLIENT_ID and
// TRAVELRULE_CLIENT_SECRET when they are set, else its published ones;
// off loopback (an --addr outside 127.0.0.0/8 and ::1, other than
// localhost) it refuses to start with any published credential. It
// misbehaves on demand: --fault KIND[:KEY=VALUE,...] (repeatable) injects
// faults into the operations (rate-limit, a 429 with Retry-After;
// internal, a 500 after the transfer was stored; drop; and the others
// travelruletest.FaultKind lists), --decision reject (or none) makes it
// reject (or never decide) the transfers initiated (a rejection is
// announced by an INQUIRY_RESOLUTION {"approved":false} alone, as the live
// docs promise no TRANSFER_RESOLUTION for one; --rejection-resolution adds
// one), and its control plane
// (POST {base}/sandbox/faults and /sandbox/decision,
// travelruletest.ControlClient in Go) changes both while it runs. --tls
// serves HTTPS under a self-signed certificate made at start, written to a
// file it names (--tls-ca-file chooses it) for curl --cacert.
// transfers reads the transfer journal (package journal) from the Redis or
// PostgreSQL store that TRAVELRULE_JOURNAL_URL names (redis://… or
// postgres://…; never a flag, since it may hold a password).
// Results print as JSON without personal data: names, wallets and the
// service's answers stay out unless a flag such as --show-personal-data
// asks for them.
// Exit status: 0 success; 1 failed, and nothing was done (the service
// refused the request, or it was never sent): sending again is safe once
// the cause is fixed; 2 usage error; 3, from the commands that call the
// service, outcome unknown: the service may have carried the operation out
// (a connection lost after the request went), so reconcile before sending
// again. A script that retries must retry on 1 only. On failure those
// commands print one JSON object on stdout, {"outcome":"refused"} or
// {"outcome":"unknown"} with the command, the service's status code, and
// for an unknown outcome the attempts, the Idempotency-Key and the
// capability callback URL's reference.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/vaspkit/travelrule"
)

const programName = "travelrule"

// env is how the command reads its environment (os.Getenv outside tests).
type env func(string) string

// cli holds the command's streams and environment, so that tests run it
// in-process.
type cli struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv env

	listenTimeouts *serverTimeouts // listen's, when not the defaults (tests)
	listenConns    func(net.Conn)  // called with each connection listen accepts (tests)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal during the graceful shutdown ends the process at once
	}()
	code := (&cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}).run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

type command struct {
	name    string
	summary string
	run     func(c *cli, ctx context.Context, args []string) int
}

func commands() []command {
	return []command{
		{"initiate", "validate and send a transfer, print the result as JSON", (*cli).initiate},
		{"resolve", "resolve the inquiry of a transfer", (*cli).resolve},
		{"address", "make a travel address (generate), read one (decode) or ask the service about one (lookup)", (*cli).address},
		{"txid", "submit a transfer's on-chain transaction hash", (*cli).txid},
		{"discover", "search the service's directory of VASPs", (*cli).discover},
		{"doctor", "log in to a deployment, make a test travel address, check that every answer has a documented shape", (*cli).doctor},
		{"validate", "check transfer files as the sandbox does: every fault by JSON path", (*cli).validate},
		{"listen", "receive callbacks (or a beneficiary's inquiries) and print each as a JSON line", (*cli).listen},
		{"sandbox", "run the sandbox service on an address", (*cli).sandbox},
		{"transfers", "read the transfer journal: the transfers (list), those that need a person (stuck), one transfer's stages (show); settle an unknown outcome (settle)", (*cli).transfers},
		{"version", "print the SDK version", (*cli).version},
	}
}

// commandNames are the names of commands(), in order.
func commandNames() []string {
	var names []string
	for _, cmd := range commands() {
		names = append(names, cmd.name)
	}
	return names
}

func (c *cli) run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		c.usage(c.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			return c.run(ctx, []string{args[1], "--help"}) // "help initiate"
		}
		c.usage(c.stdout)
		return exitOK
	case "-version", "--version":
		return c.version(ctx, args[1:]) // as "travelrule version", which usage names
	}
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			return cmd.run(c, ctx, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "%s: unknown command %q", programName, args[0])
	if near := suggest(args[0], commandNames()); near != "" {
		fmt.Fprintf(c.stderr, ": did you mean %q?", near)
	}
	fmt.Fprint(c.stderr, "\n\n")
	c.usage(c.stderr)
	return exitUsage
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s <command> [flags]\n\nCommands:\n", programName)
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's flags.\n", programName)
	fmt.Fprintf(w, `
Environment (a secret X is in X or in the file X_FILE names, never both, never a flag):
  TRAVELRULE_BASE_URL       the service's base URL
Credentials, of one kind only (stderr names the source in use):
  TRAVELRULE_API_KEY        the live service's API key, or
  TRAVELRULE_API_KEY_FILE   a file that holds it (also --api-key-file); or
  TRAVELRULE_TOKEN          a bearer JWT, or TRAVELRULE_TOKEN_FILE; or client credentials:
  TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID, TRAVELRULE_CLIENT_SECRET (or
  TRAVELRULE_CLIENT_SECRET_FILE), TRAVELRULE_SCOPES
Callbacks:
  TRAVELRULE_SIGNING_SECRET the live service's callback signing secret, x-data-integrity
                            (listen verifies, sandbox signs), or
  TRAVELRULE_SIGNING_SECRET_FILE a file that holds it (also --signing-secret-file)
  TRAVELRULE_WEBHOOK_SECRET the Standard Webhooks secret (listen verifies, sandbox signs),
                            or TRAVELRULE_WEBHOOK_SECRET_FILE
  TRAVELRULE_CALLBACK_KEY   listen: accept only capability callback URLs made with this key,
                            or TRAVELRULE_CALLBACK_KEY_FILE
  TRAVELRULE_JOURNAL_URL    transfers: the journal's store, redis://… or postgres://…
The sandbox accepts the API key and client credentials above, when set, instead
of its published ones, and off loopback starts only with credentials of your own
(see 'travelrule sandbox --help').

The sandbox listens on %s by default and listen on %s, so that both run
side by side.
%s
Those are the statuses of the commands that call the service:
  %s;
the others end with 0, 1 (the operation failed) or 2.
`, defaultSandboxAddr, defaultListenAddr, exitHelp(true), callingCommands())
}

// callsService names the commands that send requests to the service and
// end with an unknown outcome (exitUnknown) when it may have acted. The
// doctor calls it too, but its status is its verdict.
var callsService = map[string]bool{
	"initiate": true, "resolve": true, "txid": true, "discover": true,
	"address": true, "address generate": true, "address lookup": true,
}

// callingCommands lists the commands of callsService, as the top-level
// usage names them.
func callingCommands() string {
	var names []string
	for name := range callsService {
		if name != "address" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// newFlagSet makes a command's flag set whose usage names the command. The
// flag package prints nothing itself: parse and usageError decide where
// help and errors go.
func (c *cli) newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(programName+" "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s %s %s\n\nFlags:\n", programName, name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// printUsage prints the command's usage on w.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	fs.SetOutput(w)
	fs.Usage()
	fs.SetOutput(io.Discard)
}

// parse parses args; it returns an exit status and false when the command
// must stop: help asked for (-h, --help: the usage on stdout, exit 0) or a
// usage error (on stderr, exit 2).
func (c *cli) parse(fs *flag.FlagSet, args []string) (int, bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		if err := refusedSecretFlag(fs); err != nil {
			return c.usageError(fs, "%v", err), false
		}
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		printUsage(fs, c.stdout)
		fmt.Fprint(c.stdout, exitHelp(callsService[strings.TrimPrefix(fs.Name(), programName+" ")]))
		return exitOK, false
	}
	return c.usageError(fs, "%v", err), false
}

// parseFlags parses args for a command that takes flags and no arguments:
// it answers as parse does, and stops with a usage error at any argument
// left over.
func (c *cli) parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if code, ok := c.parse(fs, args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		return c.usageError(fs, "unexpected arguments %q", fs.Args()), false
	}
	return 0, true
}

// usageError prints a usage error and the command's usage on stderr.
func (c *cli) usageError(fs *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(c.stderr, "%s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	printUsage(fs, c.stderr)
	return exitUsage
}

func (c *cli) version(_ context.Context, args []string) int {
	fs := c.newFlagSet("version", "")
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	fmt.Fprintf(c.stdout, "travelrule-go %s\n", travelrule.Version)
	return exitOK
}
