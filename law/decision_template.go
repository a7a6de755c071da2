package law

import (
	"slices"

	"github.com/hanzoai/visor-fleet/types"
)

// sizeLabels are the labels that differ between sizes of one pool by
// construction; every other label a node carries came from the pool's
// template, the region or the zone.
var sizeLabels = []string{
	"node.kubernetes.io/instance-type",
	"beta.kubernetes.io/instance-type",
	"kubernetes.io/hostname",
}

// MachineLabels are labels a provider puts on each node naming its own
// machine or node group: they differ between any two nodes of one
// template (two groups, one per size, at the least) and say nothing a pod
// selects on, so with Rules.KeepReplacement sameTemplate passes over them
// as it does the size's own. A connector that labels its nodes so lists
// the keys here (connectors/kwok's test checks its own are).
var MachineLabels = []string{
	"kwok.visor.hanzo.ai/group",
	"kwok.visor.hanzo.ai/machine",
}

// sameTemplate says whether every pod running on from would surely be
// admitted by to, a node of another size (Rules.AcrossSizes): neither has
// GPUs (a GPU pod's model and a GPU node's placement rules stay with its
// size), to carries every label of from (but the size's own) with the same
// value, so the selectors, affinities and zone the pods matched still
// match, and to has no taint from lacks, so the pods tolerate it. A pod
// that selects the instance type itself is the one case this does not
// see; the pool buys no such pods' sizes by name. With machineLabels the
// provider's per-machine labels (MachineLabels) are passed over too.
func sameTemplate(from, to types.NodeObservation, machineLabels bool) bool {
	if from.Allocatable.GPUs > 0 || to.Allocatable.GPUs > 0 || from.Requested.GPUs > 0 {
		return false
	}
	return sameLabelsAndTaints(from, to, machineLabels)
}

// sameGPUTemplate is sameTemplate for GPU nodes (Rules.ReplaceGPU): both
// have GPUs of one known model (models: each size's, from the catalog),
// to has as many GPUs as the pods on from request, and the labels and
// taints agree as sameTemplate asks. A GPU pod asks for its model through
// the size it was bought on; another size of the same model admits it.
func sameGPUTemplate(models map[string]string, from, to types.NodeObservation, machineLabels bool) bool {
	m := models[from.Size]
	if m == "" || models[to.Size] != m || from.Allocatable.GPUs == 0 || to.Allocatable.GPUs < from.Requested.GPUs {
		return false
	}
	return sameLabelsAndTaints(from, to, machineLabels)
}

// sameLabelsAndTaints: to carries every label of from but the size's own
// with the same value, and no taint from lacks.
func sameLabelsAndTaints(from, to types.NodeObservation, machineLabels bool) bool {
	for k, v := range from.Labels {
		if slices.Contains(sizeLabels, k) || machineLabels && slices.Contains(MachineLabels, k) {
			continue
		}
		if w, ok := to.Labels[k]; !ok || w != v {
			return false
		}
	}
	for _, t := range to.Taints {
		if !slices.ContainsFunc(from.Taints, func(f types.Taint) bool {
			return f.Key == t.Key && f.Value == t.Value && f.Effect == t.Effect
		}) {
			return false
		}
	}
	return true
}
