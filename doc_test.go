package travelrule_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportedIdentifiersHaveDocComments is the check behind "go doc shows
// a comment for every exported name": every package of the module, its
// package clause, and every exported constant, variable, type, function,
// method and struct field that go doc lists.
func TestExportedIdentifiersHaveDocComments(t *testing.T) {
	var missing []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		fset := token.NewFileSet()
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		var files []*ast.File
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(path, name), nil, parser.ParseComments)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			return nil
		}
		p, err := doc.NewFromFiles(fset, files, path)
		if err != nil {
			return err
		}
		if strings.TrimSpace(p.Doc) == "" {
			missing = append(missing, path+": package "+p.Name)
		}
		if p.Name == "main" {
			return nil
		}
		check := func(kind, name, text string) {
			if strings.TrimSpace(text) == "" {
				missing = append(missing, path+": "+kind+" "+name)
			}
		}
		for _, v := range append(p.Consts, p.Vars...) {
			for _, n := range v.Names {
				if ast.IsExported(n) && strings.TrimSpace(v.Doc) == "" {
					missing = append(missing, path+": "+n)
				}
			}
		}
		for _, f := range p.Funcs {
			check("func", f.Name, f.Doc)
		}
		for _, typ := range p.Types {
			check("type", typ.Name, typ.Doc)
			for _, f := range typ.Funcs {
				check("func", f.Name, f.Doc)
			}
			for _, m := range typ.Methods {
				check("method", typ.Name+"."+m.Name, m.Doc)
			}
			for _, v := range append(typ.Consts, typ.Vars...) {
				for _, n := range v.Names {
					if ast.IsExported(n) && strings.TrimSpace(v.Doc) == "" {
						missing = append(missing, path+": "+n)
					}
				}
			}
			for _, spec := range typ.Decl.Specs {
				st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, field := range st.Fields.List {
					for _, n := range field.Names {
						if ast.IsExported(n.Name) && field.Doc == nil && field.Comment == nil {
							missing = append(missing, path+": field "+typ.Name+"."+n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("exported names without a doc comment:\n  %s", strings.Join(missing, "\n  "))
	}
}
