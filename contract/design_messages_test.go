package contract_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// messageNames are the string values of the package's message constants
// (Update*, Signal*, Query*), read from its source.
func messageNames(t *testing.T) map[string]string {
	t.Helper()
	names := map[string]string{}
	fset := token.NewFileSet()
	for _, file := range []string{"names.go", "cluster.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range spec.Names {
				if !strings.HasPrefix(id.Name, "Update") && !strings.HasPrefix(id.Name, "Signal") && !strings.HasPrefix(id.Name, "Query") {
					continue
				}
				lit, ok := spec.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s is not a string literal", id.Name)
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				names[v] = id.Name
			}
			return true
		})
	}
	if len(names) < 10 {
		t.Fatalf("found only %d message constants: %v", len(names), names)
	}
	return names
}

var messageRow = regexp.MustCompile("^\\| (`[a-z-]+`(?: / `[a-z-]+`)*) \\|")

// docs/design.md's tables under "The contract" name every signal, update
// and query the workflows answer to, and nothing else.
func TestDesignContractNamesEveryMessage(t *testing.T) {
	doc, err := os.ReadFile("../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	contract := section(string(doc), "## The contract")
	if contract == "" {
		t.Fatal(`docs/design.md has no "## The contract" section`)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(contract, "\n") {
		m := messageRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, name := range strings.Split(m[1], " / ") {
			rows[strings.Trim(name, "`")] = true
		}
	}
	names := messageNames(t)
	var problems []string
	for v, id := range names {
		if !rows[v] {
			problems = append(problems, "no row names "+strconv.Quote(v)+" ("+id+")")
		}
	}
	for v := range rows {
		if _, ok := names[v]; !ok {
			problems = append(problems, "a row names "+strconv.Quote(v)+", which is no message constant")
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Errorf("docs/design.md, \"The contract\": %s", p)
	}
}
