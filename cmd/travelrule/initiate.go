package main

import "context"

func (c *cli) initiate(ctx context.Context, args []string) int {
	fs := c.newFlagSet("initiate", "[-f transfer.json | -f - ] [flags]")
	file := fs.String("f", "", "the transfer request as JSON (the wire form); - reads standard input (the default when it is not a terminal)")
	s := c.addSettings(fs)
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	if *file == "" {
		if isTerminal(c.stdin) {
			return c.usageError(fs, "name the transfer with -f FILE, or -f - to read standard input")
		}
		*file = "-"
	}
	req := c.checkFile(c.stderr, *file, s.strict)
	if req == nil {
		return c.notSent("initiate")
	}
	client, err := c.client(s)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	res, err := client.InitiateTransfer(ctx, req)
	if err != nil {
		return c.fail("initiate", err)
	}
	return c.printResult("initiate", map[string]any{
		"status":         res.Status,
		"transferId":     res.TransferID,
		"requestId":      res.RequestID,
		"idempotencyKey": res.IdempotencyKey,
		"attempts":       res.Attempts,
	})
}
