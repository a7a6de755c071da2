package sizing

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// shape is one distinct pod request. Pods are packed per shape, not one by
// one: a thousand replicas of a Deployment cost one step, not a thousand.
type shape struct {
	// req.Pods is the pod slots a pod takes, at least 1.
	req types.Resources
	// model is the GPU model the pods name, only when they ask for GPUs.
	model string
	// byShape[first:end] are its pods, in key order; n is how many pods
	// they stand for (an entry with Count stands for several).
	first, end int32
	n          int64
	// offGPU: the pods ask for no GPU and some usable size without GPUs
	// holds them, so they stay off GPU nodes (see admits).
	offGPU bool

	// Scheduling constraints, the same for every pod of the shape:
	// sched and namespace are the first pod's, filterSig and podSig their
	// canonical text (see filterSignature, podSignature).
	sched             *types.PodScheduling
	namespace         string
	tenant            [3]string // org, project, service
	filterSig, podSig string
	// filter indexes input.filters.
	filter int32
	// cap is how many of its pods one node takes at most (0: no limit
	// beyond room); isolated shapes share no node with other shapes;
	// zoneSpread deals the pods evenly over a size's zones (see capOn).
	cap        int64
	isolated   bool
	zoneSpread bool
	// zoneCounts are its zone spread constraints' counts of pods already
	// running; allowedZones, when not nil, the zones the scheduler would
	// let its pods into given them (spread_zones.go).
	zoneCounts   []zoneCount
	allowedZones map[string]bool
}

func (s shape) count() int64 { return s.n }

type shapeKey struct {
	cpu, mem, gpus, slots, disk int64
	model                       string
	filterSig, podSig           string
}

// size is a catalog entry that can hold pods.
type size struct {
	t     types.InstanceType
	alloc types.Resources
	// index is the size's row in input.templates.
	index int
}

// holds reports how many pods of shape s one empty node of size z holds:
// none when a filter refuses every template of the size, else what room
// and the shape's per-node cap allow.
func (in *input) holds(z *size, s *shape) int64 {
	if !admits(s, z.t.GPUs, z.t.GPUModel) {
		return 0
	}
	zones := in.zonesAdmitting(s.filter, z)
	if s.allowedZones != nil && zones > 0 {
		zones = in.allowedZonesAdmitting(s, z)
	}
	if zones == 0 {
		return 0
	}
	n := fitCount(z.alloc, s.req)
	if c := s.capOn(zones); c > 0 {
		n = min(n, c)
	}
	return n
}

// admits reports whether a node with these GPUs may take pods of shape s at
// all, room aside. GPU pods need the GPU model they name. Pods without GPUs
// stay off GPU nodes while some size without GPUs can hold them: managed
// clusters taint GPU nodes, and buying accelerators to run CPU pods would
// cost several times the CPU node. A catalog of only GPU sizes still takes
// them.
func admits(s *shape, nodeGPUs int64, nodeModel string) bool {
	if s.req.GPUs > 0 {
		return sameGPUModel(s.model, nodeModel)
	}
	return !(s.offGPU && nodeGPUs > 0)
}

type existingNode struct {
	target string // "existing:<name>"
	free   types.Resources
	gpus   int64
	model  string
	node   filterNode // labels and lasting taints, for the filters
	// used: this plan put pods here; closed: an isolated shape did, so
	// no other shape may.
	used, closed bool
	// ruled: a promised pod with pod-to-pod rules lands here, so no
	// shape with rules of its own (capped or isolated) may.
	ruled bool
}

// input is a Request normalized once: pods sorted and grouped by shape,
// eligible existing nodes sorted by name, usable sizes checked.
type input struct {
	pods     []types.PendingPod
	keys     []string // per pod index
	byKey    []int32  // pod indexes in (key, requests) order
	podShape []int32  // per pod index; invalidPod when its requests are negative
	shapes   []shape  // canonical order: GPUs, CPU, memory, slots descending
	byShape  []int32
	existing []existingNode
	sizes    []size
	skipped  []Alternative
	excluded []size // usable sizes struck off by the caller, for reasons
	limit    int    // MaxNewNodes

	// selectors: some pod has anti-affinity or spread selectors.
	selectors bool
	filters   []nodeFilter
	// templates[size.index] are the size's template nodes, one per zone;
	// admitZones[filter*len(templates)+size.index] how many admit the filter.
	templates    [][]filterNode
	admitZones   []int32
	existingMemo []int8 // per (filter, existing node): 0 unknown, 1 admits, 2 refuses
}

