// Package release says which Visor Fleet release a binary is and which
// releases exist: releases.txt maps each tagged release to its commit, so
// a clone without tags (a CI checkout) still finds them.
package release

import (
	_ "embed"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

//go:embed releases.txt
var releasesFile string

// Set at link time by scripts/build-visor.sh:
//
//	-X github.com/hanzoai/visor-fleet/internal/release.version=v0.2.0
//	-X github.com/hanzoai/visor-fleet/internal/release.commit=<hash>
//	-X github.com/hanzoai/visor-fleet/internal/release.modified=true
//
// Empty in a plain `go build`; Current falls back to the build info.
var version, commit, modified string

// Release is one tagged release and the commit it was cut from.
type Release struct {
	Name   string `json:"name"`
	Commit string `json:"commit"`
}

// All returns the releases in releases.txt, oldest first.
func All() []Release {
	out, err := parse(releasesFile)
	if err != nil {
		panic(err) // releases.txt is checked by TestReleasesFile
	}
	return out
}

func parse(text string) ([]Release, error) {
	var out []Release
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("releases.txt line %d: want \"<release> <commit>\", got %q", i+1, line)
		}
		if _, ok := ordinal(f[0]); !ok {
			return nil, fmt.Errorf("releases.txt line %d: release %q is not vMAJOR.MINOR.PATCH", i+1, f[0])
		}
		if len(f[1]) != 40 {
			return nil, fmt.Errorf("releases.txt line %d: commit %q is not a full 40-digit hash", i+1, f[1])
		}
		if n := len(out); n > 0 && Compare(out[n-1].Name, f[0]) >= 0 {
			return nil, fmt.Errorf("releases.txt line %d: %s does not come after %s", i+1, f[0], out[n-1].Name)
		}
		out = append(out, Release{Name: f[0], Commit: f[1]})
	}
	return out, nil
}

// Find returns the named release.
func Find(name string) (Release, bool) {
	for _, r := range All() {
		if r.Name == name {
			return r, true
		}
	}
	return Release{}, false
}

// Latest is the newest release in releases.txt.
func Latest() Release {
	all := All()
	return all[len(all)-1]
}

// Build is what this binary says about itself.
type Build struct {
	// Release is the release this binary was built as: the -X value, or
	// the release whose commit it was built from, or the latest release
	// with "+dev" when built from a later tree.
	Release string `json:"release"`
	// Commit is the commit it was built from ("" if unknown); Modified
	// says the tree had uncommitted changes.
	Commit   string `json:"commit"`
	Modified bool   `json:"modified,omitempty"`
}

// Current describes the running binary.
func Current() Build {
	b := Build{Release: version, Commit: commit, Modified: modified == "true"}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = b.Modified || s.Value == "true"
			}
		}
	}
	if b.Release == "" {
		b.Release = releaseOf(b.Commit)
	}
	return b
}

// releaseOf names the release a commit is: the release cut from it, or
// the latest release plus "+dev" (a build from a tree after it).
func releaseOf(commit string) string {
	for _, r := range All() {
		if commit != "" && r.Commit == commit {
			return r.Name
		}
	}
	return Latest().Name + "+dev"
}

// Compare orders two release names (vMAJOR.MINOR.PATCH, anything after a
// '+' or '-' ignored): -1, 0 or 1. A name that does not parse sorts first.
func Compare(a, b string) int {
	x, okA := ordinal(a)
	y, okB := ordinal(b)
	switch {
	case !okA && !okB:
		return strings.Compare(a, b)
	case !okA:
		return -1
	case !okB:
		return 1
	}
	for i := range x {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func ordinal(name string) ([3]int, bool) {
	var out [3]int
	s, ok := strings.CutPrefix(name, "v")
	if !ok {
		return out, false
	}
	if i := strings.IndexAny(s, "+-"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
