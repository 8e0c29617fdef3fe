package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/vaspkit/travelrule"
)

// validate checks transfer files with the SDK's own rules, without sending
// anything, and prints every fault with its JSON path.
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
		req, err := c.readTransfer(name)
		if err == nil {
			if *strict {
				err = req.ValidateStrict()
			} else {
				err = req.Validate()
			}
		}
		var ve *travelrule.ValidationError
		switch {
		case err == nil:
			fmt.Fprintf(c.stdout, "%s: ok\n", name)
		case errors.As(err, &ve):
			code = exitFailed
			for _, f := range ve.Fields {
				fmt.Fprintf(c.stdout, "%s: %s: %s\n", name, f.Field, f.Reason)
			}
		default:
			code = exitFailed
			fmt.Fprintf(c.stdout, "%s: %v\n", name, err)
		}
	}
	return code
}
