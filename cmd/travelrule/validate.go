package main

import (
	"context"
	"fmt"
)

// validate checks transfer files as the sandbox does, without sending
// anything, and prints every fault of every file with its JSON path.
func (c *cli) validate(_ context.Context, args []string) int {
	fs := c.newFlagSet("validate", "[--strict] transfer.json...")
	strict := fs.Bool("strict", false, "apply IVMS101 checks on top of the description's")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return c.usageError(fs, "name at least one file (- for standard input)")
	}
	code := exitOK
	for _, name := range fs.Args() {
		if c.checkFile(c.stdout, name, *strict) == nil {
			code = exitFailed
			continue
		}
		fmt.Fprintf(c.stdout, "%s: ok\n", name)
	}
	return code
}
