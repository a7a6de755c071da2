package sizing

import (
	corev1 "k8s.io/api/core/v1"
)

// zoneCount is one DoNotSchedule zone spread constraint of a shape with
// the pods its selector already matches per zone
// (types.PodScheduling.ZoneSpreadPods).
type zoneCount struct {
	pods    map[string]int32
	maxSkew int32
	// self: the shape's own pods match the selector, so placing one adds
	// to its zone's count.
	self bool
}

// allowSpreadZones works out, for each shape whose zone spread counts
// running pods, the zones the PodTopologySpread filter lets its next pod
// into: a zone whose count, plus the pod itself, would exceed the
// emptiest zone's by more than maxSkew is refused. The zones compared are
// those of the templates and existing nodes the shape's node filter
// admits, and those already holding matching pods. It judges the shape's
// first pod: once pods fill the allowed zones the scheduler would open
// the others again, so this may buy a node more than needed, never one in
// a zone the pod cannot enter.
func (in *input) allowSpreadZones() {
	for s := range in.shapes {
		sh := &in.shapes[s]
		if len(sh.zoneCounts) == 0 {
			continue
		}
		domains := map[string]bool{}
		for i := range in.sizes {
			if in.zonesAdmitting(sh.filter, &in.sizes[i]) == 0 {
				continue
			}
			for _, node := range in.templates[in.sizes[i].index] {
				if z := node.named.Labels[corev1.LabelTopologyZone]; z != "" && in.filters[sh.filter].matches(node) {
					domains[z] = true
				}
			}
		}
		for i := range in.existing {
			if z := in.existing[i].node.named.Labels[corev1.LabelTopologyZone]; z != "" && in.existingAdmits(sh.filter, i) {
				domains[z] = true
			}
		}
		allowed := map[string]bool{}
		for z := range domains {
			allowed[z] = true
		}
		for _, c := range sh.zoneCounts {
			for z := range c.pods {
				domains[z] = true
			}
			least := int32(-1)
			for z := range domains {
				if n := c.pods[z]; least < 0 || n < least {
					least = n
				}
			}
			self := int32(0)
			if c.self {
				self = 1
			}
			for z := range allowed {
				if c.pods[z]+self-least > c.maxSkew {
					delete(allowed, z)
				}
			}
		}
		sh.allowedZones = allowed
	}
}

// takesZone reports whether the shape's pods may go to a node in zone
// ("" when the node's zone is unknown, which is not judged).
func (s *shape) takesZone(zone string) bool {
	return s.allowedZones == nil || zone == "" || s.allowedZones[zone]
}

// allowedZonesAdmitting is how many of size z's zone templates the shape's
// filter admits in zones its spread allows; a template without a zone is
// not judged (the provider picks, and the region counts as one zone).
func (in *input) allowedZonesAdmitting(s *shape, z *size) int32 {
	n := int32(0)
	for _, node := range in.templates[z.index] {
		if s.takesZone(node.named.Labels[corev1.LabelTopologyZone]) && in.filters[s.filter].matches(node) {
			n++
		}
	}
	return n
}
