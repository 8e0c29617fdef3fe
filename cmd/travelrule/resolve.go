package main

import (
	"context"

	"github.com/vaspkit/travelrule"
)

func (c *cli) resolve(ctx context.Context, args []string) int {
	fs := c.newFlagSet("resolve", "--transfer ID --approved VALUE [--callback URL] [flags]")
	transfer := fs.String("transfer", "", "the transfer identifier (required)")
	approved := fs.String("approved", "", `the decision: "true" approves, "false" rejects (required)`)
	callbackURL := fs.String("callback", "", "an optional callback URL")
	s := c.addSettings(fs)
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case *transfer == "":
		return c.usageError(fs, "--transfer is required")
	case *approved == "":
		return c.usageError(fs, "--approved is required")
	}
	r := &travelrule.InquiryResolution{Approved: *approved, Callback: *callbackURL}
	if err := r.Validate(); err != nil {
		return c.usageError(fs, "%v", err) // nothing is sent
	}
	client, err := c.client(s)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	res, err := client.ResolveInquiry(ctx, *transfer, r)
	if err != nil {
		return c.fail("resolve", err)
	}
	return c.printResult("resolve", map[string]any{"status": res.Status, "requestId": res.RequestID, "attempts": res.Attempts})
}
