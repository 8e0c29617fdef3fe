package travelrule_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeFirstIntegrationCompiles: the README's "First integration"
// block is Go that builds against the SDK as it is, inside a function
// that declares only what the block takes from its surroundings (the
// context, a mux, the integrator's payments and the values it names).
// go vet builds it, so a renamed or removed name fails here.
func TestReadmeFirstIntegrationCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "## First integration\n")
	require.True(t, ok, "the README has a First integration section")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok)

	src := `package readme

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
)

// payments is the integrator's own bookkeeping.
type payments interface {
	Hold(ctx context.Context, paymentID string) error
	Sent(ctx context.Context, paymentID, transferID string)
	Broadcast(ctx context.Context, paymentID string) error
	Cancel(ctx context.Context, paymentID string) error
}

func firstIntegration(ctx context.Context, mux *http.ServeMux, payments payments, callbackKey []byte,
	paymentID, beneficiaryTravelAddress, from, to, inboundTransferID, confirmationURL string) error {
` + block + `	return err
}
`
	dir, err := os.MkdirTemp(".", "readme-check-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "readme.go"), []byte(src), 0o644))
	out, err := exec.Command("go", "vet", "./"+filepath.Base(dir)).CombinedOutput()
	require.NoError(t, err, "the README's first integration does not build:\n%s\n%s", out, src)
}
