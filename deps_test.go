package travelrule_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoreImportsNoOptionalDependency: the root and callback packages
// import none of the optional dependencies (telemetry, the shared stores,
// browser tests), so that a user who imports them builds none of those.
// `go list -deps` lists every package either needs to build.
func TestCoreImportsNoOptionalDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to list dependencies")
	for _, pkg := range []string{".", "./callback"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, "github.com/hashicorp/go-retryablehttp", "the listing is of the package's dependencies")
		for _, dep := range deps {
			for _, optional := range []string{"go.opentelemetry.io/", "github.com/redis/", "github.com/jackc/", "github.com/chromedp/", "github.com/golang-jwt/"} {
				assert.False(t, strings.HasPrefix(dep, optional), "%s imports %s", pkg, dep)
			}
		}
	}
}
