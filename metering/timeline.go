package metering

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Segment says: from From until the next segment of the same Size (or
// now), the pool had Nodes nodes of Size. Sizes are independent, so a pool
// holding two sizes at once has two open segments.
type Segment struct {
	Size  string    `json:"size"`
	Nodes int       `json:"nodes"`
	From  time.Time `json:"from"`
}

// Timeline is a pool's node-count history, kept in workflow state: small,
// JSON-serialisable, ordered by From. A size with no segment had zero nodes.
type Timeline struct {
	Segments []Segment `json:"segments,omitempty"`
	// Horizon is the latest Prune point: the history before it is gone,
	// so changes dated earlier are refused rather than silently lost.
	Horizon time.Time `json:"horizon,omitzero"`
}

// Record notes that from at the pool has nodes nodes of size. It appends
// only when the count of that size changes; a second change at the same
// instant replaces the first. Changes must come in time order. Bad input
// returns an error naming what is wrong and leaves the timeline unchanged.
func (t *Timeline) Record(size string, nodes int, at time.Time) error {
	if err := t.checkChange(size, nodes, at); err != nil {
		return err
	}
	t.apply(size, nodes, at.UTC())
	return nil
}

// RecordCounts records the pool's whole composition at once: every size in
// counts gets its count, and every size not in counts drops to zero. It is
// all-or-nothing: on error nothing is recorded.
func (t *Timeline) RecordCounts(counts map[string]int, at time.Time) error {
	sizes := make([]string, 0, len(counts))
	for size, nodes := range counts {
		if err := t.checkChange(size, nodes, at); err != nil {
			return err
		}
		sizes = append(sizes, size)
	}
	if err := t.checkTime(at); err != nil {
		return err
	}
	for size, nodes := range t.Current() {
		if _, kept := counts[size]; !kept && nodes > 0 {
			sizes = append(sizes, size)
		}
	}
	// Sorted so that replaying the workflow yields the same segment order.
	slices.Sort(sizes)
	for _, size := range sizes {
		t.apply(size, counts[size], at.UTC())
	}
	return nil
}

// Nodes is the current node count of size.
func (t *Timeline) Nodes(size string) int {
	if i := t.lastOf(size, len(t.Segments)); i >= 0 {
		return t.Segments[i].Nodes
	}
	return 0
}

// Current is the current node count per size, sizes at zero left out.
func (t *Timeline) Current() map[string]int {
	out := map[string]int{}
	for i := len(t.Segments) - 1; i >= 0; i-- {
		s := t.Segments[i]
		if _, seen := out[s.Size]; !seen {
			out[s.Size] = s.Nodes
		}
	}
	for size, nodes := range out {
		if nodes == 0 {
			delete(out, size)
		}
	}
	return out
}

// Prune drops the history that no hour at or after before can need: for
// each size, everything older than the segment in force at before (and
// that segment too when it is zero). Pass the meter cursor, so unmetered
// hours keep everything they need and the state stays small.
func (t *Timeline) Prune(before time.Time) {
	if before.IsZero() {
		return
	}
	before = before.UTC()
	inForce := map[string]bool{}
	var kept []Segment
	// Walk backwards: the first segment of a size at or before the cut
	// is the one in force there; older ones of that size are superseded.
	for i := len(t.Segments) - 1; i >= 0; i-- {
		s := t.Segments[i]
		if !s.From.After(before) {
			if inForce[s.Size] {
				continue
			}
			inForce[s.Size] = true
			if s.Nodes == 0 {
				continue
			}
		}
		kept = append(kept, s)
	}
	slices.Reverse(kept)
	t.Segments = kept
	if before.After(t.Horizon) {
		t.Horizon = before
	}
}

func (t *Timeline) checkChange(size string, nodes int, at time.Time) error {
	if err := ValidateSize(size); err != nil {
		return err
	}
	if nodes < 0 {
		return fmt.Errorf("node count %d for size %q is negative", nodes, size)
	}
	return t.checkTime(at)
}

func (t *Timeline) checkTime(at time.Time) error {
	if at.IsZero() {
		return fmt.Errorf("change time is zero; pass when the node count changed")
	}
	if n := len(t.Segments); n > 0 && at.Before(t.Segments[n-1].From) {
		return fmt.Errorf("change at %s is before the last recorded change at %s; record changes in time order",
			at.UTC().Format(time.RFC3339Nano), t.Segments[n-1].From.Format(time.RFC3339Nano))
	}
	if at.Before(t.Horizon) {
		return fmt.Errorf("change at %s is before the pruned horizon %s, whose hours are already metered",
			at.UTC().Format(time.RFC3339Nano), t.Horizon.Format(time.RFC3339Nano))
	}
	return nil
}

// apply records a change already checked; at is UTC.
func (t *Timeline) apply(size string, nodes int, at time.Time) {
	last := t.lastOf(size, len(t.Segments))
	if last >= 0 && t.Segments[last].From.Equal(at) {
		// Same instant: the new count replaces the old one, and if that
		// makes it equal to what came before, the change disappears.
		if t.Nodes(size) == nodes {
			return
		}
		prev := 0
		if p := t.lastOf(size, last); p >= 0 {
			prev = t.Segments[p].Nodes
		}
		if prev == nodes {
			t.Segments = slices.Delete(t.Segments, last, last+1)
		} else {
			t.Segments[last].Nodes = nodes
		}
		return
	}
	if t.Nodes(size) == nodes {
		return
	}
	t.Segments = append(t.Segments, Segment{Size: size, Nodes: nodes, From: at})
}

// lastOf is the index of the last segment of size before index end, or -1.
func (t *Timeline) lastOf(size string, end int) int {
	for i := end - 1; i >= 0; i-- {
		if t.Segments[i].Size == size {
			return i
		}
	}
	return -1
}

// ValidateSize checks a node size name. It becomes part of an idempotency
// key split on '/', so it must be non-empty and free of '/' and spaces.
func ValidateSize(size string) error {
	if size == "" {
		return fmt.Errorf("node size is empty")
	}
	if strings.ContainsFunc(size, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return fmt.Errorf("node size %q must not contain '/', spaces or control characters", size)
	}
	return nil
}
