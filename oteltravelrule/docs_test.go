package oteltravelrule_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsNameEverything: docs/telemetry.md names every attribute key,
// span name and metric name the package's code spells (each string
// literal that starts with "travelrule." or "http.").
func TestDocsNameEverything(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "telemetry.md"))
	require.NoError(t, err)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var names []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				if strings.HasPrefix(s, "travelrule.") || strings.HasPrefix(s, "http.") {
					names = append(names, strings.TrimSuffix(s, "."))
				}
			}
			return true
		})
	}
	require.Greater(t, len(names), 20)
	for _, name := range names {
		assert.Contains(t, string(doc), "`"+name, "docs/telemetry.md names %s", name)
	}
}
