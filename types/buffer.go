package types

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// BufferObservation is one SIG-autoscaling CapacityBuffer
// (autoscaling.x-k8s.io, the API cluster-autoscaler and Karpenter read) as
// the cluster watcher resolved it for a pool: Pods copies of one pod shape
// that must fit on the pool's free room, beside the policy's headroom. The
// pool buys for the copies that do not fit and keeps their room at
// scale-down, and never counts them as pending pods.
type BufferObservation struct {
	// Namespace and Name are the CapacityBuffer's.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Pods is how many copies the buffer keeps room for, already bounded
	// by MaxBufferPods; 0 with Error set for a buffer that adds nothing.
	Pods       int            `json:"pods"`
	Requests   Resources      `json:"requests"`
	GPUModel   string         `json:"gpuModel,omitempty"`
	Scheduling *PodScheduling `json:"scheduling,omitempty"`
	// Error says why the buffer adds no pods, or fewer than it asks for.
	Error string `json:"error,omitempty"`
}

// Key is the buffer's namespace/name.
func (b BufferObservation) Key() string { return b.Namespace + "/" + b.Name }

// Bounds on the buffers one pool observation carries.
const (
	// MaxBuffers bounds the CapacityBuffers one pool takes in.
	MaxBuffers = 32
	// MaxBufferPods bounds the virtual pods all of a pool's buffers add
	// together, as MaxHeadroomPods bounds the policy's.
	MaxBufferPods = MaxHeadroomPods
	// maxBufferError bounds a buffer's error text.
	maxBufferError = 512
	// maxBufferScheduling bounds a buffer's scheduling constraints, as
	// JSON: a pod template's selectors and affinity, not a document.
	maxBufferScheduling = 16 << 10
)

// BoundBuffers keeps the buffers an observation may carry into a pool's
// state: at most MaxBuffers (in key order; the rest are counted in
// dropped), each checked so that a bad one adds no pods and says why
// instead of failing the observation, and all together at most
// MaxBufferPods pods (a buffer cut short says so).
func BoundBuffers(buffers []BufferObservation) (kept []BufferObservation, dropped int) {
	if len(buffers) == 0 {
		return nil, 0
	}
	kept = slices.Clone(buffers)
	slices.SortFunc(kept, func(a, b BufferObservation) int { return strings.Compare(a.Key(), b.Key()) })
	kept = slices.CompactFunc(kept, func(a, b BufferObservation) bool { return a.Key() == b.Key() })
	if len(kept) > MaxBuffers {
		dropped = len(kept) - MaxBuffers
		kept = kept[:MaxBuffers]
	}
	total := 0
	for i := range kept {
		b := &kept[i]
		b.Namespace, b.Name = boundText(b.Namespace, 253), boundText(b.Name, 253)
		b.GPUModel = boundText(b.GPUModel, 128)
		b.Error = boundText(b.Error, maxBufferError)
		if err := b.validate(); err != "" {
			b.Pods, b.Error, b.Scheduling = 0, err, nil
			continue
		}
		if total+b.Pods > MaxBufferPods {
			keep := MaxBufferPods - total
			b.Error = fmt.Sprintf("keeps room for %d of its %d pods: the pool's buffers add at most %d", keep, b.Pods, MaxBufferPods)
			b.Pods = keep
		}
		total += b.Pods
	}
	return kept, dropped
}

// validate says what makes the buffer unusable, or "".
func (b BufferObservation) validate() string {
	switch {
	case b.Namespace == "" || b.Name == "":
		return "buffer has no namespace/name"
	case b.Pods < 0 || b.Pods > MaxBufferPods:
		return fmt.Sprintf("pods must be within [0, %d], got %d", MaxBufferPods, b.Pods)
	case b.Requests.IsNegative():
		return fmt.Sprintf("requests must not be negative, got %s", b.Requests)
	case b.Pods > 0 && b.Requests.MilliCPU <= 0 && b.Requests.Memory <= 0 && b.Requests.GPUs <= 0:
		return "the pod shape asks for nothing (no cpu, memory or gpu requests)"
	}
	if b.Scheduling != nil {
		if raw, err := json.Marshal(b.Scheduling); err != nil || len(raw) > maxBufferScheduling {
			return fmt.Sprintf("the pod's scheduling constraints are %d bytes, at most %d", len(raw), maxBufferScheduling)
		}
	}
	return ""
}

// boundText cuts s to n bytes and drops control characters, so a label
// value or an API message cannot carry them into a pool's state.
func boundText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
