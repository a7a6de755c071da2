package types

import (
	"fmt"
	"slices"
)

// Bounds on what a policy may declare for its nodes.
const (
	maxAllowedSizes   = 500
	maxTemplateLabels = 64
	maxTemplateTaints = 32
)

// validateNodeTemplate checks the labels and taints a pool declares for
// its nodes with Kubernetes' own syntax rules and bounds their number; the
// pool's identity labels are set by Visor and may not be declared.
func validateNodeTemplate(labels map[string]string, taints []Taint) []error {
	errs := []error{ValidateNodeLabels("policy.nodeLabels", labels), ValidateTaints("policy.nodeTaints", taints)}
	if len(labels) > maxTemplateLabels {
		errs = append(errs, fmt.Errorf("policy.nodeLabels: has %d labels, at most %d", len(labels), maxTemplateLabels))
	}
	if len(taints) > maxTemplateTaints {
		errs = append(errs, fmt.Errorf("policy.nodeTaints: has %d taints, at most %d", len(taints), maxTemplateTaints))
	}
	for _, k := range []string{LabelPool, LabelOrg, LabelProject, LabelService} {
		if _, ok := labels[k]; ok {
			errs = append(errs, fmt.Errorf("policy.nodeLabels[%q]: is the pool's identity label, set by Visor", k))
		}
	}
	return slices.DeleteFunc(errs, func(e error) bool { return e == nil })
}
