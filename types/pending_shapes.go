package types

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PendingShape is every pending pod of a pool that looks the same to
// sizing and to the law: the same namespace and tenant, requests, GPU model
// and scheduling constraints. Pod labels count only when some pending pod
// of the pool has an anti-affinity or spread selector that could read them.
type PendingShape struct {
	// Key names the shape: a digest of what makes it one.
	Key string `json:"key"`
	// Pod is the shape's oldest pod; its requests, GPU model, tenant and
	// scheduling stand for every pod of the shape.
	Pod PendingPod `json:"pod"`
	// Count is how many pods are pending in the shape; Listed how many of
	// them (its oldest) the observation lists in PendingPods.
	Count  int `json:"count"`
	Listed int `json:"listed"`
	// OldestSince is the shape's oldest UnschedulableSince; UnlistedSince
	// the oldest among the pods not listed (zero when all are).
	OldestSince   time.Time `json:"oldestSince"`
	UnlistedSince time.Time `json:"unlistedSince,omitzero"`
	// UnlistedTriedAt is the earliest TriedAt among the unlisted pods:
	// every one of them was tried since then (zero when one never was).
	UnlistedTriedAt time.Time `json:"unlistedTriedAt,omitzero"`
}

// Unlisted is how many of the shape's pods are not listed individually.
func (s PendingShape) Unlisted() int { return s.Count - s.Listed }

// UnlistedPod is the entry that stands for the shape's unlisted pods: the
// shape's pod under the name UnlistedName, with Count set and pending
// since the oldest of them. ok is false when every pod is listed.
func (s PendingShape) UnlistedPod() (PendingPod, bool) {
	if s.Unlisted() <= 0 {
		return PendingPod{}, false
	}
	p := s.Pod
	p.Name = UnlistedName(s.Key)
	p.Count = s.Unlisted()
	p.UnschedulableSince = s.UnlistedSince
	p.TriedAt = s.UnlistedTriedAt
	return p, true
}

// UnlistedPrefix starts the name of a shape's unlisted-pods entry; '~'
// is not allowed in a Kubernetes name, so it never names a real pod.
const UnlistedPrefix = "~shape-"

// UnlistedName is the name of shape key's unlisted-pods entry.
func UnlistedName(key string) string { return UnlistedPrefix + key }

// Bounds of a summarized observation: every pending pod is counted in its
// shape, and the list keeps the oldest pods of each shape.
const (
	// MaxListedPending bounds the pods listed individually beside the
	// shapes (for display, keys and per-pod bookkeeping).
	MaxListedPending = 500
	// MaxPendingShapes bounds the shapes one observation carries; shapes
	// past it (those pending the least long) are counted in Truncated.
	MaxPendingShapes = 500
	// MaxShapeCount bounds one shape's Count.
	MaxShapeCount = 10_000_000
)

// PendingCount is how many pods are pending in the pool: the shapes'
// counts, or the list when the observation carries no shapes.
func (o PoolObservation) PendingCount() int {
	if o.PendingShapes == nil {
		return len(o.PendingPods)
	}
	n := 0
	for _, s := range o.PendingShapes {
		n += s.Count
	}
	return n
}

// PendingEntries are the listed pods followed by one entry per shape for
// its unlisted pods (see PendingShape.UnlistedPod): what the law and the
// planner size, every pending pod counted once.
func (o PoolObservation) PendingEntries() []PendingPod {
	out := o.PendingPods
	for _, s := range o.PendingShapes {
		if p, ok := s.UnlistedPod(); ok {
			if len(out) == len(o.PendingPods) {
				out = slices.Clip(out)
			}
			out = append(out, p)
		}
	}
	return out
}

