package contract_test

import (
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// TestDesignTableListsEveryPackage keeps docs/design.md's "Where each
// concern lives" true: every package of the module is named there, either
// by its path (`connectors/sim/simremote`) or by its last element in a row
// that names its parent (`connectors/digitalocean`, `aws`, …).
func TestDesignTableListsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	table := section(string(doc), "## Where each concern lives")
	if table == "" {
		t.Fatal(`docs/design.md has no "## Where each concern lives" section`)
	}
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if rel == "" || named(table, rel) {
			continue
		}
		t.Errorf("docs/design.md, \"Where each concern lives\": no row names package %s; add one saying what it holds", rel)
	}
}

// section is the text from heading to the next heading of its level.
func section(doc, heading string) string {
	_, rest, ok := strings.Cut(doc, heading+"\n")
	if !ok {
		return ""
	}
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

func named(table, rel string) bool {
	for _, form := range []string{"`" + rel + "`", "`" + rel + "/", "`" + rel + " "} {
		if strings.Contains(table, form) {
			return true
		}
	}
	parent, base := path.Dir(rel), path.Base(rel)
	if parent == "." {
		return false
	}
	for _, row := range strings.Split(table, "\n") {
		if strings.Contains(row, "`"+parent+"/") && strings.Contains(row, "`"+base+"`") {
			return true
		}
	}
	return false
}
