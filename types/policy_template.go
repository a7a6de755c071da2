package types

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Bounds on what a policy may declare for its nodes.
const (
	maxAllowedSizes   = 500
	maxTemplateLabels = 64
	maxTemplateTaints = 32
)

// validateNodeTemplate checks the labels and taints a pool declares for
// its nodes with Kubernetes' own syntax rules; the pool's identity labels
// are set by Visor and may not be declared.
func validateNodeTemplate(labels map[string]string, taints []NodeTaint) []error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("policy.%s: %s", field, fmt.Sprintf(format, a...)))
	}
	if len(labels) > maxTemplateLabels {
		bad("nodeLabels", "has %d labels, at most %d", len(labels), maxTemplateLabels)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if msgs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(labels[k])...); len(msgs) > 0 {
			bad(fmt.Sprintf("nodeLabels[%q]", k), "%s", strings.Join(msgs, "; "))
		}
		switch k {
		case LabelPool, LabelOrg, LabelProject, LabelService:
			bad(fmt.Sprintf("nodeLabels[%q]", k), "is the pool's identity label, set by Visor")
		}
	}
	if len(taints) > maxTemplateTaints {
		bad("nodeTaints", "has %d taints, at most %d", len(taints), maxTemplateTaints)
	}
	for i, t := range taints {
		field := fmt.Sprintf("nodeTaints[%d]", i)
		if msgs := validation.IsQualifiedName(t.Key); len(msgs) > 0 {
			bad(field+".key", "%q: %s", t.Key, strings.Join(msgs, "; "))
		}
		if t.Value != "" {
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				bad(field+".value", "%q: %s", t.Value, strings.Join(msgs, "; "))
			}
		}
		switch t.Effect {
		case "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			bad(field+".effect", "%q is not NoSchedule, PreferNoSchedule or NoExecute", t.Effect)
		}
	}
	return errs
}
