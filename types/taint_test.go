package types

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidateTaintsNamesTheField(t *testing.T) {
	ok := []Taint{{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}, {Key: "example.com/spot", Effect: corev1.TaintEffectPreferNoSchedule}}
	if err := ValidateTaints("policy.nodeTaints", ok); err != nil {
		t.Fatalf("valid taints refused: %v", err)
	}
	err := ValidateTaints("policy.nodeTaints", []Taint{
		{Key: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "bad key", Effect: "Sometimes"},
		{Key: "gpu", Value: "x", Effect: corev1.TaintEffectNoSchedule},
	})
	if err == nil {
		t.Fatal("bad taints accepted")
	}
	for _, want := range []string{`policy.nodeTaints[1].key "bad key"`, `policy.nodeTaints[1].effect "Sometimes"`, "policy.nodeTaints[2]: taint gpu:NoSchedule repeats"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestValidateNodeLabelsNamesTheKey(t *testing.T) {
	if err := ValidateNodeLabels("policy.nodeLabels", map[string]string{"disktype": "ssd", "example.com/tier": ""}); err != nil {
		t.Fatalf("valid labels refused: %v", err)
	}
	err := ValidateNodeLabels("policy.nodeLabels", map[string]string{"disk type": "ssd", "tier": "gold/silver"})
	if err == nil || !strings.Contains(err.Error(), `policy.nodeLabels["disk type"]: key`) || !strings.Contains(err.Error(), `policy.nodeLabels["tier"]: value "gold/silver"`) {
		t.Fatalf("got %v", err)
	}
}

func TestIdleBelowCountsEveryResource(t *testing.T) {
	alloc := Resources{MilliCPU: 8000, Memory: 32 * GiB, GPUs: 4, Pods: 110}
	quiet := NodeObservation{Allocatable: alloc, Requested: Resources{MilliCPU: 500, Memory: GiB}}
	if !quiet.IdleBelow(0.3, 0.4) {
		t.Error("a node with little CPU and memory requested and no GPU in use is idle")
	}
	gpuBusy := quiet
	gpuBusy.Requested.GPUs = 4
	if gpuBusy.IdleBelow(0.3, 0.4) {
		t.Error("a node whose GPUs are in use is busy however little CPU its pods ask for")
	}
	cpuBusy := quiet
	cpuBusy.Requested.MilliCPU = 2400
	if cpuBusy.IdleBelow(0.3, 0.4) {
		t.Error("CPU at the threshold is not below it")
	}
}

func TestArchitectureDefaultsToAmd64(t *testing.T) {
	if got := (InstanceType{}).Architecture(); got != "amd64" {
		t.Errorf("got %q", got)
	}
	if got := (InstanceType{Arch: "arm64"}).Architecture(); got != "arm64" {
		t.Errorf("got %q", got)
	}
}
