package types

import (
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// validateCapacity checks the capacity policies, naming each field as
// policy.<field>[i].<sub>.
func (p Policy) validateCapacity() []error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("policy.%s: %s", field, fmt.Sprintf(format, a...)))
	}
	if len(p.CapacityWindows) > MaxCapacityWindows {
		bad("capacityWindows", "lists %d windows, at most %d", len(p.CapacityWindows), MaxCapacityWindows)
	}
	for i, w := range p.CapacityWindows {
		at := fmt.Sprintf("capacityWindows[%d]", i)
		errs = append(errs, prefixed("policy."+at, validateWindowTime(w.Name, w.Schedule, w.TimeZone, w.Duration))...)
		switch {
		case w.MinNodes < 0:
			bad(at+".minNodes", "must be >= 0, got %d", w.MinNodes)
		case w.MinNodes > p.MaxNodes:
			bad(at+".minNodes", "%d is greater than the pool's maxNodes %d", w.MinNodes, p.MaxNodes)
		}
		switch {
		case w.MaxNodes < 0:
			bad(at+".maxNodes", "must be >= 0 (0 keeps the pool's), got %d", w.MaxNodes)
		case w.MaxNodes > p.MaxNodes:
			bad(at+".maxNodes", "%d is greater than the pool's maxNodes %d: a window can only lower the ceiling", w.MaxNodes, p.MaxNodes)
		case w.MaxNodes > 0 && w.MaxNodes < w.MinNodes:
			bad(at+".maxNodes", "%d is less than the window's minNodes %d", w.MaxNodes, w.MinNodes)
		case w.MaxNodes > 0 && w.MaxNodes < p.MinNodes:
			bad(at+".maxNodes", "%d is less than the pool's minNodes %d", w.MaxNodes, p.MinNodes)
		}
		if w.MinNodes == 0 && w.MaxNodes == 0 {
			bad(at, "sets neither minNodes nor maxNodes")
		}
	}

	if len(p.Headroom) > MaxHeadroomShapes {
		bad("headroom", "lists %d shapes, at most %d", len(p.Headroom), MaxHeadroomShapes)
	}
	total := 0
	for i, h := range p.Headroom {
		at := fmt.Sprintf("headroom[%d]", i)
		if h.Pods < 1 || h.Pods > MaxHeadroomPods {
			bad(at+".pods", "must be within [1, %d], got %d", MaxHeadroomPods, h.Pods)
		} else {
			total += h.Pods
		}
		if err := validateName(h.Name); err != nil {
			bad(at+".name", "%v", err)
		}
		r := h.Requests
		if r.IsNegative() {
			bad(at+".requests", "must not be negative, got %s", r)
		}
		if r.MilliCPU <= 0 && r.Memory <= 0 && r.GPUs <= 0 {
			bad(at+".requests", "asks for nothing: give milliCPU, memoryBytes or gpus")
		}
		if err := ValidateNodeLabels("policy."+at+".nodeSelector", h.NodeSelector); err != nil {
			errs = append(errs, err)
		}
		if len(h.NodeSelector) > maxTemplateLabels {
			bad(at+".nodeSelector", "has %d labels, at most %d", len(h.NodeSelector), maxTemplateLabels)
		}
		if len(h.Tolerations) > maxTemplateTaints {
			bad(at+".tolerations", "has %d tolerations, at most %d", len(h.Tolerations), maxTemplateTaints)
		}
		for j, t := range h.Tolerations {
			errs = append(errs, validateToleration(fmt.Sprintf("policy.%s.tolerations[%d]", at, j), t)...)
		}
	}
	if total > MaxHeadroomPods {
		bad("headroom", "adds %d pods in all, at most %d", total, MaxHeadroomPods)
	}

	if math.IsNaN(p.MaxHourlyCost) || p.MaxHourlyCost < 0 || p.MaxHourlyCost > MaxHourlyCost {
		bad("maxHourlyCost", "must be within [0, %g] (0 is no budget), got %v", MaxHourlyCost, p.MaxHourlyCost)
	}

	if d := p.Disruption; d != nil {
		if d.MaxDrainingNodes < 0 || d.MaxDrainingNodes > MaxPolicyNodes {
			bad("disruption.maxDrainingNodes", "must be within [0, %d], got %d", MaxPolicyNodes, d.MaxDrainingNodes)
		}
		if d.MaxDrainingPercent < 0 || d.MaxDrainingPercent > 100 {
			bad("disruption.maxDrainingPercent", "must be within [0, 100], got %d", d.MaxDrainingPercent)
		}
		if len(d.Windows) > MaxDisruptionWindows {
			bad("disruption.windows", "lists %d windows, at most %d", len(d.Windows), MaxDisruptionWindows)
		}
		for i, w := range d.Windows {
			at := fmt.Sprintf("disruption.windows[%d]", i)
			errs = append(errs, prefixed("policy."+at, validateWindowTime(w.Name, w.Schedule, w.TimeZone, w.Duration))...)
			if w.ScaleDown != ScaleDownAllowed && w.ScaleDown != ScaleDownForbidden {
				bad(at+".scaleDown", "%q is not %q or %q", w.ScaleDown, ScaleDownAllowed, ScaleDownForbidden)
			}
		}
	}
	return errs
}