// SummarizePending groups every pending pod of the observation into
// shapes and keeps at most maxListed of them listed, each shape's oldest
// first (every shape keeps some listed when there are fewer shapes than
// maxListed), at most maxShapes shapes. Pods of dropped shapes are counted
// in Truncated. An observation that already carries shapes is returned as
// it is.
func (o PoolObservation) SummarizePending(maxListed, maxShapes int) PoolObservation {
	if o.PendingShapes != nil {
		return o
	}
	groups := groupByShape(o.PendingPods)
	if len(groups) > maxShapes {
		for _, g := range groups[maxShapes:] {
			o.Truncated += len(g.pods)
		}
		groups = groups[:maxShapes]
	}
	quota := listQuota(groups, maxListed)
	o.PendingShapes = make([]PendingShape, len(groups))
	var listed []PendingPod
	for i, g := range groups {
		n := quota[i]
		s := PendingShape{Key: g.key, Pod: g.pods[0], Count: len(g.pods), Listed: n, OldestSince: g.pods[0].UnschedulableSince}
		if n < len(g.pods) {
			s.UnlistedSince = g.pods[n].UnschedulableSince
			s.UnlistedTriedAt = earliestTry(g.pods[n:])
		}
		o.PendingShapes[i] = s
		listed = append(listed, g.pods[:n]...)
	}
	slices.SortFunc(listed, compareKeys)
	if listed == nil {
		listed = []PendingPod{}
	}
	o.PendingPods = listed
	return o
}

// earliestTry is the earliest TriedAt of pods, zero if one has none.
func earliestTry(pods []PendingPod) time.Time {
	var at time.Time
	for i, p := range pods {
		if p.TriedAt.IsZero() {
			return time.Time{}
		}
		if i == 0 || p.TriedAt.Before(at) {
			at = p.TriedAt
		}
	}
	return at
}

type shapeGroup struct {
	key  string
	pods []PendingPod // oldest first, then by key
}

// groupByShape buckets pods by shape, each bucket oldest first, buckets
// by their oldest pod (then key): the order shapes are kept and listed in.
func groupByShape(pods []PendingPod) []shapeGroup {
	withLabels := slices.ContainsFunc(pods, func(p PendingPod) bool {
		return p.Scheduling != nil && (len(p.Scheduling.AntiAffinity) > 0 || len(p.Scheduling.TopologySpread) > 0)
	})
	index := map[string]int{}
	var groups []shapeGroup
	var b strings.Builder
	for _, p := range pods {
		b.Reset()
		writeShapeText(&b, &p, withLabels)
		text := b.String()
		i, ok := index[text]
		if !ok {
			i = len(groups)
			index[text] = i
			groups = append(groups, shapeGroup{key: digest(text)})
		}
		groups[i].pods = append(groups[i].pods, p)
	}
	for _, g := range groups {
		slices.SortFunc(g.pods, olderFirst)
	}
	slices.SortFunc(groups, func(a, b shapeGroup) int {
		return cmp.Or(olderFirst(a.pods[0], b.pods[0]), strings.Compare(a.key, b.key))
	})
	return groups
}

func olderFirst(a, b PendingPod) int {
	return cmp.Or(a.UnschedulableSince.Compare(b.UnschedulableSince), compareKeys(a, b))
}

// compareKeys orders pods as their keys (namespace/name) compare, without
// building the keys.
func compareKeys(a, b PendingPod) int {
	if a.Namespace == b.Namespace {
		return strings.Compare(a.Name, b.Name)
	}
	n := min(len(a.Namespace), len(b.Namespace))
	if c := strings.Compare(a.Namespace[:n], b.Namespace[:n]); c != 0 {
		return c
	}
	// One namespace starts the other: the shorter goes on with '/'.
	if len(a.Namespace) < len(b.Namespace) {
		return cmp.Compare('/', b.Namespace[n])
	}
	return cmp.Compare(a.Namespace[n], '/')
}

