package main

import (
	"context"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var envVarRE = regexp.MustCompile(`"(TRAVELRULE_[A-Z_]+)"`)

// readEnvVars returns the environment variables the command's sources read
// (their string literals), test files aside.
func readEnvVars(t *testing.T) []string {
	t.Helper()
	vars := sourceMatches(t, envVarRE)
	require.NotEmpty(t, vars)
	return vars
}

// sourceMatches returns the first group of each match of re in the
// command's sources, test files aside, each once, in the order found.
func sourceMatches(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}

// TestDocsAreAccurate: the package documentation, the top-level usage and
// the command's page (docs/cli.md) name every environment variable the
// command reads, every command, and the default addresses of listen and
// sandbox.
func TestDocsAreAccurate(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	pkgDoc := f.Doc.Text()
	_, usage, _ := runCLI(t, context.Background(), "", nil, "--help")
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	require.NoError(t, err)
	docs := map[string]string{"package doc": pkgDoc, "usage": usage, "docs/cli.md": string(page)}

	for name, doc := range docs {
		for _, v := range readEnvVars(t) {
			assert.True(t, strings.Contains(doc, v), "%s names %s", name, v)
		}
	}
	delete(docs, "usage") // it lists the commands from commands()
	for name, doc := range docs {
		for _, cmd := range commands() {
			assert.True(t, strings.Contains(doc, "travelrule "+cmd.name), "%s shows %q", name, "travelrule "+cmd.name)
		}
		for _, want := range []string{"travelrule listen --addr " + defaultListenAddr + " ", "travelrule sandbox --addr " + defaultSandboxAddr + " "} {
			assert.True(t, strings.Contains(doc, want), "%s shows %q", name, want)
		}
	}
}

var secretVarRE = regexp.MustCompile(`\.secret\("(TRAVELRULE_[A-Z_]+)"`)

// TestDocsNameSecretFiles: every secret the command reads with secret has
// an X_FILE form, which the package documentation and the top-level usage
// name.
func TestDocsNameSecretFiles(t *testing.T) {
	vars := sourceMatches(t, secretVarRE)
	require.Subset(t, vars, []string{"TRAVELRULE_API_KEY", "TRAVELRULE_TOKEN", "TRAVELRULE_CLIENT_SECRET",
		"TRAVELRULE_SIGNING_SECRET", "TRAVELRULE_WEBHOOK_SECRET", "TRAVELRULE_CALLBACK_KEY"})
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	_, usage, _ := runCLI(t, context.Background(), "", nil, "--help")
	for name, doc := range map[string]string{"package doc": f.Doc.Text(), "usage": usage} {
		for _, v := range vars {
			assert.True(t, strings.Contains(doc, v+"_FILE"), "%s names %s_FILE", name, v)
		}
	}
}
