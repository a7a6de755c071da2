package clusterconfig

import (
	"fmt"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Problem is one thing wrong in a clusters file.
type Problem struct {
	// Index is the cluster's position in the file; -1 for the file itself.
	Index int
	// Cluster is the cluster's id as written (may be empty or invalid).
	Cluster string
	// Field is the path inside the cluster entry, e.g. "digitalocean.clusterID".
	Field   string
	Message string
}

func (p Problem) String() string {
	if p.Index < 0 {
		return p.Field + ": " + p.Message
	}
	return fmt.Sprintf("clusters[%d] (id %q): %s: %s", p.Index, p.Cluster, p.Field, p.Message)
}

// FileError lists every problem of a clusters file, so one run of the
// worker shows them all.
type FileError struct {
	Path     string
	Problems []Problem
}

func (e *FileError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.Path + ": " + p.String()
	}
	return strings.Join(lines, "\n")
}

// problems collects Problems for one cluster entry at a time.
type problems struct {
	list    []Problem
	index   int
	cluster string
}

func (ps *problems) at(index int, cluster string) { ps.index, ps.cluster = index, cluster }

func (ps *problems) add(field, format string, args ...any) {
	ps.list = append(ps.list, Problem{Index: ps.index, Cluster: ps.cluster, Field: field, Message: fmt.Sprintf(format, args...)})
}

// top records a problem of the file itself, outside any cluster entry.
func (ps *problems) top(field, format string, args ...any) {
	ps.list = append(ps.list, Problem{Index: -1, Field: field, Message: fmt.Sprintf(format, args...)})
}

// section is a provider section's view of problems: its kind's Validate
// names fields inside the section, reported under the section's name.
type section struct {
	ps   *problems
	name string
}

func (s section) Add(field, format string, args ...any) {
	s.ps.add(s.name+"."+field, format, args...)
}

// Add makes problems a connectors.Problems for fields outside any section.
func (ps *problems) Add(field, format string, args ...any) { ps.add(field, format, args...) }

// checkRef checks a credential reference's form.
func checkRef(ps *problems, field string, ref connectors.CredentialRef, required bool) {
	connectors.CheckRef(ps, field, ref, required)
}