const invalidPod = -1

// unlimitedSlots stands in for pod slots a node did not report.
const unlimitedSlots = math.MaxInt64

func prepare(req Request, excluded []string) *input {
	in := &input{pods: req.Pending, limit: req.MaxNewNodes, selectors: anySelectors(req.Pending)}
	in.indexPods()
	in.groupShapes()
	in.resolveConstraints()
	in.checkSizes(req.Catalog, excluded)
	in.prepareTemplates(req.Template)
	in.markOffGPU()
	in.eligibleNodes(req.Existing, req.Catalog, req.Template)
	for i := range in.existing {
		in.existing[i].ruled = req.ruledNodes[strings.TrimPrefix(in.existing[i].target, ExistingNodePrefix)]
	}
	in.allowSpreadZones()
	return in
}

// indexPods builds every key in one allocation and sorts pods by key (then
// requests, so duplicate keys still order the same whatever the input order).
func (in *input) indexPods() {
	n := len(in.pods)
	total := 0
	for i := range in.pods {
		total += len(in.pods[i].Namespace) + 1 + len(in.pods[i].Name)
	}
	var b strings.Builder
	b.Grow(total)
	for i := range in.pods {
		b.WriteString(in.pods[i].Namespace)
		b.WriteByte('/')
		b.WriteString(in.pods[i].Name)
	}
	all := b.String()
	// Sorting (key, index) pairs in place keeps the comparisons on
	// contiguous memory instead of chasing indexes into keys.
	sorted := make([]keyedPod, n)
	in.keys = make([]string, n)
	off := 0
	for i := range in.pods {
		l := len(in.pods[i].Namespace) + 1 + len(in.pods[i].Name)
		in.keys[i] = all[off : off+l]
		sorted[i] = keyedPod{key: in.keys[i], index: int32(i)}
		off += l
	}
	slices.SortFunc(sorted, func(a, b keyedPod) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return compareRequests(in.pods[a.index], in.pods[b.index])
	})
	in.byKey = make([]int32, n)
	for i, k := range sorted {
		in.byKey[i] = k.index
	}
}

type keyedPod struct {
	key   string
	index int32
}

func compareRequests(a, b types.PendingPod) int {
	ra, rb := a.Requests, b.Requests
	return cmp.Or(cmp.Compare(ra.MilliCPU, rb.MilliCPU), cmp.Compare(ra.Memory, rb.Memory),
		cmp.Compare(ra.GPUs, rb.GPUs), cmp.Compare(ra.Pods, rb.Pods), cmp.Compare(ra.EphemeralStorage, rb.EphemeralStorage),
		strings.Compare(a.GPUModel, b.GPUModel))
}

func podShapeKey(p *types.PendingPod, withLabels bool) shapeKey {
	k := shapeKey{cpu: p.Requests.MilliCPU, mem: p.Requests.Memory, gpus: p.Requests.GPUs, slots: max(p.Requests.Pods, 1),
		disk: p.Requests.EphemeralStorage}
	if k.gpus > 0 {
		k.model = p.GPUModel
	}
	if p.Scheduling != nil {
		k.filterSig, k.podSig = filterSignature(p.Scheduling), podSignature(p, withLabels)
	}
	return k
}

