package kubernetes

import (
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// podScheduling captures what the kube-scheduler's filters read from a
// pending pod besides its requests, for sizing to simulate them; nil when
// the pod constrains nothing and has no labels to be selected by. The
// tenant labels are left out: PendingPod carries them already.
func podScheduling(pod *corev1.Pod) *types.PodScheduling {
	s := &types.PodScheduling{
		NodeSelector: pod.Spec.NodeSelector,
		Tolerations:  withoutDefaultTolerations(pod.Spec.Tolerations),
		HostPorts:    hostPorts(pod),
	}
	if len(pod.Labels) > 0 {
		s.Labels = maps.Clone(pod.Labels)
		for _, k := range []string{types.LabelOrg, types.LabelProject, types.LabelService} {
			delete(s.Labels, k)
		}
		if len(s.Labels) == 0 {
			s.Labels = nil
		}
	}
	if a := pod.Spec.Affinity; a != nil {
		if a.NodeAffinity != nil {
			s.NodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		if a.PodAntiAffinity != nil {
			for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				if term.TopologyKey == corev1.LabelHostname {
					s.AntiAffinity = append(s.AntiAffinity, term)
				}
			}
		}
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == corev1.DoNotSchedule &&
			(c.TopologyKey == corev1.LabelHostname || c.TopologyKey == corev1.LabelTopologyZone) {
			s.TopologySpread = append(s.TopologySpread, c)
		}
	}
	if s.Labels == nil && !s.ConstrainsPlacement() {
		return nil
	}
	return s
}

// withoutDefaultTolerations drops the not-ready and unreachable NoExecute
// tolerations the DefaultTolerationSeconds admission plugin adds to every
// pod: sizing ignores those startup taints anyway, and carrying them would
// give every pending pod a constraint.
func withoutDefaultTolerations(tolerations []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range tolerations {
		if (t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable) &&
			t.Operator == corev1.TolerationOpExists && t.Effect == corev1.TaintEffectNoExecute {
			continue
		}
		out = append(out, t)
	}
	return out
}

// hostPorts are the ports the pod binds on its node, from every container
// (init containers included, as the scheduler's NodePorts filter counts
// them).
func hostPorts(pod *corev1.Pod) []types.HostPort {
	var out []types.HostPort
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			for _, p := range list[i].Ports {
				if p.HostPort > 0 {
					out = append(out, types.HostPort{Port: p.HostPort, Protocol: p.Protocol, IP: p.HostIP})
				}
			}
		}
	}
	return out
}

// nodeTaints are the node's taints in the domain's type.
func nodeTaints(node *corev1.Node) []types.Taint {
	if len(node.Spec.Taints) == 0 {
		return nil
	}
	out := make([]types.Taint, len(node.Spec.Taints))
	for i, t := range node.Spec.Taints {
		out[i] = types.TaintOf(t)
	}
	return out
}
