package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestChangesMatchGetVersionCalls reads this package's source: every
// workflow.GetVersion call's change ID and maxSupported must be in
// Changes, and Changes must hold nothing else, so `visor version` and the
// downgrade check know exactly what the workflows record.
func TestChangesMatchGetVersionCalls(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	consts := map[string]string{}
	var calls []*ast.CallExpr
	var where []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i < len(n.Values) {
						if lit, ok := n.Values[i].(*ast.BasicLit); ok {
							consts[name.Name] = lit.Value
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "GetVersion" {
					calls = append(calls, n)
					where = append(where, fset.Position(n.Pos()).String())
				}
			}
			return true
		})
	}
	value := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.BasicLit:
			return e.Value
		case *ast.Ident:
			return consts[e.Name]
		}
		return ""
	}
	found := map[string]int{}
	for i, c := range calls {
		if len(c.Args) != 4 {
			t.Fatalf("%s: GetVersion with %d arguments", where[i], len(c.Args))
		}
		id, err := strconv.Unquote(value(c.Args[1]))
		if err != nil {
			t.Fatalf("%s: change ID is not a string constant of this package: %v", where[i], err)
		}
		max, err := strconv.Atoi(value(c.Args[3]))
		if err != nil {
			t.Fatalf("%s: maxSupported of %q is not an integer constant", where[i], id)
		}
		if prev, ok := found[id]; ok && prev != max {
			t.Errorf("%s: change ID %q asked with maxSupported %d and %d", where[i], id, prev, max)
		}
		found[id] = max
	}
	listed := map[string]int{}
	for _, c := range Changes {
		if _, dup := listed[c.ID]; dup {
			t.Errorf("Changes lists %q twice", c.ID)
		}
		listed[c.ID] = c.Max
		if c.Release == "" {
			t.Errorf("Changes: %q names no release", c.ID)
		}
		if max, ok := found[c.ID]; !ok {
			t.Errorf("Changes lists %q, which no GetVersion call asks", c.ID)
		} else if max != c.Max {
			t.Errorf("Changes says %q goes to %d, its GetVersion call to %d", c.ID, c.Max, max)
		}
	}
	var missing []string
	for id := range found {
		if _, ok := listed[id]; !ok {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("GetVersion asks %v, missing from Changes in versions.go", missing)
	}
	if len(found) == 0 {
		t.Fatal("found no GetVersion call: the source walk is broken")
	}
}
