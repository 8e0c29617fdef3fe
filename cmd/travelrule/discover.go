package main

import (
	"context"

	"github.com/vaspkit/travelrule"
)

// discover searches the service's directory of VASPs and prints the count
// and each VASP's id, name and domain (a VASP's public information).
func (c *cli) discover(ctx context.Context, args []string) int {
	fs := c.newFlagSet("discover", "--domain D [--name N] [flags]")
	domain := fs.String("domain", "", "match VASPs whose domain contains this, ignoring case")
	name := fs.String("name", "", "match VASPs whose name contains this, ignoring case (with --domain: both must match)")
	s := c.addConnection(fs)
	if code, ok := c.parseFlags(fs, args); !ok {
		return code
	}
	if *domain == "" && *name == "" {
		return c.usageError(fs, "--domain or --name is required")
	}
	client, err := c.client(s)
	if err != nil {
		return c.usageError(fs, "%v", err)
	}
	res, err := client.SearchVASPs(ctx, &travelrule.VASPQuery{Domain: *domain, Name: *name})
	if err != nil {
		return c.fail("discover", err)
	}
	type vasp struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Domain string `json:"domain"`
	}
	vasps := make([]vasp, 0, len(res.VASPs))
	for _, v := range res.VASPs {
		vasps = append(vasps, vasp{v.ID, v.Name, v.Domain})
	}
	return c.printJSON(map[string]any{"count": res.Count, "vasps": vasps, "requestId": res.RequestID, "attempts": res.Attempts})
}
