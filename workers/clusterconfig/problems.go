package clusterconfig

import (
	"fmt"
	"strings"
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

// required reports an empty string field.
func (ps *problems) required(field, value, what string) {
	if value == "" {
		ps.add(field, "is empty; it must be %s", what)
	}
}

func (ps *problems) notNegative(field string, value int) {
	if value < 0 {
		ps.add(field, "must not be negative, got %d", value)
	}
}
