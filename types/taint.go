package types

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Taint is a node taint as a pool declares it or a node carries it.
type Taint struct {
	Key    string             `json:"key"`
	Value  string             `json:"value,omitempty"`
	Effect corev1.TaintEffect `json:"effect"`
}

// Core is the taint in the Kubernetes API's type.
func (t Taint) Core() corev1.Taint {
	return corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
}

// TaintOf converts a Kubernetes taint (its TimeAdded is dropped).
func TaintOf(t corev1.Taint) Taint { return Taint{Key: t.Key, Value: t.Value, Effect: t.Effect} }

func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// ValidateTaints checks each taint as the API server would, naming
// field[i] in every error.
func ValidateTaints(field string, taints []Taint) error {
	var errs []error
	seen := map[string]bool{}
	for i, t := range taints {
		at := fmt.Sprintf("%s[%d]", field, i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, fmt.Errorf("%s.key %q: %s", at, t.Key, msg))
		}
		if t.Value != "" {
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, fmt.Errorf("%s.value %q: %s", at, t.Value, msg))
			}
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, fmt.Errorf("%s.effect %q: must be NoSchedule, PreferNoSchedule or NoExecute", at, t.Effect))
		}
		if id := t.Key + ":" + string(t.Effect); seen[id] {
			errs = append(errs, fmt.Errorf("%s: taint %s repeats an earlier key and effect", at, id))
		} else {
			seen[id] = true
		}
	}
	return errors.Join(errs...)
}

// ValidateNodeLabels checks label keys and values as the API server would,
// naming field[key] in every error.
func ValidateNodeLabels(field string, labels map[string]string) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, fmt.Errorf("%s[%q]: key: %s", field, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(labels[k]) {
			errs = append(errs, fmt.Errorf("%s[%q]: value %q: %s", field, k, labels[k], msg))
		}
	}
	return errors.Join(errs...)
}