// validateWindowTime checks what capacity and disruption windows share;
// each error starts with the sub-field's name.
func validateWindowTime(name, schedule, zone string, d Duration) []error {
	var errs []error
	if err := validateName(name); err != nil {
		errs = append(errs, fmt.Errorf("name: %w", err))
	}
	if schedule == "" {
		errs = append(errs, errors.New("schedule: is required (a cron expression such as \"0 8 * * 1-5\")"))
	} else if _, err := CompileSchedule(schedule, zone); err != nil {
		errs = append(errs, err)
	}
	switch {
	case d.D() <= 0:
		errs = append(errs, fmt.Errorf("duration: must be above zero, got %s", d))
	case d.D() < time.Minute:
		errs = append(errs, fmt.Errorf("duration: must be at least 1m (schedules fire by the minute), got %s", d))
	case d.D() > MaxWindowDuration:
		errs = append(errs, fmt.Errorf("duration: must be at most %s, got %s", MaxWindowDuration, d))
	}
	return errs
}

func validateName(name string) error {
	if len(name) > maxNameLen {
		return fmt.Errorf("%d characters, at most %d", len(name), maxNameLen)
	}
	for i, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("holds a control character at byte %d", i)
		}
	}
	return nil
}

// validateToleration checks a toleration as the API server would.
func validateToleration(at string, t corev1.Toleration) []error {
	var errs []error
	if t.Key != "" {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, fmt.Errorf("%s.key %q: %s", at, t.Key, msg))
		}
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, fmt.Errorf("%s.value: must be empty when operator is Exists", at))
		}
	case corev1.TolerationOpEqual, "":
		if t.Key == "" {
			errs = append(errs, fmt.Errorf("%s.key: an empty key needs operator Exists", at))
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, fmt.Errorf("%s.value %q: %s", at, t.Value, msg))
		}
	default:
		errs = append(errs, fmt.Errorf("%s.operator %q: must be Equal or Exists", at, t.Operator))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, fmt.Errorf("%s.effect %q: must be NoSchedule, PreferNoSchedule, NoExecute or empty", at, t.Effect))
	}
	return errs
}

func prefixed(at string, errs []error) []error {
	for i, e := range errs {
		errs[i] = fmt.Errorf("%s.%w", at, e)
	}
	return errs
}

// Bounds on an org's frontend quotas.
const (
	MaxOrgPools = 20000 // a cluster's pool cap
	MaxOrgRate  = 100000
)

// Validate checks an org's limits, naming each field as orgs[…].<field>
// relative to the caller's prefix.
func (o OrgPolicy) Validate() error {
	var errs []error
	if err := ValidateDNSLabel("org", o.Org); err != nil {
		errs = append(errs, err)
	}
	if o.MaxNodes < 0 || o.MaxNodes > MaxPolicyNodes*100 {
		errs = append(errs, fmt.Errorf("maxNodes: must be within [0, %d] (0 is no cap), got %d", MaxPolicyNodes*100, o.MaxNodes))
	}
	if o.MaxNodesPerCluster < 0 || o.MaxNodesPerCluster > MaxPolicyNodes*100 {
		errs = append(errs, fmt.Errorf("maxNodesPerCluster: must be within [0, %d] (0 is no cap), got %d", MaxPolicyNodes*100, o.MaxNodesPerCluster))
	}
	if o.MaxNodes > 0 && o.MaxNodesPerCluster > o.MaxNodes {
		errs = append(errs, fmt.Errorf("maxNodesPerCluster: %d is greater than maxNodes %d", o.MaxNodesPerCluster, o.MaxNodes))
	}
	if math.IsNaN(o.MaxHourlyCost) || o.MaxHourlyCost < 0 || o.MaxHourlyCost > MaxHourlyCost {
		errs = append(errs, fmt.Errorf("maxHourlyCost: must be within [0, %g] (0 is no budget), got %v", MaxHourlyCost, o.MaxHourlyCost))
	}
	for _, q := range []struct {
		name      string
		got, most int
	}{{"maxPools", o.MaxPools, MaxOrgPools}, {"appliesPerMinute", o.AppliesPerMinute, MaxOrgRate}, {"signalsPerSecond", o.SignalsPerSecond, MaxOrgRate}} {
		if q.got < 0 || q.got > q.most {
			errs = append(errs, fmt.Errorf("%s: must be within [0, %d] (0 is the frontend's default), got %d", q.name, q.most, q.got))
		}
	}
	if !o.SetsNodeLimits() && o.MaxPools == 0 && o.AppliesPerMinute == 0 && o.SignalsPerSecond == 0 {
		errs = append(errs, errors.New("sets no limit: give maxNodes, maxNodesPerCluster, maxHourlyCost, maxPools, appliesPerMinute or signalsPerSecond"))
	}
	return errors.Join(errs...)
}