// groupShapes buckets pods by shape, orders shapes canonically and lays
// each shape's pods out contiguously in key order (a counting sort).
func (in *input) groupShapes() {
	ids := make(map[shapeKey]int32)
	in.podShape = make([]int32, len(in.pods))
	var counts []int32
	var units []int64
	// Replicas of one Deployment share a name prefix, so in key order the
	// same shape comes in runs: remembering the last one skips most
	// map lookups.
	var last shapeKey
	lastID := int32(-1)
	for _, i := range in.byKey {
		p := &in.pods[i]
		if p.Requests.IsNegative() {
			in.podShape[i] = invalidPod
			continue
		}
		k := podShapeKey(p, in.selectors)
		if lastID >= 0 && k == last {
			in.podShape[i] = lastID
			counts[lastID]++
			units[lastID] += int64(p.Pods())
			continue
		}
		id, ok := ids[k]
		if !ok {
			id = int32(len(in.shapes))
			ids[k] = id
			sh := shape{
				req:   types.Resources{MilliCPU: k.cpu, Memory: k.mem, GPUs: k.gpus, Pods: k.slots, EphemeralStorage: k.disk},
				model: k.model, filterSig: k.filterSig, podSig: k.podSig, namespace: p.Namespace,
				tenant: [3]string{p.Org, p.Project, p.Service},
			}
			if k.filterSig != "" || k.podSig != "" {
				sh.sched = p.Scheduling
			}
			in.shapes = append(in.shapes, sh)
			counts = append(counts, 0)
			units = append(units, 0)
		}
		in.podShape[i] = id
		counts[id]++
		units[id] += int64(p.Pods())
		last, lastID = k, id
	}
	// Renumber shapes into canonical order so everything downstream is
	// independent of which pod happened to come first.
	order := make([]int32, len(in.shapes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return compareShapes(in.shapes[a], in.shapes[b]) })
	renumber := make([]int32, len(order))
	sorted := make([]shape, len(order))
	var next int32
	for newID, oldID := range order {
		renumber[oldID] = int32(newID)
		sorted[newID] = in.shapes[oldID]
		sorted[newID].first = next
		sorted[newID].end = next
		sorted[newID].n = units[oldID]
		next += counts[oldID]
	}
	in.shapes = sorted
	in.byShape = make([]int32, next)
	for _, i := range in.byKey {
		if in.podShape[i] == invalidPod {
			continue
		}
		id := renumber[in.podShape[i]]
		in.podShape[i] = id
		in.byShape[in.shapes[id].end] = i
		in.shapes[id].end++
	}
}

// compareShapes is the canonical order: bigger first on GPUs, CPU, memory,
// slots, ephemeral storage, then GPU model by name, then constraints by
// their text.
func compareShapes(a, b shape) int {
	return cmp.Or(cmp.Compare(b.req.GPUs, a.req.GPUs), cmp.Compare(b.req.MilliCPU, a.req.MilliCPU),
		cmp.Compare(b.req.Memory, a.req.Memory), cmp.Compare(b.req.Pods, a.req.Pods),
		cmp.Compare(b.req.EphemeralStorage, a.req.EphemeralStorage), strings.Compare(a.model, b.model),
		strings.Compare(a.filterSig, b.filterSig), strings.Compare(a.podSig, b.podSig))
}

// checkSizes keeps the catalog entries that can hold a pod and records why
// the others were skipped.
func (in *input) checkSizes(catalog []types.InstanceType, excluded []string) {
	strike := make(map[string]bool, len(excluded))
	for _, name := range excluded {
		strike[name] = true
	}
	seen := make(map[string]bool, len(catalog))
	in.sizes = make([]size, 0, len(catalog))
	for _, t := range catalog {
		why := unusable(t)
		switch {
		case why == "" && seen[t.Name]:
			why = "repeats an earlier catalog entry of the same name"
		case why == "" && strike[t.Name]:
			why = "excluded: the provider reported insufficient capacity"
			in.excluded = append(in.excluded, size{t: t, alloc: t.Allocatable()})
		}
		seen[t.Name] = true
		if why != "" {
			in.skipped = append(in.skipped, Alternative{Size: t.Name, Skipped: why})
			continue
		}
		in.sizes = append(in.sizes, size{t: t, alloc: t.Allocatable()})
	}
	slices.SortStableFunc(in.skipped, func(a, b Alternative) int { return strings.Compare(a.Size, b.Size) })
}

