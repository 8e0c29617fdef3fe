package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vaspkit/travelrule"
)

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
	req, err := c.readTransfer(*file)
	if err != nil {
		fmt.Fprintf(c.stderr, "initiate: %v\n", err)
		return exitFailed
	}
	client, err := c.client(s)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	res, err := client.InitiateTransfer(ctx, req)
	if err != nil {
		c.printError("initiate", err)
		return exitFailed
	}
	return c.printJSON(map[string]any{
		"status":         res.Status,
		"transferId":     res.TransferID,
		"requestId":      res.RequestID,
		"idempotencyKey": res.IdempotencyKey,
		"attempts":       res.Attempts,
	})
}

// readTransfer reads a transfer request from a file or, for "-", stdin.
// Unknown fields are refused: in a file written by hand they are typos.
func (c *cli) readTransfer(name string) (*travelrule.TransferRequest, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(c.stdin, 1<<20))
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var req travelrule.TransferRequest
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("%s: not a transfer request: %w", name, err)
	}
	return &req, nil
}

// printError prints an SDK error with what the caller needs to act on it:
// every fault by field path, and the service's message and fields, which
// the SDK has scrubbed of the request's personal values.
func (c *cli) printError(op string, err error) {
	fmt.Fprintf(c.stderr, "%s: %v\n", op, err)
	var ve *travelrule.ValidationError
	if errors.As(err, &ve) {
		for _, f := range ve.Fields {
			fmt.Fprintf(c.stderr, "  %s: %s\n", f.Field, f.Reason)
		}
	}
	var apiErr *travelrule.APIError
	if errors.As(err, &apiErr) {
		if apiErr.Message != "" && !strings.Contains(err.Error(), apiErr.Message) {
			fmt.Fprintf(c.stderr, "  the service said: %q\n", apiErr.Message)
		}
		for _, f := range apiErr.Fields {
			fmt.Fprintf(c.stderr, "  %s: %s\n", f.Field, f.Reason)
		}
	}
	var unknown *travelrule.OutcomeUnknownError
	if errors.As(err, &unknown) {
		fmt.Fprintf(c.stderr, "  the service may have acted: reconcile before sending again (txId %q, callback ref %q, idempotency key %q)\n",
			unknown.TxID, unknown.CallbackRef, unknown.IdempotencyKey)
	}
}

func (c *cli) printJSON(v any) int {
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(c.stderr, "writing output: %v\n", err)
		return exitFailed
	}
	return exitOK
}
