package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// The check of a transfer file, shared by validate and initiate: every
// fault by JSON path, as the sandbox answers 400 (travelruletest.CheckTransfer),
// with TransferRequest.ValidateStrict's on top under --strict, and every
// unknown field, which in a file written by hand is a typo.

// checkFile reads and checks the transfer in the file name ("-": standard
// input). It returns the request when it has no fault; otherwise it prints
// each fault on w as "NAME: PATH: REASON", or what makes it no transfer
// request as "NAME: REASON", and returns nil.
func (c *cli) checkFile(w io.Writer, name string, strict bool) *travelrule.TransferRequest {
	data, err := c.readFile(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // its text names the file already
		}
		fmt.Fprintf(w, "%s: %v\n", name, err)
		return nil
	}
	req, faults, err := checkTransfer(data, strict)
	if err != nil {
		if fault := jsonObjectFault(data); fault != nil {
			err = fault // where the JSON breaks, never what it holds
		}
		fmt.Fprintf(w, "%s: not a transfer request: %v\n", name, err)
		return nil
	}
	for _, f := range faults {
		fmt.Fprintf(w, "%s: %s: %s\n", name, f.Field, f.Reason)
	}
	return req
}

// readFile reads a file or, for "-", standard input (at most 1 MiB).
func (c *cli) readFile(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(c.stdin, 1<<20))
	}
	return os.ReadFile(name)
}

// checkTransfer returns the request in data when it has no fault, or every
// fault: the sandbox's, then under strict ValidateStrict's that are not
// among them, then the unknown fields. err says why data is not a JSON
// object, without quoting it.
func checkTransfer(data []byte, strict bool) (*travelrule.TransferRequest, []travelrule.FieldError, error) {
	var faults []travelrule.FieldError
	var ve *travelrule.ValidationError
	switch err := travelruletest.CheckTransfer(data); {
	case errors.As(err, &ve):
		faults = ve.Fields
	case err != nil:
		return nil, nil, err
	}
	req, typed := decodeLeniently(data)
	if typed && strict {
		faults = appendNew(faults, req.ValidateStrict())
	}
	faults = append(faults, unknownFields(data)...)
	switch {
	case len(faults) > 0:
		return nil, faults, nil
	case !typed: // the sandbox found no fault of type: not expected
		return nil, nil, errors.New("its fields do not decode")
	}
	return req, nil, nil
}

// decodeLeniently decodes data as encoding/json does, unknown fields
// ignored; typed is false when a field has the wrong type.
func decodeLeniently(data []byte) (req *travelrule.TransferRequest, typed bool) {
	req = new(travelrule.TransferRequest)
	return req, json.Unmarshal(data, req) == nil
}

// appendNew appends the faults of err, a *travelrule.ValidationError or
// nil, that faults does not hold yet.
func appendNew(faults []travelrule.FieldError, err error) []travelrule.FieldError {
	var ve *travelrule.ValidationError
	if !errors.As(err, &ve) {
		return faults
	}
	seen := make(map[travelrule.FieldError]bool, len(faults))
	for _, f := range faults {
		seen[f] = true
	}
	for _, f := range ve.Fields {
		if !seen[f] {
			seen[f] = true
			faults = append(faults, f)
		}
	}
	return faults
}
