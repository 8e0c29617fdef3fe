// Command travelrule sends Travel Rule transfers and inquiry resolutions
// from a shell, checks transfer files before anything is sent, receives
// status callbacks, and runs the sandbox service for teams that integrate
// from other languages.
//
// Usage:
//
//	travelrule initiate -f transfer.json     validate and send a transfer, print the result as JSON
//	travelrule resolve --transfer ID --approved VALUE [--callback URL]
//	travelrule validate transfer.json...     the SDK's client-side checks; exit 1 if any file fails
//	travelrule listen --addr 127.0.0.1:8080  print each status callback as a JSON line
//	travelrule sandbox --addr 127.0.0.1:8080 run the sandbox service
//	travelrule version
//
// Settings come from flags or the environment: TRAVELRULE_BASE_URL, and
// either TRAVELRULE_TOKEN (a bearer JWT) or TRAVELRULE_TOKEN_URL,
// TRAVELRULE_CLIENT_ID, TRAVELRULE_CLIENT_SECRET and TRAVELRULE_SCOPES
// (client credentials). Exit status: 0 success, 1 the operation failed,
// 2 usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/vaspkit/travelrule"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	programName = "travelrule"
)

// env is how the command reads its environment (os.Getenv outside tests).
type env func(string) string

// cli holds the command's streams and environment, so that tests run it
// in-process.
type cli struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv env
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal during the graceful shutdown ends the process at once
	}()
	code := (&cli{os.Stdin, os.Stdout, os.Stderr, os.Getenv}).run(ctx, os.Args[1:])
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
		{"validate", "check transfer files with the SDK's client-side rules", (*cli).validate},
		{"listen", "receive status callbacks and print each as a JSON line", (*cli).listen},
		{"sandbox", "run the sandbox service on an address", (*cli).sandbox},
		{"version", "print the SDK version", (*cli).version},
	}
}

func (c *cli) run(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		c.usage(c.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			return cmd.run(c, ctx, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "%s: unknown command %q\n\n", programName, args[0])
	c.usage(c.stderr)
	return exitUsage
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s <command> [flags]\n\nCommands:\n", programName)
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's flags.\n", programName)
	fmt.Fprint(w, `
Environment:
  TRAVELRULE_BASE_URL       the service's base URL
  TRAVELRULE_TOKEN          a bearer JWT, or client credentials:
  TRAVELRULE_TOKEN_URL, TRAVELRULE_CLIENT_ID, TRAVELRULE_CLIENT_SECRET, TRAVELRULE_SCOPES

Exit status: 0 success, 1 the operation failed, 2 usage error.
`)
}

// newFlagSet makes a command's flag set that reports errors on stderr and
// whose --help prints the command's usage.
func (c *cli) newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(programName+" "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		fmt.Fprintf(c.stderr, "Usage: %s %s %s\n\nFlags:\n", programName, name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args; it returns an exit status and false when the command
// must stop (help asked for, or a usage error).
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}

// parseFlags parses args for a command that takes flags and no arguments:
// it answers as parse does, and stops with a usage error at any argument
// left over.
func (c *cli) parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if code, ok := parse(fs, args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		return c.usageError(fs, "unexpected arguments %q", fs.Args()), false
	}
	return 0, true
}

func (c *cli) usageError(fs *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(c.stderr, "%s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	fs.Usage()
	return exitUsage
}

func (c *cli) version(_ context.Context, args []string) int {
	fs := c.newFlagSet("version", "")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fmt.Fprintf(c.stdout, "travelrule-go %s\n", travelrule.Version)
	return exitOK
}
