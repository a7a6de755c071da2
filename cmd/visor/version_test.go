package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/internal/release"
	"github.com/hanzoai/visor-fleet/workflows"
)

func TestVersionJSON(t *testing.T) {
	out, err := runCLI(t, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	// A test binary is built from this tree, after the latest release.
	if release.Compare(v.Release, release.Latest().Name) != 0 {
		t.Errorf("release %q, want the latest release %s or it +dev", v.Release, release.Latest().Name)
	}
	if len(v.Changes) != len(workflows.Changes) || len(v.Changes) == 0 {
		t.Fatalf("changes %v, want %v", v.Changes, workflows.Changes)
	}
	for i, c := range workflows.Changes {
		if v.Changes[i] != c {
			t.Errorf("change %d: %+v, want %+v", i, v.Changes[i], c)
		}
	}
}

func TestVersionTable(t *testing.T) {
	out, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"release:", "commit:", "gate-fanout-activity", "law-replace"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := runCLI(t, "version", "-o", "xml"); err == nil {
		t.Error("-o xml: want an error")
	}
}
