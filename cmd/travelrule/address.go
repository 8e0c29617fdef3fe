package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"reflect"
	"strings"

	"github.com/vaspkit/travelrule"
)

// The travel-address commands: generate (the service makes one for a
// beneficiary), decode (read one locally) and lookup (ask the service whom
// one stands for).

// addressCommands are the subcommands of "travelrule address".
var addressCommands = []struct{ name, summary string }{
	{"generate", "make (or find again) the travel address of a beneficiary; print it, its form and the request id"},
	{"decode", "read a travel address locally: its form, and its URI when it can be read"},
	{"lookup", "ask the service which beneficiary fields it holds for a travel address it made"},
}

// address runs a subcommand of "travelrule address".
func (c *cli) address(ctx context.Context, args []string) int {
	fs := c.newFlagSet("address", "<generate|decode|lookup> [flags]")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), "\nSubcommands:\n")
		for _, sub := range addressCommands {
			fmt.Fprintf(fs.Output(), "  %-9s %s\n", sub.name, sub.summary)
		}
		fmt.Fprintf(fs.Output(), "\nRun '%s address <subcommand> --help' for its flags.\n", programName)
	}
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return c.usageError(fs, "name a subcommand: generate, decode or lookup")
	}
	switch sub, rest := fs.Arg(0), fs.Args()[1:]; sub {
	case "generate":
		return c.addressGenerate(ctx, rest)
	case "decode":
		return c.addressDecode(ctx, rest)
	case "lookup":
		return c.addressLookup(ctx, rest)
	default:
		return c.usageError(fs, "unknown subcommand %q", sub)
	}
}

// travelAddressSchema holds the field names of a beneficiary file.
var travelAddressSchema = schemaOf(reflect.TypeFor[travelrule.TravelAddressRequest]())

// addressGenerate makes the travel address of a beneficiary given by flags
// or a JSON file and prints it with its form. The beneficiary's names and
// wallet are never printed.
func (c *cli) addressGenerate(ctx context.Context, args []string) int {
	fs := c.newFlagSet("address generate", "[-f beneficiary.json] [--person-type natural|legal] [--first-name F --last-name L | --legal-name N] [--wallet W] [--external-id ID] [--self-hosted] [flags]")
	file := fs.String("f", "", "the beneficiary as JSON, the request's body (personType, firstName, lastName, legalName, walletAddress, externalId, isSelfHosted); - reads standard input; the flags below override its fields (flags show in process lists: prefer a file for real names)")
	req := &travelrule.TravelAddressRequest{}
	fs.StringVar(&req.PersonType, "person-type", "", `"natural" (the default) or "legal"`)
	fs.StringVar(&req.FirstName, "first-name", "", "a natural person's first name")
	fs.StringVar(&req.LastName, "last-name", "", "a natural person's last name")
	fs.StringVar(&req.LegalName, "legal-name", "", "a legal entity's name")
	fs.StringVar(&req.WalletAddress, "wallet", "", "the beneficiary's wallet address (with at least one hexadecimal digit)")
	fs.StringVar(&req.ExternalID, "external-id", "", "your own id of the beneficiary: the same id gets the same address again")
	fs.BoolVar(&req.IsSelfHosted, "self-hosted", false, "the wallet is self-hosted (its transfers go by the EMAIL flow)")
	s := c.addConnection(fs)
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	if *file != "" {
		fromFile, ok := c.readBeneficiary(*file)
		if !ok {
			return c.notSent("address generate")
		}
		overrideSetFlags(fs, fromFile, req)
		req = fromFile
	}
	if req.PersonType == "" {
		req.PersonType = "natural"
	}
	if req.PersonType != "natural" && req.PersonType != "legal" {
		return c.usageError(fs, `--person-type must be "natural" or "legal"`)
	}
	var ve *travelrule.ValidationError
	if errors.As(req.Validate(), &ve) {
		if *file == "" {
			return c.usageError(fs, "%s", flagFaults(ve.Fields))
		}
		for _, f := range ve.Fields {
			fmt.Fprintf(c.stderr, "%s: %s: %s\n", *file, f.Field, f.Reason)
		}
		return c.notSent("address generate")
	}
	client, err := c.client(s)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	res, err := client.GenerateTravelAddress(ctx, req)
	if err != nil {
		return c.fail("address generate", err)
	}
	return c.printResult("address generate", map[string]any{
		"travelAddress": res.TravelAddress, // the command's purpose: printed
		"form":          res.Form.String(),
		"requestId":     res.RequestID,
		"attempts":      res.Attempts,
	})
}

