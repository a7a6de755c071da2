package types

import corev1 "k8s.io/api/core/v1"

// PodScheduling is what the kube-scheduler's filters read from a pending
// pod besides its requests, kept in the Kubernetes API's own types so the
// Kubernetes scheduling libraries can evaluate it. Every field is optional
// and omitted from JSON when empty.
type PodScheduling struct {
	// Labels are the pod's labels: other pods' anti-affinity and spread
	// selectors match them.
	Labels       map[string]string `json:"labels,omitempty"`
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// NodeAffinity is the required node affinity
	// (requiredDuringSchedulingIgnoredDuringExecution).
	NodeAffinity *corev1.NodeSelector `json:"nodeAffinity,omitempty"`
	Tolerations  []corev1.Toleration  `json:"tolerations,omitempty"`
	// HostPorts are the container ports bound on the node (HostPort > 0).
	HostPorts []HostPort `json:"hostPorts,omitempty"`
	// AntiAffinity are the required pod anti-affinity terms whose
	// topologyKey is kubernetes.io/hostname: pods they select never share
	// a node with this one.
	AntiAffinity []corev1.PodAffinityTerm `json:"antiAffinity,omitempty"`
	// TopologySpread are the constraints with whenUnsatisfiable
	// DoNotSchedule on kubernetes.io/hostname or topology.kubernetes.io/zone.
	TopologySpread []corev1.TopologySpreadConstraint `json:"topologySpread,omitempty"`
	// ZoneSpreadPods are, for each TopologySpread entry in order, how many
	// pods its selector matches in each zone among the pods already bound
	// to nodes the observer sees (nil for hostname entries and when not
	// counted): the zone spread filter counts them, so a zone already
	// holding more than its share takes no more.
	ZoneSpreadPods []map[string]int32 `json:"zoneSpreadPods,omitempty"`
}

// HostPort is one port a pod binds on its node. Two pods conflict on a node
// when protocol and port are equal and their IPs overlap (equal, or either
// is unspecified).
type HostPort struct {
	Port     int32           `json:"port"`
	Protocol corev1.Protocol `json:"protocol,omitempty"` // empty means TCP
	IP       string          `json:"ip,omitempty"`       // empty means 0.0.0.0
}

// ConstrainsPlacement reports whether anything beyond labels limits where
// the pod may run.
func (s *PodScheduling) ConstrainsPlacement() bool {
	return s != nil && (len(s.NodeSelector) > 0 || s.NodeAffinity != nil || len(s.Tolerations) > 0 ||
		len(s.HostPorts) > 0 || len(s.AntiAffinity) > 0 || len(s.TopologySpread) > 0)
}