// markOffGPU sets shape.offGPU for pods without GPUs that a usable size
// without GPUs can hold.
func (in *input) markOffGPU() {
	for i := range in.shapes {
		s := &in.shapes[i]
		if s.req.GPUs > 0 {
			continue
		}
		for _, z := range in.sizes {
			if z.t.GPUs == 0 && in.zonesAdmitting(s.filter, &z) > 0 && fitCount(z.alloc, s.req) > 0 {
				s.offGPU = true
				break
			}
		}
	}
}

// unusable says what is wrong with a catalog entry, or "" when it can hold pods.
func unusable(t types.InstanceType) string {
	capacity := t.Capacity()
	switch {
	case t.Name == "":
		return "has no name"
	case capacity.IsNegative() || t.Overhead.IsNegative():
		return "capacity or overhead is negative"
	case t.HourlyPrice < 0 || math.IsNaN(t.HourlyPrice) || math.IsInf(t.HourlyPrice, 0):
		return "hourly price is not a finite amount >= 0"
	}
	a := t.Allocatable()
	if a.IsNegative() || a.Pods == 0 {
		return "overhead " + t.Overhead.String() + " leaves no room for pods"
	}
	return ""
}

// eligibleNodes keeps ready and provisioning nodes with a sane
// observation, sorted by name. Duplicate names are dropped altogether: an
// observation that names one node twice cannot be trusted for either.
func (in *input) eligibleNodes(nodes []types.NodeObservation, catalog []types.InstanceType, opts TemplateOptions) {
	models := make(map[string]string, len(catalog))
	for _, t := range catalog {
		if _, ok := models[t.Name]; !ok {
			models[t.Name] = t.GPUModel
		}
	}
	names := make(map[string]int, len(nodes))
	for _, n := range nodes {
		names[n.Name]++
	}
	var kept []types.NodeObservation
	for _, n := range nodes {
		if names[n.Name] != 1 || (n.State != types.NodeReady && n.State != types.NodeProvisioning) ||
			n.Allocatable.IsNegative() || n.Requested.IsNegative() {
			continue
		}
		kept = append(kept, n)
	}
	slices.SortFunc(kept, func(a, b types.NodeObservation) int { return strings.Compare(a.Name, b.Name) })
	in.existing = make([]existingNode, len(kept))
	for i, n := range kept {
		free := n.FreeRoom()
		if n.Allocatable.Pods == 0 {
			free.Pods = unlimitedSlots
		}
		model := models[n.Size]
		if product := n.Labels[LabelGPUProduct]; product != "" {
			model = product // what GFD found on the node beats what its size promised
		}
		in.existing[i] = existingNode{
			target: ExistingNodePrefix + n.Name, free: free, gpus: n.Allocatable.GPUs, model: model,
			node: existingNodeObject(n, catalog, opts),
		}
	}
	in.existingMemo = make([]int8, len(in.filters)*len(in.existing))
}

// fitCount is how many pods of request req fit in free room. req.Pods is
// at least 1, so the answer is finite.
func fitCount(free, req types.Resources) int64 {
	n := free.Pods / req.Pods
	if req.MilliCPU > 0 {
		n = min(n, free.MilliCPU/req.MilliCPU)
	}
	if req.Memory > 0 {
		n = min(n, free.Memory/req.Memory)
	}
	if req.GPUs > 0 {
		n = min(n, free.GPUs/req.GPUs)
	}
	if req.EphemeralStorage > 0 {
		n = min(n, free.EphemeralStorage/req.EphemeralStorage)
	}
	return max(n, 0)
}

// times is req taken k times; callers guarantee k*req fits in an int64
// because k came from fitCount against real free room.
func times(req types.Resources, k int64) types.Resources {
	return types.Resources{MilliCPU: req.MilliCPU * k, Memory: req.Memory * k, GPUs: req.GPUs * k, Pods: req.Pods * k,
		EphemeralStorage: req.EphemeralStorage * k}
}
