package main

import "context"

// txid submits the on-chain transaction hash of a transfer, after its
// broadcast: the service then sends the beneficiary's VASP a confirmation
// callback.
func (c *cli) txid(ctx context.Context, args []string) int {
	fs := c.newFlagSet("txid", "--transfer ID --txid HASH [flags]")
	transfer := fs.String("transfer", "", "the transfer identifier, its publicId (required)")
	hash := fs.String("txid", "", "the transaction hash (required)")
	s := c.addConnection(fs)
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case *transfer == "":
		return c.usageError(fs, "--transfer is required")
	case *hash == "":
		return c.usageError(fs, "--txid is required")
	}
	client, err := c.client(s)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	res, err := client.SubmitTxID(ctx, *transfer, *hash)
	if err != nil {
		return c.fail("txid", err)
	}
	return c.printResult("txid", map[string]any{"status": res.Status, "requestId": res.RequestID, "attempts": res.Attempts})
}
