package release

import (
	"os/exec"
	"strings"
	"testing"
)

func TestReleasesFile(t *testing.T) {
	all, err := parse(releasesFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 || all[0].Name != "v0.1.0" {
		t.Fatalf("releases.txt: want v0.1.0 first and at least two releases, got %v", all)
	}
}

// TestReleasesMatchTags checks releases.txt against the repository's tags
// where the clone has them (a CI clone may not: then the file is all there is).
func TestReleasesMatchTags(t *testing.T) {
	for _, r := range All() {
		out, err := exec.Command("git", "rev-parse", "--verify", "--quiet", r.Name+"^{commit}").Output()
		if err != nil {
			t.Logf("%s: no tag in this clone; releases.txt says %s", r.Name, r.Commit)
			continue
		}
		if got := strings.TrimSpace(string(out)); got != r.Commit {
			t.Errorf("tag %s is %s, releases.txt says %s", r.Name, got, r.Commit)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, text := range []string{
		"v0.1.0",
		"0.1.0 ef1215b9969b8b5e732c479329f8feaa174ce2ac",
		"v0.1.0 ef1215b",
		"v0.2.0 ef1215b9969b8b5e732c479329f8feaa174ce2ac\nv0.1.0 2e57ed58e7e2a0576b377f412a2c2c015391355c",
	} {
		if _, err := parse(text); err == nil {
			t.Errorf("parse(%q): want an error", text)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"v0.1.0", "v0.2.0", -1},
		{"v0.10.0", "v0.9.9", 1},
		{"v0.2.0", "v0.2.0+dev", 0},
		{"v1.0.0", "v0.99.99", 1},
		{"unknown", "v0.1.0", -1},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestReleaseOf(t *testing.T) {
	if got := releaseOf("ef1215b9969b8b5e732c479329f8feaa174ce2ac"); got != "v0.1.0" {
		t.Errorf("releaseOf(v0.1.0's commit) = %q", got)
	}
	if got, want := releaseOf("0000000000000000000000000000000000000000"), Latest().Name+"+dev"; got != want {
		t.Errorf("releaseOf(a later commit) = %q, want %q", got, want)
	}
}