// readBeneficiary reads the beneficiary in the file name ("-": standard
// input). It prints each fault (unknown fields by path, a value of the
// wrong type, what makes it no JSON object) on stderr, never a value, and
// returns false if there was one.
func (c *cli) readBeneficiary(name string) (*travelrule.TravelAddressRequest, bool) {
	data, err := c.readFile(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // its text names the file already
		}
		fmt.Fprintf(c.stderr, "%s: %v\n", name, err)
		return nil, false
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		fmt.Fprintf(c.stderr, "%s: not a beneficiary: the file holds no JSON object\n", name)
		return nil, false
	}
	req := &travelrule.TravelAddressRequest{}
	if err := json.Unmarshal(data, req); err != nil {
		fmt.Fprintf(c.stderr, "%s: not a beneficiary: %s\n", name, jsonFault(data, err))
		return nil, false
	}
	faults := travelAddressSchema.unknown(data, "", nil)
	for _, f := range faults {
		fmt.Fprintf(c.stderr, "%s: %s: %s\n", name, f.Field, f.Reason)
	}
	return req, len(faults) == 0
}

// generateFlags names the flag of each field of a beneficiary.
var generateFlags = map[string]string{
	"personType": "--person-type", "firstName": "--first-name", "lastName": "--last-name", "legalName": "--legal-name",
	"walletAddress": "--wallet", "externalId": "--external-id",
}

// flagFaults says what is wrong with a beneficiary given by flags, each
// fault by its flag: "--first-name: required; --last-name: required".
func flagFaults(faults []travelrule.FieldError) string {
	parts := make([]string, 0, len(faults))
	for _, f := range faults {
		name, ok := generateFlags[f.Field]
		if !ok {
			name = f.Field
		}
		parts = append(parts, name+": "+f.Reason)
	}
	return strings.Join(parts, "; ")
}

// overrideSetFlags copies into dst the fields of src whose flags were set
// on the command line, so that flags override a file.
func overrideSetFlags(fs *flag.FlagSet, dst, src *travelrule.TravelAddressRequest) {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "person-type":
			dst.PersonType = src.PersonType
		case "first-name":
			dst.FirstName = src.FirstName
		case "last-name":
			dst.LastName = src.LastName
		case "legal-name":
			dst.LegalName = src.LegalName
		case "wallet":
			dst.WalletAddress = src.WalletAddress
		case "external-id":
			dst.ExternalID = src.ExternalID
		case "self-hosted":
			dst.IsSelfHosted = src.IsSelfHosted
		}
	})
}

// addressDecode reads a travel address without asking the service: its
// form, and its URI in the checksummed and unchecked forms. An address no
// one could have made fails with the reason.
func (c *cli) addressDecode(_ context.Context, args []string) int {
	fs := c.newFlagSet("address decode", "TA (- reads it from standard input)")
	ta, code, ok := c.parseTravelAddressArg(fs, args)
	if !ok {
		return code
	}
	form, uri := travelrule.InspectTravelAddress(ta)
	if form == travelrule.TravelAddressInvalid {
		_, err := travelrule.DecodeTravelAddress(ta) // its text says why, without the address
		fmt.Fprintf(c.stderr, "address decode: %v\n", err)
		return exitFailed
	}
	out := map[string]any{"form": form.String()}
	if uri != "" {
		out["uri"] = uri
	}
	return c.printJSON(out)
}

// addressLookup asks the service for the beneficiary a travel address
// stands for, and prints which of its fields are set; their values only
// under --show-personal-data.
func (c *cli) addressLookup(ctx context.Context, args []string) int {
	fs := c.newFlagSet("address lookup", "[--show-personal-data] TA (- reads it from standard input) [flags]")
	show := fs.Bool("show-personal-data", false, "print the beneficiary's names, wallet and external id (by default only which fields are set)")
	s := c.addConnection(fs)
	ta, code, ok := c.parseTravelAddressArg(fs, args)
	if !ok {
		return code
	}
	client, err := c.client(s)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	info, err := client.LookupTravelAddress(ctx, ta)
	if err != nil {
		return c.fail("address lookup", err)
	}
	fields := []struct{ name, value string }{
		{"personType", info.PersonType}, {"firstName", info.FirstName}, {"lastName", info.LastName},
		{"legalName", info.LegalName}, {"walletAddress", info.WalletAddress}, {"externalId", info.ExternalID},
	}
	set := []string{}
	values := map[string]string{}
	for _, f := range fields {
		if f.value != "" {
			set = append(set, f.name)
			values[f.name] = f.value
		}
	}
	out := map[string]any{"set": set, "requestId": info.RequestID, "attempts": info.Attempts}
	if *show {
		out["beneficiary"] = values
	}
	return c.printJSON(out)
}

// parseTravelAddressArg parses args, flags before or after the one
// argument, a travel address or "-" to read it from standard input. It
// answers as parse does, and stops with a usage error unless there is
// exactly one argument.
func (c *cli) parseTravelAddressArg(fs *flag.FlagSet, args []string) (string, int, bool) {
	if code, ok := c.parse(fs, args); !ok {
		return "", code, false
	}
	if fs.NArg() == 0 {
		return "", c.usageError(fs, "name one travel address (- reads it from standard input)"), false
	}
	ta := fs.Arg(0)
	if code, ok := c.parseFlags(fs, fs.Args()[1:]); !ok {
		return "", code, false
	}
	if ta == "-" {
		data, err := c.readFile("-")
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: reading standard input: %v\n", fs.Name(), err)
			return "", exitFailed, false
		}
		ta = strings.TrimSpace(string(data))
	}
	return ta, 0, true
}
