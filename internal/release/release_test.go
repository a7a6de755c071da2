package release

import (
	"os"
	"os/exec"
	"path/filepath"
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

// TestBuildReleaseWithoutTags: in a clone without tags (as CI checks out),
// scripts/build-release.sh still finds each release's commit, from
// releases.txt.
func TestBuildReleaseWithoutTags(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--no-tags", "--no-checkout", strings.TrimSpace(string(root)), dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v: %s", err, out)
	}
	// The script and releases.txt as this tree has them, committed or not.
	for _, f := range []string{"scripts/build-release.sh", "internal/release/releases.txt"} {
		raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tags, err := exec.Command("git", "-C", dir, "tag", "-l").Output()
	if err != nil || len(strings.TrimSpace(string(tags))) > 0 {
		t.Fatalf("the clone has tags %q (%v): the test would not test the fallback", tags, err)
	}
	for _, r := range All() {
		out, err := exec.Command("bash", dir+"/scripts/build-release.sh", "--commit", r.Name).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", r.Name, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != r.Commit {
			t.Errorf("%s: the script found %q, releases.txt says %s", r.Name, got, r.Commit)
		}
	}
	if out, err := exec.Command("bash", dir+"/scripts/build-release.sh", "--commit", "v99.0.0").CombinedOutput(); err == nil {
		t.Errorf("an unknown release: want an error, got %s", out)
	}
}