// writeShapeText writes what makes a pod's shape, canonically.
func writeShapeText(b *strings.Builder, p *PendingPod, withLabels bool) {
	for _, s := range [...]string{p.Namespace, p.Org, p.Project, p.Service, p.GPUModel} {
		b.WriteString(strconv.Quote(s))
	}
	r := p.Requests
	for _, v := range [...]int64{r.MilliCPU, r.Memory, r.GPUs, r.Pods} {
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(v, 10))
	}
	if r.EphemeralStorage != 0 { // only then, so shapes without it keep their text
		b.WriteString(",e")
		b.WriteString(strconv.FormatInt(r.EphemeralStorage, 10))
	}
	// Most pods carry labels only; without selectors about those do not
	// matter, and there is nothing to encode.
	if s := p.Scheduling; s != nil && (s.ConstrainsPlacement() || (withLabels && len(s.Labels) > 0)) {
		c := *s
		if !withLabels {
			c.Labels = nil
		}
		// encoding/json sorts map keys: the same constraints give the same text.
		if text, err := json.Marshal(c); err == nil {
			b.Write(text)
		} else {
			fmt.Fprintf(b, "%p", s) // cannot happen for these types; never merge then
		}
	}
}

func digest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// listQuota is how many pods of each group are listed: the same number
// for every group as far as maxListed allows (groups smaller than that
// list all of theirs), the remainder one more each to the oldest groups.
func listQuota(groups []shapeGroup, maxListed int) []int {
	quota := make([]int, len(groups))
	total := 0
	for _, g := range groups {
		total += len(g.pods)
	}
	if total <= maxListed {
		for i, g := range groups {
			quota[i] = len(g.pods)
		}
		return quota
	}
	// The largest level q with sum(min(len, q)) <= maxListed.
	taken := func(q int) int {
		n := 0
		for _, g := range groups {
			n += min(len(g.pods), q)
		}
		return n
	}
	q := sort.Search(maxListed+1, func(q int) bool { return taken(q) > maxListed }) - 1
	left := maxListed - taken(q)
	for i, g := range groups {
		quota[i] = min(len(g.pods), q)
		if left > 0 && len(g.pods) > q {
			quota[i]++
			left--
		}
	}
	return quota
}

// ValidatePendingShapes checks that an observation's shapes agree with
// its list and stay within the bounds, naming what is wrong.
func (o PoolObservation) ValidatePendingShapes() error {
	if o.PendingShapes == nil {
		return nil
	}
	if len(o.PendingShapes) > MaxPendingShapes {
		return fmt.Errorf("pendingShapes holds %d shapes, at most %d", len(o.PendingShapes), MaxPendingShapes)
	}
	listed := 0
	seen := make(map[string]bool, len(o.PendingShapes))
	for i, s := range o.PendingShapes {
		switch {
		case s.Key == "" || len(s.Key) > 64:
			return fmt.Errorf("pendingShapes[%d].key must be 1 to 64 characters", i)
		case seen[s.Key]:
			return fmt.Errorf("pendingShapes[%d].key %q repeats", i, s.Key)
		case s.Count < 1 || s.Count > MaxShapeCount:
			return fmt.Errorf("pendingShapes[%d].count is %d, must be 1 to %d", i, s.Count, MaxShapeCount)
		case s.Listed < 0 || s.Listed > s.Count:
			return fmt.Errorf("pendingShapes[%d].listed is %d, must be 0 to its count %d", i, s.Listed, s.Count)
		case s.Pod.Namespace == "" || s.Pod.Name == "":
			return fmt.Errorf("pendingShapes[%d].pod has no namespace/name", i)
		case s.Pod.Requests.IsNegative():
			return fmt.Errorf("pendingShapes[%d].pod has negative requests", i)
		case s.Pod.Count != 0:
			return fmt.Errorf("pendingShapes[%d].pod.count must be unset", i)
		case s.Unlisted() > 0 && s.UnlistedSince.IsZero():
			return fmt.Errorf("pendingShapes[%d].unlistedSince is missing for %d unlisted pods", i, s.Unlisted())
		}
		seen[s.Key] = true
		listed += s.Listed
	}
	if listed != len(o.PendingPods) {
		return fmt.Errorf("pendingShapes list %d pods but pendingPods holds %d", listed, len(o.PendingPods))
	}
	return nil
}
